import type { IClientOptions } from 'mqtt';
import { maskUrlCredentials } from '../lib/mask-url.ts';

// MQTT URLs (HUB_MQTT_URL, the bridge's hub.mqtt_url) become an options object: mqtt.js
// parses URL strings with the deprecated url.parse (DEP0169 in the bundle), so we never hand
// it one. Used by the hub's ingest and by the bridge's uplink publisher.

const DEFAULT_PORTS: Record<string, number> = { mqtt: 1883, mqtts: 8883 };

export interface MqttEndpoint {
  protocol: 'mqtt' | 'mqtts';
  host: string;
  port: number;
  username?: string;
  password?: string;
}

/** "mqtt://host[:port]" or "mqtts://..." with optional user:password@; throws a readable message. */
export function parseMqttUrl(url: string): MqttEndpoint {
  // Messages quote the URL with its user information masked (lib/mask-url.ts): they reach
  // logs, start-up errors and API answers.
  const shown = JSON.stringify(maskUrlCredentials(url));
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`expected mqtt://host[:port] or mqtts://host[:port], got ${shown}`);
  }
  const protocol = u.protocol.replace(/:$/, '');
  if (protocol !== 'mqtt' && protocol !== 'mqtts') throw new Error(`expected an mqtt:// or mqtts:// URL, got ${shown}`);
  if (!u.hostname) throw new Error(`the MQTT URL has no host: ${shown}`);
  if (u.pathname && u.pathname !== '/' ) throw new Error(`the MQTT URL must not have a path: ${shown}`);
  return {
    protocol,
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : DEFAULT_PORTS[protocol],
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
  };
}

export function mqttClientOptions(endpoint: MqttEndpoint, extra: IClientOptions): IClientOptions {
  return {
    protocol: endpoint.protocol,
    host: endpoint.host,
    port: endpoint.port,
    ...(endpoint.username !== undefined ? { username: endpoint.username } : {}),
    ...(endpoint.password !== undefined ? { password: endpoint.password } : {}),
    ...extra,
  };
}
