// TP-DCS by coding group (3GPP TS 23.038 section 4; docs/protocols/sms.md 4.4: decode by
// group, not by exact value). Pure.

export type Alphabet = 'gsm7' | '8bit' | 'ucs2';
export type DcsGroup = 'general' | 'auto-delete' | 'mwi-discard' | 'mwi-store' | 'data-class' | 'reserved';

export interface DataCoding {
  dcs: number;
  group: DcsGroup;
  alphabet: Alphabet;
  /** 23.042 compression: the text cannot be read, the octets are handed over as data. */
  compressed: boolean;
  /** 0 flash (display), 1 ME, 2 SIM, 3 TE; null when the DCS carries no class. */
  messageClass: 0 | 1 | 2 | 3 | null;
  /** Message waiting indication (groups 1100-1110). */
  waiting: { active: boolean; type: 'voicemail' | 'fax' | 'email' | 'other' } | null;
  /** False for a reserved group or alphabet: decoded as 8-bit so nothing is lost. 23.038 says
   *  a receiver should assume GSM-7 there; octets are safer for a bridge that forwards them. */
  known: boolean;
}

const WAITING_TYPES = ['voicemail', 'fax', 'email', 'other'] as const;

export function decodeDcs(dcs: number): DataCoding {
  const base = { dcs, compressed: false, messageClass: null, waiting: null, known: true } as const;
  const top2 = dcs >> 6;
  if (top2 === 0b00 || top2 === 0b01) {
    // 00xxxxxx general data coding, 01xxxxxx the same marked for automatic deletion:
    // bit 5 compressed, bit 4 "bits 1-0 are a class", bits 3-2 alphabet (11 reserved).
    const alphabetBits = (dcs >> 2) & 0x03;
    return {
      ...base,
      group: top2 === 0 ? 'general' : 'auto-delete',
      alphabet: alphabetBits === 0 ? 'gsm7' : alphabetBits === 2 ? 'ucs2' : '8bit',
      compressed: (dcs & 0x20) !== 0,
      messageClass: dcs & 0x10 ? ((dcs & 0x03) as 0 | 1 | 2 | 3) : null,
      known: alphabetBits !== 3,
    };
  }
  const top4 = dcs >> 4;
  if (top4 >= 0x0c && top4 <= 0x0e) {
    // 1100 discard (GSM-7), 1101 store (GSM-7), 1110 store (UCS-2): bit 3 sense, bits 1-0 type.
    return {
      ...base,
      group: top4 === 0x0c ? 'mwi-discard' : 'mwi-store',
      alphabet: top4 === 0x0e ? 'ucs2' : 'gsm7',
      waiting: { active: (dcs & 0x08) !== 0, type: WAITING_TYPES[dcs & 0x03] },
    };
  }
  if (top4 === 0x0f) {
    // 1111: bit 2 alphabet (0 GSM-7, 1 8-bit), bits 1-0 class; bit 3 reserved.
    return { ...base, group: 'data-class', alphabet: dcs & 0x04 ? '8bit' : 'gsm7', messageClass: (dcs & 0x03) as 0 | 1 | 2 | 3 };
  }
  // 1000-1011: reserved coding groups.
  return { ...base, group: 'reserved', alphabet: '8bit', known: false };
}
