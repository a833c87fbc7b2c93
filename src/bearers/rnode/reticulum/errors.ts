// Stable codes for what the Reticulum and LXMF decoders refuse (docs/style.md habit 8). A
// decoder never throws on input from the air: it returns { ok: false, code, reason }, where
// reason names the field, what was expected and what arrived. docs/protocols/reticulum.md 6
// lists the codes.

export type ReticulumErrorCode =
  | 'ERR_RNS_PACKET_TRUNCATED'
  | 'ERR_RNS_PACKET_TOO_LONG'
  | 'ERR_RNS_PACKET_HOPS'
  | 'ERR_RNS_PACKET_IFAC'
  | 'ERR_RNS_ANNOUNCE_TYPE'
  | 'ERR_RNS_ANNOUNCE_TRUNCATED'
  | 'ERR_RNS_ANNOUNCE_SIGNATURE'
  | 'ERR_RNS_ANNOUNCE_DESTINATION'
  | 'ERR_RNS_PROOF_TYPE'
  | 'ERR_RNS_PROOF_LENGTH'
  | 'ERR_RNS_PROOF_DESTINATION'
  | 'ERR_RNS_PROOF_HASH'
  | 'ERR_RNS_PROOF_SIGNATURE'
  | 'ERR_RNS_PATH_REQUEST'
  | 'ERR_RNS_LINK_REQUEST'
  | 'ERR_RNS_LINK_PROOF'
  | 'ERR_RNS_LINK_PACKET'
  | 'ERR_RNS_RESOURCE_ADV'
  | 'ERR_RNS_RESOURCE_REQUEST'
  | 'ERR_RNS_RESOURCE_PART'
  | 'ERR_RNS_RESOURCE_PROOF'
  | 'ERR_RNS_LINK_RESPONSE'
  | 'ERR_LXMF_PROPAGATION'
  | 'ERR_LXMF_DESTINATION'
  | 'ERR_LXMF_DECRYPT'
  | 'ERR_LXMF_TOO_LARGE'
  | 'ERR_LXMF_TRUNCATED'
  | 'ERR_LXMF_PAYLOAD'
  | 'ERR_LXMF_SOURCE'
  | 'ERR_LXMF_SIGNATURE'
  | 'ERR_LXMF_APP_DATA';

export interface Failure {
  ok: false;
  code: ReticulumErrorCode;
  reason: string;
}

export function fail(code: ReticulumErrorCode, reason: string): Failure {
  return { ok: false, code, reason };
}
