import { z } from 'zod';
import { aprsDriver } from './aprs/index.ts';
import type { DriverModule } from './driver-module.ts';
import { STREAM_FRAMING, type BleService } from './shared/links/ble-framing.ts';
import { iridiumDriver } from './iridium/index.ts';
import { meshcoreDriver } from './meshcore/index.ts';
import { meshtasticDriver } from './meshtastic/index.ts';
import { rnodeDriver } from './rnode/index.ts';
import { simDriver } from './sim/index.ts';
import { smsDriver } from './sms/index.ts';
import { takDriver } from './tak/index.ts';
import { webhookDriver } from './webhook/index.ts';

// Every interface kind this release knows, one line each: adding a kind is its folder under
// bearers/ plus one line here (docs/architecture.md, "Adding a driver"). Everything else that
// lists kinds derives from this list.

export const DRIVERS = [meshtasticDriver, rnodeDriver, iridiumDriver, smsDriver, meshcoreDriver, simDriver, webhookDriver, takDriver, aprsDriver] as const;

export type InterfaceKind = (typeof DRIVERS)[number]['kind'];
export const INTERFACE_KINDS = DRIVERS.map((d) => d.kind) as [InterfaceKind, ...InterfaceKind[]];
/** Kinds whose drivers tell the time their device holds (DriverModule.tellsTime). */
export const TIME_TELLING_KINDS = DRIVERS.filter((d) => 'tellsTime' in d && d.tellsTime).map((d) => d.kind) as [InterfaceKind, ...InterfaceKind[]];

/** The meshes whose nodes the node database keeps (DriverModule.nodeNetwork), in list order. */
export const NODE_NETWORKS = DRIVERS.flatMap((d) => ('nodeNetwork' in d && d.nodeNetwork ? [d.nodeNetwork] : [])) as [string, ...string[]];

/** The GATT services the kinds speak over ble://, one per UUID, in list order (a board offering
 *  several is labelled by the first): what `fieldbridge ports` looks for. */
export const BLE_SERVICES: readonly BleService[] = [
  ...new Map(DRIVERS.flatMap((d) => ('bleFraming' in d && d.bleFraming ? d.bleFraming : STREAM_FRAMING).services).map((s) => [s.uuid, s])).values(),
];

const byKind = new Map<string, DriverModule>(DRIVERS.map((d) => [d.kind, d]));

/** The module of a kind, or undefined for a kind this release does not know. */
export function driverFor(kind: string): DriverModule | undefined {
  return byKind.get(kind);
}

/** The contact address fields, one per address family, in the order the kinds are listed. */
export function contactAddressFields(): Array<{ field: string; schema: z.ZodType<string | undefined> }> {
  const fields = new Map<string, z.ZodType<string | undefined>>();
  for (const { contact } of DRIVERS) {
    if (!contact.schema || fields.has(contact.field)) continue;
    const optional = contact.schema.optional();
    fields.set(contact.field, contact.description ? optional.describe(contact.description) : optional);
  }
  for (const d of DRIVERS) if (!fields.has(d.contact.field)) throw new Error(`driver ${d.kind}: contact field '${d.contact.field}' has no schema in any module`);
  return [...fields].map(([field, schema]) => ({ field, schema }));
}
