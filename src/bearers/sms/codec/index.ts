// SMS PDU-mode codecs (docs/protocols/sms.md 4.8): addresses, septets, SUBMIT, DELIVER,
// STATUS-REPORT, user data headers and message splitting. Pure: no I/O, timers or logging
// (docs/style.md habit 1). Decoders are total and answer `{ ok, value | error }`; encoders
// throw RangeError only for a caller's mistake.

export { encodeAddress, encodeSemiOctets, encodeSmsc, normalizeNumber, type NormalizedNumber, type SmsAddress } from './address.ts';
export { classifyStatus, DCS, FIRST_OCTET, IEI, LIMITS, TON_NAMES, TP_MTI, TP_STATUS_NAMES, TYPE_OF_ADDRESS, VP_RELATIVE_24H, type AddressKind, type StatusClass } from './constants.ts';
export { decodeDcs, type Alphabet, type DataCoding, type DcsGroup } from './dcs.ts';
export { decodeDeliver, encodeDeliver, type DeliverOptions, type SmsDeliver } from './deliver.ts';
export type { PduOptions } from './frame.ts';
export { hexToOctets, octetsToHex, type Decoded } from './octets.ts';
export { decodePdu, type SmsPdu } from './pdu.ts';
export { packSeptets, septetsToText, textToUcs2, ucs2ToText, unpackSeptets } from './septets.ts';
export { planData, planMessage, type MessagePlan, type PlanOptions, type PlanResult, type SmsEncoding, type SmsPart } from './split.ts';
export { decodeStatusReport, encodeStatusReport, type SmsStatusReport, type StatusReportOptions } from './status-report.ts';
export { decodeSubmit, encodeSubmit, pduSubmitBody, relativeValidity, relativeValidityMinutes, type SmsSubmit, type SubmitOptions, type SubmitPdu, type Validity } from './submit.ts';
export { encodeTimestamp, type SmsTimestamp } from './timestamp.ts';
export { encodeConcatUdh, udhSeptets, type Concatenation, type UserDataHeader } from './udh.ts';
export type { UserData } from './user-data.ts';
