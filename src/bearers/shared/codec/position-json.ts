// The JSON the bridge stores positions and telemetry as (docs/data-model.md): what a position
// or telemetry frame's payload holds when another bearer sends it on. Pure.

/** A JSON object payload, or null when it is none. */
export function jsonObjectOf(payload: Uint8Array): Record<string, unknown> | null {
  try {
    const v = JSON.parse(new TextDecoder().decode(payload)) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export interface Fix {
  latitude: number;
  longitude: number;
  altitude_m?: number;
  /** When the fix was taken (ISO 8601), if the source said. */
  time?: string;
  course_deg?: number;
  speed_mps?: number;
  accuracy_m?: number;
}

/** The fix a position payload carries, or null when it has none: no valid latitude and
 *  longitude, or 0,0 (how Meshtastic reports a position without a GPS lock). */
export function fixOf(payload: Uint8Array): Fix | null {
  const p = jsonObjectOf(payload);
  if (!p) return null;
  const n = (k: string) => (typeof p[k] === 'number' && Number.isFinite(p[k]) ? (p[k] as number) : undefined);
  const latitude = n('latitude');
  const longitude = n('longitude');
  if (latitude === undefined || longitude === undefined || Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return null;
  if (latitude === 0 && longitude === 0) return null;
  return { latitude, longitude, altitude_m: n('altitude_m'), time: typeof p.time === 'string' ? p.time : undefined, course_deg: n('course_deg'), speed_mps: n('speed_mps'), accuracy_m: n('accuracy_m') };
}
