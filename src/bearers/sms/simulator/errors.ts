// Final result codes of the simulated modem: +CME ERROR (3GPP TS 27.007 section 9.2) and
// +CMS ERROR (27.005 section 3.2.5; docs/protocols/sms.md 4.5), with the names the
// specifications give them (docs/style.md habit 3).

/** +CME ERROR codes the modem answers (27.007 9.2.1). */
export const CME = {
  OPERATION_NOT_ALLOWED: 3,
  OPERATION_NOT_SUPPORTED: 4,
  SIM_NOT_INSERTED: 10,
  SIM_PIN_REQUIRED: 11,
  SIM_PUK_REQUIRED: 12,
  SIM_FAILURE: 13,
  INCORRECT_PASSWORD: 16,
  INVALID_INDEX: 21,
  NO_NETWORK_SERVICE: 30,
  INCORRECT_PARAMETERS: 50,
  UNKNOWN: 100,
} as const;

export const CME_TEXT: Readonly<Record<number, string>> = {
  3: 'operation not allowed',
  4: 'operation not supported',
  10: 'SIM not inserted',
  11: 'SIM PIN required',
  12: 'SIM PUK required',
  13: 'SIM failure',
  16: 'incorrect password',
  21: 'invalid index',
  30: 'no network service',
  50: 'incorrect parameters',
  100: 'unknown',
};

/** +CMS ERROR codes the modem answers (27.005 3.2.5). 0-127 are network causes (24.011 E.2)
 *  and 128-255 TP-FCS values: failNextSends() takes any of them. */
export const CMS = {
  ME_FAILURE: 300,
  OPERATION_NOT_ALLOWED: 302,
  OPERATION_NOT_SUPPORTED: 303,
  INVALID_PDU_MODE_PARAMETER: 304,
  INVALID_TEXT_MODE_PARAMETER: 305,
  SIM_NOT_INSERTED: 310,
  SIM_PIN_REQUIRED: 311,
  SIM_FAILURE: 313,
  SIM_PUK_REQUIRED: 316,
  INVALID_MEMORY_INDEX: 321,
  MEMORY_FULL: 322,
  NO_NETWORK_SERVICE: 331,
  NETWORK_TIMEOUT: 332,
  UNKNOWN_ERROR: 500,
} as const;

export type Final = 'OK' | 'ERROR' | { cme: number } | { cms: number };

/** The final result line (ATV1), with +CME ERROR shaped by AT+CMEE (27.007 9.1): 0 plain
 *  ERROR, 1 numeric, 2 verbose. +CMS ERROR is numeric whatever AT+CMEE says (27.005 3.2.5). */
export function finalLine(final: Final, cmee: number): string {
  if (final === 'OK' || final === 'ERROR') return final;
  if ('cms' in final) return `+CMS ERROR: ${final.cms}`;
  if (cmee === 0) return 'ERROR';
  if (cmee === 2) return `+CME ERROR: ${CME_TEXT[final.cme] ?? 'unknown'}`;
  return `+CME ERROR: ${final.cme}`;
}
