/**
 * Batteries from the user's folder (lib/batteries/external.ts): a campaign names one by a path or
 * a package; it is loaded, checked as the built-in three are, registered, and runs through the
 * same core. A battery that is wrong is refused with the campaign file, the `battery` field and
 * the battery's own file named — before anything is written.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batteryNamed } from '../../lib/batteries/index.js';
import { originOf } from '../../lib/batteries/external.js';
import { loadCampaign } from '../../lib/design/loadCampaign.js';
import { CampaignFileError } from '../../lib/errors.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { contextFor } from '../../lib/run/context.js';
import { runMain } from '../helpers/cli.js';
import { tempDir } from '../helpers/campaigns.js';

let dir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('external-battery'));
});
afterAll(() => cleanup());

/** A campaign file in `folder` naming `battery` (YAML text), two simulated models. */
async function campaignIn(folder: string, name: string, battery: string, design = ''): Promise<string> {
  await mkdir(folder, { recursive: true });
  const file = path.join(folder, `${name}.yaml`);
  await writeFile(
    file,
    `name: ${name}\nseed: 3\nbudget_usd: 1\ndata_dir: data-${name}\nbattery: ${battery}\n${design}models:\n` +
      '  - { id: careful, provider: simulated, model: careful, price: { input_per_mtok: 1, output_per_mtok: 2 }, simulation: { accuracy: 0.9 } }\n' +
      '  - { id: hasty, provider: simulated, model: hasty, price: { input_per_mtok: 1, output_per_mtok: 2 }, simulation: { accuracy: 0.5 } }\n',
  );
  return file;
}

/** A module file whose default export is `body` (JavaScript). */
async function moduleFile(rel: string, body: string): Promise<string> {
  const file = path.join(dir, rel);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, body);
  return file;
}

async function refusal(file: string): Promise<string> {
  const err = await loadCampaign(file).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CampaignFileError);
  return (err as Error).message;
}

describe('a battery named by its path', () => {
  it('is scaffolded by `sondage new battery`, loaded from the campaign, run through the core, and recovers its simulated truth', async () => {
    const out = await runMain(['new', 'battery', 'tally', '--dir', dir]);
    expect(out.code, out.stderr).toBe(0);
    const study = path.join(dir, 'tally');
    const file = await campaignIn(path.join(dir, 'lab'), 'tally-run', '../tally/', 'design: { items: ../tally/items.jsonl, repeats: 20 }\n');
    const campaign = await loadCampaign(file);
    expect(campaign.battery).toBe('tally');
    expect(campaign.battery_source).toEqual({ path: study });
    const battery = batteryNamed('tally')!;
    expect(originOf(battery)).toBe(path.join(study, 'index.mjs'));
    expect(originOf(batteryNamed('far6')!)).toBe('built in');
    const ctx = await contextFor(campaign);
    await runCampaign(ctx, { dataDir: ctx.dataDir });
    const results = path.join(ctx.dataDir, 'campaigns', 'tally-run', 'results');
    const { readFile } = await import('node:fs/promises');
    const rows = (await readFile(path.join(results, 'scores.csv'), 'utf8')).trim().split('\n').slice(1).map((l) => l.split(','));
    // 20 questions × 20 repeats × 2 languages per model; accuracy within 4 standard errors of the truth.
    for (const [model, p] of [['careful', 0.9], ['hasty', 0.5]] as const) {
      const mine = rows.filter((r) => r[0] === model);
      const n = mine.reduce((s, r) => s + Number(r[2]), 0);
      const k = mine.reduce((s, r) => s + Number(r[3]), 0);
      expect(n).toBe(800);
      expect(Math.abs(k / n - p)).toBeLessThanOrEqual(4 * Math.sqrt((p * (1 - p)) / n));
    }
    // Its report.html is drawn in sondage's report shell: header with the spend against the cap, a CSV link under its table.
    const report = await readFile(path.join(results, 'report.html'), 'utf8');
    expect(report).toContain('<h1>tally: tally-run <span class="badge">SIMULATED</span></h1>');
    expect(report).toMatch(/<dt>Spend<\/dt><dd>\$[\d.]+ of the \$[\d.]+ cap \([\d.]+ %\)<\/dd>/);
    expect(report).toContain('</table></div><p class="csv-link">CSV: <a href="scores.csv">scores.csv</a></p>');
    // `sondage batteries PATH` says where it came from.
    const listed = await runMain(['batteries', study]);
    expect(listed.stdout).toContain(`from: ${path.join(study, 'index.mjs')}`);
  }, 240_000);

  it('refuses a path that does not exist, naming the campaign file and the field', async () => {
    const file = await campaignIn(path.join(dir, 'lab'), 'missing', './nowhere/');
    const message = await refusal(file);
    expect(message).toContain(file);
    expect(message).toMatch(/battery.*nowhere.*no such file or folder/s);
    expect(existsSync(path.join(dir, 'lab', 'data-missing'))).toBe(false);
  });

  it('refuses a module whose default export is not a battery, listing each missing field', async () => {
    await moduleFile('notbattery/index.mjs', "export default { name: 'half', title: 'half a battery', languages: ['en'] };\n");
    const message = await refusal(await campaignIn(dir, 'half', './notbattery/'));
    expect(message).toContain(path.join(dir, 'notbattery', 'index.mjs'));
    expect(message).toMatch(/not a battery/);
    for (const field of ['design:', 'load:', 'analysis:', 'phaseCatalog:']) expect(message).toContain(field);
  });

  it('refuses a module that fails at import, in its own words', async () => {
    await moduleFile('broken/index.mjs', "throw new Error('the items file moved');\n");
    const message = await refusal(await campaignIn(dir, 'broken', './broken'));
    expect(message).toMatch(/could not be loaded: the items file moved/);
  });

  it('refuses a battery that takes the name of a built-in one', async () => {
    await runMain(['new', 'battery', 'dup_name', '--dir', path.join(dir, 'named')]);
    const index = path.join(dir, 'named', 'dup_name', 'index.mjs');
    const { readFile } = await import('node:fs/promises');
    await writeFile(index, (await readFile(index, 'utf8')).replace("const NAME = 'dup_name';", "const NAME = 'far6';"));
    const message = await refusal(await campaignIn(dir, 'dup', './named/dup_name/'));
    expect(message).toMatch(/name "far6" is taken by a built-in battery/);
  });

  it('refuses a battery whose SQL query has the name of another battery\'s query', async () => {
    await runMain(['new', 'battery', 'clash', '--dir', path.join(dir, 'clashing')]);
    const index = path.join(dir, 'clashing', 'clash', 'index.mjs');
    const { readFile, rename } = await import('node:fs/promises');
    // Rename its scores query to one of the tally battery's (registered by the first test).
    await writeFile(index, (await readFile(index, 'utf8')).replaceAll('`${NAME}_scores`', "'tally_scores'"));
    await rename(path.join(dir, 'clashing', 'clash', 'sql', 'clash_scores.sql'), path.join(dir, 'clashing', 'clash', 'sql', 'tally_scores.sql'));
    const message = await refusal(await campaignIn(dir, 'clash', './clashing/clash/'));
    expect(message).toMatch(/query tally_scores\.sql has the name of a query of battery tally/);
  });

  it('refuses a battery value that is neither a name, a path nor { module } / { path }', async () => {
    const message = await refusal(await campaignIn(dir, 'odd', '{ modul: x }'));
    expect(message).toMatch(/battery.*expected a battery name, a path/s);
  });
});

describe('sondage new battery', () => {
  it('refuses an unusable name, a built-in name and a folder that is not empty, writing nothing', async () => {
    const where = path.join(dir, 'scaffolds');
    const bad = await runMain(['new', 'battery', 'Likert-Scale', '--dir', where]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/"Likert-Scale" is not a usable battery name/);
    const builtIn = await runMain(['new', 'battery', 'far6', '--dir', where]);
    expect(builtIn.stderr).toMatch(/far6 is the name of a built-in battery/);
    expect(existsSync(where)).toBe(false);
    await mkdir(path.join(where, 'taken'), { recursive: true });
    await writeFile(path.join(where, 'taken', 'notes.txt'), 'mine');
    const taken = await runMain(['new', 'battery', 'taken', '--dir', where]);
    expect(taken.stderr).toMatch(/exists and is not empty; nothing was written/);
    // The folder as seen from the working directory, never the absolute path.
    expect(taken.stderr).toContain(`${path.relative(process.cwd(), path.join(where, 'taken'))} exists`);
    expect(existsSync(path.join(where, 'taken', 'index.mjs'))).toBe(false);
  });
});

describe('a battery named by its package', () => {
  it('is resolved from the node_modules above the campaign file, TypeScript included', async () => {
    const pkg = path.join(dir, 'pkgproject', 'node_modules', '@lab', 'sondage-typed');
    await mkdir(pkg, { recursive: true });
    await writeFile(path.join(pkg, 'package.json'), JSON.stringify({ name: '@lab/sondage-typed', type: 'module', exports: { '.': { import: './index.ts' } } }));
    // The smallest battery there is, in TypeScript, importing only the public entry.
    await writeFile(
      path.join(pkg, 'index.ts'),
      `import { defineBattery, SqlLibrary, z } from 'sondage/battery';
import type { Battery } from 'sondage/battery';
const sql: SqlLibrary = new SqlLibrary('typed', new URL('./', import.meta.url), []);
const battery: Battery = defineBattery({
  name: 'typed', title: 'typed: a battery in TypeScript', languages: ['en'], design: z.strictObject({}), roles: {},
  dataFiles: () => [], load: async () => ({ languages: ['en'], phases: [] }),
  prompts: { factors: [], extras: [], extraRow: () => ({}) }, vocabulary: {}, phaseCatalog: [],
  analysis: { sql, namedSources: {}, firstQuery: () => 'SELECT 1', run: async () => ({}), files: () => [], console: () => '', simulated: () => true },
  simulator: () => ({ effectsKey: 'typed', errorRate: 0, latencyMs: 0, reply: () => ({ text: '' }) }),
});
export default battery;
`,
    );
    const campaign = await loadCampaign(await campaignIn(path.join(dir, 'pkgproject', 'studies'), 'typed', '{ module: "@lab/sondage-typed" }', 'design: {}\n'));
    expect(campaign.battery).toBe('typed');
    expect(campaign.battery_source).toEqual({ module: '@lab/sondage-typed', from: path.join(dir, 'pkgproject', 'studies') });
    expect(originOf(batteryNamed('typed')!)).toBe(path.join(pkg, 'index.ts'));
  });

  it('says how to install a package that is not there', async () => {
    const message = await refusal(await campaignIn(path.join(dir, 'nopkg'), 'nopkg', '{ module: "@lab/absent" }'));
    expect(message).toMatch(/battery module @lab\/absent: not found from .*npm install @lab\/absent/);
  });
});
