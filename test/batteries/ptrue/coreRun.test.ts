/**
 * The P(True) demo through the core (`sondage run examples/ptrue/demo.yaml`): generate, verify and
 * the optional judge as phases of the run loop, stored as Parquet and journaled, the SQL stage on
 * DuckDB (ptrue_rows.sql), the estimators and the report. Its tables must equal those of the
 * battery's own functions run in memory on the same simulated models (simulatedRun.ts), and a
 * second run must ask nothing.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, it } from 'vitest';
import { analyzePtrueRows } from '../../../lib/batteries/ptrue/analysis/analyzeRows.js';
import { ptrueDesignSchema } from '../../../lib/batteries/ptrue/design.js';
import { loadPtruePlan } from '../../../lib/batteries/ptrue/load.js';
import { ptrueFiles } from '../../../lib/batteries/ptrue/report/index.js';
import { parsePtrueJudgeSimulation, parsePtrueSimulation } from '../../../lib/batteries/ptrue/simulate/index.js';
import type { RunContext } from '../../../lib/run/context.js';
import { expectDemoThroughCore } from '../../helpers/demoThroughCore.js';
import { runSimulated } from './simulatedRun.js';

const DEMO = join(dirname(fileURLToPath(import.meta.url)), '../../../examples/ptrue/demo.yaml');
const TABLES = ['cells.csv', 'regimes.csv', 'axes.csv', 'axis_spans.csv', 'qr.csv', 'accuracy_shares.csv', 'configuration_shares.csv', 'reliability.csv', 'compliance.csv', 'scorers.csv', 'rank_changes.csv', 'rank_reference.csv', 'matching_effects.csv', 'restricted_cells.csv'];

/** The tables of the battery's own functions run in memory on the demo's simulated models (simulatedRun.ts). */
async function inMemoryFiles(ctx: RunContext): Promise<Map<string, string>> {
  const raw = parse(await readFile(DEMO, 'utf8')) as { name: string; seed: number; models: { id: string; simulation: unknown }[]; judge: { simulation: unknown } };
  const design = ptrueDesignSchema.parse((parse(await readFile(DEMO, 'utf8')) as { design: unknown }).design);
  const plan = await loadPtruePlan(ctx.campaign, design);
  const where = (path: string) => ({ file: DEMO, path });
  const models = Object.fromEntries(raw.models.map((m, i) => [m.id, parsePtrueSimulation(m.simulation, where(`models[${i}].simulation`))]));
  const rows = runSimulated({ plan, seed: raw.seed, models, judge: parsePtrueJudgeSimulation(raw.judge.simulation, where('judge.simulation')) });
  return new Map(ptrueFiles(analyzePtrueRows(rows, { draws: design.analysis.bootstrap_draws, seed: raw.seed, simulated: true }), { campaign: raw.name, simulated: true }));
}

describe('sondage run examples/ptrue/demo.yaml', () => {
  it('runs generate → verify and judge through the core to the tables computed in memory; a second run asks nothing', async () => {
    await expectDemoThroughCore({
      demo: DEMO,
      waves: [['generate'], ['verify', 'judge']],
      // 3 models × 30 items × 6 × 6 languages; six verifier copies each; the short answers judged.
      phases: [
        ['generate', 3240, 0],
        ['verify', 19440, 0],
        ['judge', 1944, 0],
      ],
      tables: TABLES,
      truthModels: ['alpha', 'beta', 'gamma'],
      inMemory: inMemoryFiles,
    });
  }, 120_000);
});
