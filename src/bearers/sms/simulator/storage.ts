// The modem's message storage "SM" (the SIM): numbered slots holding PDUs with a status
// (27.005 section 3.1 <stat>, <index>; docs/protocols/sms.md 4.3). Survives a modem reset.

/** <stat> in PDU mode and its text-mode name (27.005 section 3.1). */
export const STAT = { REC_UNREAD: 0, REC_READ: 1, STO_UNSENT: 2, STO_SENT: 3, ALL: 4 } as const;
export const STAT_NAMES = ['REC UNREAD', 'REC READ', 'STO UNSENT', 'STO SENT', 'ALL'] as const;

export interface StoredMessage {
  index: number;
  stat: 0 | 1 | 2 | 3;
  kind: 'deliver' | 'status-report' | 'submit';
  /** The SC's address that goes before the TPDU in 27.005 PDUs (null: `00`). */
  smsc: string | null;
  tpdu: Uint8Array;
}

export class SmsStorage {
  /** The memory's name in AT+CPMS. */
  readonly name = 'SM';
  readonly capacity: number;
  /** The lowest index (most modems 1; some, like Quectel's, 0). */
  readonly firstIndex: number;
  readonly #slots = new Map<number, StoredMessage>();

  constructor(capacity = 30, firstIndex = 1) {
    if (!Number.isInteger(capacity) || capacity < 1 || capacity > 255) throw new RangeError(`capacity must be 1-255, got ${capacity}`);
    this.capacity = capacity;
    this.firstIndex = firstIndex;
  }

  get used(): number {
    return this.#slots.size;
  }

  get full(): boolean {
    return this.#slots.size >= this.capacity;
  }

  inRange(index: number): boolean {
    return Number.isInteger(index) && index >= this.firstIndex && index < this.firstIndex + this.capacity;
  }

  /** Stores in the lowest free slot; null when full. */
  store(message: Omit<StoredMessage, 'index'>): StoredMessage | null {
    for (let i = this.firstIndex; i < this.firstIndex + this.capacity; i++) {
      if (this.#slots.has(i)) continue;
      const stored = { ...message, index: i };
      this.#slots.set(i, stored);
      return stored;
    }
    return null;
  }

  get(index: number): StoredMessage | undefined {
    return this.#slots.get(index);
  }

  delete(index: number): boolean {
    return this.#slots.delete(index);
  }

  /** Messages with this <stat> (4 = all), by index. */
  list(stat: number = STAT.ALL): StoredMessage[] {
    return [...this.#slots.values()].filter((m) => stat === STAT.ALL || m.stat === stat).sort((a, b) => a.index - b.index);
  }

  /** AT+CMGD with <delflag> 1-4 (27.005 3.5.4): 1 read, 2 read and sent, 3 read, sent and
   *  unsent, 4 all. Returns how many went. */
  deleteByFlag(flag: 1 | 2 | 3 | 4): number {
    const goes: Record<number, readonly number[]> = { 1: [1], 2: [1, 3], 3: [1, 2, 3], 4: [0, 1, 2, 3] };
    let n = 0;
    for (const m of [...this.#slots.values()]) {
      if (goes[flag].includes(m.stat)) {
        this.#slots.delete(m.index);
        n++;
      }
    }
    return n;
  }
}
