import { z } from 'zod';
import { ADMIN, ANY_KEY, route, type Route } from '../../http/route.ts';
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

// SPEC 4.4 configuration endpoints, except export, import and diff (which need the routing
// core and come with it). Reads: any key; writes: owner or admin (DESIGN.md section 5). Every
// write is a patch: fields left out keep their stored values, and the merged section is
// validated whole before anything is stored. Secrets come back as "<redacted>".

/** Sections POST /api/config/module writes: every module, plus bridge, routing and hub. */
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
const AnyModule = z.union(MODULE_NAMES.map((n) => MODULE_SCHEMAS[n]) as unknown as [z.ZodObject, ...z.ZodObject[]])
  .describe('The module\'s settings; see the Config schema (modules) for each module\'s fields');

const SectionParams = z.object({ section: z.string().min(1).describe(`One of ${SECTION_NAMES.join(', ')}`) });
const ModuleParams = z.object({ section: z.string().min(1).describe(`One of ${MODULE_NAMES.join(', ')}`) });

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
      summary: 'One module\'s settings',
      description: `Modules: ${MODULE_NAMES.join(', ')}. An unknown name is a 404 that lists them.`,
      tags: ['config'],
      roles: ANY_KEY,
      params: ModuleParams,
      response: AnyModule,
      responseName: 'ModuleSettings',
      handler: ({ params }) => config.module(params.section),
    }),
    route({
      method: 'POST',
      path: '/api/config/module',
      summary: 'Change a module\'s settings, or the bridge, routing or hub section',
      description:
        '`settings` is a patch: fields left out keep their stored values. The merged settings are validated ' +
        'whole before anything is stored. For the hub section, "<redacted>" as the password keeps the stored one.',
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
