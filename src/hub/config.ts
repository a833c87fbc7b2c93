import { hostname } from 'node:os';
import { envListen, envLogLevel, envString, invalid, type ListenAddress } from '../lib/env.ts';
import type { LogLevel } from '../lib/log.ts';
import { maskUrlCredentials } from '../lib/mask-url.ts';
import { parseMqttUrl } from '../hubwire/mqtt-options.ts';
import type { HubStoreLocation } from './store/store.ts';

// The hub's environment (docs/design.md section 4). Every variable is checked before anything is
// opened; a bad one stops the start with one line naming it (src/lib/env.ts).

export const DEFAULT_HUB_SQLITE_PATH = '/data/hub.db';

export interface HubConfig {
  listen: ListenAddress;
  store: HubStoreLocation;
  mqtt: { url: string; shared: boolean; clientId: string; acceptUnenrolled: boolean };
  logLevel: LogLevel;
}

export function readHubConfig(env: NodeJS.ProcessEnv): HubConfig {
  const listen = envListen(env, 'HUB_LISTEN', '127.0.0.1:8081');
  const databaseUrl = envString(env, 'HUB_DATABASE_URL', '');
  if (databaseUrl && !/^postgres(ql)?:\/\/[^\s]+$/.test(databaseUrl)) throw invalid('HUB_DATABASE_URL', 'a postgres://user@host:port/database URL', maskUrlCredentials(databaseUrl));
  const store: HubStoreLocation = databaseUrl ? { databaseUrl } : { sqlitePath: envString(env, 'HUB_SQLITE_PATH', DEFAULT_HUB_SQLITE_PATH) };
  const mqttUrl = envString(env, 'HUB_MQTT_URL', 'mqtt://127.0.0.1:1883');
  try {
    parseMqttUrl(mqttUrl);
  } catch {
    throw invalid('HUB_MQTT_URL', 'mqtt://host[:port] or mqtts://host[:port]', maskUrlCredentials(mqttUrl));
  }
  const sharedRaw = envString(env, 'HUB_MQTT_SHARED', '0');
  if (sharedRaw !== '0' && sharedRaw !== '1') throw invalid('HUB_MQTT_SHARED', '1 (replicas share one subscription) or 0', sharedRaw);
  // Each replica needs its own client id, stable across restarts so the broker keeps its
  // queued session; the host name is both in a container deployment.
  const clientId = envString(env, 'HUB_MQTT_CLIENT_ID', `fieldbridge-hub-${hostname()}`);
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(clientId)) throw invalid('HUB_MQTT_CLIENT_ID', 'up to 64 letters, digits, "_", "." or "-"', clientId);
  // Only enrolled bridges' signed events are stored; 1 lets bridge ids that
  // were never enrolled publish unsigned, for the move of an existing fleet to enrollment.
  const unenrolledRaw = envString(env, 'HUB_ACCEPT_UNENROLLED', '0');
  if (unenrolledRaw !== '0' && unenrolledRaw !== '1') throw invalid('HUB_ACCEPT_UNENROLLED', '1 (bridges never enrolled may publish unsigned) or 0', unenrolledRaw);
  return { listen, store, mqtt: { url: mqttUrl, shared: sharedRaw === '1', clientId, acceptUnenrolled: unenrolledRaw === '1' }, logLevel: envLogLevel(env, 'HUB_LOG_LEVEL') };
}
