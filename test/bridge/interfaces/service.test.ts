import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { driverFor } from '../../../src/bearers/drivers.ts';
import { addressBooks, newSenderService, openBridgeDatabase } from '../../../src/bridge/app.ts';
import { deviceConfigSource } from '../../../src/bridge/config/device-config.ts';
import { ConfigService } from '../../../src/bridge/config/service.ts';
import { ConfigStore } from '../../../src/bridge/config/store.ts';
import { BookService } from '../../../src/bridge/contacts/service.ts';
import { BookStore } from '../../../src/bridge/contacts/store.ts';
import { DEFAULT_RETRY_POLICY } from '../../../src/bridge/engine/backoff.ts';
import { deliveryApiView } from '../../../src/bridge/deliveries/view.ts';
import { interfaceRoutes } from '../../../src/bridge/interfaces/routes.ts';
import { InterfaceService } from '../../../src/bridge/interfaces/service.ts';
import { InterfaceStore } from '../../../src/bridge/engine/interface-store.ts';
import { RoutingCore } from '../../../src/bridge/engine/core.ts';
import { RuleService } from '../../../src/bridge/rules/service.ts';
import { RuleStore } from '../../../src/bridge/rules/store.ts';
import type { Route } from '../../../src/http/route.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { silentLogger } from '../../../src/lib/log.ts';

// An interface of a kind that has no driver in this release (issue 14): every kind has one
// now, so the routing core is built with a driver list in which `sms` has none, as
// test/bridge/engine/core.test.ts does. Creating or binding it answers with a warning, and
// what waits for it says why.

function build() {
  const dir = mkdtempSync(join(tmpdir(), 'fb-ifc-'));
  const db = openBridgeDatabase(join(dir, 'bridge.db'));
  const clock = new FakeClock(Date.parse('2026-06-01T00:00:00.000Z'));
  const log = silentLogger;
  const config = new ConfigService(new ConfigStore(db), clock, log);
  const interfaceStore = new InterfaceStore(db);
  const refs = { rulesReferring: () => [], nameUsedElsewhere: () => false };
  const contacts = new BookService<Record<string, string>>(new BookStore(db, 'contacts', 'addresses'), { what: 'contact', refKind: 'contact', prefix: 'ctc', expand: (v) => Object.values(v as Record<string, string>) }, clock, refs);
  const groups = new BookService<string[]>(new BookStore(db, 'object_groups', 'members'), { what: 'object group', refKind: 'group', prefix: 'grp', expand: (v) => v as string[] }, clock, refs);
  const rules = new RuleService(new RuleStore(db), { interfaces: interfaceStore, contacts, groups, clock, defaultAction: () => 'store' });
  const core = new RoutingCore({
    db, clock, log, interfaceStore, rules, books: addressBooks(contacts, groups), senders: newSenderService(db, clock, contacts, groups), deviceConfig: deviceConfigSource(config),
    drivers: (kind) => (kind === 'sms' ? { ...driverFor('sms')!, create: undefined } : driverFor(kind)),
  });
  const interfaces = new InterfaceService(interfaceStore, core.host, { rules, deliveries: core.deliveries, clock });
  return {
    core, rules, interfaces,
    close: async () => {
      await core.stop(1000);
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const handler = (routes: Route[], method: string, path: string) => routes.find((r) => r.method === method && r.path === path)!.handler;

test('creating or binding an interface whose kind has no driver answers with a warning; a kind with one answers none', async () => {
  const h = build();
  try {
    const routes = interfaceRoutes(h.interfaces);
    const create = handler(routes, 'POST', '/api/interfaces');
    const blank = { enabled: true, device: null, settings: {}, transforms: { inbound: [], outbound: [] }, retry: DEFAULT_RETRY_POLICY };
    const later = (await create({ body: { ...blank, name: 'later', kind: 'sms' } } as never)) as any;
    assert.equal(later.warnings, ["no driver for interface kind 'sms' in this release: the interface is stored and can be bound, but it cannot send or receive"]);
    const bound = (await handler(routes, 'POST', '/api/interfaces/{id}/bind')({ params: { id: 'later' }, body: { device: '/dev/serial/by-id/usb-modem' } } as never)) as any;
    assert.equal(bound.warnings, later.warnings);
    assert.is(bound.device, '/dev/serial/by-id/usb-modem');
    const sim = (await create({ body: { ...blank, name: 'sim-0', kind: 'sim' } } as never)) as any;
    assert.not.ok('warnings' in sim, 'a kind with a driver: no warnings field');
  } finally {
    await h.close();
  }
});

test('a delivery for an interface without a driver says so in waiting_for', async () => {
  const h = build();
  try {
    const later = await h.interfaces.create({ name: 'later', kind: 'sms', enabled: true, device: '/dev/serial/by-id/usb-modem', settings: {}, transforms: { inbound: [], outbound: [] }, retry: DEFAULT_RETRY_POLICY });
    h.rules.create({ name: 'to-later', match: {}, schedule: null, action: 'forward', destinations: [{ interface: later.id, to: '{to}' }] });
    const [result] = h.core.pipeline.ingest({ direction: 'outbound', interfaceId: null, from: 'local', to: '+4917012345678', channel: null, kind: 'text', text: 'hi', payload: null });
    const view = deliveryApiView(result.deliveries[0], (id) => h.interfaces.waitingFor(id), (id) => h.interfaces.find(id)?.name);
    assert.is(view.waiting_for, "interface 'later' has no driver for kind 'sms' in this release");
    assert.equal([view.interface_id, view.interface], [later.id, 'later'], 'the interface by name beside its id');
  } finally {
    await h.close();
  }
});

test.run();
