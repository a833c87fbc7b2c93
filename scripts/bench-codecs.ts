// Codec throughput for `npm run bench`: Meshtastic stream frames decoded per second (framing
// and FromRadio protobuf decoding of a received text packet), beside a baseline measured in
// the same run: copying the same bytes into a buffer, the least any decoder must do.
// Printed as figures and as a ratio; no target (a Pi's radios deliver a few frames a second,
// so this is to watch for regressions, not to gate).

import { decodeFromRadio, encodeFrame, encodeFromRadio, PORT_NUM, StreamDecoder } from '../src/bearers/meshtastic/codec/messages.ts';

const FRAMES = 20_000;
const ROUNDS = 5;

function stream(): Uint8Array {
  const frame = encodeFrame(encodeFromRadio({
    id: 7,
    packet: {
      from: 0xa1b2c3d4, to: 0xffffffff, channel: 0, id: 0x12345678, rx_time: 1_767_225_600, rx_snr: 6.25, rx_rssi: -80, hop_limit: 2, hop_start: 3,
      decoded: { portnum: PORT_NUM.TEXT_MESSAGE_APP, payload: new TextEncoder().encode('Ridge camp to base: all well, moving at dawn') },
    },
  }));
  const out = new Uint8Array(frame.length * FRAMES);
  for (let i = 0; i < FRAMES; i++) out.set(frame, i * frame.length);
  return out;
}

function chunks(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

function timeMs(fn: () => void): number {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export function main(): number {
  // 64-byte chunks, about what a serial read delivers at 115200 baud.
  const input = chunks(stream(), 64);
  const decode = () => {
    const decoder = new StreamDecoder();
    let n = 0;
    for (const chunk of input) {
      for (const e of decoder.push(chunk)) {
        if (e.type === 'frame' && decodeFromRadio(e.payload).ok) n++;
      }
    }
    if (n !== FRAMES) throw new Error(`decoded ${n} frames, expected ${FRAMES}`);
  };
  const copy = () => {
    const sink = new Uint8Array(input.reduce((s, c) => s + c.length, 0));
    let at = 0;
    for (const chunk of input) {
      sink.set(chunk, at);
      at += chunk.length;
    }
  };
  decode();
  copy();
  const decodeMs = median(Array.from({ length: ROUNDS }, () => timeMs(decode)));
  const copyMs = median(Array.from({ length: ROUNDS }, () => timeMs(copy)));
  const rate = (ms: number) => `${Math.round(FRAMES / (ms / 1000)).toLocaleString('en')} frames/s`;
  process.stdout.write(`meshtastic codec (median of ${ROUNDS}): ${FRAMES} FromRadio text frames in 64-byte chunks\n`);
  process.stdout.write(`  baseline: byte copy             ${rate(copyMs).padStart(22)}\n`);
  process.stdout.write(`  stream + protobuf decode        ${rate(decodeMs).padStart(22)}   ratio ${(decodeMs / copyMs).toFixed(1)}x the copy's time\n`);
  return 0;
}

if (import.meta.main) process.exitCode = main();
