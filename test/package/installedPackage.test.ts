/**
 * The package as a researcher installs it: `npm pack` (which builds dist/ through "prepack"), the
 * tarball installed into an empty folder outside the source tree, and then only that folder's
 * `sondage` — scaffold a battery of one's own, plan, run, analyse it, run its own test against
 * the simulator's truth; and a FAR-6 campaign, whose result files must be byte for byte those the
 * TypeScript sources give (so every estimator test of the sources holds for the compiled package).
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, readFile, readdir, rename, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from '../helpers/campaigns.js';

const run = promisify(execFile);
const MINUTES = 60_000;

/** The environment of a user's shell, without any provider key or AWS credential of this machine. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (/_API_KEY$|^AWS_|_TOKEN$/.test(k)) delete env[k];
  return env;
}

let dir: string;
let cleanup: () => Promise<void>;
let project: string;
let tarball: string;

async function sh(cmd: string, args: readonly string[], cwd: string, timeout = 5 * MINUTES): Promise<string> {
  try {
    const { stdout } = await run(cmd, [...args], { cwd, env: cleanEnv(), timeout, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

/** The installed package's own command, run from the user's folder (as `npx sondage` would). */
const sondage = (args: readonly string[], cwd = project) => sh(path.join(project, 'node_modules', '.bin', 'sondage'), args, cwd);

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('installed'));
  const packed = path.join(dir, 'packed');
  await mkdir(packed);
  const out = await sh('npm', ['pack', '--silent', '--pack-destination', packed], REPO_ROOT, 8 * MINUTES);
  tarball = path.join(packed, out.trim().split('\n').at(-1)!);
  project = path.join(dir, 'lab');
  await mkdir(project);
  await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'lab', private: true, type: 'module' }));
  // Install scripts are skipped: better-sqlite3 would compile itself from source (minutes, and node
  // headers from the internet); the addon `npm ci` built for this same Node is copied instead.
  await sh('npm', ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', tarball], project, 8 * MINUTES);
  await cp(path.join(REPO_ROOT, 'node_modules', 'better-sqlite3', 'build'), path.join(project, 'node_modules', 'better-sqlite3', 'build'), { recursive: true });
}, 16 * MINUTES);
afterAll(() => cleanup?.());

describe('the installed package', () => {
  it('holds the compiled CLI, the library entry and the templates, and none of the TypeScript sources or tests', async () => {
    const pkg = path.join(project, 'node_modules', 'sondage');
    expect(existsSync(path.join(pkg, 'dist', 'lib', 'cli', 'main.js'))).toBe(true);
    expect(existsSync(path.join(pkg, 'dist', 'lib', 'api', 'battery.d.ts'))).toBe(true);
    expect(existsSync(path.join(pkg, 'templates', 'battery', 'index.mjs'))).toBe(true);
    // Files the code reads at run time sit beside the compiled modules.
    for (const f of ['lib/query/sql/chosen_replies.sql', 'lib/pricing/prices.json', 'lib/run/partitionThread.mjs', 'lib/view/viewer.js']) expect(existsSync(path.join(pkg, 'dist', f)), f).toBe(true);
    expect(existsSync(path.join(pkg, 'lib'))).toBe(false);
    expect(existsSync(path.join(pkg, 'test'))).toBe(false);
    expect((await readdir(path.join(pkg, 'dist'), { recursive: true })).some((f) => String(f).endsWith('.ts') && !String(f).endsWith('.d.ts'))).toBe(false);
    expect(await sondage(['--version'])).toMatch(/^sondage \d+\.\d+\.\d+/);
    expect(await sondage(['batteries'])).toContain('far6');
    expect(await sondage(['view', '--help'])).toContain('127.0.0.1');
    // The typed entry for study authors resolves from the user's folder.
    const probe = path.join(project, 'probe.mjs');
    await writeFile(probe, "import { defineBattery, SqlLibrary, z } from 'sondage/battery'; console.log(typeof defineBattery, typeof SqlLibrary, typeof z.object);");
    expect((await sh(process.execPath, [probe], project)).trim()).toBe('function function function');
  }, 5 * MINUTES);

  it('holds the GPU job entry point the probe image runs, compiled by the same build, which starts without tsx', async () => {
    // The image (batch-images/probe) builds with scripts/build.mjs and runs the compiled entry, as the Lambdas do.
    const image = path.join(REPO_ROOT, 'batch-images', 'probe');
    const dockerfile = await readFile(path.join(image, 'Dockerfile'), 'utf8');
    const entry = /^ENTRYPOINT \["node", "\/opt\/sondage\/(dist\/[^"]+\.js)"\]$/m.exec(dockerfile);
    expect(entry, 'the image runs compiled JavaScript, not TypeScript through a loader').not.toBeNull();
    expect(dockerfile).toMatch(/^RUN node scripts\/build\.mjs/m);
    // Everything the image copies from the build context gets through its .dockerignore.
    const allowed = (await readFile(path.join(image, 'Dockerfile.dockerignore'), 'utf8')).split('\n').filter((l) => l.startsWith('!')).map((l) => l.slice(1));
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(' '));
    expect(copied.length).toBeGreaterThan(5);
    expect(copied.filter((c) => !allowed.includes(c))).toEqual([]);
    // act: the packaged entry with no job environment
    const file = path.join(project, 'node_modules', 'sondage', entry![1]!);
    const started = await run(process.execPath, [file], { cwd: project, env: { PATH: process.env.PATH ?? '' } }).then(
      () => ({ code: 0, stdout: '' }),
      (err: { code?: number; stdout?: string }) => ({ code: err.code, stdout: err.stdout ?? '' }),
    );
    // assess: every module loaded (a .ts import would fail before), then the configuration error and its exit code
    expect(started.code).toBe(2);
    expect(started.stdout).toMatch(/"level":"ERROR".*is not set \(the plan's job environment sets it\)/);
  }, 2 * MINUTES);

  it('scaffolds a battery that plans, runs, analyses and passes its own test against the simulated truth', async () => {
    expect(await sondage(['new', 'battery', 'quiz'])).toContain('quiz.test.mjs');
    const quiz = path.join(project, 'quiz');
    expect(await sondage(['plan', 'campaign.yaml'], quiz)).toMatch(/quiz-demo \(quiz\): 800 requests/);
    await sondage(['run', 'campaign.yaml'], quiz);
    expect(await sondage(['batteries', './quiz'])).toContain(`from: ${path.join(quiz, 'index.mjs')}`);
    expect(await sondage(['analyze', 'campaign.yaml'], quiz)).toContain('careful en:');
    const csv = await readFile(path.join(quiz, 'data', 'campaigns', 'quiz-demo', 'results', 'scores.csv'), 'utf8');
    expect(csv.split(/\r?\n/)[0]).toBe('model,language,replies,correct,unreadable,accuracy');
    // The same battery in TypeScript (index.ts; the user's package.json says "type": "module") is
    // compiled by tsx and gets the core of the CLI that loads it: the CampaignFileError it throws
    // for a bad items file is the CLI's own, printed as a message, not a stack.
    const typed = path.join(project, 'quiz-ts');
    await cp(quiz, typed, { recursive: true, filter: (src) => path.basename(src) !== 'data' });
    await rename(path.join(typed, 'index.mjs'), path.join(typed, 'index.ts'));
    await writeFile(path.join(typed, 'items.jsonl'), 'not json\n');
    const refused = await run(path.join(project, 'node_modules', '.bin', 'sondage'), ['plan', 'campaign.yaml'], { cwd: typed, env: cleanEnv() }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code?: number; stderr?: string }) => ({ code: err.code, stderr: err.stderr ?? '' }),
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('items.jsonl:1: not a JSON object');
    expect(refused.stderr).not.toMatch(/^\s+at /m);
    // Its own test: the analysis recovers each simulated model's accuracy (node's runner, in the user's folder).
    expect(await sh(process.execPath, ['--test'], quiz)).toMatch(/# pass 1\n# fail 0/);
  }, 8 * MINUTES);

  // The stack's synthesis and the FAR-6 runs share nothing (their own files under the user's
  // folder): they run side by side, after the scaffold above that the synthesis names.
  it.concurrent('synthesizes the AWS stack from the installed package with the scaffolded battery, as `cdk deploy` would (cdk.json of docs/aws.md)', async ({ expect }) => {
    // prepare: the cdk.json docs/aws.md shows, in the user's folder, naming the battery scaffolded above
    await writeFile(
      path.join(project, 'cdk.json'),
      JSON.stringify({ app: 'node node_modules/sondage/dist/infra/app.js', context: { 'sondage:batteries': ['./quiz/'] } }, null, 2),
    );
    // act: the CDK CLI (the user runs it with npx aws-cdk@2; here the repository's copy, no network), synth only: no AWS account
    await sh(process.execPath, [path.join(REPO_ROOT, 'node_modules', 'aws-cdk', 'bin', 'cdk'), 'synth', '--quiet', '--no-notices', '--no-version-reporting'], project, 8 * MINUTES);
    // assess: the template deploys the battery's table and queries; the functions' bundles carry it, the querying ones its SQL
    const out = path.join(project, 'cdk.out');
    const template = await readFile(path.join(out, 'Sondage.template.json'), 'utf8');
    expect(template).toContain('"Name": "quiz_prompts"');
    expect(template).toContain('"Name": "sondage-quiz-quiz_scores"');
    const assets = (await readdir(out)).filter((f) => f.startsWith('asset.'));
    expect(assets).toHaveLength(4);
    const withSql = assets.filter((a) => existsSync(path.join(out, a, 'sql', 'quiz_scores.sql')));
    expect(withSql).toHaveLength(2);
    for (const a of withSql) expect(existsSync(path.join(out, a, 'node_modules', '@duckdb', 'node-api', 'package.json'))).toBe(true);
    const carrying = [];
    for (const a of assets) if ((await readFile(path.join(out, a, 'index.mjs'), 'utf8')).includes('design.items: no such file (expected questions')) carrying.push(a);
    // plan, worker and report; record-failure loads no campaign
    expect(carrying).toHaveLength(3);
  }, 10 * MINUTES);

  it.concurrent('runs a FAR-6 campaign to the same result files as the TypeScript sources', async ({ expect }) => {
    const examples = path.join(project, 'node_modules', 'sondage', 'examples', 'far6');
    const campaign = (dataDir: string) => `name: far6-small
seed: 20261130
budget_usd: 5
data_dir: ${dataDir}
battery: far6
design:
  stories: ${path.join(examples, 'stories.yaml')}
  concept_pairs: ${path.join(examples, 'concept-pairs.yaml')}
  languages: [en, ja]
  forms: [plain, negint]
  constraints: [free, yesno]
defaults: { temperature: 1, max_tokens: 120 }
models:
  - { id: alpha, provider: simulated, model: alpha, price: { input_per_mtok: 0.25, output_per_mtok: 1.25 }, simulation: { profile_seed: 1 } }
  - { id: beta, provider: simulated, model: beta, price: { input_per_mtok: 3, output_per_mtok: 15 }, simulation: { profile_seed: 2 } }
judge: { id: judge, provider: simulated, model: judge, price: { input_per_mtok: 0.1, output_per_mtok: 0.4 } }
`;
    await writeFile(path.join(project, 'far6.yaml'), campaign('installed-data'));
    await writeFile(path.join(dir, 'far6-source.yaml'), campaign('source-data'));
    // The two runs share nothing (their own folders, data and processes): run side by side.
    await Promise.all([sondage(['run', 'far6.yaml']), sh(process.execPath, [path.join(REPO_ROOT, 'bin', 'sondage.mjs'), 'run', path.join(dir, 'far6-source.yaml')], dir)]);
    const results = (root: string) => path.join(root, 'campaigns', 'far6-small', 'results');
    const installed = (await readdir(results(path.join(project, 'installed-data')))).filter((f) => f.endsWith('.csv')).sort();
    expect(installed.length).toBeGreaterThan(10);
    expect((await readdir(results(path.join(dir, 'source-data')))).filter((f) => f.endsWith('.csv')).sort()).toEqual(installed);
    for (const f of installed) {
      expect(await readFile(path.join(results(path.join(project, 'installed-data')), f), 'utf8'), f).toBe(await readFile(path.join(results(path.join(dir, 'source-data')), f), 'utf8'));
    }
  }, 8 * MINUTES);
});
