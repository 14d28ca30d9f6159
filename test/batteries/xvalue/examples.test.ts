import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadXvalueDesign, xvalueDataFiles, xvalueDesignSchema } from '../../../lib/batteries/xvalue/design/index.js';
import { analyzeXvalueRows, buildRows } from '../../../lib/batteries/xvalue/analysis/index.js';
import { xvalueResultFiles } from '../../../lib/batteries/xvalue/report/index.js';
import { parseXvalueSimulation, xvalueSimulationTruth, xvalueSimulator } from '../../../lib/batteries/xvalue/simulate/index.js';
import { CATEGORIES, checkpointVerdict, VETO_CHECKPOINTS } from '../../../lib/batteries/xvalue/types.js';
import { CampaignFileError } from '../../../lib/errors.js';
import { xvalue } from '../../../lib/batteries/xvalue/index.js';
import type { LoadedDesign } from '../../../lib/battery/types.js';
import type { Language } from '../../../lib/batteries/xvalue/types.js';
import { chainSqlRows, examplePairs, FakeStore, partition, runChain } from './fixtures.js';

const EXAMPLES = join(import.meta.dirname, '../../../examples/xvalue');
const DEMO = join(EXAMPLES, 'demo.yaml');

async function demo(): Promise<{ design: unknown; models: { id: string; model: string; provider: string; simulation?: unknown }[]; seed: number }> {
  return parseYaml(await readFile(DEMO, 'utf8')) as never;
}

describe('the example QA pairs', () => {
  it('cover at least five languages and all seven categories, half appropriate, in every category', async () => {
    const pairs = await examplePairs();
    expect(pairs.length).toBeGreaterThanOrEqual(40);
    expect(new Set(pairs.map((p) => p.language)).size).toBeGreaterThanOrEqual(5);
    for (const c of CATEGORIES) {
      const inCategory = pairs.filter((p) => p.category === c);
      expect(inCategory.filter((p) => p.annotation.overall === 'Fail').length, c).toBe(inCategory.length / 2);
    }
  });

  it('are fully annotated, consistent with the veto, with offending sentences quoted from the answer', async () => {
    for (const p of await examplePairs()) {
      const fails = VETO_CHECKPOINTS.filter((c) => checkpointVerdict(p.annotation, c) === 'Fail');
      expect(p.annotation.overall, p.id).toBe(fails.length > 0 ? 'Fail' : 'Pass');
      for (const c of ['E', 'F', 'G', 'H'] as const) for (const s of p.annotation.checkpoints[c]) expect(p.answer, `${p.id} ${c}`).toContain(s);
    }
  });
});

describe('the demo campaign', () => {
  it('has a design section the schema accepts, naming files that load', async () => {
    const file = await demo();
    const design = xvalueDesignSchema.parse(file.design);
    expect(design).toMatchObject({ qa_pairs: ['qa-pairs.jsonl'], strategies: ['defonly', 'rubric'] });
    expect(xvalueDataFiles(design)).toEqual([{ field: 'design.qa_pairs', file: 'qa-pairs.jsonl' }]);
    const data = await loadXvalueDesign({ file: DEMO, folder: EXAMPLES }, design);
    expect(data.languages).toEqual(['ar', 'en', 'es', 'ja', 'zh']);
    expect(data.pairs).toHaveLength(70);
    for (const m of file.models) expect(() => parseXvalueSimulation(m.simulation, { file: DEMO, path: `models[${m.id}].simulation` })).not.toThrow();
  });

  it('loaded for some languages only (a partition thread), keeps only their pairs and expands their partitions as a whole load does', async () => {
    // Prepare: the demo's design loaded whole and for two of its five languages.
    const file = await demo();
    const campaign = { name: 'demo', seed: 7, file: DEMO, folder: EXAMPLES, models: [], roles: {} };
    const design = xvalueDesignSchema.parse(file.design);
    const whole = await xvalue.load(campaign, design);
    const scoped = await xvalue.load(campaign, design, { languages: ['en', 'zh'] });
    const items = (loaded: LoadedDesign, name: string, language: Language) => [...loaded.phases.find((p) => p.name === name)!.expand(partition(language, {}), new FakeStore())];
    // Assert: the same languages and phases; en and zh expand to the same items; the others' pairs are not held.
    expect(scoped.languages).toEqual(whole.languages);
    expect(scoped.phases.map((p) => p.name)).toEqual(whole.phases.map((p) => p.name));
    for (const name of ['defonly', 'step1', 'step3'])
      for (const language of ['en', 'zh'] as const) {
        expect(items(scoped, name, language).length, `${name} ${language}`).toBeGreaterThan(0);
        expect(items(scoped, name, language), `${name} ${language}`).toEqual(items(whole, name, language));
      }
    expect(items(whole, 'step3', 'ja').length).toBeGreaterThan(0);
    expect(items(scoped, 'step3', 'ja')).toEqual([]);
    expect(scoped.simulationTruth).toBeUndefined();
    expect(whole.simulationTruth).toBeDefined();
  });

  it('runs end to end on the simulated judges, without keys or network, and labels its results simulated', async () => {
    // Prepare: the demo's design and models, as the core would load them.
    const file = await demo();
    const data = await loadXvalueDesign({ file: DEMO, folder: EXAMPLES }, xvalueDesignSchema.parse(file.design));
    const items = [];
    const records = [];
    // Act: every model × language partition, every phase, through the battery's expand, simulator and readers.
    for (const m of file.models) {
      const model = xvalueSimulator({ id: m.id, model: m.model, role: 'subject', simulation: m.simulation, where: { file: DEMO, path: `models[${m.id}].simulation` } }, { seed: file.seed });
      for (const language of data.languages) {
        const chain = runChain(data.pairs, language, m.id, (item) => model.reply(item, { messages: item.messages, settings: item.settings, item }).text, data.strategies, data.prompts);
        items.push(...chain.items);
        records.push(...chain.records);
      }
    }
    const sql = chainSqlRows(items, records);
    const results = analyzeXvalueRows(buildRows(sql.pairs, sql.facets), { simulated: true });
    const files = new Map(xvalueResultFiles(results, { campaign: 'xvalue-demo', simulated: true }));
    // Assess: three models × two strategies, every pair judged, alpha's def-only errs towards Pass and its rubric towards Fail.
    expect(results.overall.map((o) => [o.model, o.strategy, o.n + o.missing])).toEqual([
      ['alpha', 'defonly', 70],
      ['alpha', 'rubric', 70],
      ['beta', 'defonly', 70],
      ['beta', 'rubric', 70],
      ['gamma', 'defonly', 70],
      ['gamma', 'rubric', 70],
    ]);
    const alpha = (s: string) => results.overall.find((o) => o.model === 'alpha' && o.strategy === s);
    expect(alpha('defonly')?.accuracy_gap).toBeGreaterThan(0);
    expect(alpha('rubric')?.accuracy_gap).toBeLessThan(0);
    expect(files.get('summary.md')).toMatch(/\(SIMULATED\)/);
    expect(files.get('report.html')).toContain('SIMULATED');
    const truth = xvalueSimulationTruth(file.models.map((m) => ({ ...m, settings: {}, simulation: m.simulation as Record<string, unknown> | undefined })), data.pairs, DEMO);
    expect(truth.models.map((t) => t.model)).toEqual(['alpha', 'beta', 'gamma']);
  });

  it('names the design field when a language or category has no pair', async () => {
    const design = xvalueDesignSchema.parse({ qa_pairs: 'qa-pairs.jsonl', languages: ['en', 'ko'], categories: ['P&G'] });
    const err = await loadXvalueDesign({ file: DEMO, folder: EXAMPLES }, design).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CampaignFileError);
    expect((err as CampaignFileError).issues).toEqual([{ file: DEMO, path: 'design.languages[1]', message: expect.stringMatching(/no QA pair of the chosen categories is in ko; the files hold ar, en, es, ja, zh/) }]);
  });

  it('rejects bad design values with clear messages', () => {
    const r = xvalueDesignSchema.safeParse({ qa_pairs: 'x.jsonl', languages: ['en', 'en', 'xx'], strategies: ['cot'], categories: ['Sports'], extra: 1 });
    expect(r.success).toBe(false);
    const messages = r.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ?? [];
    expect(messages).toEqual(
      expect.arrayContaining([
        ': unknown key(s) "extra"; expected qa_pairs, languages, categories, strategies, per_cell, prompts',
        expect.stringMatching(/^languages\.2: unknown language "xx"/),
        expect.stringMatching(/^categories\.0: unknown category "Sports"/),
        'strategies.0: expected a strategy: defonly or rubric (Towards Cross-lingual Values Judgment §6.1)',
      ]),
    );
    expect(xvalueDesignSchema.parse({ qa_pairs: ['a.csv', 'b.jsonl'], categories: ['Gender Equality & Human Rights'], per_cell: 3 })).toMatchObject({ categories: ['G&H'], per_cell: 3 });
    const dup = xvalueDesignSchema.safeParse({ qa_pairs: 'x.jsonl', languages: ['en', 'en'] });
    expect(dup.error?.issues.map((i) => i.message)).toEqual(['language "en" is listed twice']);
  });

  it('takes the first N pairs of each language × category with per_cell', async () => {
    const data = await loadXvalueDesign({ file: DEMO, folder: EXAMPLES }, xvalueDesignSchema.parse({ qa_pairs: 'qa-pairs.jsonl', per_cell: 1, languages: ['ja'] }));
    expect(data.pairs.map((p) => p.id)).toEqual(['xv-ja-01', 'xv-ja-03', 'xv-ja-05', 'xv-ja-07', 'xv-ja-09', 'xv-ja-11', 'xv-ja-13']);
    expect(await examplePairs()).toHaveLength(70);
  });
});
