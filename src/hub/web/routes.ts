import { randomBytes } from 'node:crypto';
import { HANDLED, route, type Route } from '../../http/route.ts';
import { VERSION } from '../../lib/version.ts';
import type { HubKeyService } from '../keys/service.ts';
import { renderPage } from './page.ts';

export function webRoutes(keys: HubKeyService): Route[] {
  return [
    route({
      method: 'GET',
      path: '/',
      summary: 'The hub web page (API keys); HTML',
      tags: ['web'],
      roles: 'public',
      produces: 'text/html',
      handler: async ({ res }) => {
        const nonce = randomBytes(16).toString('base64');
        const html = renderPage({ setupOpen: await keys.setupOpen(), version: VERSION }, nonce);
        res.writeHead(200, {
          'Content-Type': 'text/html; charset=utf-8',
          'Content-Length': Buffer.byteLength(html),
          'Cache-Control': 'no-store',
          'Content-Security-Policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`,
          'X-Content-Type-Options': 'nosniff',
          'Referrer-Policy': 'no-referrer',
        });
        res.end(html);
        return HANDLED;
      },
    }),
  ];
}
