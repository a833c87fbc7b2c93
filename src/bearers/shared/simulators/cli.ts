import type { ParseArgsConfig } from 'node:util';
import type { SimRunOptions, SimValues } from '../../driver-module.ts';
import { DRIVERS } from '../../drivers.ts';

// `fieldbridge sim <kind> ...`: runs the byte-level simulator a driver module brings, for
// trying the bridge without hardware. The kinds, their options and the usage come from the
// modules (bearers/drivers.ts).

const simulators = DRIVERS.flatMap((d) => (d.simulator ? [{ kind: d.kind, command: d.simulator }] : []));

/** Every simulator's options, for the argument parser; each simulator refuses the others'. */
export const SIM_COMMAND_OPTIONS: NonNullable<ParseArgsConfig['options']> = Object.assign({}, ...simulators.map((s) => s.command.options));

export const SIM_USAGE = simulators.map((s) => s.command.usage).join('\n');

/** `fieldbridge sim <kind> --help`: that simulator's usage; every simulator's without a known kind. */
export function simUsage(positionals: readonly string[]): string {
  const found = positionals.length === 1 ? simulators.find((s) => s.kind === positionals[0]) : undefined;
  return found ? found.command.usage : SIM_USAGE;
}

export const SIM_SUMMARY = `run simulated devices: ${simulators.map((s) => `sim ${s.kind}`).join(', ')} (see the usage of each)`;

/** Returns the exit code: 0 after a clean stop, 2 for a usage error (message written). */
export async function runSimCommand(values: SimValues, positionals: string[], options: SimRunOptions = {}): Promise<number> {
  const write = options.write ?? ((line: string) => process.stdout.write(line + '\n'));
  const found = positionals.length === 1 ? simulators.find((s) => s.kind === positionals[0]) : undefined;
  if (!found) {
    write(`sim: unknown simulator ${JSON.stringify(positionals.join(' '))}; expected ${simulators.map((s) => JSON.stringify(s.kind)).join(' or ')}\n${SIM_USAGE}`);
    return 2;
  }
  const foreign = Object.keys(values).filter((name) => values[name] !== undefined && !Object.hasOwn(found.command.options, name));
  if (foreign.length > 0) {
    write(`sim: ${foreign.map((n) => `--${n}`).join(', ')} is not an option of the ${found.kind} simulator\n${found.command.usage}`);
    return 2;
  }
  return found.command.run(values, { ...options, write });
}
