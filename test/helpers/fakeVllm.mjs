#!/usr/bin/env node
/**
 * A stand-in for `vllm serve` on 127.0.0.1, started by the GPU job's supervisor in the tests as
 * it starts vLLM: same command line (`serve <model> --host H --port P --served-model-name M …`), /health
 * (503 while "loading", then 200), and /v1/chat/completions in vLLM's wire format. Replies are a
 * pure function of the request, so two routes asking the same prompt get the same reply:
 * - with `logprob_token_ids`: one token, every asked id with a logprob from a hash of the prompt
 *   and the id (tokens named `token_id:<id>`, as vLLM's return_tokens_as_token_ids gives them);
 * - otherwise a short answer text from a hash of the prompt.
 *
 * Behaviour from the environment (numbers in ms):
 *   FAKE_VLLM_STARTUP_MS   /health answers 503 for this long (default 0)
 *   FAKE_VLLM_NEVER_HEALTHY=1  /health never answers 200
 *   FAKE_VLLM_EXIT_CODE    write a CUDA out-of-memory line and exit with this code at once
 *   FAKE_VLLM_LATENCY_MS   each completion answers after this long (default 0)
 *   FAKE_VLLM_DIE_AFTER    exit(1) after answering this many completions
 *   FAKE_VLLM_HOLD_AFTER   answer this many completions, then hold every later one unanswered (a
 *                          test then acts while a call is surely in flight, with no timing guess)
 *   FAKE_VLLM_LOG          append one JSON line per event: {argv}, then {body} per completion
 * GET /stats gives { completions, maxInFlight, held }.
 */
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Buffer } from 'node:buffer';
import { setTimeout } from 'node:timers';

// `vllm serve <model> …`: the subcommand first, as the job runs it.
const argv = process.argv.slice(2)[0] === 'serve' ? process.argv.slice(3) : process.argv.slice(2);
const flag = (name, fallback) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : fallback;
};
const env = (name, fallback) => (process.env[name] === undefined || process.env[name] === '' ? fallback : process.env[name]);
const log = (event) => {
  const file = env('FAKE_VLLM_LOG');
  if (file) appendFileSync(file, `${JSON.stringify(event)}\n`);
};
log({ argv, pid: process.pid, hfToken: Boolean(process.env.HF_TOKEN), hfHome: process.env.HF_HOME ?? null, apiKeys: Object.keys(process.env).filter((k) => k.endsWith('_API_KEY')) });

if (env('FAKE_VLLM_EXIT_CODE') !== undefined) {
  process.stderr.write('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n');
  process.exit(Number(env('FAKE_VLLM_EXIT_CODE')));
}

const served = flag('--served-model-name', argv[0]);
const startedAt = Date.now();
const startupMs = Number(env('FAKE_VLLM_STARTUP_MS', '0'));
const latencyMs = Number(env('FAKE_VLLM_LATENCY_MS', '0'));
const dieAfter = env('FAKE_VLLM_DIE_AFTER') === undefined ? Infinity : Number(env('FAKE_VLLM_DIE_AFTER'));
const holdAfter = env('FAKE_VLLM_HOLD_AFTER') === undefined ? Infinity : Number(env('FAKE_VLLM_HOLD_AFTER'));
let completions = 0;
let answering = 0;
let held = 0;
let inFlight = 0;
let maxInFlight = 0;

const hash = (text) => createHash('sha256').update(text).digest();
const promptOf = (body) => (body.messages ?? []).map((m) => `${m.role}:${m.content}`).join('\n');

function answer(body) {
  const prompt = promptOf(body);
  const h = hash(prompt);
  const usage = { prompt_tokens: Math.ceil(prompt.length / 4), completion_tokens: 1, total_tokens: Math.ceil(prompt.length / 4) + 1 };
  const ids = body.logprob_token_ids;
  if (Array.isArray(ids) && ids.length > 0) {
    const entries = ids.map((id) => [id, -(hash(`${prompt}#${id}`)[0] / 32) - 0.01]);
    const best = [...entries].sort((a, b) => b[1] - a[1])[0];
    return {
      text: 'True',
      finish_reason: 'length',
      usage,
      logprobs: {
        content: [{ token: `token_id:${best[0]}`, logprob: best[1], bytes: null, top_logprobs: entries.map(([id, logprob]) => ({ token: `token_id:${id}`, logprob, bytes: null })) }],
      },
    };
  }
  const letters = ['A', 'B', 'C', 'D'];
  const text = `${letters[h[0] % 4]}. Answer ${h.readUInt16BE(1)}.`;
  return { text, finish_reason: 'stop', usage: { ...usage, completion_tokens: 4, total_tokens: usage.prompt_tokens + 4 }, logprobs: null };
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const send = (status, body) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/health') {
      const ready = env('FAKE_VLLM_NEVER_HEALTHY') !== '1' && Date.now() - startedAt >= startupMs;
      res.writeHead(ready ? 200 : 503);
      res.end();
      return;
    }
    if (req.method === 'GET' && req.url === '/stats') return send(200, { completions, maxInFlight, held });
    if (req.method === 'POST' && req.url === '/v1/chat/completions') {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      if (body.model !== served) return send(404, { object: 'error', message: `The model \`${body.model}\` does not exist.`, type: 'NotFoundError', code: 404 });
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      log({ body });
      if (answering >= holdAfter) {
        held++;
        return;
      }
      answering++;
      setTimeout(() => {
        inFlight--;
        const a = answer(body);
        completions++;
        send(200, {
          id: `chatcmpl-${completions}`,
          object: 'chat.completion',
          created: 1_764_489_600,
          model: served,
          choices: [{ index: 0, message: { role: 'assistant', content: a.text, tool_calls: [], reasoning_content: null }, logprobs: a.logprobs, finish_reason: a.finish_reason, stop_reason: null }],
          usage: a.usage,
        });
        if (completions >= dieAfter) setTimeout(() => process.exit(1), 5);
      }, latencyMs);
      return;
    }
    send(404, { object: 'error', message: `no route ${req.method} ${req.url}` });
  });
});

server.listen(Number(flag('--port', '8000')), flag('--host', '127.0.0.1'));
// Like vLLM's server, gone at once on SIGTERM (clients' idle keep-alive connections do not hold it).
process.on('SIGTERM', () => {
  log({ stopped: true, completions, maxInFlight });
  server.closeAllConnections();
  process.exit(0);
});
