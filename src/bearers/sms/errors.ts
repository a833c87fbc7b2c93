// +CMS ERROR codes (3GPP TS 27.005 3.2.5; network causes TS 24.011 annex E.2) and what they
// mean for a delivery (docs/sms.md, "Failures"): a later attempt may cure a missing network, a
// timeout, congestion, a busy SIM or full memory; nothing cures a bad number or a barring.

const NAMES: Readonly<Record<number, string>> = {
  1: 'UNASSIGNED_NUMBER',
  8: 'OPERATOR_DETERMINED_BARRING',
  10: 'CALL_BARRED',
  21: 'SHORT_MESSAGE_TRANSFER_REJECTED',
  27: 'DESTINATION_OUT_OF_SERVICE',
  28: 'UNIDENTIFIED_SUBSCRIBER',
  29: 'FACILITY_REJECTED',
  30: 'UNKNOWN_SUBSCRIBER',
  38: 'NETWORK_OUT_OF_ORDER',
  41: 'TEMPORARY_FAILURE',
  42: 'CONGESTION',
  47: 'RESOURCES_UNAVAILABLE',
  50: 'FACILITY_NOT_SUBSCRIBED',
  69: 'FACILITY_NOT_IMPLEMENTED',
  81: 'INVALID_SHORT_MESSAGE_REFERENCE',
  95: 'INVALID_MESSAGE',
  96: 'INVALID_MANDATORY_INFORMATION',
  97: 'MESSAGE_TYPE_NONEXISTENT',
  98: 'MESSAGE_NOT_COMPATIBLE',
  99: 'INFORMATION_ELEMENT_NONEXISTENT',
  111: 'PROTOCOL_ERROR',
  127: 'INTERWORKING_UNSPECIFIED',
  300: 'ME_FAILURE',
  301: 'SMS_SERVICE_RESERVED',
  302: 'OPERATION_NOT_ALLOWED',
  303: 'OPERATION_NOT_SUPPORTED',
  304: 'INVALID_PDU_MODE_PARAMETER',
  305: 'INVALID_TEXT_MODE_PARAMETER',
  310: 'SIM_NOT_INSERTED',
  311: 'SIM_PIN_REQUIRED',
  312: 'PH_SIM_PIN_REQUIRED',
  313: 'SIM_FAILURE',
  314: 'SIM_BUSY',
  315: 'SIM_WRONG',
  316: 'SIM_PUK_REQUIRED',
  320: 'MEMORY_FAILURE',
  321: 'INVALID_MEMORY_INDEX',
  322: 'MEMORY_FULL',
  330: 'SMSC_ADDRESS_UNKNOWN',
  331: 'NO_NETWORK_SERVICE',
  332: 'NETWORK_TIMEOUT',
  340: 'NO_CNMA_EXPECTED',
  500: 'UNKNOWN_ERROR',
};

// Worth another attempt: the network or the modem may be better later.
const RETRYABLE = new Set([27, 28, 38, 41, 42, 47, 81, 111, 127, 300, 313, 314, 320, 322, 331, 332, 500]);

export function cmsErrorName(code: number | null): string {
  if (code === null) return 'CMS_ERROR';
  return NAMES[code] ?? (code >= 128 && code <= 255 ? `TP_FAILURE_${code.toString(16).toUpperCase()}` : `CMS_${code}`);
}

export function isRetryableCmsError(code: number | null): boolean {
  return code === null || RETRYABLE.has(code);
}

/** A failed send as the delivery's last error: the code's name and number. */
export function cmsFailure(code: number | null): { ok: false; retryable: boolean; error: string } {
  return { ok: false, retryable: isRetryableCmsError(code), error: `ERR_SMS_${cmsErrorName(code)}: the modem answered +CMS ERROR: ${code ?? '?'}` };
}
