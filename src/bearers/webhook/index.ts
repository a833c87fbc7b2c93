import { z } from 'zod';
import { defineDriver } from '../driver-module.ts';
import { createWebhookBearer } from './driver.ts';
import { webhookRoutes } from './routes.ts';
import { httpUrl, WEBHOOK_DEFAULT_MTU, WEBHOOK_SECRET_SETTINGS, WebhookSettings } from './settings.ts';
import { webhookStats } from './stats.ts';

// HTTP as a bearer (docs/webhooks.md; wire facts docs/protocols/webhook.md): each delivery to a
// webhook interface is a signed POST to the URL its destination names, retried and
// dead-lettered like any radio's; inbound hooks (routes.ts) take messages in as if heard on it.
// No device: an interface is bound to `auto`.

export const webhookDriver = defineDriver({
  kind: 'webhook',
  title: 'webhook',
  settings: WebhookSettings as unknown as z.ZodType<Record<string, unknown>>,
  secretSettings: WEBHOOK_SECRET_SETTINGS,
  contact: {
    field: 'url',
    schema: z.string().max(128).refine((v) => httpUrl(v) !== null, { error: 'must be an http:// or https:// URL' }),
    description: 'Where a webhook interface posts (an http:// or https:// URL)',
  },
  create: createWebhookBearer,
  routes: (api) => webhookRoutes(api),
  idleMtu: (settings) => (typeof settings.mtu === 'number' ? settings.mtu : WEBHOOK_DEFAULT_MTU),
  stats: webhookStats,
});
