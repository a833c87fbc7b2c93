import { setFlagsFromString } from 'node:v8';

// V8 settings of the bridge process (memory on a 512 MB board). Measured, with
// what each cost and what was rejected: docs/performance.md, "Memory and start-up".
//
// They are set at run time, first thing in `fieldbridge bridge`, because only flags V8 reads
// each time it uses them take effect then (`--max-semi-space-size` is read once, when V8 sets up
// its heap: v8.setFlagsFromString accepts it and nothing changes), and because flags baked into
// the executable (a SEA's execArgv) would apply to the hub too, whose ingest at full speed spent
// 20-50% more CPU per event with a capped young generation.

interface BridgeFlag {
  flag: string;
  /** Flags by which the operator (NODE_OPTIONS, or node's own command line from the source
   *  tree) already chose this setting: then the bridge leaves it as given. */
  chosen: RegExp;
}

export const BRIDGE_V8_FLAGS: readonly BridgeFlag[] = [
  // The young generation stays near the size it has when the bridge starts (2 MiB per
  // semi-space in the executable, whose start-up grows it once from 1). V8 sizes it from the
  // machine's memory and grows it under load and keeps it: here 55-65 MiB of the RSS after
  // 100,000 messages, for no measurable CPU per message. V8 reads the growth factor each time it
  // decides to grow. Not a hard cap: a tight loop allocating millions of objects still grew it
  // to 3-22 MiB in one run of four (64 MiB without the flag; test/lib/v8-flags.test.ts).
  { flag: '--semi-space-growth-factor=1', chosen: /--(?:max|min)[-_]semi[-_]space[-_]size|--semi[-_]space[-_]growth[-_]factor/ },
  // No Maglev (V8's mid-tier optimising compiler; Ignition, Sparkplug and TurboFan stay). With
  // it the RSS was 15-25 MiB higher after the first 2,000 messages and 20-50 MiB higher after a
  // load in three runs of four (freed compiler memory glibc keeps; the fourth run went the
  // other way). The price: 20-30% more CPU per message for the first few thousand messages
  // after start, until TurboFan has the hot path; none measurable after 30,000. Read by V8
  // each time it picks a tier.
  { flag: '--no-maglev', chosen: /--(?:no-?)?maglev(?![-_\w])/ },
];

/**
 * Sets BRIDGE_V8_FLAGS but those the operator chose. Call it before the bridge's modules load.
 * Returns the flags it set.
 */
export function applyBridgeV8Flags(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
  setFlags: (flags: string) => void = setFlagsFromString,
): string[] {
  const given = [...execArgv, nodeOptions].join(' ');
  const set = BRIDGE_V8_FLAGS.filter((f) => !f.chosen.test(given)).map((f) => f.flag);
  for (const flag of set) setFlags(flag);
  return set;
}
