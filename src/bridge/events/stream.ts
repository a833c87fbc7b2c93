import type { ServerResponse } from 'node:http';
import type { Clock, TimerHandle } from '../../lib/clock.ts';
import type { EventFeed } from './feed.ts';
import type { LoggedEvent } from './store.ts';

// One client of GET /api/events (docs/events.md): the Server-Sent Events wire format (WHATWG
// HTML, "Server-sent events": `id:`, `event:`, `data:` lines, a blank line after each event,
// `:` comment lines ignored by clients). First what the client missed (from the log, after its
// Last-Event-ID), then live events; live events that arrive during the replay wait and are
// sent after it, each once. A client that leaves too much unread is told why and cut off.

export interface EventFilter {
  types: ReadonlySet<string> | null;
  interfaceId: string | null;
  kind: string | null;
}

const REPLAY_PAGE = 500;

export function matches(f: EventFilter, e: Pick<LoggedEvent, 'type' | 'interface_id' | 'kind'>): boolean {
  if (f.types && !f.types.has(e.type)) return false;
  if (f.interfaceId !== null && e.interface_id !== f.interfaceId) return false;
  if (f.kind !== null && e.kind !== null && e.kind !== f.kind) return false;
  return true;
}

export function formatEvent(e: Pick<LoggedEvent, 'id' | 'type' | 'data'>): string {
  return `id: ${e.id}\nevent: ${e.type}\ndata: ${e.data}\n\n`;
}

/** A `gap` event: ids the client will never get (older than the log keeps, or lost). */
function gapEvent(from: number, to: number | null, reason: string): string {
  return `event: gap\ndata: ${JSON.stringify({ type: 'gap', from, to, reason })}\n\n`;
}

/** Serves the stream on `res`; returns what ends it from the bridge's side (telling why). */
export function serveStream(res: ServerResponse, o: { feed: EventFeed; clock: Clock; filter: EventFilter; lastEventId: number | null; onEnd: (reason: string) => void }): (reason: string) => void {
  const limits = o.feed.limits;
  const maxBuffered = limits.max_buffered_kib * 1024;
  let ended = false;
  let heartbeat: TimerHandle | null = null;
  let waiting: LoggedEvent[] | null = [];
  let sentUpTo = o.lastEventId ?? o.feed.lastCommitted;

  const end = (reason: string, tell: boolean) => {
    if (ended) return;
    ended = true;
    unfollow();
    if (heartbeat) o.clock.clearTimeout(heartbeat);
    if (tell && !res.destroyed) {
      const socket = res.socket;
      res.end(`event: closing\ndata: ${JSON.stringify({ type: 'closing', reason })}\n\n`);
      // A client that does not read would keep the socket (and what is queued on it) for ever.
      setTimeout(() => socket?.destroy(), 1000).unref();
    }
    o.onEnd(reason);
  };
  const write = (text: string) => {
    if (ended) return;
    if (res.writableLength > maxBuffered) {
      end(`slow client: more than ${limits.max_buffered_kib} KiB unread (bridge.events.max_buffered_kib)`, true);
      return;
    }
    res.write(text);
  };
  const send = (e: LoggedEvent) => {
    if (e.id <= sentUpTo) return;
    sentUpTo = e.id;
    if (matches(o.filter, e)) write(formatEvent(e));
  };
  const unfollow = o.feed.follow((e) => (waiting ? waiting.push(e) : send(e)));
  res.on('close', () => end('the client went away', false));

  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' });
  // Clients wait this long before they reconnect (with Last-Event-ID).
  res.write('retry: 3000\n\n');

  if (o.lastEventId !== null) replay(o.lastEventId);
  for (const e of waiting) send(e);
  waiting = null;
  const beat = () => {
    write(': heartbeat\n\n');
    heartbeat = o.clock.setTimeout(beat, limits.heartbeat_s * 1000);
  };
  heartbeat = o.clock.setTimeout(beat, limits.heartbeat_s * 1000);
  return (reason) => end(reason, true);

  function replay(after: number): void {
    const last = o.feed.lastId;
    if (after > last) {
      write(gapEvent(after + 1, null, `event ${after} is newer than any this bridge gave out (${last}); its database was replaced`));
      sentUpTo = last;
      return;
    }
    const lost = o.feed.lost;
    // Ids a crashed run gave out and nobody kept: said once, where the client reaches them.
    const crossLost = (nextId: number) => {
      if (lost && sentUpTo < lost.to && nextId > lost.to) {
        write(gapEvent(Math.max(sentUpTo + 1, lost.from), lost.to, 'the bridge stopped without saving its recent events (a crash or a power cut)'));
        sentUpTo = lost.to;
      }
    };
    const first = o.feed.firstKept();
    const committed = o.feed.lastCommitted;
    if (first === null ? committed > after : first > after + 1) {
      const to = first === null ? committed : first - 1;
      if (!lost || to < lost.from || after + 1 < lost.from) {
        write(gapEvent(after + 1, lost && to >= lost.from ? lost.from - 1 : to, o.feed.limits.log_max_events === 0 ? 'the bridge keeps no recent events (bridge.events.log_max_events is 0)' : 'older than the bridge keeps (bridge.events)'));
      }
      sentUpTo = Math.max(sentUpTo, lost && to >= lost.from ? lost.from - 1 : to);
    }
    let from = after;
    for (;;) {
      const page = o.feed.after(from, REPLAY_PAGE);
      for (const e of page) {
        crossLost(e.id);
        send(e);
      }
      if (page.length < REPLAY_PAGE || ended) break;
      from = page[page.length - 1].id;
    }
    crossLost(last + 1);
    // Ids committed but not kept (a limit of 0, an event that was rolled back between kept
    // ones) are not silently skipped; events still in an open transaction come live.
    if (sentUpTo < committed && !ended) {
      write(gapEvent(sentUpTo + 1, committed, 'not kept'));
      sentUpTo = committed;
    }
  }
}
