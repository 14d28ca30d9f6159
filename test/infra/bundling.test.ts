import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
// eslint-disable-next-line no-restricted-imports -- the infra tests inspect the CDK app; lib/ still may not import it
import { App, Stack } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleFunction, importsDuckDb } from '../../bench/lambda-bundles.js';
import { duckdbBundlingCommands, duckdbPackages, Handler } from '../../infra/constructs/Handler.js';
import { FUNCTION_SIZING } from '../../lib/config/sizing.js';
import { FAR6_SQL } from '../../lib/batteries/far6/sqlLibrary.js';
import { REPO_ROOT } from '../helpers/campaigns.js';

// The synth tests skip asset bundling; this runs the afterBundling commands a real `cdk synth`
// runs for a DuckDB function, then loads DuckDB from the result the way the Lambda bundle does
// (an ESM module beside node_modules/, nothing from the repository's own node_modules).

const hostArch = process.arch === 'arm64' ? 'arm64' : 'x86_64';
const nativeInstalled = existsSync(path.join(REPO_ROOT, 'node_modules', duckdbPackages(hostArch)[2]!));

let out: string;
beforeAll(() => {
  out = mkdtempSync(path.join(tmpdir(), 'sondage-bundle-'));
});
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('DuckDB beside the bundle', () => {
  it.runIf(process.platform === 'linux' && nativeInstalled)('copies the packages and the SQL files so that the bundle imports DuckDB and reads the queries', () => {
    // prepare: the hook's commands, as NodejsFunction chains them
    execFileSync('bash', ['-c', duckdbBundlingCommands(REPO_ROOT, out, hostArch).join(' && ')]);
    // A stand-in for index.mjs: the bundle keeps `@duckdb/node-api` as an ESM import and
    // every SQL library reads `./sql/<name>.sql` next to the module (lib/query/sql.ts).
    writeFileSync(
      path.join(out, 'index.mjs'),
      [
        "import { readFileSync } from 'node:fs';",
        "import { DuckDBInstance } from '@duckdb/node-api';",
        'const db = await DuckDBInstance.create();',
        'const conn = await db.connect();',
        "const rows = (await conn.runAndReadAll('SELECT 41 + 1 AS answer')).getRowObjectsJS();",
        "const sql = readFileSync(new URL('./sql/chosen_replies.sql', import.meta.url), 'utf8');",
        'console.log(JSON.stringify({ answer: rows[0].answer, sql: sql.length > 0 }));',
      ].join('\n'),
    );
    // act: a fresh node with the temp folder as its only module root
    const stdout = execFileSync(process.execPath, [path.join(out, 'index.mjs')], { cwd: out, env: { PATH: process.env.PATH ?? '' } }).toString();
    // assess
    expect(JSON.parse(stdout.trim())).toEqual({ answer: 42, sql: true });
    expect(readdirSync(path.join(out, 'sql'))).toEqual(expect.arrayContaining(FAR6_SQL.allQueries().map((n) => `${n}.sql`)));
    expect(readdirSync(path.join(out, 'node_modules', '@duckdb')).sort()).toEqual(
      duckdbPackages(hostArch)
        .filter((p) => p.startsWith('@duckdb/'))
        .map((p) => p.slice('@duckdb/'.length))
        .sort(),
    );
  });

  it('names the binding of the function architecture, not the host one', () => {
    expect(duckdbPackages('x86_64')).toContain('@duckdb/node-bindings-linux-x64');
    expect(duckdbPackages('arm64')).toContain('@duckdb/node-bindings-linux-arm64');
    const commands = duckdbBundlingCommands("/repo with 'quote'", '/out', 'arm64').join('\n');
    expect(commands).toContain(`'/repo with '\\''quote'\\''/node_modules/@duckdb/node-bindings-linux-arm64'`);
  });

  it.runIf(process.platform === 'linux' && nativeInstalled && hostArch === FUNCTION_SIZING.plan.architecture)(
    'bundles the plan handler for real: esbuild output with DuckDB left external and copied beside it',
    () => {
      // prepare: one function in a stack of its own, bundled as `cdk synth` bundles it
      const app = new App({ outdir: path.join(out, 'cdk.out') });
      const stack = new Stack(app, 'BundleTest');
      new Handler(stack, 'Plan', { name: 'plan', description: 'bundling test', sizing: FUNCTION_SIZING.plan, environment: {} });
      // act
      const assembly = app.synth();
      // assess
      const assets = readdirSync(assembly.directory).filter((f) => f.startsWith('asset.'));
      expect(assets).toHaveLength(1);
      const dir = path.join(assembly.directory, assets[0]!);
      const bundle = readFileSync(path.join(dir, 'index.mjs'), 'utf8');
      expect(bundle).toMatch(/from\s*["']@duckdb\/node-api["']/);
      expect(existsSync(path.join(dir, 'node_modules/@duckdb/node-api/package.json'))).toBe(true);
      expect(existsSync(path.join(dir, 'sql/chosen_replies.sql'))).toBe(true);
    },
  );
});

// The worker only writes and reads parts, in JavaScript; DuckDB stays with the
// functions that query (plan, report), and no source map ships.
describe('the worker bundle', () => {
  // One esbuild run serves the tests that read its output; each still checks its own property.
  let bundled: ReturnType<typeof bundleFunction> | undefined;
  const workerBundle = () => (bundled ??= bundleFunction('worker', FUNCTION_SIZING.worker, path.join(out, 'worker')));

  it('ships without DuckDB: no static import of it, nothing copied beside, sizing says so', async () => {
    // prepare
    expect(FUNCTION_SIZING.worker.duckdb).toBe(false);
    // act: bundled with the options the Handler construct gives NodejsFunction (infra/constructs/bundling.ts)
    const bundle = await workerBundle();
    // assess: DuckDB is reached only by the dynamic import() of code the worker never runs (the BYO import)
    expect(importsDuckDb(bundle)).toBe(false);
    expect(bundle.staticImports.filter((p) => !p.startsWith('@aws-sdk/'))).toEqual([]);
    const code = readFileSync(path.join(out, 'worker', 'index.mjs'), 'utf8');
    expect(code).not.toMatch(/(from|import)\s*["']@duckdb\//);
    expect(readdirSync(path.join(out, 'worker'))).toEqual(['index.mjs']);
  });

  it('is under 10 MB unzipped, with no source map', async () => {
    const bundle = await workerBundle();
    expect(bundle.assetBytes).toBeLessThan(10_000_000);
    expect(readFileSync(path.join(out, 'worker', 'index.mjs'), 'utf8')).not.toContain('sourceMappingURL');
  });

  it.runIf(process.platform === 'linux')('is what `cdk synth` uploads: one index.mjs, no map, no node_modules, no --enable-source-maps', () => {
    // prepare: the real construct, bundled as `cdk synth` bundles it
    const app = new App({ outdir: path.join(out, 'cdk.out.worker') });
    const stack = new Stack(app, 'WorkerBundle');
    const worker = new Handler(stack, 'Worker', { name: 'worker', description: 'bundling test', sizing: FUNCTION_SIZING.worker, environment: { A: 'b' } });
    // act
    const assembly = app.synth();
    // assess
    const assets = readdirSync(assembly.directory).filter((f) => f.startsWith('asset.'));
    expect(assets).toHaveLength(1);
    const dir = path.join(assembly.directory, assets[0]!);
    expect(readdirSync(dir)).toEqual(['index.mjs']);
    expect(statSync(path.join(dir, 'index.mjs')).size).toBeLessThan(10_000_000);
    const template = JSON.stringify(app.synth().getStackByName('WorkerBundle').template);
    expect(template).not.toContain('enable-source-maps');
    expect(worker.fn).toBeDefined();
  });
});
