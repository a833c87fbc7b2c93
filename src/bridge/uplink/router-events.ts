import type { EventStream } from '../../lib/events.ts';
import { deliveryView } from '../deliveries/view.ts';
import type { RouterEvent } from '../engine/events.ts';
import { messageView } from '../messages/view.ts';
import type { UplinkService } from './service.ts';

// What the hub hears of the routing core (docs/hub.md): every stored message (as a message,
// telemetry or position event by its kind) and every delivery change, written to the outbox
// inside the transaction that stores them, with the same views the API answers with.

export function followRouter(uplink: UplinkService, events: EventStream<RouterEvent>): () => void {
  return events.subscribe((event) => {
    if (event.type === 'message') {
      const kind = event.message.kind === 'telemetry' || event.message.kind === 'position' ? event.message.kind : 'message';
      uplink.enqueue(kind, messageView(event.message));
      for (const d of event.deliveries) uplink.enqueue('delivery', deliveryView(d));
    } else if (event.type === 'delivery') {
      uplink.enqueue('delivery', deliveryView(event.delivery));
    }
  });
}
