import type { Decision, RoutableMessage, RuleTraceEntry } from './decisions.ts';
import type { InterfaceRow } from './rows.ts';

// What the engine asks of those who decide, declared here and handed in by app.ts: the access
// rules (bridge/rules/), the address books (bridge/contacts/) and the senders policy
// (bridge/senders/). The engine imports none of them.

/** The access rules. */
export interface RuleDecider {
  /** The decision for a message now. */
  decide(msg: RoutableMessage): Decision;
  /** The decision at `atMs`; `trace` gets one entry per rule (a preview). */
  evaluate(msg: RoutableMessage, atMs: number, trace?: RuleTraceEntry[]): Decision;
}

/** Object groups and contacts by name (without the "@"). */
export interface AddressBooks {
  /** A group's member addresses; undefined when no group has that name. */
  group(name: string): string[] | undefined;
  /** A contact's addresses by field (mesh, sms, ...); undefined when no contact has that name. */
  contact(name: string): Record<string, string> | undefined;
}

/** Which node an address names now (engine/node-identity.ts): the rules and the senders
 *  policy compare addresses through it, the pipeline addresses deliveries through it. */
export interface NodeAddresses {
  /** The address the node is reached at now: a node's former id gives its current id, a public
   *  key the id of the node that has it (null when no node has it); any other address comes
   *  back as given. */
  current(address: string): string | null;
}

/** An interface by id or name. */
export type InterfaceLookup = { find(ref: string): InterfaceRow | undefined };

/** What the senders policy said of one message from one sender. */
export interface SenderVerdict {
  address: string;
  /** Why the sender is blocked; null when not. */
  blocked: string | null;
  /** Why the message is over a limit; null when not (or when nothing limited applies). */
  over: string | null;
  /** Buckets the message takes a token from when it is forwarded. */
  takes: Array<{ key: string; kinds: string[]; tokens: number }>;
  /** Each limit that applied, with the tokens left before this message. */
  limits: Array<{ kinds: string[]; per_hour: number; burst: number; tokens: number }>;
}

/** The buckets as the earlier parts of one message left them, before any is stored. */
export type PendingTakes = Map<string, { tokens: number; at_ms: number }>;

/** The senders policy's screen (docs/senders.md). */
export interface SenderScreen {
  /** Why a sender is blocked; null when not. */
  blocked(address: string): string | null;
  /** The verdict for a message from `address` that would go to interfaces of `kinds`. */
  verdict(address: string, kinds: ReadonlySet<string>, nowMs: number, pending?: PendingTakes): SenderVerdict;
  /** What storing a forwarded part with this verdict does to the buckets, for the next parts. */
  took(pending: PendingTakes, verdict: SenderVerdict, nowMs: number): void;
  /** Inside the message's transaction: the sender's counters and buckets. */
  record(verdict: SenderVerdict, forwarded: boolean, nowMs: number, queued: ReadonlySet<string>): void;
}
