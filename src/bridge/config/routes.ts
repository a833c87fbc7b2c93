import { z } from 'zod';
import { ADMIN, ANY_KEY, HANDLED, route, type Route } from '../../http/route.ts';
import { AppError } from '../../lib/errors.ts';
import { ConfigFile, serializeConfigFile } from './export.ts';
import type { ConfigFileService } from './import.ts';
import { patchSchema } from './patch.ts';
import { redactSecrets, redactSections } from './secrets.ts';
import {
  ConfigSections,
  MODULE_ENDPOINT_SECTIONS,
  MODULE_NAMES,
  MODULE_SCHEMAS,
  OwnerSettings,
  RadioSettings,
  SECTION_NAMES,
  SECTION_SCHEMAS,
  type ChangeTarget,
} from './sections.ts';
import type { ConfigService } from './service.ts';

// docs/api.md 4.4 configuration endpoints (export, import and diff are at the end). Reads: any key;
// writes: owner or admin (docs/design.md section 5). Every write is a patch: fields left out keep
// their stored values, and the merged section is validated whole before anything is stored.
// Secrets come back as "<redacted>".

/** What /api/config/module reads (GET .../{section}) and writes (POST): every module, plus the
 *  bridge, routing and hub sections. One list for both, so what can be written can be read back. */
const MODULE_ENDPOINT_TARGETS: ChangeTarget[] = [...MODULE_NAMES, ...MODULE_ENDPOINT_SECTIONS];
const schemaOf = (target: ChangeTarget): z.ZodObject =>
  (target in MODULE_SCHEMAS ? MODULE_SCHEMAS[target as keyof typeof MODULE_SCHEMAS] : SECTION_SCHEMAS[target as keyof typeof SECTION_SCHEMAS]) as z.ZodObject;

const wrongSection = `section must be one of ${MODULE_ENDPOINT_TARGETS.join(', ')}; radio and owner have their own endpoints (POST /api/config/radio, POST /api/config/owner)`;

const ModuleWrite = z.discriminatedUnion(
  'section',
  MODULE_ENDPOINT_TARGETS.map((t) => z.strictObject({ section: z.literal(t), settings: patchSchema(schemaOf(t)) })) as unknown as [z.ZodObject, ...z.ZodObject[]],
  { error: wrongSection },
);
const ModuleWritten = z.discriminatedUnion(
  'section',
  MODULE_ENDPOINT_TARGETS.map((t) => z.strictObject({ section: z.literal(t), settings: schemaOf(t) })) as unknown as [z.ZodObject, ...z.ZodObject[]],
);

const AnySection = z.union(SECTION_NAMES.map((n) => SECTION_SCHEMAS[n]) as unknown as [z.ZodObject, ...z.ZodObject[]])
  .describe('The section\'s settings; see the Config schema for each section\'s fields');
const AnyModule = z.union(MODULE_ENDPOINT_TARGETS.map(schemaOf) as unknown as [z.ZodObject, ...z.ZodObject[]])
  .describe('The module\'s (or the bridge, routing or hub section\'s) settings; see the Config schema for each one\'s fields');

const SectionParams = z.object({ section: z.string().min(1).describe(`One of ${SECTION_NAMES.join(', ')}`) });
const ModuleParams = z.object({ section: z.string().min(1).describe(`One of ${MODULE_ENDPOINT_TARGETS.join(', ')}`) });

const RadioWarning = z.object({
  code: z.enum(['RADIO_DIFFERS_FROM_MESH', 'RADIO_NOT_REPORTED']),
  fields: z.array(z.string()).describe('The radio fields concerned'),
  message: z.string(),
});
const RadioWritten = z.object({
  radio: RadioSettings,
  warnings: z.array(RadioWarning).describe('Empty when nothing suggests the device could drop off its mesh'),
});
const OwnerWritten = z.object({ owner: OwnerSettings });

/** GET /api/config/module/{section}: a module, or a section POST /api/config/module writes. */
function readModuleTarget(config: ConfigService, name: string): unknown {
  if ((MODULE_NAMES as string[]).includes(name)) return config.module(name);
  if ((MODULE_ENDPOINT_SECTIONS as readonly string[]).includes(name)) return redactSecrets(name, config.section(name));
  throw new AppError('ERR_UNKNOWN_MODULE', 404, `module '${name}' does not exist; known names: ${MODULE_ENDPOINT_TARGETS.join(', ')} (radio and owner: GET /api/config/radio, GET /api/config/owner)`);
}

export function configRoutes(config: ConfigService): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/config',
      summary: 'Every configuration section (secrets redacted)',
      tags: ['config'],
      roles: ANY_KEY,
      response: ConfigSections,
      responseName: 'Config',
      handler: () => redactSections(config.all()),
    }),
    route({
      method: 'GET',
      path: '/api/config/{section}',
      summary: 'One configuration section (secrets redacted)',
      description: `Sections: ${SECTION_NAMES.join(', ')}. An unknown name is a 404 that lists them.`,
      tags: ['config'],
      roles: ANY_KEY,
      params: SectionParams,
      response: AnySection,
      responseName: 'ConfigSection',
      handler: ({ params }) => redactSecrets(params.section, config.section(params.section)),
    }),
    route({
      method: 'GET',
      path: '/api/config/module/{section}',
      summary: 'One module\'s settings, or the bridge, routing or hub section (what POST /api/config/module writes)',
      description: `Names: ${MODULE_ENDPOINT_TARGETS.join(', ')}. An unknown name is a 404 that lists them. Secrets are redacted.`,
      tags: ['config'],
      roles: ANY_KEY,
      params: ModuleParams,
      response: AnyModule,
      responseName: 'ModuleSettings',
      handler: ({ params }) => readModuleTarget(config, params.section),
    }),
    route({
      method: 'POST',
      path: '/api/config/module',
      summary: 'Change a module\'s settings, or the bridge, routing or hub section',
      description:
        '`settings` is a patch: fields left out keep their stored values. The merged settings are validated ' +
        'whole before anything is stored. For the hub section, "<redacted>" as the password keeps the stored one, ' +
        'except when the write moves mqtt_url to another broker: then the password is cleared unless given again.',
      tags: ['config'],
      roles: ADMIN,
      body: ModuleWrite,
      bodyName: 'ModuleSettingsWrite',
      response: ModuleWritten,
      responseName: 'ModuleSettingsWritten',
      handler: ({ body }) => {
        const section = body.section as ChangeTarget;
        const value = config.write(section, body.settings, 'body.settings');
        return { section, settings: redactSecrets(section, value) };
      },
    }),
    route({
      method: 'POST',
      path: '/api/config/radio',
      summary: 'Change the mesh radio\'s LoRa settings',
      description:
        'A patch: fields left out keep their stored values. Accepted even when the values differ from what the ' +
        'mesh radio last reported, but then `warnings` says the device may become invisible to its mesh.',
      tags: ['config'],
      roles: ADMIN,
      body: patchSchema(RadioSettings),
      bodyName: 'RadioSettingsWrite',
      response: RadioWritten,
      responseName: 'RadioSettingsWritten',
      handler: ({ body }) => config.writeRadio(body, 'body'),
    }),
    route({
      method: 'POST',
      path: '/api/config/owner',
      summary: 'Change the identity the device presents on the mesh',
      description: 'A patch: fields left out keep their stored values. long_name: at most 39 UTF-8 bytes; short_name: at most 4.',
      tags: ['config'],
      roles: ADMIN,
      body: patchSchema(OwnerSettings),
      bodyName: 'OwnerWrite',
      response: OwnerWritten,
      responseName: 'OwnerWritten',
      handler: ({ body }) => ({ owner: config.write('owner', body, 'body') }),
    }),
  ];
}

// Export, import and diff of the whole configuration file (docs/api.md 4.4; docs/config.md).
// Export: any key (viewers read everything else too), secrets only for an owner who asks.
// Import and diff: owner or admin. Diff changes nothing, but viewers make GET calls only
// (docs/design.md section 5), and the two take the same body and limits.

/** Import files are larger than other bodies: a bridge with many rules and contacts (docs/design.md section 5). */
export const CONFIG_FILE_BODY_LIMIT = 8 * 1024 * 1024;
const EXPORT_FILENAME = 'fieldbridge-config.json';

const ExportQuery = z.object({
  secrets: z.enum(['include', 'redact'], { error: 'secrets must be include or redact' }).optional()
    .describe('include: write secrets (hub.password) in clear; owner keys only. Default: redact'),
});

// The server checks only that the body is an object: the handler checks the whole file, so
// that every error (shape, per-kind settings, references between entries) is listed at once.
const ConfigFileBody = z
  .record(z.string(), z.unknown(), { error: 'must be a JSON object: a configuration file as GET /api/config/export writes it' })
  .describe('A configuration file: the ConfigExport document, exported_at optional. Validated whole; every error is listed with its path.');

const Change = z.object({
  path: z.string().describe('e.g. access_rules[name=night-relay].schedule.windows[0].start'),
  op: z.enum(['add', 'remove', 'change']),
  from: z.unknown().describe('null for an add'),
  to: z.unknown().describe('null for a remove'),
});
const Changes = z.array(Change).describe('What import changes (did change), in file order; secrets appear as "<redacted>"');

export function configExportRoutes(files: ConfigFileService): Route[] {
  const tags = ['config'];
  return [
    route({
      method: 'GET',
      path: '/api/config/export',
      summary: 'The whole configuration as one readable file (backup and template)',
      description:
        'Sections, interfaces, access rules in evaluation order, object groups and contacts, named rather than by id. ' +
        'Stable key order and 2-space indentation, served as an attachment. Secrets read "<redacted>" unless an owner asks ?secrets=include.',
      tags,
      roles: ANY_KEY,
      query: ExportQuery,
      response: ConfigFile,
      responseName: 'ConfigExport',
      handler: ({ query, principal, res }) => {
        const secrets = query.secrets === 'include';
        if (secrets && principal?.role !== 'owner') {
          throw new AppError('ERR_FORBIDDEN', 403, `only an owner key may export secrets (?secrets=include); this key's role is '${principal?.role}'`);
        }
        const text = serializeConfigFile(files.export({ secrets }));
        res.writeHead(200, {
          'Content-Type': 'application/json; charset=utf-8',
          'Content-Disposition': `attachment; filename="${EXPORT_FILENAME}"`,
          'Content-Length': Buffer.byteLength(text),
          // A file with secrets in it should not linger in caches on the way.
          'Cache-Control': 'no-store',
        });
        res.end(text);
        return HANDLED;
      },
    }),
    route({
      method: 'POST',
      path: '/api/config/import',
      summary: 'Replace the configuration with a file; history is kept',
      description:
        'The whole file is checked first and every error listed with its path; then sections, interfaces, access rules, ' +
        'object groups and contacts are replaced in one transaction (on any error nothing changes). Messages, deliveries, ' +
        'dead letters, audit entries and keys are kept; a same-named interface keeps its id, so its deliveries in flight ' +
        'stay attached. "<redacted>" keeps the stored secret. 409 in-use when the senders policy (not part of the file) names a group or contact the file does not have. Body up to 8 MiB.',
      tags,
      roles: ADMIN,
      body: ConfigFileBody,
      bodyName: 'ConfigImport',
      bodyLimit: CONFIG_FILE_BODY_LIMIT,
      response: z.object({ applied: z.literal(true), changes: Changes }),
      responseName: 'ConfigImported',
      errors: [409],
      handler: ({ body }) => files.import(body),
    }),
    route({
      method: 'POST',
      path: '/api/config/diff',
      summary: 'What importing a file would change; changes nothing',
      description: 'Takes the same file as import and checks it the same way. Paths name list items by name: interfaces[name=sat].settings.',
      tags,
      roles: ADMIN,
      body: ConfigFileBody,
      bodyName: 'ConfigImport',
      bodyLimit: CONFIG_FILE_BODY_LIMIT,
      response: z.object({ changes: Changes }),
      responseName: 'ConfigDiff',
      handler: ({ body }) => ({ changes: files.diff(body) }),
    }),
  ];
}
