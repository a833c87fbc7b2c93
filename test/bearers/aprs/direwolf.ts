import { spawnSync } from 'node:child_process';

// Dire Wolf's own decoder (Debian's direwolf package, scripts/setup-services.sh): the independent
// reading of every frame the bridge builds. decode_aprs takes a KISS frame as hex on stdin and
// prints the AX.25 header, the TNC2 line and its APRS reading.

/** decode_aprs's reading of a KISS frame, colours stripped. */
export function direwolfDecode(kiss: Uint8Array): string {
  const hex = [...kiss].map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join(' ');
  const r = spawnSync('decode_aprs', [], { input: `${hex}\n`, encoding: 'latin1', timeout: 10_000 });
  if (r.error) throw r.error;
  return (r.stdout + r.stderr).replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
}

/** The TNC2 line decode_aprs prints for the frame (SOURCE>DEST,...:info). */
export function direwolfLine(reading: string): string {
  const lines = reading.split('\n');
  const at = lines.findIndex((l) => l.startsWith('-------------------'));
  return lines[at + 1] ?? '';
}
