import { z } from 'zod';
import { PortValueSchema } from '../../bearers/shared/links/port-value.ts';
import { ContactAddressesSchema, GroupMembersSchema, PreferSchema } from '../contacts/routes.ts';
import type { BookRow } from '../contacts/store.ts';
import { DEFAULT_RETRY_POLICY, RetryPolicy } from '../engine/backoff.ts';
import { driverFor, INTERFACE_KINDS, type InterfaceKind } from '../../bearers/drivers.ts';
import { InterfaceName } from '../interfaces/routes.ts';
import { TransformPipeline } from '../engine/transforms.ts';
import { mapDestinationInterfaces, refineRuleAction, RULE_ACTION_FIELDS, RuleMatch } from '../rules/match.ts';
import { Schedule } from '../rules/schedule.ts';
import type { RuleRow } from '../rules/store.ts';
import { ConfigSections, SECTION_NAMES, type ConfigValues } from './sections.ts';
import { MAX_JSON_DEPTH } from '../../http/body.ts';
import type { InterfaceRow } from '../engine/rows.ts';
import { SenderPolicy } from '../senders/policy.ts';

// The configuration file (docs/api.md 2.6, 4.4 GET /api/config/export): one readable,
// hand-editable JSON document with every section, the interfaces, the access rules in
// evaluation order, the object groups, the contacts and the senders policy. It carries intent, not history, and
// no ids: interfaces, groups and contacts are named, so the file is a template for another
// bridge too. The import (import.ts) reads exactly this shape.
//
// Decisions (docs/config.md, "Export"):
// - Key order is fixed so two exports of the same configuration are byte-identical and diff
//   cleanly in git: the top level in FILE_KEYS order; each entry name first, then its fields
//   in the entry schema's order; sections, settings, transforms, retry policies, filters and
//   schedules in their schema's order (each value is passed through its schema, which also
//   fills defaults a hand-written file left out). Settings of a kind without a field list (a
//   kind whose driver is not in this release), or stored settings their kind's schema no
//   longer takes, have their keys sorted at every level, iteratively and to a bounded depth
//   (sortKeysDeep).
// - Interfaces, groups and contacts are sorted by name; access rules keep evaluation order,
//   which is their meaning.
// - 2-space indentation and a final newline.

export const CONFIG_FILE_FORMAT = 'fieldbridge-config';
export const CONFIG_FILE_VERSION = 1;

/** Every top-level key, in the order the file is written. */
export const FILE_KEYS = ['format', 'version', 'exported_at', ...SECTION_NAMES, 'interfaces', 'access_rules', 'object_groups', 'contacts', 'senders'] as const;
/** Keys a file may leave out: written by a release before they existed, import keeps what is stored. */
export const OPTIONAL_KEYS = ['exported_at', 'senders'] as const;
export const LIST_KEYS = ['interfaces', 'access_rules', 'object_groups', 'contacts'] as const;

export const InterfaceEntry = z.strictObject({
  name: InterfaceName,
  kind: z.enum(INTERFACE_KINDS, { error: `kind must be one of ${INTERFACE_KINDS.join(', ')}` }),
  enabled: z.boolean().default(true),
  device: PortValueSchema.nullable().default(null).describe('A port value; null: unbound'),
  settings: z.record(z.string(), z.unknown()).default({}).describe('Checked against the kind\'s settings (docs/routing.md)'),
  transforms: TransformPipeline.default({ inbound: [], outbound: [] }),
  retry: RetryPolicy.default(DEFAULT_RETRY_POLICY),
});
export type InterfaceEntry = z.output<typeof InterfaceEntry>;

export const RuleEntry = z
  .strictObject({
    name: InterfaceName,
    enabled: z.boolean().default(true),
    match: RuleMatch.describe('As in the access rules API, with interfaces given by name'),
    schedule: Schedule.nullable().default(null).describe('null: always active'),
    action: RULE_ACTION_FIELDS.action,
    destinations: RULE_ACTION_FIELDS.destinations.unwrap().default([]).describe('{interface (a name in this file), to}, or a fallback list of them'),
    precedence: RULE_ACTION_FIELDS.precedence,
  })
  .superRefine(refineRuleAction);
export type RuleEntry = z.output<typeof RuleEntry>;

export const GroupEntry = z.strictObject({ name: InterfaceName, members: GroupMembersSchema });
export type GroupEntry = z.output<typeof GroupEntry>;
export const ContactEntry = z.strictObject({ name: InterfaceName, addresses: ContactAddressesSchema, prefer: PreferSchema.optional() });
export type ContactEntry = z.output<typeof ContactEntry>;

/** The whole file, as export writes it (documentation and tests; import checks it piece by piece). */
export const ConfigFile = z.strictObject({
  format: z.literal(CONFIG_FILE_FORMAT),
  version: z.literal(CONFIG_FILE_VERSION),
  exported_at: z.iso.datetime().optional().describe('When the file was written; ignored by import and diff'),
  ...ConfigSections.shape,
  interfaces: z.array(InterfaceEntry).describe('Sorted by name'),
  access_rules: z.array(RuleEntry).describe('In evaluation order'),
  object_groups: z.array(GroupEntry).describe('Sorted by name; rules refer to them as @name'),
  contacts: z.array(ContactEntry).describe('Sorted by name; rules refer to them as @name'),
  senders: SenderPolicy.optional().describe('The senders policy (docs/senders.md); its @names are groups and contacts of this file. Left out (a file of an older release), import keeps the stored policy'),
});
export type ConfigFile = z.output<typeof ConfigFile>;

/** The configuration behind a file, without format fields (what import writes, what export reads). */
export interface ConfigParts {
  sections: ConfigValues;
  interfaces: InterfaceEntry[];
  rules: RuleEntry[];
  groups: GroupEntry[];
  contacts: ContactEntry[];
  /** undefined: the file has none (import keeps the stored policy). */
  senders?: SenderPolicy;
}

/**
 * The file for `parts`, in canonical form: every value through its schema (schema key order,
 * defaults filled), entries in FILE_KEYS / schema order, lists sorted as decided above. Export
 * and diff both build their documents here, so an imported file and the next export agree.
 */
export function buildConfigFile(parts: ConfigParts, exportedAt?: string): ConfigFile {
  const byName = <T extends { name: string }>(items: T[]) => [...items].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const sections = canonical(ConfigSections, parts.sections);
  const file: Record<string, unknown> = { format: CONFIG_FILE_FORMAT, version: CONFIG_FILE_VERSION };
  if (exportedAt !== undefined) file.exported_at = exportedAt;
  for (const name of SECTION_NAMES) file[name] = sections[name];
  file.interfaces = byName(parts.interfaces).map(canonicalInterface);
  file.access_rules = parts.rules.map((r) => canonical(RuleEntry, r));
  file.object_groups = byName(parts.groups).map((g) => canonical(GroupEntry, g));
  file.contacts = byName(parts.contacts).map((c) => canonical(ContactEntry, c));
  if (parts.senders !== undefined) file.senders = canonical(SenderPolicy, parts.senders);
  return file as ConfigFile;
}

/** The file's bytes: 2-space indentation and a final newline. */
export function serializeConfigFile(file: ConfigFile): string {
  return `${JSON.stringify(file, null, 2)}\n`;
}

function canonicalInterface(entry: InterfaceEntry): InterfaceEntry {
  const out = canonical(InterfaceEntry, entry);
  const schema = driverFor(out.kind)?.settings;
  const checked = schema && !(schema instanceof z.ZodRecord) ? schema.safeParse(out.settings) : undefined;
  if (checked?.success) return { ...out, settings: checked.data as Record<string, unknown> };
  // A kind without a field list, or stored settings its schema no longer takes (written by
  // an older release): keys sorted, nesting bounded.
  return { ...out, settings: sortKeysDeep(out.settings, MAX_SETTINGS_DEPTH) as Record<string, unknown> };
}

/** The value through its schema; a stored value the schema no longer accepts is kept as is. */
function canonical<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  return (parsed.success ? parsed.data : value) as z.output<S>;
}

/** Settings sit 3 levels down in the file (file, interfaces, entry): nested deeper than this,
 *  the file would be refused by the import's body depth limit (http/body.ts). */
const MAX_SETTINGS_DEPTH = MAX_JSON_DEPTH - 3;
export const TOO_DEEP_MARKER = `<nested deeper than ${MAX_SETTINGS_DEPTH} levels: not exported>`;

/**
 * A copy of `value` with the keys of every object sorted, walked with a stack of its own
 * rather than by recursion, so no stored value can overflow the call stack. An
 * array or object deeper than `maxDepth` levels is written as TOO_DEEP_MARKER: the API can no
 * longer store one, and a file holding it could not be imported back.
 */
export function sortKeysDeep(value: unknown, maxDepth: number): unknown {
  const root: Record<string, unknown> = {};
  const work: Array<{ into: Record<string | number, unknown>; key: string | number; value: unknown; depth: number }> = [{ into: root, key: 'value', value, depth: 1 }];
  while (work.length > 0) {
    const { into, key, value: v, depth } = work.pop()!;
    if (typeof v !== 'object' || v === null) {
      into[key] = v;
    } else if (depth > maxDepth) {
      into[key] = TOO_DEEP_MARKER;
    } else if (Array.isArray(v)) {
      const out: unknown[] = new Array(v.length);
      into[key] = out;
      v.forEach((item, i) => work.push({ into: out as unknown as Record<number, unknown>, key: i, value: item, depth: depth + 1 }));
    } else {
      const out: Record<string, unknown> = {};
      into[key] = out;
      for (const k of Object.keys(v).sort()) {
        out[k] = undefined; // the key's place, in sorted order; filled when its turn comes
        work.push({ into: out, key: k, value: (v as Record<string, unknown>)[k], depth: depth + 1 });
      }
    }
  }
  return root.value;
}

/** What readConfigParts needs: the services that own each part of the configuration. */
export interface ConfigSources {
  config: { all(): ConfigValues };
  interfaces: { list(): InterfaceRow[] };
  rules: { list(): RuleRow[] };
  groups: { list(): Array<BookRow<string[]>> };
  contacts: { list(): Array<BookRow<Record<string, string>>> };
  senders?: { policy(): SenderPolicy };
}

/** The stored configuration as file parts, unredacted: rules name interfaces by name, not id. */
export function readConfigParts(from: ConfigSources): ConfigParts {
  const rows = from.interfaces.list();
  const names = new Map(rows.map((r) => [r.id, r.name]));
  // A rule always names existing interfaces (deleting one deletes its rules); an id without
  // a name would be a damaged database, and is written as it is rather than dropped.
  const nameOf = (id: string) => names.get(id) ?? id;
  return {
    sections: from.config.all(),
    interfaces: rows.map((r) => ({ name: r.name, kind: r.kind as InterfaceKind, enabled: r.enabled, device: r.device, settings: r.settings, transforms: r.transforms, retry: r.retry }) as InterfaceEntry),
    rules: from.rules.list().map((r) => ({
      name: r.name,
      enabled: r.enabled,
      match: r.match.interfaces ? { ...r.match, interfaces: r.match.interfaces.map(nameOf) } : r.match,
      schedule: r.schedule,
      action: r.action,
      destinations: r.destinations.map((d) => mapDestinationInterfaces(d, nameOf)),
      ...(r.precedence ? { precedence: r.precedence } : {}),
    })),
    groups: from.groups.list().map((g) => ({ name: g.name, members: g.value })),
    // The preferred order is the order of the stored addresses; the file spells it out.
    contacts: from.contacts.list().map((c) => ({ name: c.name, addresses: c.value, prefer: Object.keys(c.value) })),
    ...(from.senders ? { senders: from.senders.policy() } : {}),
  };
}
