import { EventEmitter } from 'node:events';
import type { DeviceSection } from '../../bearers/bearer.ts';
import type { z } from 'zod';
import { zodErrors } from '../../lib/validation.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError, badRequest, type FieldError } from '../../lib/errors.ts';
import { silentLogger, type Logger } from '../../lib/log.ts';
import { mergePatch } from './patch.ts';
import { radioWarnings, type RadioWarning } from './radio.ts';
import { bindPasswordToBroker } from './hub-password.ts';
import { restoreSecrets } from './secrets.ts';
import {
  ConfigSections,
  isModuleName,
  isSectionName,
  MODULE_NAMES,
  MODULE_SCHEMAS,
  SECTION_NAMES,
  SECTION_SCHEMAS,
  type ChangeTarget,
  type ConfigValues,
  type ModuleName,
  type RadioValues,
  type SectionName,
} from './sections.ts';
import type { ConfigStore } from './store.ts';

// Decides what a configuration read or write means: sections read as their defaults until
// written; a write is a patch merged onto the stored section and validated whole before
// anything is stored; a marker in a secret field keeps the stored secret; a write that changes
// a value is announced on the 'change' event after it is committed, so drivers (the mesh radio,
// the hub uplink) apply it. A write that changes nothing announces nothing: pushing unchanged
// LoRa settings would make a Meshtastic radio reboot for no reason.

export interface ConfigEvents {
  /** value is the new, unredacted section or module value (drivers need the real secrets). */
  change: [section: ChangeTarget, value: unknown];
}

export interface RadioWriteResult {
  radio: RadioValues;
  warnings: RadioWarning[];
}

export type SectionCheck = { ok: true; value: ConfigValues } | { ok: false; errors: FieldError[] };

export class ConfigService extends EventEmitter<ConfigEvents> {
  readonly #store: ConfigStore;
  readonly #clock: Clock;
  readonly #log: Logger;
  /** What devices report they hold, by device section (the mesh radio's LoRa settings...). */
  readonly #reported = new Map<DeviceSection, Record<string, unknown>>();
  #deviceCheck: ((section: DeviceSection, value: Record<string, unknown>, part?: string) => string[]) | null = null;

  constructor(store: ConfigStore, clock: Clock, log: Logger = silentLogger) {
    super();
    this.#store = store;
    this.#clock = clock;
    this.#log = log;
    this.#warm();
  }

  /** Every section, unredacted (callers answering HTTP redact). */
  all(): ConfigValues {
    const out: Record<string, unknown> = {};
    for (const name of SECTION_NAMES) out[name] = this.#read(name);
    return out as ConfigValues;
  }

  section<S extends SectionName>(name: S): ConfigValues[S];
  section(name: string): ConfigValues[SectionName];
  section(name: string): ConfigValues[SectionName] {
    if (!isSectionName(name)) {
      throw new AppError('ERR_UNKNOWN_SECTION', 404, `configuration section '${name}' does not exist; known sections: ${SECTION_NAMES.join(', ')}`);
    }
    return this.#read(name);
  }

  /** True once the section was written (through the API or an import); until then it reads
   *  as its defaults. */
  isStored(name: SectionName): boolean {
    return this.#store.get(name) !== undefined;
  }

  module<M extends ModuleName>(name: M): ConfigValues['modules'][M];
  module(name: string): ConfigValues['modules'][ModuleName];
  module(name: string): ConfigValues['modules'][ModuleName] {
    if (!isModuleName(name)) {
      throw new AppError('ERR_UNKNOWN_MODULE', 404, `module '${name}' does not exist; known modules: ${MODULE_NAMES.join(', ')}`);
    }
    return this.#read('modules')[name];
  }

  /**
   * Merges patch onto the stored section (or module), validates the result whole and stores
   * it. Errors name their field under errorRoot (e.g. "body.settings"). Returns the new value.
   */
  write(target: ChangeTarget, patch: unknown, errorRoot: string): unknown {
    let passwordCleared = false;
    const { value, changed } = this.#store.atomically(() => {
      const section: SectionName = isModuleName(target) ? 'modules' : target;
      const stored = this.#base(section);
      const current = isModuleName(target) ? stored[target] : stored;
      const merged = mergePatch(current, patch);
      const restored = restoreSecrets(target, merged, current);
      if (target === 'hub') {
        // The stored password stays only while the broker does (hub-password.ts).
        const bound = bindPasswordToBroker(restored.value, current, patch);
        restored.value = bound.value;
        passwordCleared = bound.cleared;
      }
      const errors = restored.missing.map((field) => ({
        path: `${errorRoot}.${field}`,
        message: 'carries the redaction marker but no secret is stored to keep; send the real value',
      }));
      const schema: z.ZodType = isModuleName(target) ? MODULE_SCHEMAS[target] : SECTION_SCHEMAS[target];
      const parsed = schema.safeParse(restored.value);
      if (!parsed.success) errors.push(...zodErrors(parsed.error, errorRoot));
      if (errors.length === 0) errors.push(...this.#deviceErrors(target, isModuleName(target) ? { ...stored, [target]: parsed.data } : parsed.data, errorRoot));
      if (errors.length > 0) throw invalid(errors);
      // A section never written is stored by its first write even when it equals what the
      // device reports: the next device (a replacement board) must get it too.
      const changed = JSON.stringify(parsed.data) !== JSON.stringify(current) || !this.isStored(section);
      if (changed) {
        const next = isModuleName(target) ? { ...stored, [target]: parsed.data } : parsed.data;
        this.#store.put(section, JSON.stringify(next), new Date(this.#clock.now()).toISOString());
      }
      return { value: parsed.data, changed };
    }).result;
    if (changed && passwordCleared) {
      this.#log.warn('config_hub_password_cleared', { note: 'hub.mqtt_url now names another broker and the write did not give the password: the stored one is not sent there; set hub.password again' });
    }
    if (changed) this.announce([[target, value]]);
    this.#warm();
    return value;
  }

  /**
   * What a write patches: the stored section; for a device section never written, what the
   * device reported (over the defaults), so a patch of one field leaves the device's other
   * values as they are instead of pushing defaults (a default region is UNSET: the radio
   * would stop transmitting).
   */
  #base(section: SectionName): Record<string, unknown> {
    const stored = this.#read(section) as Record<string, unknown>;
    const reported = (section === 'radio' || section === 'owner') && !this.isStored(section) ? this.#reported.get(section) : undefined;
    if (!reported) return stored;
    // Field by field: a value the bridge cannot express (a newer preset) keeps its default.
    const shape = (SECTION_SCHEMAS[section] as unknown as z.ZodObject).shape as Record<string, z.ZodType>;
    const base = { ...stored };
    for (const [field, value] of Object.entries(reported)) if (shape[field]?.safeParse(value).success) base[field] = value;
    return base;
  }

  /** Asks the bound devices what of a device-section write they would not take (their
   *  firmware's limits); app.ts wires it to the running bearers. */
  setDeviceCheck(check: (section: DeviceSection, value: Record<string, unknown>, part?: string) => string[]): void {
    this.#deviceCheck = check;
  }

  /** A device section past what a bound device takes is refused, naming the limit (nothing is
   *  stored, so nothing is pushed). */
  #deviceErrors(target: ChangeTarget, value: unknown, errorRoot: string): FieldError[] {
    const section: DeviceSection | null = target === 'radio' || target === 'owner' ? target : isModuleName(target) ? 'modules' : null;
    if (!section || !this.#deviceCheck) return [];
    return this.#deviceCheck(section, value as Record<string, unknown>, section === 'modules' ? target : undefined).map((message) => ({ path: errorRoot, message }));
  }

  /** A radio write answers warnings when it may take the device off its mesh (docs/api.md 4.4). */
  writeRadio(patch: unknown, errorRoot: string): RadioWriteResult {
    const before = this.#read('radio');
    const radio = this.write('radio', patch, errorRoot) as RadioValues;
    return { radio, warnings: radioWarnings(radio, before, this.reportedRadio()) };
  }

  /** A driver reports what its device holds for a section (null: nothing known, e.g. unbound);
   *  through the device-configuration channel (device-config.ts). */
  setReported(section: DeviceSection, values: Record<string, unknown> | null): void {
    if (values) this.#reported.set(section, { ...values });
    else this.#reported.delete(section);
  }

  reported(section: DeviceSection): Record<string, unknown> | null {
    const values = this.#reported.get(section);
    return values ? { ...values } : null;
  }

  /** The mesh driver reports the LoRa settings the radio runs with (null: no radio bound). */
  setReportedRadio(values: Partial<RadioValues> | null): void {
    this.setReported('radio', values);
  }

  reportedRadio(): Partial<RadioValues> | null {
    return this.reported('radio') as Partial<RadioValues> | null;
  }

  /**
   * For import and diff: the sections of a whole document validated at once (every error with
   * its path under root), markers replaced by the stored secrets. Never throws for bad input.
   */
  checkSections(input: unknown, root: string): SectionCheck {
    const errors: FieldError[] = [];
    let candidate = input;
    if (typeof input === 'object' && input !== null && !Array.isArray(input)) {
      const copy: Record<string, unknown> = { ...(input as Record<string, unknown>) };
      for (const name of SECTION_NAMES) {
        if (copy[name] === undefined) continue;
        const restored = restoreSecrets(name, copy[name], this.#read(name));
        // An import (or its diff) is held to the same rule as a write; only a write logs it.
        copy[name] = name === 'hub' ? bindPasswordToBroker(restored.value, this.#read(name), (input as Record<string, unknown>)[name]).value : restored.value;
        for (const field of restored.missing) errors.push({ path: `${root}.${name}.${field}`, message: 'carries the redaction marker but no secret is stored to keep' });
      }
      candidate = copy;
    }
    const parsed = ConfigSections.safeParse(candidate);
    if (!parsed.success) errors.push(...zodErrors(parsed.error, root));
    return errors.length > 0 ? { ok: false, errors } : { ok: true, value: (parsed as { data: ConfigValues }).data };
  }

  /**
   * Replaces every section with checked values (from checkSections). Inside a transaction the
   * caller opened (an import), the changes are returned unannounced: call announce() after
   * COMMIT, so a rolled-back import never reaches a radio. Otherwise they are announced here.
   */
  replaceAll(values: ConfigValues): Array<[ChangeTarget, unknown]> {
    const { result: changes, ownTransaction } = this.#store.atomically(() => {
      const changes: Array<[ChangeTarget, unknown]> = [];
      const at = new Date(this.#clock.now()).toISOString();
      for (const name of SECTION_NAMES) {
        const before = this.#read(name) as Record<string, unknown>;
        const after = values[name] as Record<string, unknown>;
        if (JSON.stringify(before) === JSON.stringify(after)) continue;
        this.#store.put(name, JSON.stringify(after), at);
        if (name !== 'modules') changes.push([name, after]);
        else for (const m of MODULE_NAMES) if (JSON.stringify(before[m]) !== JSON.stringify(after[m])) changes.push([m, after[m]]);
      }
      return changes;
    });
    if (ownTransaction) this.announce(changes);
    return changes;
  }

  /** Tells every 'change' listener; one failing listener is logged and does not stop the others. */
  announce(changes: Array<[ChangeTarget, unknown]>): void {
    this.#warm();
    for (const [target, value] of changes) {
      for (const listener of this.rawListeners('change') as Array<(t: ChangeTarget, v: unknown) => void>) {
        try {
          listener(target, value);
        } catch (error) {
          this.#log.error('config_change_listener_failed', { section: target, error: (error as Error)?.message ?? String(error) });
        }
      }
    }
  }

  /** Parsed sections as of store version `version`: the router reads routing.* for every message. */
  #cache: { version: number; values: Map<SectionName, unknown> } = { version: -1, values: new Map() };

  #read<S extends SectionName>(name: S): ConfigValues[S] {
    const store = this.#store;
    // A hit is safe inside a transaction too: any write there bumps the version first.
    if (this.#cache.version === store.version && this.#cache.values.has(name)) return this.#cache.values.get(name) as ConfigValues[S];
    const value = this.#readStored(name);
    if (!store.inTransaction) {
      if (this.#cache.version !== store.version) this.#cache = { version: store.version, values: new Map() };
      this.#cache.values.set(name, deepFreeze(value));
    }
    return value;
  }

  /**
   * Fills the cache outside any transaction (at start and after every committed change): the
   * router reads routing.* inside its own transaction, where nothing may be cached, so the
   * cache must already hold it.
   */
  #warm(): void {
    if (this.#store.inTransaction) return;
    for (const name of SECTION_NAMES) {
      try {
        this.#read(name);
      } catch {
        // A stored section that no longer validates is reported where it is read (500
        // ERR_CONFIG_STORED_INVALID), not here: the bridge must still start.
      }
    }
  }

  #readStored<S extends SectionName>(name: S): ConfigValues[S] {
    const row = this.#store.get(name);
    const raw = row ? JSON.parse(row.value) : {};
    const parsed = SECTION_SCHEMAS[name].safeParse(raw);
    if (!parsed.success) {
      // Only a hand-edited database or a release that changed a schema without a migration
      // gets here; say which section so the operator can fix or reset it.
      const detail = zodErrors(parsed.error, name).map((e) => `${e.path}: ${e.message}`).join('; ');
      throw new AppError('ERR_CONFIG_STORED_INVALID', 500, `stored configuration section '${name}' is not valid: ${detail}`);
    }
    return parsed.data as ConfigValues[S];
  }
}

function invalid(errors: FieldError[]): AppError {
  return badRequest(`invalid request: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, errors);
}

/** Cached sections are shared by every reader: frozen, so none can change another's copy. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
