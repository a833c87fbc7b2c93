import type { Precedence } from './precedence.ts';
import type { FallbackStrategy } from './rows.ts';

// The engine's vocabulary of decisions: what a message looks like to whoever decides where it
// goes, what they decide, and the destinations a decision names. The access rules
// (bridge/rules/) decide in these terms; their request schemas produce these types.

/** Message kinds a rule can match. */
export const MESSAGE_KINDS = ['text', 'position', 'telemetry', 'data'] as const;

/** A destination `to` of "{from}": the message's own sender, so one rule can answer whoever
 *  wrote (an echo, an auto-reply, a receipt) on any bearer (docs/routing.md, "Answering the sender"). */
export const SENDER_ADDRESS = '{from}';

/** The `meta` key a bearer sets (true) on a message its sender marked as made by an automated
 *  sender, a bot or another bridge (docs/routing.md, "Answering the sender"). */
export const AUTOMATION_META = 'is_automation';

/** Default time a member of an ordered list has to be delivered before the next starts. */
export const DEFAULT_ACK_WITHIN_S = 60;

export const FALLBACK_STRATEGIES = ['ordered', 'first_available', 'all'] as const satisfies readonly FallbackStrategy[];

export type RuleActionKind = 'forward' | 'drop' | 'store';

/** An interface (id or name) and an address on its bearer, or @contact / @group. */
export interface PlainDestination {
  interface: string;
  to: string;
  /** A direct message to a mesh node: held until the node is heard again. */
  until_heard?: boolean;
}

export interface FallbackMember {
  interface: string;
  to: string;
  ack_within_s?: number;
}

/** Several members tried by a strategy (docs/routing.md, "Fallback lists"). */
export interface FallbackDestination {
  fallback: FallbackMember[];
  strategy: FallbackStrategy;
  keep_trying: boolean;
}

/** One destination of a forward: an object with a `fallback` field is a list. */
export type Destination = FallbackDestination | PlainDestination;

export function isFallback(d: Destination): d is FallbackDestination {
  return 'fallback' in d;
}

/** A message as the deciders see it. */
export interface RoutableMessage {
  direction: 'inbound' | 'outbound';
  interface_id: string | null;
  interface_name: string | null;
  from: string;
  to: string;
  channel: number | null;
  kind: (typeof MESSAGE_KINDS)[number];
  text: string | null;
  /** Its sender marked it automated (meta[AUTOMATION_META]); absent = not marked. */
  automated?: boolean;
}

export interface Decision {
  /** The rule that decided; null when the default action applied. */
  rule_id: string | null;
  action: RuleActionKind;
  destinations: Destination[];
  reason: string;
  /** The deciding rule's precedence, when it sets one. */
  precedence?: Precedence | null;
}

/** How one rule fared with one message: what a preview shows (docs/routing.md, "Preview"). */
export interface RuleTraceEntry {
  rule_id: string;
  name: string;
  priority: number;
  enabled: boolean;
  /** The filters that matched, or the first that failed and why (evaluated for a disabled or
   *  unreached rule too, so an operator sees what it would do). */
  filters: { matched: boolean; matched_filters: string[]; failed: { filter: string; reason: string } | null };
  /** null: the rule has no schedule (always active). */
  schedule: { active: boolean; reason: string } | null;
  /** decided: this rule decided; disabled, no_match, off_schedule: skipped for that reason;
   *  not_reached: an earlier rule decided. */
  outcome: 'decided' | 'disabled' | 'no_match' | 'off_schedule' | 'not_reached';
}
