/**
 * The GPU job's supervisor (lib/gpu/probeJob.ts) with a fake `vllm serve` on 127.0.0.1
 * (test/helpers/fakeVllm.mjs) started as the job starts vLLM: it waits for /health, gives up at
 * the startup timeout, tells a crash at start from a slow start, stops the worker on SIGTERM so it
 * commits, and maps every ending to the exit code AWS Batch's retry strategy reads.
 */
import { EventEmitter } from 'node:events';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_CODES, runProbeJob } from '../../lib/gpu/probeJob.js';
import type { JobLog, ServerSpec, SignalSource } from '../../lib/gpu/probeJob.js';
import { tempDir } from '../helpers/campaigns.js';
import { FAKE_VLLM, freePort } from '../helpers/gpu.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('probe-job'));
});
afterAll(() => cleanup());

const quiet = (): JobLog & { lines: string[] } => {
  const lines: string[] = [];
  const at = (level: string) => (m: string, f?: Record<string, unknown>) => void lines.push(`${level} ${m} ${JSON.stringify(f ?? {})}`);
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
};

async function server(env: Record<string, string>, startupTimeoutMs = 5000): Promise<ServerSpec & { port: number; logFile: string }> {
  const port = await freePort();
  const logFile = path.join(dir, `vllm-${port}.log`);
  return {
    port,
    logFile,
    command: process.execPath,
    args: [FAKE_VLLM, 'Qwen/Qwen3-8B', '--host', '127.0.0.1', '--port', String(port), '--served-model-name', 'Qwen/Qwen3-8B'],
    env: { ...process.env, FAKE_VLLM_LOG: logFile, ...env },
    healthUrl: `http://127.0.0.1:${port}/health`,
    startupTimeoutMs,
    pollMs: 50,
    stopGraceMs: 2000,
    output: new PassThrough().resume(),
  };
}

const fakeSignals = (): SignalSource & EventEmitter => new EventEmitter() as SignalSource & EventEmitter;

async function alive(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/health`).then(
    () => true,
    () => false,
  );
}

describe('the GPU job supervisor', () => {
  it('starts the server, waits for /health, runs the worker once it answers, then stops the server', async () => {
    const s = await server({ FAKE_VLLM_STARTUP_MS: '400' });
    let healthyWhenWorkStarted = false;
    const started = Date.now();

    const code = await runProbeJob({
      server: s,
      log: quiet(),
      signals: fakeSignals(),
      work: async () => {
        healthyWhenWorkStarted = (await fetch(`http://127.0.0.1:${s.port}/health`)).status === 200;
        return { pending: 0 };
      },
    });

    expect(code).toBe(EXIT_CODES.ok);
    expect(healthyWhenWorkStarted).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(await alive(s.port)).toBe(false);
    const first = JSON.parse((await readFile(s.logFile, 'utf8')).split('\n')[0]!) as { argv: string[] };
    expect(first.argv).toEqual(s.args.slice(1));
  });

  it('gives up at the startup timeout (retried: another host may do) and kills the server', async () => {
    const s = await server({ FAKE_VLLM_NEVER_HEALTHY: '1' }, 600);
    const log = quiet();
    let worked = false;

    const code = await runProbeJob({ server: s, log, signals: fakeSignals(), work: async () => ((worked = true), { pending: 0 }) });

    expect(code).toBe(EXIT_CODES.startupTimeout);
    expect(worked).toBe(false);
    expect(await alive(s.port)).toBe(false);
    expect(log.lines.join('\n')).toContain('did not become healthy in time');
  });

  it('a server that exits before it is healthy (out of memory) ends the job, not retried, with its last lines in the log', async () => {
    const s = await server({ FAKE_VLLM_EXIT_CODE: '1' });
    const log = quiet();

    const code = await runProbeJob({ server: s, log, signals: fakeSignals(), work: async () => ({ pending: 0 }) });

    expect(code).toBe(EXIT_CODES.serverExited);
    expect(log.lines.join('\n')).toContain('CUDA out of memory');
  });

  it('a command that does not exist is a server that exited', async () => {
    const s = await server({});
    const code = await runProbeJob({ server: { ...s, command: path.join(dir, 'no-such-vllm') }, log: quiet(), signals: fakeSignals(), work: async () => ({ pending: 0 }) });
    expect(code).toBe(EXIT_CODES.serverExited);
  });

  it('SIGTERM mid-shard aborts the worker signal; a worker that committed with items left exits to be retried', async () => {
    const s = await server({});
    const signals = fakeSignals();
    let aborted = false;

    const code = await runProbeJob({
      server: s,
      log: quiet(),
      signals,
      work: (signal) =>
        new Promise((resolve) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve({ pending: 7 });
          });
          setTimeout(() => signals.emit('SIGTERM'), 50);
        }),
    });

    expect(aborted).toBe(true);
    expect(code).toBe(EXIT_CODES.interrupted);
    expect(signals.listenerCount('SIGTERM')).toBe(0);
    expect(await alive(s.port)).toBe(false);
  });

  it('the deadline stops the worker as SIGTERM does; a SIGTERM after the shard finished changes nothing', async () => {
    const byDeadline = await runProbeJob({
      deadlineMs: 50,
      log: quiet(),
      signals: fakeSignals(),
      work: (signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve({ pending: 3 }))),
    });
    expect(byDeadline).toBe(EXIT_CODES.interrupted);

    const signals = fakeSignals();
    const finished = await runProbeJob({
      log: quiet(),
      signals,
      work: async (signal) => {
        signals.emit('SIGTERM');
        return { pending: signal.aborted ? 0 : 1 };
      },
    });
    expect(finished).toBe(EXIT_CODES.ok);
  });

  it.each([
    ['a worker error (S3, DynamoDB): retried', new Error('socket hang up'), EXIT_CODES.failed],
    ['a configuration error: not retried', new TypeError('bad manifest'), EXIT_CODES.config],
  ])('%s', async (_name, error, expected) => {
    const code = await runProbeJob({
      log: quiet(),
      signals: fakeSignals(),
      isConfigError: (err) => err instanceof TypeError,
      work: async () => {
        throw error;
      },
    });
    expect(code).toBe(expected);
  });

  it('a server that dies mid-shard stops the worker; the job fails to be retried', async () => {
    const s = await server({ FAKE_VLLM_DIE_AFTER: '1' });

    const code = await runProbeJob({
      server: s,
      log: quiet(),
      signals: fakeSignals(),
      work: async (signal) => {
        const body = { model: 'Qwen/Qwen3-8B', messages: [{ role: 'user', content: 'hi' }] };
        await fetch(`http://127.0.0.1:${s.port}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(body) });
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        return { pending: 4 };
      },
    });

    expect(code).toBe(EXIT_CODES.failed);
  });

  it('out of budget with items left: done, a retry could not help', async () => {
    const signals = fakeSignals();
    const code = await runProbeJob({ log: quiet(), signals, work: async () => ({ pending: 9, stopped: 'budget' }) });
    expect(code).toBe(EXIT_CODES.ok);
  });
});
