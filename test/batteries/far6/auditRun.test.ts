import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_RETEST_PHASE, AUDIT_SECOND_PHASE } from '../../../lib/batteries/far6/audit.js';
import { runCampaign, type RunSummary } from '../../../lib/run/runCampaign.js';
import { readParquet, tableGlob } from '../../../lib/store/index.js';
import { loadContext, tempDir, writeCampaign } from '../../helpers/campaigns.js';
import { costOf, okCounts, readResult, storedReplies } from '../../helpers/runData.js';

// End to end on the simulated providers: the judge audit (Same Judgment, Different Yes "Sentence judging") after the
// judge phase, its readings apart from the main analysis, judge_audit.csv with sane numbers, and a
// second run that asks for nothing again.

const CAMPAIGN = 'run-small';
const PER_STRATUM = 12;

let root: string;
let cleanup: () => Promise<void>;
let dataDir: string;
let file: string;
let first: RunSummary;

/** judge_audit.csv as objects, numbers parsed. */
function parseCsv(text: string): Record<string, string>[] {
  const [header, ...lines] = text.trim().split('\r\n');
  const cols = (header ?? '').split(',');
  // No field of this file holds a comma except kappa_note, which is empty when kappa is defined.
  return lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [cols[i] ?? `c${i}`, v])));
}

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('audit-run'));
  file = await writeCampaign(root, 'small.yaml', (doc) => {
    doc.judge['simulation'] = { error_rate: 0.03 };
    doc.judge['audit'] = {
      per_stratum: PER_STRATUM,
      retest: true,
      // A weaker second judge: its noise is its own draw (keyed by its id), and larger.
      second_judge: { id: 'judge-b', provider: 'simulated', model: 'judge-b', price: { input_per_mtok: 2, output_per_mtok: 8 }, simulation: { error_rate: 0.2 } },
    };
  });
  dataDir = path.join(root, 'data');
  first = await runCampaign(await loadContext(file), { dataDir });
}, 60_000);

afterAll(() => cleanup());

describe('a run with the judge audit on', () => {
  it('runs both audit phases after the judge, on the planned sample, within budget', async () => {
    expect(first.stopped).toBeUndefined();
    expect(first.phases.map((p) => p.phase)).toEqual(['generate', 'judge', AUDIT_SECOND_PHASE, AUDIT_RETEST_PHASE]);
    const planned = first.plan.partitions.reduce((s, p) => s + (p.items[AUDIT_SECOND_PHASE] ?? 0), 0);
    for (const phase of [AUDIT_SECOND_PHASE, AUDIT_RETEST_PHASE]) {
      const summary = first.phases.find((p) => p.phase === phase)!;
      // The plan assumes every judged reply got a reading; refusals aside, all did.
      expect(summary.items).toBe(planned);
      expect(summary.done).toBe(planned);
      expect(summary.costUsd).toBeGreaterThan(0);
    }
    expect(planned).toBeGreaterThan(100);
  });

  it('samples the same replies for both phases, at most per_stratum per model × language × constraint', async () => {
    const readings = (phase: string) =>
      readParquet<{ item_id: string; reader: string; phase: string; model: string; language: string }>(
        tableGlob(dataDir, CAMPAIGN, phase, 'readings'),
        'SELECT item_id, reader, phase, model, language FROM parts ORDER BY item_id',
      );
    const second = await readings(AUDIT_SECOND_PHASE);
    const retest = await readings(AUDIT_RETEST_PHASE);
    expect(second.map((r) => r.item_id)).toEqual(retest.map((r) => r.item_id));
    expect(new Set(second.map((r) => r.reader))).toEqual(new Set(['judge:judge-b']));
    expect(new Set(retest.map((r) => r.reader))).toEqual(new Set(['judge:judge']));
    expect(new Set(second.map((r) => r.phase))).toEqual(new Set([AUDIT_SECOND_PHASE]));
    // The main readings hold no audit reader and no audit phase.
    const main = await readParquet<{ n: number }>(tableGlob(dataDir, CAMPAIGN, 'generate', 'readings'), "SELECT count(*) AS n FROM parts WHERE reader = 'judge:judge-b' OR phase LIKE 'audit-%'");
    expect(main[0]?.n).toBe(0);
    const cellSummary = await readResult(dataDir, CAMPAIGN, 'cell_summary.csv');
    expect(cellSummary).not.toContain('judge-b');
  });

  it('writes judge_audit.csv: every stratum at most per_stratum, 0 < kappa < 1, the weaker judge further off', async () => {
    const rows = parseCsv(await readResult(dataDir, CAMPAIGN, 'judge_audit.csv'));
    const strata = rows.filter((r) => r.level === 'stratum');
    // 2 models × 2 languages × 3 constraints, for each of the two comparisons.
    expect(strata).toHaveLength(24);
    for (const r of strata) {
      expect(Number(r.n_sampled)).toBeGreaterThan(0);
      expect(Number(r.n_sampled)).toBeLessThanOrEqual(PER_STRATUM);
      expect(Number(r.n)).toBeLessThanOrEqual(Number(r.n_sampled));
    }
    const all = (comparison: string) => rows.find((r) => r.comparison === comparison && r.level === 'all')!;
    const second = all('second');
    const retest = all('retest');
    expect(second.primary_reader).toBe('judge:judge');
    expect(second.audit_reader).toBe('judge:judge-b');
    expect(retest.audit_reader).toBe('judge:judge');
    for (const r of [second, retest]) {
      expect(Number(r.kappa)).toBeGreaterThan(0);
      expect(Number(r.kappa)).toBeLessThan(1);
      expect(Number(r.agreement_low)).toBeLessThanOrEqual(Number(r.agreement));
      expect(Number(r.agreement_high)).toBeGreaterThanOrEqual(Number(r.agreement));
      expect(Number(r.n_opposite)).toBeLessThanOrEqual(Number(r.n_both_decisive));
    }
    // Two independent 3 % error draws disagree on ~6 % of replies; a 3 % and a 20 % one on ~22 %.
    expect(Number(retest.agreement)).toBeGreaterThan(0.85);
    expect(Number(second.agreement)).toBeLessThan(Number(retest.agreement));
    expect(Number(second.kappa)).toBeLessThan(Number(retest.kappa));
    expect(Number(second.n_opposite)).toBeGreaterThan(0);
    if (process.env['SONDAGE_PRINT_AUDIT']) console.log(rows.filter((r) => r.level !== 'stratum'));
    const summary = await readResult(dataDir, CAMPAIGN, 'summary.md');
    expect(summary).toContain('## Judge audit');
  });

  it('a second run asks for no audit item again and spends nothing more', async () => {
    const before = {
      second: await storedReplies(dataDir, CAMPAIGN, AUDIT_SECOND_PHASE),
      retest: await storedReplies(dataDir, CAMPAIGN, AUDIT_RETEST_PHASE),
      csv: await readResult(dataDir, CAMPAIGN, 'judge_audit.csv'),
    };
    const again = await runCampaign(await loadContext(file), { dataDir });
    expect(again.spentUsd).toBeCloseTo(first.spentUsd, 10);
    for (const phase of [AUDIT_SECOND_PHASE, AUDIT_RETEST_PHASE] as const) {
      expect(again.phases.find((p) => p.phase === phase)?.done).toBe(0);
      const after = await storedReplies(dataDir, CAMPAIGN, phase);
      const key = phase === AUDIT_SECOND_PHASE ? 'second' : 'retest';
      expect(after).toHaveLength(before[key].length);
      expect(costOf(after)).toBeCloseTo(costOf(before[key]), 12);
      expect([...okCounts(after).values()].every((n) => n === 1)).toBe(true);
    }
    expect(await readResult(dataDir, CAMPAIGN, 'judge_audit.csv')).toBe(before.csv);
  });
});
