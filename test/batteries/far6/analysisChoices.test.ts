/**
 * The analysis choices the paper fixes and a FAR-6 campaign may vary (README "FAR-6: choices"):
 * `design.analysis.identity_readouts` and `bootstrap_draws` reach the identity analysis of a run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCampaign } from '../../../lib/run/runCampaign.js';
import { loadContext, tempDir, writeCampaign } from '../../helpers/campaigns.js';
import { readResult } from '../../helpers/runData.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('far6-choices'));
});
afterAll(() => cleanup());

function readoutsIn(csv: string): string[] {
  const [head, ...rows] = csv.trim().split(/\r?\n/);
  const col = head!.split(',').indexOf('readout');
  return [...new Set(rows.map((r) => r.split(',')[col]!))].sort();
}

describe('FAR-6 analysis choices from the design section', () => {
  it('the default compares plain/label/rule and plain/free/judge:*; identity_readouts narrows it', async () => {
    // Ten stories, one form and two constraints: enough common stories (8) for the identity pairs.
    const small = (doc: { design: Record<string, unknown> }): void => {
      Object.assign(doc.design, { story_limit: 10, forms: ['plain'], constraints: ['free', 'label'] });
    };
    const file = await writeCampaign(dir, 'small.yaml', small);
    const ctx = await loadContext(file);
    await runCampaign(ctx, { dataDir: ctx.dataDir });
    const byDefault = readoutsIn(await readResult(ctx.dataDir, 'run-small', 'identity_counts.csv'));
    expect(byDefault).toEqual(['plain/free/judge:judge', 'plain/label/rule']);

    const narrowed = await writeCampaign(
      dir,
      'small.yaml',
      (doc) => {
        small(doc);
        doc.design['analysis'] = { identity_readouts: ['plain/label/rule'], bootstrap_draws: 25 };
      },
      'narrowed.yaml',
    );
    const ctx2 = await loadContext(narrowed);
    // Same data folder: the analysis choice changes no item, so nothing is asked again.
    const again = await runCampaign(ctx2, { dataDir: ctx.dataDir });
    expect(again.phases.every((p) => p.done === 0)).toBe(true);
    expect(readoutsIn(await readResult(ctx.dataDir, 'run-small', 'identity_counts.csv'))).toEqual(['plain/label/rule']);
    const classes = await readResult(ctx.dataDir, 'run-small', 'identity_classes.csv');
    expect(classes.split(/\r?\n/)[0]).toContain('n_draws');
    const [head] = classes.split(/\r?\n/);
    const draws = classes.split(/\r?\n/).slice(1).filter((l) => l !== '').map((l) => l.split(',')[head!.split(',').indexOf('n_draws')]);
    // 25 draws where a class has pairs (0 where a story group has too few common stories).
    expect(draws).toContain('25');
    expect(draws.filter((d) => d !== '25' && d !== '0')).toEqual([]);
  });
});
