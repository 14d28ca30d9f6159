import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { PhaseSpec } from '../../lib/battery/types.js';
import type { RunContext } from '../../lib/run/context.js';
import { PartitionItems } from '../../lib/run/partitionItems.js';
import { planCampaign } from '../../lib/run/planCampaign.js';
import { loadContext, REPO_ROOT, tempDir, writeCampaign } from '../helpers/campaigns.js';

// The plan prices a root phase as its items are expanded and keeps them only where a dependent
// phase's estimate reads them whole (PartitionContext.items; lib/run/planCampaign.ts): it learns
// which at the first partition, and may not expand such a phase again in every partition. An
// estimate that reads them in one pass (PartitionContext.each) has them expanded again as it reads,
// and nothing is kept. (That it counts what it counted when it kept every phase:
// test/cli/plan.test.ts counts each partition's items itself.)

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('plan-keeps')));
afterAll(() => cleanup?.());

/** How often each phase's expand ran, per model and language, over one plan; the plan's lines. */
function countedPlan(ctx: RunContext): { expansions: Map<string, number[]>; plan: ReturnType<typeof planCampaign> } {
  const seen = new Map<string, Map<string, number>>();
  for (const phase of ctx.graph.phases as PhaseSpec[]) {
    const expand = phase.expand.bind(phase);
    const counts = new Map<string, number>();
    seen.set(phase.name, counts);
    (phase as { expand: PhaseSpec['expand'] }).expand = (p, up) => {
      const key = `${p.subject.id}/${p.language}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      return expand(p, up);
    };
  }
  const plan = planCampaign(ctx);
  return { expansions: new Map([...seen].map(([phase, counts]) => [phase, [...counts.values()]])), plan };
}

describe('the plan keeps a phase’s items only where an estimate reads them whole', () => {
  it('P(True): generate, which two estimates read whole, is expanded twice in the first partition and once in every other', async () => {
    const { expansions, plan } = countedPlan(await loadContext(path.join(REPO_ROOT, 'examples/ptrue/demo.yaml')));
    const generate = expansions.get('generate')!;
    expect(generate.length).toBe(plan.partitions.length);
    expect(generate[0]).toBe(2);
    expect(generate.slice(1).every((n) => n === 1)).toBe(true);
  });

  it('FAR-6: generate, which the judge’s estimate reads in one pass, is expanded twice in every partition and never kept', async () => {
    const ctx = await loadContext(await writeCampaign(root, 'small.yaml'));
    const kept = vi.spyOn(PartitionItems.prototype, 'items');
    let counted: ReturnType<typeof countedPlan>;
    try {
      counted = countedPlan(ctx);
      expect(kept).not.toHaveBeenCalled();
    } finally {
      kept.mockRestore();
    }
    const { expansions, plan } = counted;
    expect(expansions.get('generate')).toEqual(plan.partitions.map(() => 2));
    // Dependent phases are estimated, not expanded.
    expect(expansions.get('judge')).toEqual([]);
    const judge = plan.lines.filter((l) => l.phase === 'judge');
    expect(judge.reduce((s, l) => s + l.items, 0)).toBeGreaterThan(0);
  });

  it('X-Value: no estimate reads step 1, so every root phase is expanded once per partition', async () => {
    const { expansions, plan } = countedPlan(await loadContext(path.join(REPO_ROOT, 'examples/xvalue/demo.yaml')));
    for (const phase of ['step1', 'step3']) expect(expansions.get(phase), phase).toEqual(plan.partitions.map(() => 1));
  });
});
