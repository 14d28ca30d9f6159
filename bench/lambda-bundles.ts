/**
 * Lambda bundle bench: bundles every function of the pipeline with esbuild the
 * way infra/constructs/Handler.ts has NodejsFunction bundle it (same entry, ESM, target, externals,
 * banner, minify/keepNames/no source map: infra/constructs/bundling.ts), copies DuckDB beside the
 * bundles of the DuckDB functions (duckdbBundlingCommands, the afterBundling hook), and prints what
 * each asset weighs unzipped and whether its code imports DuckDB. Then the worker's cold module
 * load: a fresh `node` imports the bundle N times; the median of the import alone and of the whole
 * process (start, import, exit) is printed.
 *
 *   npm run bench:lambda-bundles                  # 15 cold loads
 *   npm run bench:lambda-bundles -- --runs 5
 *   npm run bench:lambda-bundles -- --before      # also the earlier shape (source maps, not minified)
 *   npm run bench:lambda-bundles -- --before --before-root /tmp/base   # …built from another checkout
 *                                                 # (mkdir /tmp/base; git archive <commit> | tar -x -C /tmp/base; ln -s $PWD/node_modules /tmp/base/)
 *
 * The AWS SDK v3 stays external, as on Lambda, where the runtime provides it: here the bundle
 * folder gets a link to the repository's node_modules/@aws-sdk so that the import resolves it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import * as esbuild from 'esbuild';
import { BUNDLE_BANNER, BUNDLE_SHAPE, BUNDLE_TARGET, duckdbBundlingCommands, externalModules } from '../infra/constructs/bundling.js';
import { FUNCTION_SIZING } from '../lib/config/sizing.js';
import type { FunctionName, FunctionSizing } from '../lib/config/sizing.js';

const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The folder under functions/ of each function the stack builds (infra/constructs/Pipeline.ts). */
export const FUNCTION_FOLDERS: Readonly<Record<FunctionName, string>> = { plan: 'plan', worker: 'worker', report: 'report', recordFailure: 'record-failure' };

/** How the code is bundled: the deployed shape, or the earlier one with source maps (for comparison). */
export type BundleShape = 'deployed' | 'before';

export interface BuiltBundle {
  readonly dir: string;
  /** index.mjs (and index.mjs.map when a map is made). */
  readonly codeBytes: number;
  /** Everything in the asset folder: what Lambda unzips. */
  readonly assetBytes: number;
  /** The packages the bundle's code imports that esbuild left external (`@duckdb/node-api`, `@aws-sdk/client-s3`…). */
  readonly externalImports: readonly string[];
  /** Those of them imported by an `import` statement, loaded when the bundle loads (not by a dynamic `import()`). */
  readonly staticImports: readonly string[];
  readonly metafile: esbuild.Metafile;
}

function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) total += folderBytes(p);
    else if (entry.isFile()) total += statSync(p).size;
  }
  return total;
}

/**
 * Bundles functions/<folder>/handler.ts into `outDir` as the Handler construct does, with the
 * DuckDB packages and SQL files beside it when the sizing says so.
 */
export async function bundleFunction(folder: string, sizing: FunctionSizing, outDir: string, shape: BundleShape = 'deployed', repoRoot = REPO_ROOT): Promise<BuiltBundle> {
  mkdirSync(outDir, { recursive: true });
  const before = shape === 'before';
  const result = await esbuild.build({
    entryPoints: [path.join(repoRoot, 'functions', folder, 'handler.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: BUNDLE_TARGET,
    outfile: path.join(outDir, 'index.mjs'),
    external: [...externalModules(sizing)],
    banner: { js: BUNDLE_BANNER },
    // NodejsFunction's `sourceMap: true` is esbuild's `--sourcemap`: a linked index.mjs.map in the asset.
    ...(before ? { sourcemap: true } : { sourcemap: BUNDLE_SHAPE.sourceMap, minify: BUNDLE_SHAPE.minify, keepNames: BUNDLE_SHAPE.keepNames }),
    metafile: true,
    logLevel: 'error',
  });
  if (sizing.duckdb) execFileSync('bash', ['-c', duckdbBundlingCommands(repoRoot, outDir, sizing.architecture).join(' && ')]);
  const code = readdirSync(outDir).filter((f) => f.startsWith('index.mjs'));
  const externalImports = new Set<string>();
  const staticImports = new Set<string>();
  for (const input of Object.values(result.metafile.inputs)) {
    for (const imp of input.imports) {
      if (!imp.external || isBuiltin(imp.path) || imp.path === '<runtime>') continue;
      externalImports.add(imp.path);
      if (imp.kind === 'import-statement' || imp.kind === 'require-call') staticImports.add(imp.path);
    }
  }
  return {
    dir: outDir,
    codeBytes: code.reduce((s, f) => s + statSync(path.join(outDir, f)).size, 0),
    assetBytes: folderBytes(outDir),
    externalImports: [...externalImports].sort(),
    staticImports: [...staticImports].sort(),
    metafile: result.metafile,
  };
}

/** Whether the bundle loads DuckDB when it loads: an `import` statement of a `@duckdb/` package. */
export function importsDuckDb(bundle: Pick<BuiltBundle, 'staticImports'>): boolean {
  return bundle.staticImports.some((p) => p.startsWith('@duckdb/'));
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The SDK is external, provided by the Lambda runtime: beside a bundle here, a link to the repository's copy. */
export function linkSdk(dir: string): void {
  const modules = path.join(dir, 'node_modules');
  mkdirSync(modules, { recursive: true });
  try {
    symlinkSync(path.join(REPO_ROOT, 'node_modules', '@aws-sdk'), path.join(modules, '@aws-sdk'), 'dir');
  } catch {
    // already linked
  }
}

/** Cold module loads of a bundle: a fresh node per run; ms of the import alone and of the whole process. */
export function coldLoads(dir: string, runs: number, nodeOptions = ''): { importMs: number[]; processMs: number[] } {
  linkSdk(dir);
  const url = pathToFileURL(path.join(dir, 'index.mjs')).href;
  const script = `const t0 = performance.now(); await import(${JSON.stringify(url)}); console.log(performance.now() - t0);`;
  const importMs: number[] = [];
  const processMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: dir,
      env: { PATH: process.env['PATH'] ?? '', ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}) },
      encoding: 'utf8',
    });
    processMs.push(performance.now() - t0);
    importMs.push(Number(out.trim().split('\n').pop()));
  }
  return { importMs, processMs };
}

const mb = (n: number) => (n / 1e6).toFixed(2);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { runs: { type: 'string', default: '15' }, before: { type: 'boolean', default: false }, 'before-root': { type: 'string' } },
  });
  const beforeRoot = values['before-root'] ? path.resolve(values['before-root']) : REPO_ROOT;
  const runs = Number(values.runs);
  const shapes: BundleShape[] = values.before ? ['before', 'deployed'] : ['deployed'];
  const root = mkdtempSync(path.join(tmpdir(), 'sondage-lambda-bundles-'));
  try {
    const workers = new Map<BundleShape, string>();
    for (const shape of shapes) {
      console.log(`\n${shape === 'deployed' ? 'as deployed (infra/constructs/bundling.ts)' : `earlier shape (linked source map, not minified, --enable-source-maps; code of ${beforeRoot})`}`);
      console.log('function        duckdb  code MB  asset MB (unzipped)  loads DuckDB (static import)');
      for (const name of Object.keys(FUNCTION_SIZING) as FunctionName[]) {
        const sizing = shape === 'before' && name !== 'recordFailure' ? { ...FUNCTION_SIZING[name], duckdb: true } : FUNCTION_SIZING[name];
        const b = await bundleFunction(FUNCTION_FOLDERS[name], sizing, path.join(root, shape, name), shape, shape === 'before' ? beforeRoot : REPO_ROOT);
        if (name === 'worker') workers.set(shape, b.dir);
        console.log(`${name.padEnd(15)} ${String(sizing.duckdb).padEnd(7)} ${mb(b.codeBytes).padStart(7)}  ${mb(b.assetBytes).padStart(8)}             ${importsDuckDb(b) ? 'yes' : 'no'}`);
      }
    }
    // What starting node costs by itself, to read the figures against.
    const empty = path.join(root, 'empty');
    mkdirSync(empty);
    writeFileSync(path.join(empty, 'index.mjs'), 'export {};\n');
    // One load of each in turn, so that a busy spell of the machine weighs on all alike.
    const loads = new Map<string, { importMs: number[]; processMs: number[] }>();
    const targets: [string, string, string][] = [['an empty module', empty, ''], ...shapes.map((shape): [string, string, string] => [`worker, ${shape}`, workers.get(shape)!, shape === 'before' ? '--enable-source-maps' : ''])];
    for (let i = 0; i < runs; i++) {
      for (const [label, dir, nodeOptions] of targets) {
        const one = coldLoads(dir, 1, nodeOptions);
        const acc = loads.get(label) ?? { importMs: [], processMs: [] };
        acc.importMs.push(...one.importMs);
        acc.processMs.push(...one.processMs);
        loads.set(label, acc);
      }
    }
    console.log(`\ncold module load, ${runs} fresh node ${process.version} processes each, interleaved (load average ${os.loadavg()[0]!.toFixed(1)}, ${os.cpus().length} cores):`);
    for (const [label, l] of loads) {
      console.log(
        `${label.padEnd(18)} import median ${median(l.importMs).toFixed(0)} ms (min ${Math.min(...l.importMs).toFixed(0)}, max ${Math.max(...l.importMs).toFixed(0)}); ` +
          `whole process median ${median(l.processMs).toFixed(0)} ms`,
      );
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
