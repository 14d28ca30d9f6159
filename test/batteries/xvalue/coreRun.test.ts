/**
 * The X-Value demo through the core (`sondage run examples/xvalue/demo.yaml`): the plan, the
 * simulated judges, the journal and Parquet, the SQL stage on DuckDB, the report. Its tables must
 * equal those of the battery's own functions run in memory on the same simulated judges (the
 * SQL stage computed in TypeScript, fixtures.ts), and a second run must ask nothing.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, it } from 'vitest';
import { analyzeXvalueRows, buildRows } from '../../../lib/batteries/xvalue/analysis/index.js';
import { loadXvalueDesign, xvalueDesignSchema } from '../../../lib/batteries/xvalue/design/index.js';
import { xvalueResultFiles } from '../../../lib/batteries/xvalue/report/index.js';
import { xvalueSimulator } from '../../../lib/batteries/xvalue/simulate/index.js';
import type { XvalueItem } from '../../../lib/batteries/xvalue/types.js';
import type { PartitionContext, PhaseSpec } from '../../../lib/battery/types.js';
import type { PromptItem } from '../../../lib/core/types.js';
import { settingsIn, type RunContext } from '../../../lib/run/context.js';
import { expectDemoThroughCore } from '../../helpers/demoThroughCore.js';
import { chainSqlRows, runChain, type ChainRecord } from './fixtures.js';

const EXAMPLES = join(import.meta.dirname, '../../../examples/xvalue');
const DEMO = join(EXAMPLES, 'demo.yaml');
const TABLES = ['overall.csv', 'by_category.csv', 'by_language.csv', 'cells.csv', 'lowest_cells.csv', 'checkpoints.csv', 'step1_agreement.csv'];

/** The demo's partitions as the core builds them: campaign name, per-phase settings of each model. */
function corePartitions(ctx: RunContext) {
  return (phase: PhaseSpec, language: string, items: Readonly<Record<string, readonly PromptItem[]>>, model: string): PartitionContext => {
    const entry = ctx.campaign.models.find((m) => m.id === model)!;
    const answerer = { id: model, settings: settingsIn(ctx, phase, entry) };
    return { campaign: ctx.campaign, phase: phase.name, subject: answerer, answerer, language, items: (p) => items[p] ?? [], each: (p) => items[p] ?? [] };
  };
}

async function inMemoryTables(ctx: RunContext): Promise<Map<string, string>> {
  const file = parseYaml(await readFile(DEMO, 'utf8')) as { seed: number; design: unknown; models: { id: string; model: string; simulation?: unknown }[] };
  const data = await loadXvalueDesign({ file: DEMO, folder: EXAMPLES }, xvalueDesignSchema.parse(file.design));
  const items: XvalueItem[] = [];
  const records: ChainRecord[] = [];
  for (const m of file.models) {
    const model = xvalueSimulator({ id: m.id, model: m.model, role: 'subject', simulation: m.simulation, where: { file: DEMO, path: `models[${m.id}].simulation` } }, { seed: file.seed });
    for (const language of data.languages) {
      const chain = runChain(data.pairs, language, m.id, (item) => model.reply(item, { messages: item.messages, settings: item.settings, item }).text, data.strategies, data.prompts, corePartitions(ctx));
      items.push(...chain.items);
      records.push(...chain.records);
    }
  }
  const sql = chainSqlRows(items, records);
  return new Map(xvalueResultFiles(analyzeXvalueRows(buildRows(sql.pairs, sql.facets), { simulated: true }), { campaign: 'xvalue-demo', simulated: true }));
}

describe('sondage run examples/xvalue/demo.yaml', () => {
  it('runs through the core to the tables the battery computes in memory; a second run asks nothing', async () => {
    await expectDemoThroughCore({
      demo: DEMO,
      waves: [['defonly', 'step1', 'step3'], ['step2']],
      phases: [
        ['defonly', 210, 0],
        ['step1', 210, 0],
        ['step3', 840, 0],
        ['step2', 204, 0],
      ],
      tables: TABLES,
      truthModels: ['alpha', 'beta', 'gamma'],
      inMemory: inMemoryTables,
    });
  }, 60_000);
});
