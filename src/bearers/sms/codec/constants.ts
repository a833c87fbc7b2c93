// The SMS PDU constants table (docs/style.md habit 3), named as 3GPP TS 23.040 / 23.038 name
// them (docs/protocols/sms.md 4.8).

/** TP-Message-Type-Indicator, bits 1-0 of the first octet (23.040 9.2.3.1). The meaning of a
 *  value depends on the direction: SC to MS 00 DELIVER, 10 STATUS-REPORT, 01 SUBMIT-REPORT;
 *  MS to SC 00 DELIVER-REPORT, 01 SUBMIT, 10 COMMAND. */
export const TP_MTI = { DELIVER: 0b00, SUBMIT: 0b01, STATUS_REPORT: 0b10, RESERVED: 0b11 } as const;

/** First-octet bits (23.040 9.2.2). */
export const FIRST_OCTET = {
  /** SUBMIT TP-RD: reject duplicates (same TP-MR and TP-DA still held by the SC). */
  RD: 0x04,
  /** DELIVER / STATUS-REPORT TP-MMS: set when NO more messages are waiting. */
  MMS: 0x04,
  /** DELIVER / STATUS-REPORT TP-LP: loop prevention. */
  LP: 0x08,
  /** SUBMIT TP-VPF, bits 4-3: 00 none, 10 relative, 01 enhanced, 11 absolute (23.040 9.2.3.3). */
  VPF_MASK: 0x18,
  VPF_RELATIVE: 0x10,
  VPF_ENHANCED: 0x08,
  VPF_ABSOLUTE: 0x18,
  /** SUBMIT TP-SRR (report requested), DELIVER TP-SRI (report will be returned), STATUS-REPORT
   *  TP-SRQ (1 = the report is about a COMMAND). Same bit. */
  SRR: 0x20,
  /** TP-UDHI: the user data starts with a header (docs/protocols/sms.md 4.4). */
  UDHI: 0x40,
  /** TP-RP: reply path. */
  RP: 0x80,
} as const;

/** Type-of-address octets (23.040 9.1.2.5): bit 7 set, TON in bits 6-4, NPI in bits 3-0. */
export const TYPE_OF_ADDRESS = {
  /** TON 1 international, NPI 1 E.164: the number is written without its "+". */
  INTERNATIONAL: 0x91,
  /** TON 0 unknown, NPI 1 E.164: what a number without "+" is sent as. */
  UNKNOWN: 0x81,
  /** TON 5 alphanumeric (GSM-7 packed), NPI 0. */
  ALPHANUMERIC: 0xd0,
} as const;

/** Type of number, bits 6-4 of the type-of-address (23.040 9.1.2.5). */
export const TON_NAMES = ['unknown', 'international', 'national', 'network', 'subscriber', 'alphanumeric', 'abbreviated', 'reserved'] as const;
export type AddressKind = (typeof TON_NAMES)[number];

/** TP-DCS values the encoder writes (23.038 section 4, general data coding, no class). */
export const DCS = { GSM7: 0x00, DATA_8BIT: 0x04, UCS2: 0x08 } as const;

/** User data header information element identifiers (23.040 9.2.3.24). */
export const IEI = {
  /** Concatenated short messages, 8-bit reference: ref, total, sequence (length 3). */
  CONCAT_8: 0x00,
  /** Application port addressing, 8-bit ports: destination, originator (length 2). */
  PORTS_8: 0x04,
  /** Application port addressing, 16-bit ports (length 4). */
  PORTS_16: 0x05,
  /** Concatenated short messages, 16-bit reference: ref (2), total, sequence (length 4). */
  CONCAT_16: 0x08,
} as const;

/** Sizes (23.040 9.2.3.16, 9.2.3.24.1, 9.1.2.5; docs/protocols/sms.md 4.4). */
export const LIMITS = {
  USER_DATA_OCTETS: 140,
  USER_DATA_SEPTETS: 160,
  /** At most 255 parts: total and sequence are one octet each. */
  MAX_PARTS: 255,
  /** TP-DA / TP-OA hold at most 20 semi-octets (2-12 octets). */
  ADDRESS_SEMI_OCTETS: 20,
  /** The SMSC prefix's length octet counts type + digits: at most 1 + 10 octets (24.011 RP address). */
  SMSC_OCTETS: 11,
} as const;

/** TP-VP relative: 0xA7 = 24 hours (23.040 9.2.3.12.1). */
export const VP_RELATIVE_24H = 0xa7;

/** TP-Status (23.040 9.2.3.15): what the SC says happened to a submitted message. */
export type StatusClass = 'delivered' | 'pending' | 'failed-permanent' | 'failed-temporary';

/** The named TP-ST values; the rest of each range is "reserved" or "SC specific". */
export const TP_STATUS_NAMES: Readonly<Record<number, string>> = {
  // Short message transaction completed
  0x00: 'short message received by the SME',
  0x01: 'short message forwarded by the SC to the SME but the SC is unable to confirm delivery',
  0x02: 'short message replaced by the SC',
  // Temporary error, SC still trying to transfer the SM
  0x20: 'congestion',
  0x21: 'SME busy',
  0x22: 'no response from SME',
  0x23: 'service rejected',
  0x24: 'quality of service not available',
  0x25: 'error in SME',
  // Permanent error, SC is not making any more transfer attempts
  0x40: 'remote procedure error',
  0x41: 'incompatible destination',
  0x42: 'connection rejected by SME',
  0x43: 'not obtainable',
  0x44: 'quality of service not available',
  0x45: 'no interworking available',
  0x46: 'SM validity period expired',
  0x47: 'SM deleted by originating SME',
  0x48: 'SM deleted by SC administration',
  0x49: 'SM does not exist',
  // Temporary error, SC is not making any more transfer attempts
  0x60: 'congestion',
  0x61: 'SME busy',
  0x62: 'no response from SME',
  0x63: 'service rejected',
  0x64: 'quality of service not available',
  0x65: 'error in SME',
};

/** Classifies a TP-ST octet by its range (23.040 9.2.3.15). Bit 7 set is reserved; it is
 *  classed like 0x63 "service rejected" (no more tries), so the bearer never waits on it. */
export function classifyStatus(st: number): { class: StatusClass; name: string } {
  const cls: StatusClass = st < 0x20 ? 'delivered' : st < 0x40 ? 'pending' : st < 0x60 ? 'failed-permanent' : 'failed-temporary';
  const low = st & 0x1f;
  const name = TP_STATUS_NAMES[st] ?? (st >= 0x80 ? 'reserved' : low >= 0x10 ? 'SC specific' : 'reserved');
  return { class: cls, name };
}
