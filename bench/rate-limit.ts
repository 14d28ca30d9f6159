/**
 * Rate-limit bench: a local server on 127.0.0.1 that speaks OpenAI's
 * chat completions and enforces RPM = 600 and a TPM limit the way OpenAI does (a request costs its
 * prompt tokens + max_completion_tokens at admission; the per-minute limits are enforced over one
 * second, so bursts are refused), answers with a realistic latency (log-normal, median 800 ms, plus
 * a 2 % tail of 4-15 s) and sends `x-ratelimit-*` headers and `retry-after-ms` on 429s. The headers
 * are OpenAI's: `remaining` counts down from the per-minute limit (what is admitted and not yet
 * refilled comes off it; the one-second window that refuses bursts is not reported) and is taken
 * when the request is admitted, so a reply brings the state of its admission, as old as its latency.
 *
 * N requests go through it twice, each time through the real `openai` adapter and callWithRetry:
 *   - sondage: RateLimiter (RPM and TPM buckets, refined by the headers) + bounded concurrency;
 *   - naive: a fixed concurrency and nothing else (retries honour retry-after, as sondage's do).
 * Printed: throughput as a fraction of the ceiling, share of attempts answered 429, lost requests.
 *
 *   npx tsx bench/rate-limit.ts                 # 5,000 requests (about 9 minutes per client)
 *   npx tsx bench/rate-limit.ts --requests 600  # about 1 minute per client
 *   npx tsx bench/rate-limit.ts --bound rpm --requests 1500 --only sondage   # the request limit binds
 *
 * Target: >= 99 % of the ceiling in steady state (after the first minute), 0 × 429,
 * zero lost requests; the whole-run figure includes the ramp-up and the last replies.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { seededRandom } from '../lib/core/hash.js';
import { estimatePromptTokens } from '../lib/pricing/pricing.js';
import { createProvider } from '../lib/providers/registry.js';
import type { GenerateRequest, ModelProvider } from '../lib/providers/types.js';
import { callWithRetry } from '../lib/run/callWithRetry.js';
import type { Attempt, RetryPolicy } from '../lib/run/callWithRetry.js';
import { RateLimiters, withRateLimit } from '../lib/run/RateLimiter.js';
import { Semaphore } from '../lib/run/Semaphore.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '5000' },
    rpm: { type: 'string', default: '600' },
    tpm: { type: 'string', default: '240000' },
    concurrency: { type: 'string', default: '64' },
    'naive-concurrency': { type: 'string', default: '32' },
    seed: { type: 'string', default: '1' },
    only: { type: 'string' },
    // rpm: a TPM far above what the requests need, so the request limit binds; tpm: the default TPM binds.
    bound: { type: 'string' },
  },
});
const N = Number(values.requests);
const RPM = Number(values.rpm);
const TPM = values.bound === 'rpm' ? 100_000_000 : Number(values.tpm);
/** Admissions before this many ms after the first are the ramp-up; the steady-state figure starts after. */
const STEADY_AFTER_MS = 60_000;
const MAX_TOKENS = 256;


function latencyMs(rand: () => number): number {
  if (rand() < 0.02) return 4000 + rand() * 11_000;
  // log-normal, median 800 ms, sigma 0.5 (p99 about 2.6 s); Box-Muller for the normal draw
  const z = Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  return 800 * Math.exp(0.5 * z);
}

/** Server-side count, as OpenAI estimates at admission: about 4 characters a token, plus max tokens. */
function admissionCost(body: { messages: { content: string }[]; max_completion_tokens?: number }): number {
  const prompt = body.messages.reduce((n, m) => n + Math.ceil(m.content.length / 4), 0);
  return prompt + (body.max_completion_tokens ?? 0);
}

interface ServerStats {
  /** Admission times and admission costs (tokens). */
  accepted: number[];
  costs: number[];
  rejected: number;
}

async function startLimitedServer(seed: number) {
  const rand = seededRandom(seed); // both clients see the same requests and latencies
  const perMs = { req: RPM / 60_000, tok: TPM / 60_000 };
  const cap = { req: RPM / 60, tok: TPM / 60 };
  // Admitted and not yet refilled. The same deficit empties the one-second window that is enforced
  // (cap - deficit) and the per-minute allowance that the headers report (limit - deficit).
  const deficit = { req: 0, tok: 0 };
  let last = performance.now();
  const stats: ServerStats = { accepted: [], costs: [], rejected: 0 };
  const refill = () => {
    const now = performance.now();
    deficit.req = Math.max(0, deficit.req - (now - last) * perMs.req);
    deficit.tok = Math.max(0, deficit.tok - (now - last) * perMs.tok);
    last = now;
  };
  const headers = () => ({
    'content-type': 'application/json',
    'x-ratelimit-limit-requests': String(RPM),
    'x-ratelimit-limit-tokens': String(TPM),
    'x-ratelimit-remaining-requests': String(Math.max(0, Math.floor(RPM - deficit.req))),
    'x-ratelimit-remaining-tokens': String(Math.max(0, Math.floor(TPM - deficit.tok))),
    'x-ratelimit-reset-requests': `${Math.ceil(deficit.req / perMs.req)}ms`,
    'x-ratelimit-reset-tokens': `${Math.ceil(deficit.tok / perMs.tok)}ms`,
  });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Parameters<typeof admissionCost>[0];
      const cost = admissionCost(body);
      refill();
      const needTok = Math.min(cost, cap.tok);
      if (cap.req - deficit.req < 1 || cap.tok - deficit.tok < needTok) {
        stats.rejected++;
        const wait = Math.max((deficit.req + 1 - cap.req) / perMs.req, (deficit.tok + needTok - cap.tok) / perMs.tok);
        res.writeHead(429, { ...headers(), 'retry-after-ms': String(Math.ceil(wait)) });
        res.end(JSON.stringify({ error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } }));
        return;
      }
      deficit.req += 1;
      deficit.tok += cost;
      const atAdmission = headers();
      stats.accepted.push(performance.now());
      stats.costs.push(cost);
      const out = 20 + Math.floor(rand() * 100);
      setTimeout(() => {
        res.writeHead(200, atAdmission);
        res.end(
          JSON.stringify({
            id: 'chatcmpl-bench',
            object: 'chat.completion',
            created: 0,
            model: 'bench-model',
            choices: [{ index: 0, message: { role: 'assistant', content: 'Yes, it was wrong.', refusal: null }, finish_reason: 'stop', logprobs: null }],
            usage: { prompt_tokens: cost - MAX_TOKENS, completion_tokens: out, total_tokens: cost - MAX_TOKENS + out },
          }),
        );
      }, latencyMs(rand));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    stats,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The same N requests for both clients: prompts of 40 to 600 tokens, max_tokens 256. */
function makeRequests(seed: number): GenerateRequest[] {
  const rand = seededRandom(seed + 1);
  return Array.from({ length: N }, (_, i) => ({
    messages: [{ role: 'user' as const, content: `Question ${i}: ${'word '.repeat(32 + Math.floor(rand() * 450))}` }],
    settings: { max_tokens: MAX_TOKENS, temperature: 0 },
  }));
}

const estimate = (req: GenerateRequest) => estimatePromptTokens(req.messages, 'en') + (req.settings.max_tokens ?? 0);
const POLICY: RetryPolicy = { maxAttempts: 6, baseDelayMs: 500, maxDelayMs: 60_000, timeoutMs: 30_000 };

interface Outcome {
  readonly client: string;
  readonly attempts: number;
  readonly rateLimited: number;
  readonly lost: number;
  readonly admittedPerMin: number;
  /** Share of the binding limit used between the first and the last admission. */
  readonly utilization: number;
  /** The same from one minute after the first admission to the last (NaN when the run is shorter). */
  readonly steady: number;
  readonly makespanS: number;
}

async function runClient(client: string, requests: readonly GenerateRequest[], concurrency: number, limited: boolean, seed: number): Promise<Outcome> {
  const server = await startLimitedServer(seed);
  const pool = new RateLimiters();
  let provider: ModelProvider = await createProvider(
    { id: 'bench', provider: 'openai', model: 'bench-model', base_url: server.url },
    { seed, env: { OPENAI_API_KEY: 'bench-key' }, ...(limited ? { onRateLimitHints: pool.observe } : {}) },
  );
  if (limited) provider = withRateLimit(provider, pool.get(provider.id, { rpm: RPM, tpm: TPM }), estimate);
  const semaphore = new Semaphore(concurrency);
  let attempts = 0;
  let rateLimited = 0;
  let lost = 0;
  const onAttempt = (a: Attempt) => {
    attempts++;
    if (!a.ok && a.errorClass === 'rate_limit') rateLimited++;
  };
  const started = performance.now();
  let done = 0;
  const ticker = setInterval(() => process.stderr.write(`\r${client}: ${done}/${requests.length} done, ${server.stats.rejected} 429s`), 1000);
  await Promise.all(
    requests.map((req) =>
      semaphore.run(async () => {
        const final = await callWithRetry(provider, req, POLICY, onAttempt);
        if (!final.ok) lost++;
        done++;
      }),
    ),
  );
  clearInterval(ticker);
  process.stderr.write('\n');
  const makespanS = (performance.now() - started) / 1000;
  const acc = server.stats.accepted;
  const windowMin = (acc[acc.length - 1]! - acc[0]!) / 60_000;
  await server.close();
  // the first admission opens the window: count what came after it
  const tokens = server.stats.costs.slice(1).reduce((a, b) => a + b, 0);
  const utilization = Math.max((acc.length - 1) / windowMin / RPM, tokens / windowMin / TPM);
  // Steady state: the admissions after the first minute, over the time from then to the last one.
  const from = acc[0]! + STEADY_AFTER_MS;
  const after = acc.map((t, i) => ({ t, cost: server.stats.costs[i]! })).filter((a) => a.t > from);
  const steadyMin = (acc[acc.length - 1]! - from) / 60_000;
  const steady = after.length > 1 ? Math.max(after.length / steadyMin / RPM, after.reduce((n, a) => n + a.cost, 0) / steadyMin / TPM) : NaN;
  return { client, attempts, rateLimited, lost, admittedPerMin: (acc.length - 1) / windowMin, utilization, steady, makespanS };
}

const seed = Number(values.seed);
const requests = makeRequests(seed);
const meanCost = requests.reduce((n, r) => n + admissionCost({ messages: [...r.messages], max_completion_tokens: MAX_TOKENS }), 0) / N;
const ceilingPerMin = Math.min(RPM, TPM / meanCost);
console.log(
  `server: RPM ${RPM}, TPM ${TPM} (mean admission cost ${meanCost.toFixed(0)} tokens) -> ceiling ${ceilingPerMin.toFixed(1)} requests/min; ` +
    `latency log-normal median 800 ms + 2 % of 4-15 s; ${N} requests`,
);
const outcomes: Outcome[] = [];
if (values.only !== 'naive') outcomes.push(await runClient(`sondage (RateLimiter, concurrency ${values.concurrency})`, requests, Number(values.concurrency), true, seed));
if (values.only !== 'sondage') outcomes.push(await runClient(`naive (fixed concurrency ${values['naive-concurrency']})`, requests, Number(values['naive-concurrency']), false, seed));

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
console.log('\nclient                                   admitted/min  of ceiling  steady  429 share  attempts  lost  wall s  ideal wall s');
const idealS = (N / ceilingPerMin) * 60;
for (const o of outcomes) {
  console.log(
    `${o.client.padEnd(40)} ${o.admittedPerMin.toFixed(1).padStart(12)}  ${pct(o.utilization).padStart(10)}  ${(Number.isNaN(o.steady) ? '-' : pct(o.steady)).padStart(6)}  ${pct(o.rateLimited / o.attempts).padStart(9)}  ${String(o.attempts).padStart(8)}  ${String(o.lost).padStart(4)}  ${o.makespanS.toFixed(1).padStart(6)}  ${idealS.toFixed(1).padStart(12)}`,
  );
}
console.log(
  '\nadmitted/min: requests the server accepted per minute, first to last admission; "of ceiling": the share of the binding limit used' +
    ' in that window, max(requests / RPM, admission tokens / TPM); steady: the same after the first minute (\'-\' for runs shorter than' +
    ' that); 429 share: attempts answered 429 over all attempts; lost: requests' +
    ' whose last attempt failed; wall s: start to last reply (includes the latency tail); ideal: N / min(RPM, TPM / mean cost).',
);
