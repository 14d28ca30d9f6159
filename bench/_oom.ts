import { DuckDb, tableGlob } from '../lib/store/DuckDb.js';
import { FAR6_SQL } from '../lib/batteries/far6/sqlLibrary.js';
import { tableColumns } from '../lib/store/schemas.js';
import { FAR6_PROMPT_COLUMNS } from '../lib/batteries/far6/promptColumns.js';
const dataDir = '/tmp/sondage-bench-analysis/v2-stories105/data';
const mode = process.argv[2] ?? 'default';
const db = await DuckDb.open();
if (mode === 'pio') await db.run('SET preserve_insertion_order = false');
for (const table of ['prompts', 'replies', 'readings'] as const) await db.attachTable(table, tableGlob(dataDir, 'bench', 'generate', table), table, tableColumns(table, FAR6_PROMPT_COLUMNS));
const tables = { prompts: 'prompts', replies: 'replies', readings: 'readings' };
let oom = 0;
for (let k = 0; k < 6; k++) for (const q of ['item_shares', 'same_replies_shares'] as const) {
  const t = performance.now();
  try { await db.all(FAR6_SQL.render(q, tables)); } catch (e) { oom++; console.log(q, String(e).slice(0, 60)); }
  console.log(q, ((performance.now() - t) / 1000).toFixed(2));
}
console.log(mode, 'ooms', oom, 'of 12');
db.close();
