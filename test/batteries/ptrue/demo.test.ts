/**
 * The example items and the draft demo campaign (examples/ptrue/): the items load (JSONL and CSV
 * alike), the design section parses, the plan and phases build, and the whole demo runs in memory
 * on its simulated models and judge — no keys, no network — through to the result files.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { CampaignCore } from '../../../lib/battery/types.js';
import { analyzePtrueRows } from '../../../lib/batteries/ptrue/analysis/analyzeRows.js';
import { loadItems } from '../../../lib/batteries/ptrue/data/index.js';
import { ptrueDesignSchema } from '../../../lib/batteries/ptrue/design.js';
import { loadPtrueDesign, loadPtruePlan } from '../../../lib/batteries/ptrue/load.js';
import { ptrueFiles } from '../../../lib/batteries/ptrue/report/index.js';
import { parsePtrueJudgeSimulation, parsePtrueSimulation } from '../../../lib/batteries/ptrue/simulate/index.js';
import { SIX } from './fixtures.js';
import { runSimulated } from './simulatedRun.js';

const folder = join(dirname(fileURLToPath(import.meta.url)), '../../../examples/ptrue');
const file = join(folder, 'demo.yaml');

interface Entry {
  id: string;
  provider: string;
  model: string;
  simulation?: Record<string, unknown>;
}

async function demo() {
  const raw = parse(await readFile(file, 'utf8')) as { name: string; seed: number; design: unknown; models: Entry[]; judge: Entry };
  const design = ptrueDesignSchema.parse(raw.design);
  const ref = (e: Entry) => ({ id: e.id, provider: e.provider, model: e.model, settings: {}, ...(e.simulation ? { simulation: e.simulation } : {}) });
  const campaign: CampaignCore = {
    name: raw.name,
    seed: raw.seed,
    file,
    folder,
    models: raw.models.map(ref),
    roles: { judge: { ...ref(raw.judge), extras: {} } },
  };
  return { raw, design, campaign };
}

describe('example items', () => {
  it('30 base items in six languages, the same from JSONL and CSV', async () => {
    const jsonl = await loadItems(join(folder, 'items.jsonl'), { languages: SIX });
    const csv = await loadItems(join(folder, 'items.csv'), { languages: SIX });
    expect(jsonl).toHaveLength(30);
    expect(csv).toEqual(jsonl);
    const kinds = jsonl.reduce<Record<string, number>>((n, i) => ({ ...n, [`${i.benchmark}/${i.kind}`]: (n[`${i.benchmark}/${i.kind}`] ?? 0) + 1 }), {});
    expect(kinds).toEqual({ 'mmmlu-demo/multiple_choice': 12, 'lsqa-demo/short_answer': 12, 'trivia-demo/short_answer': 6 });
    // LSQA-like: two items per content language.
    expect(jsonl.filter((i) => i.contentLanguage !== null).map((i) => i.contentLanguage)).toEqual(SIX.flatMap((l) => [l, l]));
  });
});

describe('the demo campaign (draft)', () => {
  it('parses, and builds the three phases', async () => {
    const { design, campaign } = await demo();
    expect(design).toMatchObject({ items: 'items.jsonl', languages: SIX, max_tokens: 256, thinking: 'off', probe: { method: 'logprob_token_ids' } });
    const loaded = await loadPtrueDesign(campaign, design);
    expect(loaded.languages).toEqual(SIX);
    expect(loaded.phases.map((p) => p.name)).toEqual(['generate', 'verify', 'judge']);
  });

  it('runs end to end on its simulated models and judge, with no keys, to labelled result files', async () => {
    const { raw, design, campaign } = await demo();
    const plan = await loadPtruePlan(campaign, design);
    const where = (path: string) => ({ file: 'demo.yaml', path });
    const models = Object.fromEntries(raw.models.map((m, i) => [m.id, parsePtrueSimulation(m.simulation, where(`models[${i}].simulation`))]));
    const rows = runSimulated({ plan, seed: raw.seed, models, judge: parsePtrueJudgeSimulation(raw.judge.simulation, where('judge.simulation')) });
    // Every reply has a correctness (option match, or the judge): 3 models × 30 items × 216 conditions.
    expect(rows).toHaveLength(3 * 30 * 216);
    // The simulated judge writes malformed outputs at 1 %: flagged and counted incorrect.
    expect(rows.some((r) => r.flagged)).toBe(true);
    const results = analyzePtrueRows(rows, { draws: 20, seed: raw.seed, simulated: true });
    expect(results.benchmarks).toEqual(['lsqa-demo', 'mmmlu-demo', 'trivia-demo']);
    const files = new Map(ptrueFiles(results, { campaign: raw.name, simulated: true }));
    expect(files.get('summary.md')).toContain('SIMULATED');
    expect(files.get('report.html')).toContain('<svg');
  }, 60_000);
});
