import type { AtSession } from '../shared/at/command-queue.ts';

// Who the modem says it is (docs/protocols/iridium-sbd.md 3.1): read at every bring-up, shown
// in stats. A command the modem refuses leaves its field null.

export interface ModemIdentity {
  /** AT+CGSN: 15 digits. */
  imei: string | null;
  /** AT+CGMR: every line it answered, joined. */
  firmware: string | null;
  /** AT+CGMM */
  model: string | null;
}

export async function readIdentity(at: AtSession): Promise<ModemIdentity> {
  const imei = await at.run('AT+CGSN');
  const firmware = await at.run('AT+CGMR');
  const model = await at.run('AT+CGMM');
  return {
    imei: imei.ok ? (imei.info.find((l) => /^[0-9]{15}$/.test(l.trim()))?.trim() ?? null) : null,
    firmware: firmware.ok && firmware.info.length > 0 ? firmware.info.join('; ') : null,
    model: model.ok ? (model.info[0] ?? null) : null,
  };
}
