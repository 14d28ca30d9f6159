import path from 'node:path';
import { expect } from 'vitest';
import type { RunContext } from '../../lib/run/context.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { loadContext, tempDir } from './campaigns.js';
import { readResult } from './runData.js';

/** A battery's simulated demo campaign, and what its run through the core must give. */
export interface DemoThroughCore {
  readonly demo: string;
  /** The phase names of each wave, in the order the battery's graph runs them. */
  readonly waves: readonly (readonly string[])[];
  /** `[phase, items, failed]` for each phase, in run order. */
  readonly phases: readonly (readonly [string, number, number])[];
  /** The result files that must equal the in-memory ones, by name. */
  readonly tables: readonly string[];
  /** The simulated models simulation_truth.json names. */
  readonly truthModels: readonly string[];
  /** The battery's own functions run in memory on the same simulated models: result files by name. */
  inMemory(ctx: RunContext): Promise<ReadonlyMap<string, string>>;
}

/**
 * Runs a battery's demo through the core (plan, run loop, Parquet, the SQL stage, the report) into a
 * fresh data folder, removed after, and holds it to the battery run in memory: the same tables, a
 * summary marked SIMULATED, the simulation truth, and a second run that asks nothing and spends
 * nothing more.
 */
export async function expectDemoThroughCore(d: DemoThroughCore): Promise<void> {
  const { dir: dataDir, cleanup } = await tempDir(`core-${path.basename(path.dirname(d.demo))}`);
  try {
    const ctx = await loadContext(d.demo, dataDir);
    const campaign = ctx.campaign.name;
    expect(ctx.graph.waves.map((w) => w.map((p) => p.name))).toEqual(d.waves);
    const summary = await runCampaign(ctx, { dataDir });
    expect(summary.stopped).toBeUndefined();
    expect(summary.phases.map((p) => [p.phase, p.items, p.failed])).toEqual(d.phases);

    const expected = await d.inMemory(ctx);
    for (const name of d.tables) expect(await readResult(dataDir, campaign, name), name).toBe(expected.get(name));
    expect(await readResult(dataDir, campaign, 'summary.md')).toContain('SIMULATED');
    const truth = JSON.parse(await readResult(dataDir, campaign, 'simulation_truth.json')) as { models: { model: string }[] };
    expect(truth.models.map((m) => m.model)).toEqual(d.truthModels);

    const again = await runCampaign(await loadContext(d.demo, dataDir), { dataDir });
    expect(again.phases.map((p) => p.done)).toEqual(d.phases.map(() => 0));
    expect(again.spentUsd).toBe(summary.spentUsd);
  } finally {
    await cleanup();
  }
}
