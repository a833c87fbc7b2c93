import type { NodeChange } from './node-store.ts';
import type { DeliveryRow, MessageRow } from './rows.ts';

// What the routing core tells the rest of the bridge (docs/architecture.md, "The message
// path"). The uplink and the metrics subscribe; the dispatcher subscribes to wake its queues.
// Events about stored rows are emitted inside the transaction that writes them.

export type RouterEvent =
  /** A message was stored with its deliveries (inside the transaction that stores them). */
  | { type: 'message'; message: MessageRow; deliveries: DeliveryRow[] }
  /** After commit: new deliveries wait on this interface; the earliest of their expiries and
   *  the highest of their precedences (the lowest rank). */
  | { type: 'queued'; interfaceId: string; earliestExpiryMs: number; precedence?: number }
  /** A delivery changed state (inside the transaction that writes it). `failedAttempt`: a
   *  send attempt failed at the bearer (an interrupted send is not one). */
  | { type: 'delivery'; delivery: DeliveryRow; failedAttempt: boolean }
  /** An interface's link came up or went down. */
  | { type: 'link'; interfaceId: string; connected: boolean }
  /** A device told the time it holds (a network's or a GPS's): the bridge's clock may take it
   *  (bridge/clock/guard.ts, bridge.clock.radio_time). */
  | { type: 'time'; interfaceId: string; kind: string; atMs: number }
  /** A report changed a node's identity (inside the write that stores it): the node was
   *  renumbered (its deliveries follow it), or a second node claimed its number. */
  | { type: 'node'; interfaceId: string; change: NodeChange };
