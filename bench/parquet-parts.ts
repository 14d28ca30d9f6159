/**
 * One Parquet part of judge-sized prompt rows (~2.5 KB each, a long system prompt and a user
 * message in Chinese), written the two ways ParquetWriter knows:
 *   - appender: `writeFile`, the cells appended to a DuckDB table, then COPY to Parquet — how the
 *     run writes its prompts and readings parts;
 *   - ndjson: each row a JSON line in a staging file, then `convert` (DuckDB's JSON reader) — how
 *     a reply journal becomes a part, and how prompts and readings were written before.
 * Prints wall and CPU time per part (CPU of the whole process: DuckDB's threads included).
 *
 *   npm run bench:parquet-parts                  # 20,000 rows per part (a run's part size), 5 parts each
 *   npm run bench:parquet-parts -- --rows 2000
 */
import { writeFile as writeText, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ParquetWriter } from '../lib/store/ParquetWriter.js';
import { columnDefs } from '../lib/store/schemas.js';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '20000' }, parts: { type: 'string', default: '5' } } });
const n = Number(values.rows);
const parts = Number(values.parts);
if (!Number.isInteger(n) || n < 1) throw new Error(`--rows ${values.rows}: expected a whole number ≥ 1`);
if (!Number.isInteger(parts) || parts < 1) throw new Error(`--parts ${values.parts}: expected a whole number ≥ 1`);

const columns = columnDefs({
  item_id: ['VARCHAR'],
  campaign: ['VARCHAR'],
  phase: ['VARCHAR'],
  repeat: ['INTEGER'],
  story: ['VARCHAR'],
  form: ['VARCHAR'],
  temperature: ['DOUBLE', 'null'],
  max_tokens: ['INTEGER'],
  messages_json: ['VARCHAR'],
});
const system = 'You are a careful judge of short answers. '.repeat(31);
const rows = Array.from({ length: n }, (_, i) => ({
  item_id: i.toString(16).padStart(32, '0'),
  campaign: 'bench',
  phase: 'judge',
  model: 'model-1',
  language: 'zh',
  repeat: i % 3,
  story: `story-${i % 105}`,
  form: 'free',
  temperature: 0,
  max_tokens: 512,
  messages_json: JSON.stringify([
    { role: 'system', content: system },
    { role: 'user', content: `${'请阅读下面的故事，然后判断回答是否说了“是”。'.repeat(20)}${i}` },
  ]),
}));
const keys = columns.map((c) => c.name);

const dir = await mkdtemp(path.join(os.tmpdir(), 'sondage-bench-parts-'));
const writer = await ParquetWriter.create({ tmpDir: dir, threads: 1 });
const ways = {
  appender: async (k: number) => {
    await writer.writeFile('prompts', rows as never, path.join(dir, `a${k}.parquet`), undefined, { trusted: true, columns });
  },
  ndjson: async (k: number) => {
    const staged = path.join(dir, `s${k}.ndjson`);
    await writeText(staged, rows.map((r) => `${JSON.stringify(r, keys)}\n`).join(''));
    await writer.convert('prompts', staged, path.join(dir, `n${k}.parquet`), columns);
    await rm(staged);
  },
};
try {
  console.log(`parquet-parts: ${parts} parts × ${n.toLocaleString('en')} prompt rows of ~${(rows[0]!.messages_json.length / 1024).toFixed(1)} K characters`);
  // Twice each, interleaved: the first round warms DuckDB and the JIT.
  for (const round of [1, 2]) {
    for (const [name, write] of Object.entries(ways)) {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      for (let k = 0; k < parts; k++) await write(k);
      const cpu = process.cpuUsage(cpu0);
      console.log(`  round ${round} ${name.padEnd(8)} wall ${((performance.now() - t0) / parts).toFixed(0)} ms/part, CPU ${((cpu.user + cpu.system) / 1000 / parts).toFixed(0)} ms/part`);
    }
  }
} finally {
  await writer.close();
  await rm(dir, { recursive: true, force: true });
}
