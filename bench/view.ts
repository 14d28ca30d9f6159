/**
 * `sondage view` on a large campaign: how long the overview takes to open, and a page of replies to
 * come, through the viewer's own HTTP server (JSON included), on a campaign of `--replies` replies.
 *
 * Without `--data-dir`, it builds a synthetic campaign once under the OS temp folder (kept for the
 * next run): one `generate` phase of 4 models × 10 languages, the stored columns of real replies
 * (~200-character texts), their prompts, and two readings each (a rule and a judge, disagreeing on
 * about a quarter). It has no ledger, so the overview shows stored replies without progress;
 * `--data-dir D` measures a real data folder instead (its first campaign, or `--campaign C`).
 *
 *   npm run bench:view                          # 1,000,000 replies
 *   npm run bench:view -- --replies 100000
 *   npm run bench:view -- --data-dir data --campaign far6-demo
 *
 * Targets: the overview opens in under 2 s, a page of replies comes in under 200 ms.
 */
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDb, sqlString } from '../lib/store/DuckDb.js';
import { LocalViewSource, startViewServer } from '../lib/view/index.js';

const { values } = parseArgs({ options: { replies: { type: 'string', default: '1000000' }, 'data-dir': { type: 'string' }, campaign: { type: 'string' }, runs: { type: 'string', default: '5' } } });
const replies = Number(values.replies);
const runs = Number(values.runs);
if (!Number.isInteger(replies) || replies < 1000) throw new Error(`--replies ${values.replies}: expected a whole number ≥ 1000`);

const MODELS = ['alpha', 'beta', 'gamma', 'delta'];
const LANGUAGES = ['ar', 'de', 'en', 'es', 'fr', 'hi', 'ja', 'ko', 'pt', 'zh'];
const CAMPAIGN = 'view-bench';

/** Writes the synthetic campaign's three tables with DuckDB, partitioned as a run writes them. */
async function build(dataDir: string, n: number): Promise<void> {
  const dir = path.join(dataDir, 'campaigns', CAMPAIGN);
  await rm(dir, { recursive: true, force: true });
  await mkdir(path.join(dir, 'generate'), { recursive: true });
  await writeFile(path.join(dir, 'plan.json'), JSON.stringify({ campaign: CAMPAIGN, battery: 'far6', budgetUsd: 1000, phases: ['generate'] }));
  const db = await DuckDb.open({ memoryLimit: '1GB' });
  const models = `[${MODELS.map(sqlString).join(', ')}]`;
  const languages = `[${LANGUAGES.map(sqlString).join(', ')}]`;
  const parts = MODELS.length * LANGUAGES.length;
  // Row i belongs to partition i % parts; within it, rows follow one another as a run appends them.
  const base = `SELECT i, md5(i::VARCHAR) AS item_id, ${models}[1 + (i % ${parts}) // ${LANGUAGES.length}] AS model, ${languages}[1 + (i % ${parts}) % ${LANGUAGES.length}] AS language
                FROM range(${n}) t(i)`;
  // Ordered by partition and by item: within a partition, parts hold rows in the order a run appends them.
  const copy = (table: string, select: string): Promise<unknown> =>
    db.all(`COPY (${select} ORDER BY model, language, item_id) TO ${sqlString(path.join(dir, 'generate', table))} (FORMAT parquet, PARTITION_BY (model, language), OVERWRITE_OR_IGNORE true, ROW_GROUP_SIZE 20000)`);
  await copy(
    'replies',
    `SELECT item_id, '${CAMPAIGN}' AS campaign, 'generate' AS phase, 1 AS attempt, CASE WHEN i % 97 = 0 THEN 'error' ELSE 'ok' END AS status,
            CASE WHEN i % 97 = 0 THEN NULL ELSE 'Reply ' || i || ': ' || (['I approve of what they did', 'I disapprove of what they did', 'It depends on the story', 'Neither, really'])[1 + i % 4] || '. ' || repeat('The circumstances of the story speak for it. ', 3) END AS text,
            'stop' AS finish_reason, 120 AS input_tokens, 40 AS output_tokens, NULL::INTEGER AS cached_input_tokens, 0.00003 AS cost_usd, 350.0 AS latency_ms,
            NULL::VARCHAR AS logprobs_json, NULL::BOOLEAN AS logprobs_exact, CASE WHEN i % 97 = 0 THEN 'transient' END AS error_class,
            CASE WHEN i % 97 = 0 THEN 'the provider answered 503' END AS error_message, '{}' AS settings_json, 'simulated' AS provider, true AS simulated,
            '2026-01-01T00:00:00.000Z' AS created_at, model, language FROM (${base})`,
  );
  await copy(
    'prompts',
    `SELECT item_id, item_id AS prompt_key, '${CAMPAIGN}' AS campaign, 'generate' AS phase, 'far6' AS battery, 's' || (i % 60) AS story,
            (['alternative', 'binary'])[1 + i % 2] AS form, (['free', 'label'])[1 + (i // 2) % 2] AS "constraint",
            '[{"role":"user","content":"Story ' || (i % 60) || ': what do you think of what they did?"}]' AS messages_json, '{}' AS settings_json,
            NULL::VARCHAR AS source_item_id, model, language FROM (${base})`,
  );
  const reading = (reader: string, shift: string): string =>
    `SELECT item_id, '${CAMPAIGN}' AS campaign, 'generate' AS phase, '${reader}' AS reader, (['P', 'notP', 'both', 'none'])[1 + (i + ${shift}) % 4] AS label,
            NULL::VARCHAR AS raw, NULL::VARCHAR AS judge_item_id, NULL::VARCHAR AS facet, NULL::DOUBLE AS value, NULL::VARCHAR AS read_with, model, language, i
     FROM (${base})`;
  // The judge reads a quarter of the replies otherwise than the rule.
  await copy('readings', `SELECT * EXCLUDE (i) FROM (${reading('rule', '0')} UNION ALL ${reading('judge:judge', 'CASE WHEN i % 4 = 0 THEN 1 ELSE 0 END')})`);
  db.close();
  await writeFile(path.join(dir, '.bench-complete'), String(n));
}

async function get(base: string, url: string): Promise<{ ms: number; body: unknown }> {
  const started = performance.now();
  const res = await fetch(`${base}${url}`);
  const body: unknown = await res.json();
  if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
  return { ms: performance.now() - started, body };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

let dataDir = values['data-dir'];
let campaign = values.campaign;
if (!dataDir) {
  dataDir = path.join(os.tmpdir(), `sondage-bench-view-${replies}`);
  const marker = path.join(dataDir, 'campaigns', CAMPAIGN, '.bench-complete');
  if (!existsSync(marker)) {
    const t = performance.now();
    await build(dataDir, replies);
    console.log(`built ${replies.toLocaleString('en-US')} replies in ${((performance.now() - t) / 1000).toFixed(1)} s under ${dataDir}`);
  } else {
    console.log(`using ${dataDir} (built before)`);
  }
  campaign = CAMPAIGN;
}

// Opening: the process is warm (modules loaded), the source and server new, as `sondage view` starts them.
const opened = performance.now();
const source = await LocalViewSource.open(dataDir);
const server = await startViewServer(source, { port: 0 });
const base = server.url.replace(/\/$/, '');
try {
  const list = await get(base, '/api/campaigns');
  campaign ??= (list.body as { campaigns: { name: string }[] }).campaigns[0]?.name;
  if (!campaign) throw new Error(`${dataDir} holds no campaign`);
  const overview = await get(base, `/api/campaigns/${campaign}/overview`);
  const filters = await get(base, `/api/campaigns/${campaign}/filters`);
  const openMs = performance.now() - opened;
  const counted = (overview.body as { counts: { rows: { replies: number }[] } }).counts.rows.reduce((s, r) => s + r.replies, 0);
  console.log(`campaign ${campaign}: ${counted.toLocaleString('en-US')} replies`);
  console.log(`open (campaigns + overview + filters, cold): ${openMs.toFixed(0)} ms  [target < 2000 ms]  (overview ${overview.ms.toFixed(0)} ms, filters ${filters.ms.toFixed(0)} ms)`);
  const f = filters.body as { models: string[]; languages: string[]; readers: string[]; labels: string[] };
  const model = f.models[1] ?? f.models[0]!;
  const language = f.languages[2] ?? f.languages[0]!;
  const pages: [string, string][] = [
    ['first page', ''],
    ['page 100 (offset 5,000)', 'offset=5000'],
    ['model × language cell', `model=${model}&language=${language}`],
    ['cell, reader label', `model=${model}&language=${language}&reader=${encodeURIComponent(f.readers[0] ?? '')}&label=${encodeURIComponent(f.labels[0] ?? '')}`],
    ['cell, readers disagree', `model=${model}&language=${language}&disagree=1`],
    ['cell, full-text search', `model=${model}&language=${language}&q=depends`],
    ['full-text search, all replies', 'q=depends'],
    ['reader label, all replies', `reader=${encodeURIComponent(f.readers[0] ?? '')}&label=${encodeURIComponent(f.labels[0] ?? '')}`],
    ['readers disagree, all replies', 'disagree=1'],
  ];
  for (const [what, query] of pages) {
    const times: number[] = [];
    for (let i = 0; i < runs; i++) times.push((await get(base, `/api/campaigns/${campaign}/replies?${query}`)).ms);
    console.log(`page of replies, ${what}: median ${median(times).toFixed(0)} ms of ${runs} (first ${times[0]!.toFixed(0)} ms)  [target < 200 ms]`);
  }
  const count = await get(base, `/api/campaigns/${campaign}/count?q=depends`);
  console.log(`count of a full-text search over all replies (asked after the page): ${count.ms.toFixed(0)} ms`);
} finally {
  await server.close();
  await source.close();
}
