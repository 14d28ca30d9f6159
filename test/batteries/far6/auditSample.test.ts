import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnswerConstraint } from '../../../lib/batteries/far6/types.js';
import { AUDIT_RETEST_PHASE, AUDIT_SECOND_PHASE, auditItem, auditStratum, drawAuditSample } from '../../../lib/batteries/far6/audit.js';
import { makeJudgeItem, needsJudge } from '../../../lib/batteries/far6/read/index.js';
import type { Far6Item } from '../../../lib/batteries/far6/types.js';
import { contextFor } from '../../../lib/run/context.js';
import { PartitionItems } from '../../../lib/run/partitionItems.js';
import { planCampaign } from '../../../lib/run/planCampaign.js';
import type { RunContext } from '../../../lib/run/runCampaign.js';
import { loadContext, tempDir, writeCampaign } from '../../helpers/campaigns.js';

// The judge audit's sample (Same Judgment, Different Yes "Sentence judging"): seeded, stratified by model × language ×
// answer constraint, the same in every run and for both audit phases.

interface Candidate {
  item_id: string;
  model: string;
  language: string;
  constraint: AnswerConstraint;
}

/** 3 models × 2 languages × 3 constraints, with stratum sizes 1 … 40. */
function candidates(): Candidate[] {
  const out: Candidate[] = [];
  let size = 1;
  for (const model of ['alpha', 'beta', 'gamma'])
    for (const language of ['en', 'de'])
      for (const constraint of ['free', 'verdict', 'yesno'] as const) {
        for (let i = 0; i < size; i++) out.push({ item_id: `${model}-${language}-${constraint}-${i}`, model, language, constraint });
        size = (size * 7) % 41;
      }
  return out;
}

function countBy(list: readonly Candidate[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const c of list) m.set(auditStratum(c), (m.get(auditStratum(c)) ?? 0) + 1);
  return m;
}

describe('drawAuditSample', () => {
  const all = candidates();
  const sizes = countBy(all);

  it('takes min(per_stratum, stratum size) from every stratum', () => {
    const sample = drawAuditSample(all, { seed: 1, perStratum: 10 });
    const got = countBy(sample);
    expect(got.size).toBe(sizes.size);
    for (const [stratum, n] of sizes) expect(got.get(stratum)).toBe(Math.min(10, n));
    expect(sizes.get('alpha|en|free')).toBe(1);
    expect([...sizes.values()].some((n) => n > 10)).toBe(true);
  });

  it('is the same whatever the order or partitioning of the candidates, and keeps their order', () => {
    const a = drawAuditSample(all, { seed: 5, perStratum: 4 });
    const reversed = drawAuditSample([...all].reverse(), { seed: 5, perStratum: 4 });
    expect(new Set(reversed.map((c) => c.item_id))).toEqual(new Set(a.map((c) => c.item_id)));
    // Per partition (model × language), as the run draws it: the same sample.
    const perPartition = ['alpha', 'beta', 'gamma'].flatMap((m) =>
      ['en', 'de'].flatMap((l) => drawAuditSample(all.filter((c) => c.model === m && c.language === l), { seed: 5, perStratum: 4 })),
    );
    expect(new Set(perPartition.map((c) => c.item_id))).toEqual(new Set(a.map((c) => c.item_id)));
    const positions = a.map((c) => all.indexOf(c));
    expect(positions).toEqual([...positions].sort((x, y) => x - y));
  });

  it('depends on the seed', () => {
    const one = drawAuditSample(all, { seed: 1, perStratum: 4 }).map((c) => c.item_id);
    const two = drawAuditSample(all, { seed: 2, perStratum: 4 }).map((c) => c.item_id);
    expect(one).toHaveLength(two.length);
    expect(one).not.toEqual(two);
  });

  it('keeps a stratum\'s sample when other strata change, and grows it without dropping anyone', () => {
    const base = drawAuditSample(all, { seed: 3, perStratum: 4 });
    const others = all.filter((c) => !(c.model === 'beta' && c.language === 'de'));
    const fewer = drawAuditSample(others, { seed: 3, perStratum: 4 });
    expect(fewer.filter((c) => c.model === 'alpha')).toEqual(base.filter((c) => c.model === 'alpha'));
    const larger = new Set(drawAuditSample(all, { seed: 3, perStratum: 6 }).map((c) => c.item_id));
    for (const c of base) expect(larger.has(c.item_id)).toBe(true);
  });
});

describe('audit phases and items', () => {
  let ctx: RunContext;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    const tmp = await tempDir('audit-sample');
    cleanup = tmp.cleanup;
    const file = await writeCampaign(tmp.dir, 'small.yaml', (doc) => {
      doc.judge['audit'] = {
        per_stratum: 3,
        second_judge: { id: 'judge-b', provider: 'simulated', model: 'judge-b', price: { input_per_mtok: 2, output_per_mtok: 8 }, simulation: { error_rate: 0.1 } },
      };
    });
    ctx = await loadContext(file);
  });
  afterAll(() => cleanup());

  it('runs the second judge and the retest with the primary judge after the judge; readings stay in the audit phases', () => {
    expect(ctx.graph.waves.map((w) => w.map((p) => p.name))).toEqual([['generate'], ['judge'], [AUDIT_SECOND_PHASE, AUDIT_RETEST_PHASE]]);
    expect([AUDIT_SECOND_PHASE, AUDIT_RETEST_PHASE].map((name) => ctx.graph.get(name).answeredBy)).toEqual([{ role: 'second_judge' }, { role: 'judge' }]);
    expect(ctx.graph.readingsFolder(ctx.graph.get('judge'))).toBe('generate');
    expect(ctx.graph.readingsFolder(ctx.graph.get('generate'))).toBe('generate');
    expect(ctx.graph.readingsFolder(ctx.graph.get(AUDIT_RETEST_PHASE))).toBe(AUDIT_RETEST_PHASE);
  });

  it('gives audit items their own stable ids, with the phase in them, and the primary judge\'s messages', () => {
    const { campaign } = ctx;
    const model = campaign.models[0]!;
    const judge = { id: 'judge', settings: campaign.roles['judge']!.settings };
    const source = new PartitionItems({ ctx, model, language: 'en' }).items('generate').find((i) => i.factors['constraint'] === 'free') as Far6Item;
    const reply = { text: 'It was wrong.', attempt: 1 };
    const primary = makeJudgeItem(source, reply, judge);
    const retest = auditItem(source, reply, judge, AUDIT_RETEST_PHASE);
    const second = auditItem(source, reply, { id: 'judge-b', settings: campaign.roles['second_judge']!.settings }, AUDIT_SECOND_PHASE);
    expect(retest.messages).toEqual(primary.messages);
    expect(retest.phase).toBe(AUDIT_RETEST_PHASE);
    expect(retest.source_item_id).toBe(source.item_id);
    expect(second.model).toBe('judge-b');
    expect(new Set([primary.item_id, retest.item_id, second.item_id]).size).toBe(3);
    expect(new Set([primary.prompt_key, retest.prompt_key, second.prompt_key]).size).toBe(3);
    expect(auditItem(source, reply, judge, AUDIT_RETEST_PHASE).item_id).toBe(retest.item_id);
    // Another reply to the same prompt is another audit item.
    expect(auditItem(source, { text: 'It was fine.', attempt: 1 }, judge, AUDIT_RETEST_PHASE).item_id).not.toBe(retest.item_id);
  });

  it('plans the audit: min(per_stratum, judged) per model × language × constraint, priced per audit judge', async () => {
    const { campaign } = ctx;
    const plan = planCampaign(ctx);
    const sampleRate = (campaign.roles['judge']!.extras as { sample_rate: number }).sample_rate;
    let expected = 0;
    for (const model of campaign.models)
      for (const language of ctx.design.languages) {
        const judged = new Map<string, number>();
        for (const item of new PartitionItems({ ctx, model, language }).items('generate'))
          if (needsJudge(item as Far6Item, campaign.seed, sampleRate)) judged.set(String(item.factors['constraint']), (judged.get(String(item.factors['constraint'])) ?? 0) + 1);
        const audited = [...judged.values()].reduce((s, n) => s + Math.min(3, n), 0);
        const partition = plan.partitions.find((p) => p.model === model.id && p.language === language);
        expect(partition?.items[AUDIT_SECOND_PHASE]).toBe(audited);
        expect(partition?.items[AUDIT_RETEST_PHASE]).toBe(audited);
        expected += audited;
      }
    const second = plan.lines.filter((l) => l.phase === AUDIT_SECOND_PHASE);
    const retest = plan.lines.filter((l) => l.phase === AUDIT_RETEST_PHASE);
    expect(second.map((l) => l.model)).toEqual(['judge-b (auditing alpha)', 'judge-b (auditing beta)']);
    expect(retest.map((l) => l.model)).toEqual(['judge (auditing alpha)', 'judge (auditing beta)']);
    expect(second.reduce((s, l) => s + l.items, 0)).toBe(expected);
    expect(retest.reduce((s, l) => s + l.items, 0)).toBe(expected);
    // Same prompts, so the same tokens; judge-b costs twice the input and 1.6 × the output price.
    expect(second[0]!.inputTokens).toBe(retest[0]!.inputTokens);
    const judgeLine = plan.lines.find((l) => l.phase === 'judge')!;
    expect(retest[0]!.inputTokens).toBeLessThan(judgeLine.inputTokens);
    const cost = (inTok: number, outTok: number, pin: number, pout: number) => (inTok * pin + outTok * pout) / 1e6;
    expect(second[0]!.costUsd).toBeCloseTo(cost(second[0]!.inputTokens, second[0]!.outputTokens, 2, 8), 12);
    const { audit: _, ...judgeWithoutAudit } = campaign.roles['judge']!.extras;
    const withoutAudit = planCampaign(
      await contextFor({ ...campaign, roles: { judge: { ...campaign.roles['judge']!, extras: judgeWithoutAudit } } }, ctx.dataDir),
    );
    const auditCost = [...second, ...retest].reduce((s, l) => s + l.costUsd, 0);
    expect(plan.totals.costUsd).toBeCloseTo(withoutAudit.totals.costUsd + auditCost, 12);
    expect(withoutAudit.lines.some((l) => l.phase.startsWith('audit-'))).toBe(false);
    expect(withoutAudit.partitions[0]!.items).not.toHaveProperty(AUDIT_RETEST_PHASE);
  });
});
