// How a clone runs its TypeScript sources: as an esbuild bundle of its entries (entrySet), built
// when a source changed and kept under node_modules/.cache/sondage/. The CLI (bin/sondage.mjs) and
// each worker thread (threadEntry.mjs) import their entry from it. Loaded through tsx's module hooks
// instead, every module's resolve and load is a message to tsx's hooks thread: `sondage status`
// took 1.8–2.0 s and a partition thread's code 1.3–1.6 s of wall and 2.0–2.5 s of CPU, against
// 1.1 s and 0.5–0.7 s and 0.7–0.8 s from the bundle (bench/README.md, growth, "Fixed costs"). The
// compiled package (dist/) never comes here: it has no TypeScript.
//
// What the bundle keeps of the sources' behaviour:
// - Each module's `import.meta.url` is its source file's URL (replaced when bundled), so the SQL
//   files, price tables and thread entries it finds beside itself are those of lib/.
// - `import()` of a relative module stays lazy (code splitting): a provider's SDK loads only when a
//   campaign uses that provider. Packages stay outside the bundle, loaded by Node.
// - A battery from the user's folder imports `sondage/battery`: routed to the bundle's own
//   `api/battery` entry (selfReference.ts reads PUBLIC_ENTRY), whose code is the same chunks the
//   CLI or the thread runs, so there is one copy of the core, as in the compiled package.
// - A change to any source the bundle holds makes the next start build again: the cache is keyed
//   by the content of every file that went in, not by times (test/package/sourceBundle.test.ts).
// - A stack names the source files and their lines (linked source maps, switched on here).
// If the bundle cannot be made or kept (no esbuild, a read-only node_modules), the caller loads the
// sources through tsx's loader instead; SONDAGE_SOURCE_BUNDLE=0 does that on purpose.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { threadId } from 'node:worker_threads';

/**
 * The CLI's bundle: its entry, the partition threads' and the public battery entry, built together
 * so that a run's first start after an edit builds once. Any other thread entry (a battery's
 * import threads) gets a bundle of its own with the public entry.
 */
const CORE_ENTRIES = ['cli/main', 'run/partitionThreadMain', 'api/battery'];

/** The entries (output name → file relative to the root) built with `name`, and their cache folder's name. */
function entrySet(name) {
  const names = CORE_ENTRIES.includes(name) ? CORE_ENTRIES : [name, 'api/battery'];
  return { entries: Object.fromEntries(names.map((n) => [n, `lib/${n}.ts`])), folder: CORE_ENTRIES.includes(name) ? 'core' : name.replaceAll('/', '.') };
}

/**
 * Where the public entry of the running bundle is: a global, because lib/batteries/selfReference.ts
 * reads it from inside the bundle, which cannot import this file (it is not bundled).
 */
const PUBLIC_ENTRY = Symbol.for('sondage.sourceBundle.publicEntry');

/**
 * A build no running process uses is removed when another is made, once it is this old: the
 * moment between a process choosing a build and writing its mark (markUsed) is far shorter.
 */
const KEEP_UNMARKED_MS = 3600 * 1000;

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The build options. Part of the cache key, so a change here builds again. Source maps are linked
 * files without the sources' text: enough for a stack to name the source file and line.
 */
function buildOptions(root, entries, outdir) {
  return {
    absWorkingDir: root,
    entryPoints: Object.fromEntries(Object.entries(entries).map(([name, file]) => [name, path.join(root, file)])),
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    outExtension: { '.js': '.mjs' },
    sourcemap: 'linked',
    sourcesContent: false,
    metafile: true,
    logLevel: 'silent',
  };
}

/**
 * What the cache key holds besides the inputs: the options, the entries (absolute: a clone moved
 * elsewhere builds again, its `import.meta.url`s changed), the tsconfig that compiles them and
 * this file, whose plugin makes the bundle.
 */
function keyOptions(root, entries) {
  const { outdir: _out, ...options } = buildOptions(root, entries, '');
  return JSON.stringify({ options, tsconfig: tsconfigOf(root), bundler: readFileSync(new URL(import.meta.url), 'utf8') });
}

/** The text of the root's tsconfig.json, which compiles the sources ('{}' when there is none). */
function tsconfigOf(root) {
  const file = path.join(root, 'tsconfig.json');
  return existsSync(file) ? readFileSync(file, 'utf8') : '{}';
}

/** The digest of the inputs' bytes, by their paths relative to the root, with the options. */
function digest(keyText, files) {
  const hash = createHash('sha256').update(keyText);
  for (const [rel, bytes] of [...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) hash.update(`\0${rel}\0`).update(bytes);
  return hash.digest('hex').slice(0, 20);
}

const LOADERS = { '.ts': 'ts', '.mts': 'ts', '.cts': 'ts', '.js': 'js', '.mjs': 'js', '.cjs': 'js', '.json': 'json' };

/** Loads every source itself: to key the cache by the very bytes bundled, and to set each `import.meta.url`. */
function sourcePlugin(esbuild, root, seen) {
  const tsconfig = tsconfigOf(root);
  return {
    name: 'sondage-sources',
    setup(build) {
      build.onLoad({ filter: /.*/, namespace: 'file' }, async (args) => {
        const loader = LOADERS[path.extname(args.path)];
        if (!loader) throw new Error(`${args.path}: the source bundle takes .ts, .js and .json files only`);
        const bytes = await readFile(args.path);
        seen.set(path.relative(root, args.path).split(path.sep).join('/'), bytes);
        const text = bytes.toString('utf8');
        if (loader === 'json' || !text.includes('import.meta.url')) return { contents: text, loader };
        // Through esbuild's parser, so that only the expression is replaced, never the words in a
        // string or a comment.
        const { code } = await esbuild.transform(text, {
          loader,
          format: 'esm',
          sourcefile: args.path,
          sourcemap: 'inline',
          tsconfigRaw: tsconfig,
          define: { 'import.meta.url': JSON.stringify(pathToFileURL(args.path).href) },
        });
        return { contents: code, loader: 'js' };
      });
    },
  };
}

function readManifest(file) {
  try {
    const m = JSON.parse(readFileSync(file, 'utf8'));
    return Array.isArray(m.inputs) && typeof m.build === 'string' ? m : undefined;
  } catch {
    return undefined;
  }
}

/** The build the manifest names, when every input it lists still has the bytes that built it. */
function currentBuild(root, cacheDir, keyText) {
  const manifest = readManifest(path.join(cacheDir, 'manifest.json'));
  if (!manifest) return undefined;
  const files = new Map();
  for (const rel of manifest.inputs) {
    try {
      files.set(rel, readFileSync(path.join(root, rel)));
    } catch {
      return undefined;
    }
  }
  const dir = path.join(cacheDir, `build-${digest(keyText, files)}`);
  return manifest.build === path.basename(dir) && existsSync(path.join(dir, 'done')) ? dir : undefined;
}

/** Whether a process of this id runs (signal 0 tests without sending; EPERM: it runs as another user). */
function running(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** The process a mark (`<pid>.<thread>`) or a half-made build (`tmp-<pid>-…`) names. */
function pidOf(name) {
  const n = Number(name.startsWith('tmp-') ? name.split('-')[1] : name.split('.')[0]);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/**
 * Marks the build as used by this thread of this process: a run lasts days, and loads some of its
 * chunks late (a provider's SDK, the analysis), so a build stays while a process that uses it runs.
 * The mark goes when the thread ends; the marks of processes that died without (kill -9) go at the
 * next start, so that a build used for months holds a few marks, not one per start.
 */
function markUsed(dir) {
  const users = path.join(dir, 'users');
  mkdirSync(users, { recursive: true });
  for (const mark of readdirSync(users)) {
    const pid = pidOf(mark);
    if (pid !== undefined && !running(pid)) rmSync(path.join(users, mark), { force: true });
  }
  const mine = path.join(users, `${process.pid}.${threadId}`);
  writeFileSync(mine, '');
  process.once('exit', () => rmSync(mine, { force: true }));
}

/** Whether a build (or a half-made one) may still be in use. */
function inUse(full, name) {
  const users = path.join(full, 'users');
  const marks = existsSync(users) ? readdirSync(users) : [];
  if ([...marks, name].map(pidOf).some((pid) => pid !== undefined && running(pid))) return true;
  const latest = Math.max(statSync(full).mtimeMs, marks.length > 0 ? statSync(users).mtimeMs : 0);
  return Date.now() - latest < KEEP_UNMARKED_MS;
}

/** Removes the builds no running process uses, but never `keep`. */
function prune(cacheDir, keep) {
  for (const name of readdirSync(cacheDir)) {
    const full = path.join(cacheDir, name);
    if (full === keep || !/^(build|tmp)-/.test(name)) continue;
    try {
      if (!inUse(full, name)) rmSync(full, { recursive: true, force: true });
    } catch {
      // Removed by another process meanwhile.
    }
  }
}

/**
 * The folder of the bundle of `entries` (output name → file relative to `root`), built now if no kept
 * build matches the sources. Two processes that build at once each write a folder of their own and
 * rename it into place: the first wins, the second's is dropped, both use the same files.
 * `cacheDir` lies under `root`'s node_modules: the bundle imports its packages by name.
 * @returns the folder, and whether this call built it
 */
export async function bundledSources({ root = REPO_ROOT, entries = entrySet('cli/main').entries, cacheDir = path.join(root, 'node_modules', '.cache', 'sondage', 'core') } = {}) {
  const keyText = keyOptions(root, entries);
  const kept = currentBuild(root, cacheDir, keyText);
  if (kept) {
    markUsed(kept);
    return { dir: kept, built: false };
  }
  const esbuild = await import('esbuild');
  mkdirSync(cacheDir, { recursive: true });
  const tmp = path.join(cacheDir, `tmp-${process.pid}-${Math.random().toString(36).slice(2)}`);
  try {
    const seen = new Map();
    await esbuild.build({ ...buildOptions(root, entries, tmp), plugins: [sourcePlugin(esbuild, root, seen)] });
    writeFileSync(path.join(tmp, 'done'), '');
    const dir = path.join(cacheDir, `build-${digest(keyText, seen)}`);
    try {
      renameSync(tmp, dir);
    } catch (err) {
      if (!existsSync(path.join(dir, 'done'))) throw err;
    }
    markUsed(dir);
    const manifest = path.join(cacheDir, `manifest-${process.pid}.json`);
    writeFileSync(manifest, JSON.stringify({ build: path.basename(dir), inputs: [...seen.keys()].sort() }));
    renameSync(manifest, path.join(cacheDir, 'manifest.json'));
    prune(cacheDir, dir);
    return { dir, built: true };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The URL of an entry of a bundle folder. */
export function entryUrl(dir, name) {
  return pathToFileURL(path.join(dir, `${name}.mjs`)).href;
}

/**
 * Imports an entry of the clone's bundle (`cli/main`, `run/partitionThreadMain`, or any module
 * `lib/<name>.ts`); undefined when the bundle cannot be had, and the caller then loads the sources
 * through tsx.
 */
export async function importBundledEntry(name) {
  if (process.env.SONDAGE_SOURCE_BUNDLE === '0' || !existsSync(path.join(REPO_ROOT, 'lib', `${name}.ts`))) return undefined;
  const { entries, folder } = entrySet(name);
  let dir;
  try {
    ({ dir } = await bundledSources({ entries, cacheDir: path.join(REPO_ROOT, 'node_modules', '.cache', 'sondage', folder) }));
  } catch {
    return undefined;
  }
  globalThis[PUBLIC_ENTRY] = entryUrl(dir, 'api/battery');
  // A stack names lib/…/*.ts and its lines, as under tsx, which turns the same switch on.
  process.setSourceMapsEnabled(true);
  return import(entryUrl(dir, name));
}
