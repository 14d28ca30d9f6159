/**
 * How a clone runs its TypeScript sources (lib/core/sourceBundle.mjs): one esbuild bundle, kept
 * while the sources' bytes are those that built it. Each bundle here is imported by a Node process
 * of its own, as bin/sondage.mjs and the thread entries import it.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { REPO_ROOT, useTempDir } from '../helpers/campaigns.js';
import { runNode } from '../helpers/cli.js';

const BUNDLER = pathToFileURL(path.join(REPO_ROOT, 'lib/core/sourceBundle.mjs')).href;

/** A small source tree: an entry, a module that says where it is, JSON, and a lazy module that imports a package. */
async function writeSources(root: string): Promise<void> {
  const files: Record<string, string> = {
    'tsconfig.json': '{ "compilerOptions": { "target": "ES2022", "module": "NodeNext", "verbatimModuleSyntax": true } }\n',
    'node_modules/lazypkg/package.json': '{ "name": "lazypkg", "type": "module", "exports": "./index.js" }\n',
    'node_modules/lazypkg/index.js': 'globalThis.lazyLoaded = true;\nexport const v = "from the package";\n',
    'lib/main.ts': [
      "import { whereAmI, MESSAGE } from './where.js';",
      "import data from './data.json' with { type: 'json' };",
      "export const value: string = 'one';",
      'export { whereAmI, MESSAGE, data };',
      "export async function lazy(): Promise<string> { return (await import('./lazy.js')).fromPkg(); }",
      '',
    ].join('\n'),
    'lib/where.ts': "export const whereAmI = (): string => import.meta.url;\nexport const MESSAGE = 'new URL(\"./sql/\", import.meta.url)';\n",
    'lib/lazy.ts': "import { v } from 'lazypkg';\nexport const fromPkg = (): string => v;\n",
    'lib/data.json': '{ "n": 1 }\n',
  };
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await writeFile(path.join(root, rel), text);
  }
}

interface Outcome {
  readonly dir: string;
  readonly built: boolean;
  readonly value: string;
  readonly where: string;
  readonly message: string;
  readonly n: number;
  readonly lazyBefore: boolean;
  readonly lazy: string;
}

/** Bundles the tree in a Node process of its own, imports its entry and reports what it sees. */
async function bundleAndImport(root: string): Promise<Outcome> {
  const script = `
    const { bundledSources, entryUrl } = await import(${JSON.stringify(BUNDLER)});
    const { dir, built } = await bundledSources({ root: ${JSON.stringify(root)}, entries: { main: 'lib/main.ts' }, cacheDir: ${JSON.stringify(path.join(root, 'cache'))} });
    const m = await import(entryUrl(dir, 'main'));
    const lazyBefore = globalThis.lazyLoaded === true;
    console.log(JSON.stringify({ dir, built, value: m.value, where: m.whereAmI(), message: m.MESSAGE, n: m.data.n, lazyBefore, lazy: await m.lazy() }));`;
  const out = await runNode(['--input-type=module', '-e', script], { timeoutMs: 60_000 });
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout) as Outcome;
}

describe('the bundle of the sources', () => {
  const tmp = useTempDir('source-bundle');

  it('keeps what each module finds beside itself, keeps lazy imports lazy, and is built once', async () => {
    await writeSources(tmp.dir);
    const first = await bundleAndImport(tmp.dir);
    expect(first).toMatchObject({ built: true, value: 'one', n: 1, lazyBefore: false, lazy: 'from the package' });
    expect(first.where).toBe(pathToFileURL(path.join(tmp.dir, 'lib/where.ts')).href);
    // Only the expression is replaced, never the same words in a string.
    expect(first.message).toBe('new URL("./sql/", import.meta.url)');
    const again = await bundleAndImport(tmp.dir);
    expect(again).toMatchObject({ built: false, dir: first.dir, value: 'one' });
  }, 120_000);

  it('is built again when a source changes, though its size and time stay the same', async () => {
    await writeSources(tmp.dir);
    const first = await bundleAndImport(tmp.dir);
    const main = path.join(tmp.dir, 'lib/main.ts');
    const { mtime } = await stat(main);
    await writeFile(main, (await readFile(main, 'utf8')).replace("'one'", "'two'"));
    await utimes(main, mtime, mtime);
    const edited = await bundleAndImport(tmp.dir);
    expect(edited).toMatchObject({ built: true, value: 'two' });
    expect(edited.dir).not.toBe(first.dir);
    // A JSON file counts as a source too.
    await writeFile(path.join(tmp.dir, 'lib/data.json'), '{ "n": 2 }\n');
    expect(await bundleAndImport(tmp.dir)).toMatchObject({ built: true, n: 2 });
  }, 120_000);

  it('is built again when a source it held is gone or the manifest is damaged', async () => {
    await writeSources(tmp.dir);
    await bundleAndImport(tmp.dir);
    // main.ts no longer imports where.ts, which is removed.
    const main = path.join(tmp.dir, 'lib/main.ts');
    await writeFile(main, (await readFile(main, 'utf8')).replace("import { whereAmI, MESSAGE } from './where.js';", "const whereAmI = (): string => 'inline'; const MESSAGE = '';"));
    await rename(path.join(tmp.dir, 'lib/where.ts'), path.join(tmp.dir, 'where.ts.bak'));
    expect(await bundleAndImport(tmp.dir)).toMatchObject({ built: true, where: 'inline' });
    await writeFile(path.join(tmp.dir, 'cache/manifest.json'), '{');
    expect(await bundleAndImport(tmp.dir)).toMatchObject({ built: true, where: 'inline' });
    expect(await bundleAndImport(tmp.dir)).toMatchObject({ built: false });
  }, 120_000);

  it('serves two processes that build at once', async () => {
    await writeSources(tmp.dir);
    const [a, b] = await Promise.all([bundleAndImport(tmp.dir), bundleAndImport(tmp.dir)]);
    expect(a.dir).toBe(b.dir);
    expect([a.value, b.value]).toEqual(['one', 'one']);
    // Nothing half-made is left beside the build.
    expect((await readdir(path.join(tmp.dir, 'cache'))).sort()).toEqual([path.basename(a.dir), 'manifest.json']);
  }, 120_000);

  it('removes, when it makes a build, the others that no running process uses', async () => {
    await writeSources(tmp.dir);
    const cache = path.join(tmp.dir, 'cache');
    const hour = 3600 * 1000;
    const dead = 2 ** 22 + 1; // above Linux's largest process id
    const builds: [name: string, users: number[], ageMs: number][] = [
      ['build-unused', [], 2 * hour],
      ['build-used-by-the-dead', [dead], 2 * hour],
      ['build-used', [process.pid], 2 * hour], // this test's process runs
      ['build-just-made', [], 0.1 * hour], // a process may be about to mark it
      [`tmp-${dead}-killed`, [], 2 * hour],
      [`tmp-${process.pid}-building`, [], 2 * hour],
    ];
    for (const [name, users, age] of builds) {
      await mkdir(path.join(cache, name, 'users'), { recursive: true });
      for (const pid of users) await writeFile(path.join(cache, name, 'users', String(pid)), '');
      const when = new Date(Date.now() - age);
      await utimes(path.join(cache, name, 'users'), when, when);
      await utimes(path.join(cache, name), when, when);
    }
    const made = await bundleAndImport(tmp.dir);
    expect((await readdir(cache)).sort()).toEqual([path.basename(made.dir), 'build-just-made', 'build-used', 'manifest.json', `tmp-${process.pid}-building`].sort());
  }, 120_000);

  it('keeps a mark of each process that uses a build while it runs: its own goes when it ends, a dead one at the next start', async () => {
    await writeSources(tmp.dir);
    const made = await bundleAndImport(tmp.dir);
    const users = path.join(made.dir, 'users');
    expect(await readdir(users)).toEqual([]);
    await writeFile(path.join(users, `${2 ** 22 + 1}.0`), '');
    await writeFile(path.join(users, `${process.pid}.7`), '');
    expect(await bundleAndImport(tmp.dir)).toMatchObject({ built: false, dir: made.dir });
    expect(await readdir(users)).toEqual([`${process.pid}.7`]);
  }, 120_000);
});

describe("the clone's CLI from the bundle", () => {
  const tmp = useTempDir('source-bundle-cli');

  it("bundles the clone's own entries: a source esbuild cannot bundle would send every start to tsx's loader unseen", async () => {
    // A fresh cache of its own, where the bundle's packages resolve: under the clone's node_modules.
    const cache = path.join(REPO_ROOT, 'node_modules', '.cache', `sondage-test-${process.pid}`);
    onTestFinished(() => rm(cache, { recursive: true, force: true }));
    const script = `
      const { bundledSources, entryUrl } = await import(${JSON.stringify(BUNDLER)});
      const { existsSync } = await import('node:fs');
      const { dir, built } = await bundledSources({ cacheDir: ${JSON.stringify(cache)} });
      const cli = await import(entryUrl(dir, 'cli/main'));
      const entry = await import(entryUrl(dir, 'api/battery'));
      console.log(JSON.stringify({ built, main: typeof cli.main, defineBattery: typeof entry.defineBattery, thread: existsSync(new URL(entryUrl(dir, 'run/partitionThreadMain'))) }));`;
    const out = await runNode(['--input-type=module', '-e', script], { timeoutMs: 60_000 });
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({ built: true, main: 'function', defineBattery: 'function', thread: true });
  }, 120_000);

  it("runs a battery of one's own, TypeScript, in the main thread and in two partition threads, on the bundle's one copy of the core", async () => {
    const cli = (...argv: string[]) => runNode([path.join(REPO_ROOT, 'bin/sondage.mjs'), ...argv], { timeoutMs: 180_000 });
    const made = await cli('new', 'battery', 'tally', '--dir', tmp.dir);
    expect(made.code, made.stderr).toBe(0);
    // As the scaffold says, TypeScript works too: loaded through tsx, as the compiled package loads it.
    const study = path.join(tmp.dir, 'tally');
    await rename(path.join(study, 'index.mjs'), path.join(study, 'index.mts'));
    const file = path.join(tmp.dir, 'tally-run.yaml');
    await writeFile(
      file,
      'name: tally-run\nseed: 3\nbudget_usd: 1\ndata_dir: data\nbattery: ./tally/\ndesign: { items: tally/items.jsonl, repeats: 20 }\nmodels:\n' +
        '  - { id: careful, provider: simulated, model: careful, price: { input_per_mtok: 1, output_per_mtok: 2 }, simulation: { accuracy: 0.9 } }\n',
    );
    const run = await cli('run', file, '--threads', '2');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('partitions run in 2 threads');
    expect(existsSync(path.join(tmp.dir, 'data/campaigns/tally-run/results/scores.csv'))).toBe(true);
    // The battery throws the CampaignFileError of `sondage/battery`; the CLI knows it as its own
    // (one copy of the core) and prints its message, not a stack.
    await writeFile(path.join(study, 'items.jsonl'), 'not json\n');
    const plan = await cli('plan', file);
    expect(plan.code).toBe(1);
    expect(plan.stderr).toContain('items.jsonl');
    expect(plan.stderr).not.toMatch(/^\s+at /m);
  }, 240_000);
});
