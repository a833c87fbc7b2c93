import type { EventStream } from '../../lib/events.ts';
import type { ChangeTarget } from '../config/sections.ts';
import { deliveryView } from '../deliveries/view.ts';
import type { InterfaceRuntime } from '../engine/bearer-host.ts';
import type { RouterEvent } from '../engine/events.ts';
import { messageView } from '../messages/view.ts';
import type { EventFeed } from './feed.ts';

// What becomes an event (docs/events.md, "Types"): a message stored with its decision and the
// deliveries it made, every delivery state change with its reason, an interface's link coming
// up or going down, a node renumbered (or a second key claiming its number), a configuration
// section changed. Message and delivery events are
// published inside the transaction that stores them, with the same views the API answers with.

export interface EventSources {
  router: EventStream<RouterEvent>;
  /** The interface's name (for people) and its runtime state, by id. */
  interfaceName(id: string): string | null;
  runtime(id: string): Pick<InterfaceRuntime, 'phase' | 'last_error' | 'reason'>;
  config: { on(event: 'change', listener: (section: ChangeTarget) => void): unknown };
}

export function followSources(feed: EventFeed, s: EventSources): void {
  s.router.subscribe((event) => {
    if (event.type === 'message') {
      const m = event.message;
      feed.publish('message', { message: messageView(m), deliveries: event.deliveries.map((d) => d.id) }, { interfaceId: m.interface_id, kind: m.kind });
      for (const d of event.deliveries) feed.publish('delivery', { delivery: deliveryView(d) }, { interfaceId: d.interface_id, kind: d.kind });
    } else if (event.type === 'delivery') {
      const d = event.delivery;
      feed.publish('delivery', { delivery: deliveryView(d), failed_attempt: event.failedAttempt }, { interfaceId: d.interface_id, kind: d.kind });
    } else if (event.type === 'node') {
      feed.publish('node', { node: { interface_id: event.interfaceId, ...event.change } }, { interfaceId: event.interfaceId });
    } else if (event.type === 'link') {
      const rt = s.runtime(event.interfaceId);
      feed.publish(
        'interface',
        { interface: { id: event.interfaceId, name: s.interfaceName(event.interfaceId), connected: event.connected, phase: rt.phase, last_error: rt.last_error, reason: rt.reason } },
        { interfaceId: event.interfaceId },
      );
    }
  });
  s.config.on('change', (section) => feed.publish('config', { section }));
}
