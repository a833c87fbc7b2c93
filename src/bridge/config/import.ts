import type { DatabaseSync } from 'node:sqlite';
import { z } from 'zod';
import { transaction } from '../../db/sqlite.ts';
import { formatPath } from '../../lib/validation.ts';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, conflict, type FieldError } from '../../lib/errors.ts';
import { silentLogger, type Logger } from '../../lib/log.ts';
import type { BookService } from '../contacts/service.ts';
import { driverFor, type InterfaceKind } from '../../bearers/drivers.ts';
import type { InterfaceService, ReplacedInterfaces } from '../interfaces/service.ts';
import { orderAddresses } from '../contacts/routes.ts';
import { isReference, mapDestinationInterfaces } from '../rules/match.ts';
import type { RuleService } from '../rules/service.ts';
import { SenderPolicy } from '../senders/policy.ts';
import type { SenderService } from '../senders/service.ts';
import { jsonEqual } from '../../lib/json.ts';
import { diffConfig, type ConfigChange } from './diff.ts';
import {
  buildConfigFile,
  CONFIG_FILE_FORMAT,
  CONFIG_FILE_VERSION,
  ContactEntry,
  FILE_KEYS,
  GroupEntry,
  InterfaceEntry,
  LIST_KEYS,
  OPTIONAL_KEYS,
  readConfigParts,
  RuleEntry,
  type ConfigFile,
  type ConfigParts,
} from './export.ts';
import { redactSettings } from '../interfaces/secrets.ts';
import { REDACTION_MARKER, redactSections, SECRET_FIELDS } from './secrets.ts';
import { SECTION_NAMES, type ChangeTarget } from './sections.ts';
import type { ConfigService } from './service.ts';

// POST /api/config/import and /api/config/diff (docs/api.md 4.4). Both check the whole
// file first and list every error with its JSON path; import then replaces the configuration
// in one transaction, diff only compares. Decisions (docs/config.md, "Import"):
// - Every top-level key is required (a section may be {} for its defaults, a list [] for
//   none): import replaces the whole configuration, so a forgotten key must not quietly
//   reset the radio or delete every rule. Unknown keys are refused (a typo would be lost).
// - The file refers by name only, and only to what it contains: a rule naming an interface,
//   group or contact that is not in the file is an error, even if the bridge has one.
// - History is kept: messages, deliveries, dead letters, audit entries and keys. A same-named
//   interface of the same kind keeps its id (its deliveries in flight stay attached); a
//   same-named rule keeps its id and fired count; a same-named group or contact its id.
// - A secret carrying the redaction marker keeps the stored one. A secret written in clear is
//   always reported as a change by diff and import, whether or not it equals the stored one,
//   so that diff can never be used to test a guess (admins may diff, only owners see secrets).

export type FileCheck = { ok: true; parts: ConfigParts; clearSecrets: Set<string> } | { ok: false; errors: FieldError[] };

/** Checks a whole configuration file; never throws for bad input. Paths start at root. */
export function checkConfigFile(raw: unknown, config: Pick<ConfigService, 'checkSections'>, root = 'body'): FileCheck {
  const errors: FieldError[] = [];
  const at = (...path: PropertyKey[]) => formatPath(root, path);
  const fail = (path: string, message: string) => errors.push({ path, message });
  if (!isObject(raw)) return { ok: false, errors: [{ path: root, message: 'must be a JSON object: a configuration file as GET /api/config/export writes it' }] };
  // A wrong format or version means the rest would be read against the wrong rules: stop here.
  if (raw.format !== CONFIG_FILE_FORMAT) fail(at('format'), `must be "${CONFIG_FILE_FORMAT}" (a file written by GET /api/config/export), got ${show(raw.format)}`);
  if (raw.version !== CONFIG_FILE_VERSION) fail(at('version'), `must be ${CONFIG_FILE_VERSION}: this release reads configuration files of version ${CONFIG_FILE_VERSION}, got ${show(raw.version)}`);
  if (errors.length > 0) return { ok: false, errors };

  const known: readonly string[] = FILE_KEYS;
  for (const key of Object.keys(raw)) if (!known.includes(key)) fail(at(key), `is not part of a configuration file; its keys are ${FILE_KEYS.join(', ')}`);
  for (const key of FILE_KEYS) {
    if ((OPTIONAL_KEYS as readonly string[]).includes(key) || raw[key] !== undefined) continue;
    const empty = (LIST_KEYS as readonly string[]).includes(key) ? '[] for none' : '{} for the defaults';
    fail(at(key), `is required: import replaces the whole configuration (write ${empty})`);
  }
  if (raw.exported_at !== undefined && !z.iso.datetime().safeParse(raw.exported_at).success) fail(at('exported_at'), 'must be an ISO 8601 UTC time, or left out');

  const sectionInput = Object.fromEntries(SECTION_NAMES.filter((n) => raw[n] !== undefined).map((n) => [n, raw[n]]));
  const sections = config.checkSections(sectionInput, root);
  if (!sections.ok) errors.push(...sections.errors);

  const interfaces = checkList(raw.interfaces, 'interfaces', InterfaceEntry, at, errors);
  // Settings are checked against their kind from the raw entry, so an entry with another bad
  // field still has its settings checked in the same answer.
  const settings = new Map<number, Record<string, unknown>>();
  (Array.isArray(raw.interfaces) ? raw.interfaces : []).forEach((item: unknown, index: number) => {
    if (!isObject(item) || typeof item.kind !== 'string' || !driverFor(item.kind) || !isObject(item.settings ?? {})) return;
    const result = driverFor(item.kind)!.settings.safeParse(item.settings ?? {});
    if (result.success) settings.set(index, result.data);
    else for (const issue of result.error.issues) fail(at('interfaces', index, 'settings', ...issue.path), issue.message);
  });
  const groups = checkList(raw.object_groups, 'object_groups', GroupEntry, at, errors);
  const contacts = checkList(raw.contacts, 'contacts', ContactEntry, at, errors);
  contacts.names.forEach((index, name) => {
    if (groups.names.has(name)) fail(at('contacts', index, 'name'), `'${name}' is also the name of an object group; "@${name}" must name one thing`);
  });
  const rules = checkList(raw.access_rules, 'access_rules', RuleEntry, at, errors);
  // A list that is missing or not a list has been reported; references into it are not
  // reported a second time.
  const ifaceNames = interfaces.isList ? new Set(interfaces.names.keys()) : null;
  const bookNames = groups.isList && contacts.isList ? new Set([...groups.names.keys(), ...contacts.names.keys()]) : null;
  checkReferences(raw.access_rules, ifaceNames, bookNames, at, errors);
  const senders = raw.senders === undefined ? undefined : SenderPolicy.safeParse(raw.senders);
  if (senders && !senders.success) for (const issue of senders.error.issues) fail(at('senders', ...issue.path), issue.message);
  // The policy's @names must be in the file, like the rules' (read raw: reported with its other errors).
  for (const list of ['blocklist', 'allowlist'] as const) {
    const entries = isObject(raw.senders) ? raw.senders[list] : undefined;
    if (!bookNames || !Array.isArray(entries)) continue;
    entries.forEach((entry: unknown, k: number) => {
      if (typeof entry === 'string' && isReference(entry) && !bookNames.has(entry.slice(1))) fail(at('senders', list, k), `no object group or contact '${entry.slice(1)}' in this file`);
    });
  }

  if (errors.length > 0 || !sections.ok) return { ok: false, errors };
  const clearSecrets = new Set<string>();
  for (const [section, fields] of Object.entries(SECRET_FIELDS)) {
    for (const field of fields) {
      const given = isObject(raw[section]) ? raw[section][field] : undefined;
      if (typeof given === 'string' && given !== REDACTION_MARKER) clearSecrets.add(`${section}.${field}`);
    }
  }
  const values = <T>(list: { items: Array<{ value: T }> }) => list.items.map((i) => i.value);
  return {
    ok: true,
    parts: {
      sections: sections.value,
      interfaces: interfaces.items.map(({ index, value }) => ({ ...value, settings: settings.get(index) ?? value.settings })),
      rules: values(rules),
      groups: values(groups),
      contacts: values(contacts),
      ...(senders?.success ? { senders: senders.data } : {}),
    },
    clearSecrets,
  };
}

interface CheckedList<T> {
  isList: boolean;
  items: Array<{ index: number; value: T }>;
  /** Every name given (first index), also of items with other errors, so references to an
   *  item with a bad field are not reported a second time as missing. */
  names: Map<string, number>;
}

function checkList<S extends z.ZodType>(list: unknown, key: string, schema: S, at: (...p: PropertyKey[]) => string, errors: FieldError[]): CheckedList<z.output<S>> {
  const out: CheckedList<z.output<S>> = { isList: Array.isArray(list), items: [], names: new Map() };
  if (list === undefined) return out;
  if (!Array.isArray(list)) {
    errors.push({ path: at(key), message: 'must be a list' });
    return out;
  }
  list.forEach((item, index) => {
    const result = schema.safeParse(item);
    if (result.success) out.items.push({ index, value: result.data });
    else for (const issue of result.error.issues) errors.push({ path: at(key, index, ...issue.path), message: issue.message });
    const name = isObject(item) ? item.name : undefined;
    if (typeof name !== 'string') return;
    const first = out.names.get(name);
    if (first === undefined) out.names.set(name, index);
    else errors.push({ path: at(key, index, 'name'), message: `'${name}' is already the name of ${key}[${first}]; names must be unique` });
  });
  return out;
}

/** Interfaces, groups and contacts a rule names must be in the file (read from the raw rules,
 *  so a rule with another bad field still has its references checked). */
function checkReferences(list: unknown, interfaces: Set<string> | null, books: Set<string> | null, at: (...p: PropertyKey[]) => string, errors: FieldError[]): void {
  if (!Array.isArray(list)) return;
  const iface = (value: unknown, path: string) => {
    if (interfaces && typeof value === 'string' && value !== '' && !interfaces.has(value)) errors.push({ path, message: `no interface '${value}' in this file` });
  };
  const address = (value: unknown, path: string) => {
    if (!books || typeof value !== 'string' || !isReference(value) || books.has(value.slice(1))) return;
    errors.push({ path, message: `no object group or contact '${value.slice(1)}' in this file` });
  };
  list.forEach((rule, i) => {
    if (!isObject(rule)) return;
    const match = isObject(rule.match) ? rule.match : {};
    if (Array.isArray(match.interfaces)) match.interfaces.forEach((v, k) => iface(v, at('access_rules', i, 'match', 'interfaces', k)));
    for (const field of ['from', 'to'] as const) {
      const entries = match[field];
      if (Array.isArray(entries)) entries.forEach((v, k) => address(v, at('access_rules', i, 'match', field, k)));
    }
    if (!Array.isArray(rule.destinations)) return;
    rule.destinations.forEach((d, k) => {
      if (!isObject(d)) return;
      // A fallback list names its interfaces and addresses in its members.
      const targets = Array.isArray(d.fallback) ? d.fallback.map((m, j) => ({ m, base: ['fallback', j] })) : [{ m: d as unknown, base: [] as PropertyKey[] }];
      for (const { m, base } of targets) {
        if (!isObject(m)) continue;
        iface(m.interface, at('access_rules', i, 'destinations', k, ...base, 'interface'));
        address(m.to, at('access_rules', i, 'destinations', k, ...base, 'to'));
      }
    });
  });
}

export interface ConfigFileDeps {
  db: DatabaseSync;
  config: ConfigService;
  interfaces: InterfaceService;
  rules: RuleService;
  groups: BookService<string[]>;
  contacts: BookService<Record<string, string>>;
  /** The dispatcher's write-behind queue: committed before the import's transaction opens, so
   *  an import that rolls back cannot take the dispatcher's delivery states with it. */
  deliveries?: { flush(): void };
  clock: Clock;
  log?: Logger;
  /** The senders policy: exported, and replaced by a file that has one; a file without one
   *  (an older release's) keeps it, and must then keep the groups and contacts it names. */
  senders?: Pick<SenderService, 'policy' | 'setPolicy' | 'names' | 'forgetCache'>;
}

export interface ImportResult {
  applied: true;
  changes: ConfigChange[];
}

/** Stands for a secret given in clear in the compared file; answered as the marker. */
const CLEAR_SECRET = '\u0000secret given in clear';

/** Export, diff and import of the whole configuration file. */
export class ConfigFileService {
  readonly #d: ConfigFileDeps;
  readonly #log: Logger;

  constructor(deps: ConfigFileDeps) {
    this.#d = deps;
    this.#log = deps.log ?? silentLogger;
  }

  /** The configuration file; secrets are replaced by the marker unless `secrets` is true. */
  export(options: { secrets: boolean }): ConfigFile {
    const parts = readConfigParts(this.#d);
    if (!options.secrets) redactParts(parts);
    return buildConfigFile(parts, new Date(this.#d.clock.now()).toISOString());
  }

  /** What import would change; changes nothing. Throws a 400 listing every error of the file. */
  diff(raw: unknown): ConfigChange[] {
    return this.#changes(this.#check(raw));
  }

  /** Replaces the configuration with the file's in one transaction; on any error nothing changes. */
  async import(raw: unknown): Promise<ImportResult> {
    const checked = this.#check(raw);
    const changes = this.#changes(checked);
    const { config, interfaces, rules, groups, contacts } = this.#d;
    const { parts } = checked;
    // A file without a senders policy keeps the stored one, which names groups and contacts:
    // an import that removed one would leave it naming nothing, so it is refused.
    const kept = new Set([...parts.groups.map((g) => g.name.toLowerCase()), ...parts.contacts.map((c) => c.name.toLowerCase())]);
    const dangling = parts.senders ? [] : (this.#d.senders?.names() ?? []).filter((n) => !kept.has(n.toLowerCase()));
    if (dangling.length > 0) {
      throw conflict('ERR_IN_USE', `the senders policy refers to ${dangling.map((n) => `@${n}`).join(', ')}, which the file does not have; add ${dangling.length > 1 ? 'them' : 'it'} to the file or change the policy first (PUT /api/senders/policy)`);
    }
    let announce: Array<[ChangeTarget, unknown]> = [];
    let replaced: ReplacedInterfaces = { ids: new Map(), removed: [] };
    this.#d.deliveries?.flush();
    try {
      transaction(this.#d.db, () => {
        announce = config.replaceAll(parts.sections);
        groups.replaceAll(parts.groups.map((g) => ({ name: g.name, value: g.members })));
        contacts.replaceAll(parts.contacts.map((c) => ({ name: c.name, value: orderAddresses(c.addresses as Record<string, string>, c.prefer) })));
        replaced = interfaces.replaceAll(parts.interfaces.map((i) => ({ ...i, kind: i.kind as InterfaceKind })));
        const idOf = (name: string) => replaced.ids.get(name) ?? name;
        rules.replaceAll(parts.rules.map((r) => ({
          ...r,
          match: r.match.interfaces ? { ...r.match, interfaces: r.match.interfaces.map(idOf) } : r.match,
          destinations: r.destinations.map((d) => mapDestinationInterfaces(d, idOf)),
        })));
        const senders = this.#d.senders;
        if (parts.senders && senders && !jsonEqual(parts.senders, senders.policy())) senders.setPolicy(parts.senders);
      });
    } finally {
      rules.forgetCache();
      this.#d.senders?.forgetCache();
    }
    // After COMMIT only: a rolled-back import never reaches a radio or a bearer.
    config.announce(announce);
    await interfaces.applyReplaced(replaced);
    this.#log.info('config_imported', {
      changes: changes.length,
      interfaces: parts.interfaces.length,
      interfaces_removed: replaced.removed.length,
      access_rules: parts.rules.length,
      object_groups: parts.groups.length,
      contacts: parts.contacts.length,
    });
    return { applied: true, changes };
  }

  #check(raw: unknown): Extract<FileCheck, { ok: true }> {
    const checked = checkConfigFile(raw, this.#d.config);
    if (checked.ok) return checked;
    const shown = checked.errors.slice(0, 5).map((e) => `${e.path}: ${e.message}`).join('; ');
    const more = checked.errors.length > 5 ? `; and ${checked.errors.length - 5} more in errors` : '';
    throw badRequest(`the configuration file has ${checked.errors.length} error(s) and nothing was changed: ${shown}${more}`, checked.errors);
  }

  /** diffConfig over the stored and the incoming file, secrets redacted in both. */
  #changes(checked: Extract<FileCheck, { ok: true }>): ConfigChange[] {
    const current = redactParts(readConfigParts(this.#d));
    // A file without a senders policy keeps the stored one: no change.
    const incoming = redactParts({ ...checked.parts, senders: checked.parts.senders ?? current.senders });
    const sections = incoming.sections as unknown as Record<string, Record<string, unknown>>;
    for (const path of checked.clearSecrets) {
      const [section, field] = path.split('.');
      sections[section] = { ...sections[section], [field]: CLEAR_SECRET };
    }
    return diffConfig(buildConfigFile(current), buildConfigFile(incoming)).map((c) => ({ ...c, from: unmask(c.from), to: unmask(c.to) }));
  }
}

function unmask(value: unknown): unknown {
  if (value === CLEAR_SECRET) return REDACTION_MARKER;
  if (Array.isArray(value)) return value.map(unmask);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unmask(v)]));
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function show(value: unknown): string {
  return value === undefined ? 'nothing' : JSON.stringify(value);
}

/** Secrets in sections and interface settings replaced by the marker (in place; returned). */
function redactParts(parts: ConfigParts): ConfigParts {
  parts.sections = redactSections(parts.sections);
  parts.interfaces = parts.interfaces.map((i) => ({ ...i, settings: redactSettings(i.kind, i.settings) }));
  return parts;
}
