/**
 * What a worker invocation costs in Lambda time when every call waits on a slow provider: the real
 * worker handler (functions/worker/handler.ts) answers one batch of generate shards, as the
 * Distributed Map hands it, against an OpenAI-compatible server on 127.0.0.1 that holds every
 * reply `--latency` seconds, with S3, DynamoDB and Secrets Manager stand-ins. It prints the calls the
 * worker kept in flight, its wall time, the GB-seconds that time bills at the worker's deployed
 * memory and architecture, the same per call beside what `sondage plan --aws` assumes
 * (lib/run/awsCost.ts), its CPU per call (against the vCPU share its memory buys) and its peak RSS
 * (against the memory it is deployed with).
 *
 *   npm run bench:worker-latency                         # 6 s per call, one batch of shards
 *   npm run bench:worker-latency -- --latency 1.5 --stories 6
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { createHandler as createPlan } from '../functions/plan/handler.js';
import { createHandler as createWorker } from '../functions/worker/handler.js';
import { FUNCTION_SIZING, SHARDS_PER_BATCH } from '../lib/config/sizing.js';
import { DEFAULT_AWS_COST_ASSUMPTIONS, loadAwsPrices } from '../lib/run/awsCost.js';
import { CALLS_PER_COPY } from '../lib/run/shards.js';
import { narrowDesign } from '../test/helpers/campaignFiles.js';
import { closeServer, listenLocal } from '../test/helpers/localServer.js';
import { SECRET_ARN, lambdaContext, readShards, startHarness, uploadCampaign } from '../test/functions/harnessCore.js';

const { values } = parseArgs({
  options: {
    latency: { type: 'string', default: '6' },
    stories: { type: 'string', default: '12' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log('usage: npm run bench:worker-latency -- [--latency SECONDS (6)] [--stories N (12)]');
  process.exit(0);
}
const latencyMs = Number(values.latency) * 1000;
const stories = Number(values.stories);

// The provider: every chat completion answered after `latencyMs`; counts the calls held at once.
let held = 0;
let maxHeld = 0;
let served = 0;
const provider = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const { model } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string };
    maxHeld = Math.max(maxHeld, ++held);
    setTimeout(() => {
      held--;
      served++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-bench',
          object: 'chat.completion',
          created: 1_751_328_000,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'Yes.', refusal: null }, finish_reason: 'stop', logprobs: null }],
          usage: { prompt_tokens: 120, completion_tokens: 12, total_tokens: 132 },
        }),
      );
    }, latencyMs);
  });
});
provider.keepAliveTimeout = 60_000;
const { url } = await listenLocal(provider);

const h = await startHarness();
h.secrets.secrets.set(SECRET_ARN, '{}');
process.env['SONDAGE_BENCH_KEY'] = 'sk-bench-local-0000000000000000';
try {
  const campaign = 'bench-latency';
  await uploadCampaign(h.store, campaign, (doc) => {
    narrowDesign(doc, { forms: ['plain', 'negint'], constraints: ['yesno', 'label'], stories });
    doc.models = [{ id: 'slow', provider: 'openai-compatible', model: 'slow-8b', base_url: `${url}/v1`, api_key_env: 'SONDAGE_BENCH_KEY', price: { input_per_mtok: 1, output_per_mtok: 2 } }];
    doc['concurrency'] = CALLS_PER_COPY;
    doc.judge['sample_rate'] = 0;
  });
  const deps = h.deps();
  const planned = await createPlan({ ...deps, glueDatabase: 'db' })({ campaign, execution: 'exec-1' }, lambdaContext());
  const shards = (await readShards(h.store, planned.wave.lambda.manifestKey)).slice(0, SHARDS_PER_BATCH);
  const worker = createWorker(h.deps());
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const out = await worker({ Items: shards, BatchInput: { campaign, execution: 'exec-1' } }, lambdaContext());
  const wallS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  const sizing = FUNCTION_SIZING.worker;
  const prices = loadAwsPrices();
  const gbs = (wallS * sizing.memoryMb) / 1024;
  const a = DEFAULT_AWS_COST_ASSUMPTIONS;
  const modelGbsPerCall = ((Number(values.latency) / CALLS_PER_COPY) * sizing.memoryMb) / 1024;
  // Lambda gives a function vCPU in proportion to its memory: one full vCPU at 1,769 MB.
  const vcpu = sizing.memoryMb / 1769;
  const rows: [string, string][] = [
    ['calls answered', `${out.done} (${served} served), ${out.pending} pending`],
    ['calls in flight (most at once)', `${maxHeld} of ${CALLS_PER_COPY} (CALLS_PER_COPY)`],
    ['latency per call', `${Number(values.latency)} s`],
    ['worker wall time', `${wallS.toFixed(1)} s`],
    ['worker seconds per call', `${(wallS / out.done).toFixed(4)} s (ideal ${(Number(values.latency) / CALLS_PER_COPY).toFixed(4)} s)`],
    [`GB-s at ${sizing.memoryMb} MB, ${sizing.architecture}`, `${gbs.toFixed(1)} GB-s = $${(gbs * prices.lambda.gb_second[sizing.architecture]).toFixed(5)}`],
    ['GB-s per call: measured / plan --aws assumes', `${(gbs / out.done).toFixed(5)} / ${modelGbsPerCall.toFixed(5)} (+ ${a.invocationOverheadSeconds} s a call's share of invocation overhead)`],
    ['CPU per call', `${((cpuS / out.done) * 1000).toFixed(2)} ms (the worker's ${vcpu.toFixed(2)} vCPU busy ${((cpuS / wallS / vcpu) * 100).toFixed(1)} %)`],
    ['peak RSS (this process, stand-ins included)', `${Math.round(process.resourceUsage().maxRSS / 1024)} MiB of ${sizing.memoryMb} MB`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);
} finally {
  delete process.env['SONDAGE_BENCH_KEY'];
  await h.close();
  await closeServer(provider);
}
