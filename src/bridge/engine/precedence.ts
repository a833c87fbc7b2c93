import { z } from 'zod';

// Precedence (docs/routing.md, "Precedence"): the six levels of STANAG 4406 that military and
// emergency gateways use, highest first. Stored as its rank (0 override ... 5 deferred); every
// interface's queue is served by rank, then oldest first.

export const PRECEDENCES = ['override', 'flash', 'immediate', 'priority', 'routine', 'deferred'] as const;
export type Precedence = (typeof PRECEDENCES)[number];

export const DEFAULT_PRECEDENCE: Precedence = 'routine';

export const PrecedenceSchema = z
  .enum(PRECEDENCES, { error: `precedence must be one of ${PRECEDENCES.join(', ')}` })
  .describe('override > flash > immediate > priority > routine (default) > deferred: each queue sends the highest first, then the oldest');

export function precedenceRank(p: Precedence): number {
  return PRECEDENCES.indexOf(p);
}

export function precedenceName(rank: number): Precedence {
  return PRECEDENCES[rank] ?? DEFAULT_PRECEDENCE;
}

/** `override` and `flash` are never evicted from a full queue, and never wait out a long
 *  backoff: their retry waits are capped (docs/routing.md). */
export function isUrgent(rank: number): boolean {
  return rank <= precedenceRank('flash');
}

/** The longest a retry of this precedence waits, whatever the interface's backoff says. */
export function retryCapMs(rank: number): number | null {
  if (rank === 0) return 5_000;
  if (rank === 1) return 15_000;
  return null;
}
