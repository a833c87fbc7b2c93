import type { FrameNode, FrameOrigin } from '../../bearers/bearer.ts';
import { precedenceName } from './precedence.ts';
import type { DeliveryRow, InterfaceRow, MessageRow, NodeRow } from './rows.ts';

// What a bearer is told of where an outbound frame comes from (OutboundFrame.origin): the
// stored message and its decision, the interface it was heard on, and the sender's node when
// the node database knows it (a bearer that draws the node on a map names it after the node).

export interface OriginSources {
  messages?: { get(id: string): Pick<MessageRow, 'interface_id' | 'created_at' | 'decision'> | undefined };
  interfaces: { find(id: string): InterfaceRow | undefined };
  nodes?: { get(id: string): NodeRow | undefined };
}

export function frameOrigin(d: DeliveryRow, sources: OriginSources): FrameOrigin {
  const m = sources.messages?.get(d.message_id);
  const decision = m?.decision ? { rule_id: m.decision.rule_id, action: m.decision.action, reason: m.decision.reason } : null;
  const interfaceId = m?.interface_id ?? null;
  // A message the API sent has no sender on any mesh.
  const node = interfaceId === null ? undefined : sources.nodes?.get(d.from);
  return {
    from: d.from,
    interfaceId,
    createdAt: m?.created_at ?? d.created_at,
    attempt: d.attempts + 1,
    precedence: precedenceName(d.precedence),
    decision,
    interfaceName: interfaceId === null ? null : (sources.interfaces.find(interfaceId)?.name ?? null),
    ...(node ? { node: frameNode(node) } : {}),
  };
}

/** A node row as OutboundFrame.origin.node: the fields the row has. */
function frameNode(n: NodeRow): FrameNode {
  const out: FrameNode = { id: n.node_id, network: n.network };
  if (n.long_name !== null) out.long_name = n.long_name;
  if (n.short_name !== null) out.short_name = n.short_name;
  if (n.public_key !== null) out.public_key = n.public_key;
  if (n.device_metrics !== null) out.device_metrics = n.device_metrics;
  if (n.last_heard_at !== null) out.last_heard_at = n.last_heard_at;
  return out;
}
