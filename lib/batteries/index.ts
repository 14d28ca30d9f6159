/**
 * The batteries sondage knows: one line each. A battery is one folder, `lib/batteries/<name>/`,
 * whose index.ts exports a Battery (lib/battery/types.ts); README "Writing a battery".
 */
import type { Battery } from '../battery/types.js';
import { SondageError } from '../errors.js';
import { far6 } from './far6/index.js';
import { ptrue } from './ptrue/index.js';
import { xvalue } from './xvalue/index.js';

const REGISTERED: readonly Battery[] = [far6, xvalue, ptrue];

/** Batteries registered at run time: the ones tests make for themselves. */
const added = new Map<string, Battery>();

/** Every battery, in registration order. */
export function allBatteries(): Battery[] {
  return [...REGISTERED, ...added.values()];
}

/** The batteries the package ships, without those registered at run time. */
export function builtInBatteries(): Battery[] {
  return [...REGISTERED];
}

/** The names campaign files may use in `battery:`. */
export function batteryNames(): string[] {
  return allBatteries().map((b) => b.name);
}

/** The battery of that name, if sondage knows one. */
export function batteryNamed(name: string): Battery | undefined {
  return allBatteries().find((b) => b.name === name);
}

/**
 * Registers a battery that is not in the list above (tests make batteries of their own to prove
 * the contract); returns a function that removes it again. Query names must stay unique across
 * batteries: a Lambda bundle copies every battery's SQL files into one folder.
 */
export function registerBattery(battery: Battery): () => void {
  if (batteryNamed(battery.name)) throw new SondageError(`a battery named ${battery.name} is already registered`);
  const taken = new Map(allBatteries().flatMap((b) => b.analysis.sql.queries.map((q) => [q, b.name] as const)));
  for (const q of battery.analysis.sql.queries) {
    const owner = taken.get(q);
    if (owner) throw new SondageError(`battery ${battery.name}: query ${q}.sql has the name of a query of battery ${owner}; query names are unique across batteries`);
  }
  added.set(battery.name, battery);
  return () => added.delete(battery.name);
}
