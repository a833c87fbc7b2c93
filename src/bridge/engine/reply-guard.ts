// The loop guard of answers to the sender (docs/routing.md, "Answering the sender"): two
// bridges (or a bridge and a bot) whose rules answer "{from}" would answer each other for
// ever. Marked automated messages are never answered (pipeline.ts); this catches senders
// that do not mark theirs.
//
// What it counts: per interface and sender address, the answers that follow each other with
// less than REPLY_CHAIN_GAP_MS between them. The first REPLY_CHAIN_LIMIT of a chain go out;
// after that none, and every refused attempt keeps the chain going, so a loop stays stopped
// for as long as the other side keeps talking. A sender that has had no answer (nor a refused
// one) for REPLY_CHAIN_GAP_MS starts a new chain: a person's next "ping" is answered again.
// In memory: a restart forgets the chains.

export const REPLY_CHAIN_LIMIT = 5;
export const REPLY_CHAIN_GAP_MS = 10 * 60_000;
/** Chains remembered at most; the stalest go first. */
const MAX_CHAINS = 10_000;

interface Chain {
  count: number;
  lastMs: number;
}

export class ReplyGuard {
  readonly #chains = new Map<string, Chain>();

  /** Why an answer to `sender` on `interfaceId` at `nowMs` must not go out; null when it may.
   *  Reads only: take() counts an answer that went out. */
  refusal(interfaceId: string, sender: string, nowMs: number): string | null {
    const chain = this.#live(interfaceId, sender, nowMs);
    if (!chain || chain.count < REPLY_CHAIN_LIMIT) return null;
    return `{from}: ${sender} has had ${chain.count} answers in a row, each within ${REPLY_CHAIN_GAP_MS / 60_000} minutes of the last; no more until it has had none for ${REPLY_CHAIN_GAP_MS / 60_000} minutes (the loop guard stops two automated senders answering each other)`;
  }

  /** An answer went out, or one was refused by refusal() (which keeps the chain alive). */
  took(interfaceId: string, sender: string, nowMs: number, sent: boolean): void {
    const key = `${interfaceId}\u0000${sender.toLowerCase()}`;
    const chain = this.#live(interfaceId, sender, nowMs) ?? { count: 0, lastMs: nowMs };
    if (sent) chain.count++;
    chain.lastMs = nowMs;
    this.#chains.delete(key);
    this.#chains.set(key, chain);
    if (this.#chains.size > MAX_CHAINS) this.#chains.delete(this.#chains.keys().next().value!);
  }

  #live(interfaceId: string, sender: string, nowMs: number): Chain | null {
    const chain = this.#chains.get(`${interfaceId}\u0000${sender.toLowerCase()}`);
    return chain && nowMs - chain.lastMs < REPLY_CHAIN_GAP_MS ? chain : null;
  }
}
