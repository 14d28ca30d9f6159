/**
 * The battery contract proven with a battery made for the tests (relay.ts): registered at run
 * time, run on the embedded default through the same core as FAR-6, X-Value and P(True) — two
 * phases, the second expanded from the first's numeric readings — analysed by its own SQL, and
 * refused with clear errors when its campaign file or its phase graph is wrong, nothing written.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBattery } from '../../../lib/batteries/index.js';
import type { Battery, PhaseSpec } from '../../../lib/battery/types.js';
import { CampaignFileError } from '../../../lib/errors.js';
import { SqlLibrary } from '../../../lib/query/sql.js';
import { runCampaign } from '../../../lib/run/runCampaign.js';
import { loadContext, tempDir, writeCampaignDoc } from '../../helpers/campaigns.js';
import { readResult, storedReplies } from '../../helpers/runData.js';
import { relay } from './relay.js';

let dir: string;
let cleanup: () => Promise<void>;
const unregister: (() => void)[] = [];

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('relay'));
  unregister.push(registerBattery(relay));
});
afterAll(async () => {
  for (const u of unregister) u();
  await cleanup();
});

function campaign(name: string, doc: Record<string, unknown>): Promise<string> {
  return writeCampaignDoc(dir, {
    name,
    seed: 7,
    budget_usd: 1,
    data_dir: `data-${name}`,
    battery: 'relay',
    design: { slots: 200 },
    models: [
      { id: 'exact', provider: 'simulated', model: 'exact', price: { input_per_mtok: 1, output_per_mtok: 1 } },
      { id: 'sloppy', provider: 'simulated', model: 'sloppy', price: { input_per_mtok: 1, output_per_mtok: 1 }, simulation: { error_rate: 0.25 } },
    ],
    ...doc,
  });
}

describe('a battery made for the tests, on the embedded default', () => {
  it('runs both phases, the second built from the first readings, and analyses them with its own SQL', async () => {
    const file = await campaign('relay-run', {});
    const ctx = await loadContext(file);
    expect(ctx.graph.waves.map((w) => w.map((p) => p.name))).toEqual([['guess'], ['double']]);
    const summary = await runCampaign(ctx, { dataDir: ctx.dataDir });
    expect(summary.stopped).toBeUndefined();
    expect(summary.phases.map((p) => [p.phase, p.items, p.done])).toEqual([
      ['guess', 800, 800],
      ['double', 800, 800],
    ]);
    // Every double item names the guess item it doubles, and asks for twice the number read there.
    const guesses = await storedReplies(ctx.dataDir, 'relay-run', 'guess');
    const doubles = await storedReplies(ctx.dataDir, 'relay-run', 'double');
    expect(guesses).toHaveLength(800);
    expect(doubles).toHaveLength(800);
    const csv = await readResult(ctx.dataDir, 'relay-run', 'relay.csv');
    const rows = csv.trim().split('\n').slice(1).map((l) => l.split(','));
    expect(rows.map((r) => [r[0], r[1], r[2]])).toEqual([
      ['exact', 'en', '200'],
      ['exact', 'fr', '200'],
      ['sloppy', 'en', '200'],
      ['sloppy', 'fr', '200'],
    ]);
    expect(rows.filter((r) => r[0] === 'exact').map((r) => r[3])).toEqual(['200', '200']);
    // The sloppy model doubles wrongly at 0.25: 400 doubles, binomial sd ≈ 8.7; 4 sd either side.
    const sloppyCorrect = rows.filter((r) => r[0] === 'sloppy').reduce((n, r) => n + Number(r[3]), 0);
    expect(sloppyCorrect).toBeGreaterThan(300 - 35);
    expect(sloppyCorrect).toBeLessThan(300 + 35);
    expect(await readResult(ctx.dataDir, 'relay-run', 'summary.md')).toMatch(/^# relay: relay-run \(simulated\)/);

    // A second run finds everything done and asks nothing.
    const again = await runCampaign(await loadContext(file), { dataDir: ctx.dataDir });
    expect(again.phases.map((p) => [p.done, p.costUsd])).toEqual([
      [0, 0],
      [0, 0],
    ]);
  });

  it('runs on one thread when threads are asked for: they load the registry, which has no battery registered at run time', async () => {
    const file = await campaign('relay-threads', {});
    const ctx = await loadContext(file);
    const log: string[] = [];
    const summary = await runCampaign(ctx, { dataDir: ctx.dataDir, threads: 2, log: (line) => log.push(line) });
    expect(summary.stopped).toBeUndefined();
    expect(summary.phases.map((p) => [p.phase, p.done])).toEqual([
      ['guess', 800],
      ['double', 800],
    ]);
    expect(log.filter((l) => l.startsWith('partition threads could not start'))).toEqual([
      expect.stringMatching(/battery: "relay" is not a known battery.*; running on one thread$/),
    ]);
  });
});

describe('bad input, refused before anything is written', () => {
  it('a campaign naming an unknown battery names the file and the field', async () => {
    const file = await campaign('unknown-battery', { battery: 'rely' });
    const err = await loadContext(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CampaignFileError);
    expect((err as Error).message).toContain(file);
    expect((err as Error).message).toMatch(/battery/);
    expect((err as Error).message).toMatch(/relay/);
    expect(existsSync(path.join(dir, 'data-unknown-battery'))).toBe(false);
  });

  it("a design that fails the battery's schema names the field and what was expected", async () => {
    const file = await campaign('bad-design', { design: { slots: 0, languages: ['en', 'de'] } });
    const err = await loadContext(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CampaignFileError);
    const message = (err as Error).message;
    expect(message).toContain(file);
    expect(message).toMatch(/design\.slots/);
    expect(message).toMatch(/design\.languages(\.|\[)1/);
    expect(existsSync(path.join(dir, 'data-bad-design'))).toBe(false);
  });

  /** relay with its phases rewired: a cycle, or an input the graph lacks. */
  function rewired(name: string, rewire: (phases: PhaseSpec[]) => PhaseSpec[]): Battery {
    return {
      ...relay,
      name,
      // Query names are unique across batteries; these never reach the analysis.
      analysis: { ...relay.analysis, sql: new SqlLibrary(name, new URL('./sql/', import.meta.url), []) },
      load: async (c, d) => {
        const loaded = await relay.load(c, d as Parameters<typeof relay.load>[1]);
        return { ...loaded, phases: rewire([...loaded.phases]) };
      },
    };
  }

  it.each([
    ['relay_cycle', (ps: PhaseSpec[]) => [{ ...ps[0]!, after: [{ phase: 'double', take: ['readings'] as const }], estimate: ps[1]!.estimate! }, ps[1]!], /"guess" consumes "double", which comes after it: the phases form a cycle/],
    ['relay_missing', (ps: PhaseSpec[]) => [ps[0]!, { ...ps[1]!, after: [{ phase: 'gues', take: ['readings'] as const }] }], /"double" consumes "gues", which the phase graph does not have/],
  ] as const)('%s: a phase graph with a cycle or a missing input names the file and the battery field', async (name, rewire, expected) => {
    unregister.push(registerBattery(rewired(name, rewire)));
    const file = await campaign(name, { battery: name });
    const err = await loadContext(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CampaignFileError);
    expect((err as Error).message).toContain(`${file}: battery: ${name}:`);
    expect((err as Error).message).toMatch(expected);
    expect(existsSync(path.join(dir, `data-${name}`))).toBe(false);
  });
});
