/**
 * Batteries from outside the package: a campaign names one by a path (`battery: ./studies/likert/`,
 * a folder or a module file, TypeScript or JavaScript) or by an installed package
 * (`battery: { module: "@lab/sondage-likert" }`). The module's default export (or its export
 * `battery`) is a Battery (lib/battery/types.ts); it passes the same checks as the built-in three
 * (defineBattery's, then the registry's unique name and unique query names) and is registered for
 * the rest of the process. docs/writing-a-battery.md.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { defineBattery } from '../battery/defineBattery.js';
import type { Battery } from '../battery/types.js';
import { SondageError } from '../errors.js';
import type * as TsxApiModule from 'tsx/esm/api';
import { batteryNamed, registerBattery } from './index.js';
import { routeSelfReferences } from './selfReference.js';

/** Where a battery that is not built in comes from, as a campaign keeps it (absolute, resolved). */
export type BatterySource = { readonly path: string } | { readonly module: string; readonly from: string };

/** Every battery this process loaded from outside, by name, with where it came from. */
const loaded = new Map<string, { readonly battery: Battery; readonly source: BatterySource; readonly file: string }>();
const byFile = new Map<string, Promise<Battery>>();

/**
 * The source a campaign's `battery:` value names, or undefined for a built-in name. A string is a
 * path when it starts with `.` or `/` or holds a `/` or `\`; an object is `{ module }` or `{ path }`.
 * Paths are relative to `baseDir` (the campaign file's folder).
 */
export function batterySourceOf(value: unknown, baseDir: string): BatterySource | undefined {
  if (typeof value === 'string') {
    if (!/^[./]|[/\\]/.test(value)) return undefined;
    return { path: path.resolve(baseDir, value) };
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const v = value as Record<string, unknown>;
    const keys = Object.keys(v);
    if (keys.length === 1 && typeof v['module'] === 'string' && v['module'] !== '') return { module: v['module'], from: baseDir };
    if (keys.length === 1 && typeof v['path'] === 'string' && v['path'] !== '') return { path: path.resolve(baseDir, v['path']) };
    throw new SondageError('expected a battery name, a path such as ./studies/likert/, { module: "<package>" } or { path: "<folder or file>" }');
  }
  return undefined;
}

/** How `sondage batteries` and error messages name a source. */
export function describeSource(source: BatterySource): string {
  return 'path' in source ? source.path : `module ${source.module}`;
}

/** Where a loaded battery came from: "built in", or its file. */
export function originOf(battery: Battery): string {
  const entry = loaded.get(battery.name);
  return entry && entry.battery === battery ? entry.file : 'built in';
}

/**
 * Loads (once per file) and registers the battery a source names; the battery is returned.
 * Throws a SondageError naming the file and what is wrong with its export.
 */
export async function loadExternalBattery(source: BatterySource): Promise<Battery> {
  const file = resolveSourceSync(source);
  let pending = byFile.get(file);
  if (!pending) {
    pending = importBattery(file, source);
    byFile.set(file, pending);
    pending.catch(() => byFile.delete(file));
  }
  return pending;
}

async function importBattery(file: string, source: BatterySource): Promise<Battery> {
  routeSelfReferences();
  let mod: Record<string, unknown>;
  try {
    mod = (await importModule(file)) as Record<string, unknown>;
  } catch (err) {
    // A battery that fails to load says so in its own words, with the file named first.
    const message = err instanceof Error ? err.message : String(err);
    throw new SondageError(`battery ${file}: could not be loaded: ${message}`, { cause: err });
  }
  return adopt(mod, file, source);
}

/**
 * Registers a battery that a Lambda bundle carries (infra/constructs/bundling.ts writes the entry
 * that calls this at the function's cold start): the same checks as a battery loaded from a file,
 * with `file` the path it was bundled from. Campaigns name it by its name there (`sondage start
 * --aws` uploads the campaign file so).
 */
export function adoptBundledBattery(mod: Record<string, unknown>, file: string): Battery {
  return adopt(mod, file, { path: file });
}

/** Every battery this process loaded from outside, with the module file it came from. */
export function externalBatteries(): { readonly battery: Battery; readonly file: string; readonly source: BatterySource }[] {
  return [...loaded.values()];
}

/**
 * The battery a source names when this process has already loaded it (synchronously: the CDK app
 * loads its batteries first, then builds the stack), else undefined.
 */
export function loadedBattery(source: BatterySource): Battery | undefined {
  const file = resolveSourceSync(source);
  return [...loaded.values()].find((e) => e.file === file)?.battery;
}

function adopt(mod: Record<string, unknown>, file: string, source: BatterySource): Battery {
  const candidate = (mod['default'] ?? mod['battery']) as unknown;
  const problems = shapeProblems(candidate);
  if (problems.length > 0) throw new SondageError(`battery ${file}: its default export is not a battery (lib/battery/types.ts): ${problems.join('; ')}`);
  const battery = candidate as Battery;
  try {
    defineBattery(battery);
  } catch (err) {
    throw new SondageError(`${file}: ${(err as Error).message}`, { cause: err });
  }
  const existing = batteryNamed(battery.name);
  if (existing) {
    const other = loaded.get(battery.name);
    if (other?.file === file) return other.battery;
    throw new SondageError(`battery ${file}: its name "${battery.name}" is taken by ${other ? other.file : 'a built-in battery'}; choose another name`);
  }
  try {
    registerBattery(battery);
  } catch (err) {
    throw new SondageError(`${file}: ${(err as Error).message}`, { cause: err });
  }
  loaded.set(battery.name, { battery, source, file });
  return battery;
}

let tsxRegistered = false;

/**
 * Imports a module file. TypeScript is compiled on the fly by tsx when the running process has
 * no loader for it (the installed, compiled CLI, and a clone's CLI and threads, which run a
 * bundle: lib/core/sourceBundle.mjs); under tsx or vitest it is imported directly.
 *
 * tsx is registered for the whole process, not through `tsImport`: that one loads each import
 * of the file in a namespace of its own, the `sondage/battery` it imports included, which was then
 * a second copy of the core (a CampaignFileError it threw was not the CLI's, and printed its
 * stack). The URL asked again carries a query: Node keeps the failed first import under the
 * plain one.
 */
async function importModule(file: string): Promise<unknown> {
  const url = pathToFileURL(file).href;
  try {
    return await import(url);
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw err;
    if (!tsxRegistered) {
      // A specifier in a variable: bundlers (the Lambda functions' esbuild) leave it out of bundles,
      // where batteries are compiled in at deploy time and tsx is neither needed nor shipped.
      const loader = 'tsx/esm/api';
      const { register } = (await import(loader)) as TsxApi;
      register();
      tsxRegistered = true;
    }
    return import(`${url}?typescript`);
  }
}

type TsxApi = typeof TsxApiModule;

const INDEX_FILES = ['index.ts', 'index.mts', 'index.js', 'index.mjs'];

/** The module file a source names: a file, a folder's package.json entry or index, or a package's entry. */
function resolveSourceSync(source: BatterySource): string {
  if ('module' in source) {
    try {
      return createRequire(path.join(source.from, 'package.json')).resolve(source.module);
    } catch {
      const dir = findPackageDir(source.module, source.from);
      if (dir) return resolveFolder(dir);
      throw new SondageError(`battery module ${source.module}: not found from ${source.from} (install it, e.g. npm install ${source.module})`);
    }
  }
  if (!existsSync(source.path)) throw new SondageError(`battery ${source.path}: no such file or folder`);
  return statSync(source.path).isDirectory() ? resolveFolder(source.path) : source.path;
}

function resolveFolder(dir: string): string {
  const pkgFile = path.join(dir, 'package.json');
  if (existsSync(pkgFile)) {
    const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as { main?: unknown; exports?: unknown };
    const entry = packageEntry(pkg);
    if (entry) return path.resolve(dir, entry);
  }
  const index = INDEX_FILES.map((f) => path.join(dir, f)).find((f) => existsSync(f));
  if (!index) throw new SondageError(`battery ${dir}: the folder has no ${INDEX_FILES.join(', ')} and no package.json "exports" or "main"`);
  return index;
}

/** The "." entry of a package.json (exports, import or default condition, then main). */
function packageEntry(pkg: { main?: unknown; exports?: unknown }): string | undefined {
  let e = pkg.exports;
  if (e && typeof e === 'object' && !Array.isArray(e) && '.' in e) e = (e as Record<string, unknown>)['.'];
  while (e && typeof e === 'object' && !Array.isArray(e)) {
    const c = e as Record<string, unknown>;
    e = c['import'] ?? c['default'] ?? c['node'];
  }
  if (typeof e === 'string') return e;
  return typeof pkg.main === 'string' ? pkg.main : undefined;
}

/** node_modules/<name> from `from` upwards (a package whose exports has only an "import" condition). */
function findPackageDir(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** What the module's export lacks to be a Battery, field by field. */
function shapeProblems(b: unknown): string[] {
  if (b === null || typeof b !== 'object') return [`expected an object (export default defineBattery({ … })), got ${b === null ? 'null' : typeof b}`];
  const x = b as Record<string, unknown>;
  const problems: string[] = [];
  const need = (field: string, ok: boolean, expected: string) => {
    if (!ok) problems.push(`${field}: expected ${expected}`);
  };
  const isObj = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
  need('name', typeof x['name'] === 'string', 'a string');
  need('title', typeof x['title'] === 'string', 'a string');
  need('languages', Array.isArray(x['languages']), 'an array of language codes');
  need('design', isObj(x['design']) && typeof (x['design'] as { safeParse?: unknown }).safeParse === 'function', 'a zod schema (z from sondage/battery)');
  need('roles', isObj(x['roles']), 'an object of roles ({} for none)');
  need('dataFiles', typeof x['dataFiles'] === 'function', 'a function (design) => files');
  need('load', typeof x['load'] === 'function', 'an async function (campaign, design) => { languages, phases }');
  need('prompts', isObj(x['prompts']), 'the prompts table columns ({ factors, extras, extraRow })');
  need('vocabulary', isObj(x['vocabulary']), 'an object of reader → labels');
  need('phaseCatalog', Array.isArray(x['phaseCatalog']), 'an array of phases');
  const a = x['analysis'] as Record<string, unknown> | undefined;
  need('analysis', isObj(a), 'an object (sql, namedSources, firstQuery, run, files, console, simulated)');
  if (isObj(a)) {
    const sql = a!['sql'] as { queries?: unknown } | undefined;
    need('analysis.sql', isObj(sql) && Array.isArray(sql!.queries), 'a SqlLibrary (new SqlLibrary(name, new URL("./sql/", import.meta.url), [queries]))');
    for (const f of ['firstQuery', 'run', 'files', 'console', 'simulated']) need(`analysis.${f}`, typeof a![f] === 'function', 'a function');
    need('analysis.namedSources', isObj(a!['namedSources']), 'an object');
  }
  if (x['simulator'] !== undefined) need('simulator', typeof x['simulator'] === 'function', 'a function (entry, ctx) => simulated model');
  return problems;
}
