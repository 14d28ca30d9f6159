import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pearson } from '../../../lib/batteries/far6/analysis/index.js';
import type { AnalysisResults, Readout, StoryScore } from '../../../lib/batteries/far6/analysis/index.js';
import type { SimulationCellTruth, SimulationTruth } from '../../../lib/batteries/far6/simulate/index.js';
import { judgeReaderId } from '../../../lib/batteries/far6/read/index.js';
import { loadRunContext } from '../../../lib/run/context.js';
import { runCampaign } from '../../../lib/run/runCampaign.js';
import type { RunContext } from '../../../lib/run/runCampaign.js';
import type { Far6DesignSpec } from '../../../lib/batteries/far6/design.js';

/**
 * Parameter recovery (Same Judgment, Different Yes §3, §6, §7 and "Estimation steps"): the whole
 * local pipeline — expansion, simulated replies, token rule, sentence judge, SQL stage, estimators —
 * run on simulated respondents whose judgments π and answer habits are known, then compared with
 * `simulationTruth`. The campaign (fixtures/recovery/recovery.yaml) fixes each language's keying
 * bias and negative-interrogative mapping, so cells of every kind the checks need exist; twelve
 * generations of every prompt keep the sampling noise of a story score near 0.06 against a spread
 * of π across stories near 0.32, which puts the expected story-level r near 0.985.
 */

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), '../../fixtures/recovery/recovery.yaml');

/** Issue thresholds. */
const MIN_R_JUDGMENT = 0.95;
const MIN_ABS_B = 0.05;
/**
 * "Departs", made concrete: the negative-interrogative token profile departs from a sentence profile
 * of the same cell when their story-level r is below 0.5, and follows it when r is at least 0.8.
 * Between the two is neither, and fails both expectations.
 */
const DEPARTS_BELOW = 0.5;
const FOLLOWS_FROM = 0.8;

interface Cell {
  readonly truth: SimulationCellTruth;
  /** readout → story → score. */
  readonly profiles: ReadonlyMap<Readout, ReadonlyMap<string, StoryScore>>;
}

describe('parameter recovery on simulated FAR-6 data', () => {
  let dir: string;
  let ctx: RunContext;
  let analysis: AnalysisResults;
  let truths: SimulationTruth[];
  let cells: Cell[];
  let judge: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sondage-recovery-'));
    ctx = await loadRunContext(FIXTURE, dir);
    const run = await runCampaign(ctx);
    if (!run.analysis) throw new Error(`the run stopped before the analysis (${run.stopped ?? 'no reason given'})`);
    analysis = run.analysis as AnalysisResults;
    judge = judgeReaderId(ctx.campaign.roles['judge']!.id);
    truths = (ctx.design.simulationTruth!(ctx.campaign.models) as { models: SimulationTruth[] }).models;
    const byCell = new Map<string, Map<Readout, Map<string, StoryScore>>>();
    for (const sc of analysis.storyScores) {
      const cell = byCell.get(`${sc.model}/${sc.language}`) ?? new Map<Readout, Map<string, StoryScore>>();
      byCell.set(`${sc.model}/${sc.language}`, cell);
      const profile = cell.get(sc.readout) ?? new Map<string, StoryScore>();
      cell.set(sc.readout, profile);
      profile.set(sc.story, sc);
    }
    cells = truths.flatMap((t) => t.cells.map((truth) => ({ truth, profiles: byCell.get(`${truth.model}/${truth.language}`) ?? new Map() })));
  }, 300_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** A readout's story profile in one cell; every story of the campaign must carry a score. */
  function profile(cell: Cell, readout: Readout): ReadonlyMap<string, StoryScore> {
    const p = cell.profiles.get(readout);
    const where = `${cell.truth.model}/${cell.truth.language} ${readout}`;
    expect(p, `${where}: no story scores`).toBeDefined();
    expect(p!.size, `${where}: stories with a score`).toBe(cells[0]!.truth.pi ? Object.keys(cells[0]!.truth.pi).length : 0);
    return p!;
  }

  /** Story-level r of two profiles of one cell (the same stories in both, by `profile`). */
  function storyR(cell: Cell, a: Readout, b: Readout): number {
    const pa = profile(cell, a);
    const pb = profile(cell, b);
    const stories = [...pa.keys()];
    const r = pearson(
      stories.map((s) => pa.get(s)!.s),
      stories.map((s) => pb.get(s)!.s),
    );
    expect(r, `${cell.truth.model}/${cell.truth.language}: r(${a}, ${b})`).not.toBeNull();
    return r!;
  }

  it('labels the results simulated and writes the truth beside them', async () => {
    expect(analysis.simulated).toBe(true);
    const results = join(dir, 'campaigns', ctx.campaign.name, 'results');
    const summary = await readFile(join(results, 'summary.md'), 'utf8');
    expect(summary).toMatch(/^# FAR-6 analysis: recovery \(simulated\)/);
    expect(summary).toContain('Simulated data');
    const written = JSON.parse(await readFile(join(results, 'simulation_truth.json'), 'utf8')) as { models: unknown };
    // What the file holds is what the generator drew from (JSON drops nothing the truth holds).
    expect(written.models).toEqual(JSON.parse(JSON.stringify(truths)));
  });

  it('holds the cells the checks need: both mappings and keying biases of both signs in every model', () => {
    expect(cells).toHaveLength(ctx.campaign.models.length * ctx.design.languages.length);
    for (const t of truths) {
      const mappings = t.cells.map((c) => c.truth_mapping);
      expect(mappings, `${t.model}: truth-based and polarity-based cells`).toContain(true);
      expect(mappings, `${t.model}: truth-based and polarity-based cells`).toContain(false);
    }
    const b = cells.map((c) => c.truth.expected_b);
    expect(b.filter((x) => x >= MIN_ABS_B).length).toBeGreaterThanOrEqual(3);
    expect(b.filter((x) => x <= -MIN_ABS_B).length).toBeGreaterThanOrEqual(3);
    // And some below the threshold, where the sign is not asserted.
    expect(b.some((x) => Math.abs(x) < MIN_ABS_B)).toBe(true);
  });

  it('(a) story scores of the readouts that measure the judgment correlate ≥ 0.95 with the true π in every cell', () => {
    // Sentence-judge readouts, proposition labels and verdict openings (R and R+) in both forms, and
    // the plain yes/no token, where yes means the named side. Not the negative-interrogative token.
    const readouts: Readout[] = ['plain/yesno/rule'];
    for (const form of (ctx.campaign.design as Far6DesignSpec).forms) {
      readouts.push(`${form}/free/${judge}`, `${form}/verdict/${judge}`, `${form}/yesno/${judge}`);
      readouts.push(`${form}/verdict/rule`, `${form}/verdict/rule+`, `${form}/label/rule`);
    }
    const failures: string[] = [];
    let checked = 0;
    for (const cell of cells) {
      for (const readout of readouts) {
        const p = profile(cell, readout);
        const stories = [...p.keys()];
        const r = pearson(
          stories.map((s) => p.get(s)!.s),
          stories.map((s) => cell.truth.pi[s]!),
        );
        checked += 1;
        if (r === null || r < MIN_R_JUDGMENT) failures.push(`${cell.truth.model}/${cell.truth.language} ${readout}: r = ${r}`);
      }
    }
    expect(checked).toBe(cells.length * readouts.length);
    expect(failures).toEqual([]);
  });

  it('(b) the plain yes/no token recovers the sign of b wherever |b| ≥ 0.05', () => {
    let checked = 0;
    for (const cell of cells) {
      const expected = cell.truth.expected_b;
      if (Math.abs(expected) < MIN_ABS_B) continue;
      const p = profile(cell, 'plain/yesno/rule');
      const b = [...p.values()].reduce((sum, sc) => sum + sc.b, 0) / p.size;
      // The cell habit is the same mean over stories: the two outputs must agree.
      const habit = analysis.cellHabits.find(
        (h) => h.model === cell.truth.model && h.language === cell.truth.language && h.readout === 'plain/yesno/rule',
      );
      expect(habit?.keying_bias).toBeCloseTo(b, 12);
      expect(Math.sign(b), `${cell.truth.model}/${cell.truth.language}: b = ${b}, true ${expected}`).toBe(Math.sign(expected));
      checked += 1;
    }
    expect(checked).toBeGreaterThanOrEqual(6);
  });

  it('(c) the negative-interrogative token departs from the sentence profile exactly in the truth-mapping cells', () => {
    const token = 'negint/yesno/rule';
    const sameReplies = `negint/yesno/${judge}`;
    const freeSentence = `plain/free/${judge}`;
    for (const cell of cells) {
      const where = `${cell.truth.model}/${cell.truth.language} (m = ${cell.truth.negint_truth_mapping})`;
      const rSame = storyR(cell, token, sameReplies);
      const rFree = storyR(cell, token, freeSentence);
      // The analysis's own comparison of the two readouts reports the same r.
      const reported = analysis.comparisons.find(
        (c) =>
          c.model === cell.truth.model &&
          c.language === cell.truth.language &&
          ((c.readout_a === token && c.readout_b === sameReplies) || (c.readout_a === sameReplies && c.readout_b === token)),
      );
      expect(reported?.r, `${where}: reported r(${token}, ${sameReplies})`).toBeCloseTo(rSame, 12);
      if (cell.truth.truth_mapping) {
        expect(rSame, `${where}: r with the judge on the same replies`).toBeLessThan(DEPARTS_BELOW);
        expect(rFree, `${where}: r with the plain free sentence`).toBeLessThan(DEPARTS_BELOW);
      } else {
        expect(rSame, `${where}: r with the judge on the same replies`).toBeGreaterThanOrEqual(FOLLOWS_FROM);
        expect(rFree, `${where}: r with the plain free sentence`).toBeGreaterThanOrEqual(FOLLOWS_FROM);
      }
    }
  });
});
