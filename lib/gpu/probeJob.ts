/**
 * The life of one GPU job (batch-images/probe → functions/gpu/entry.ts): start the model's vLLM
 * OpenAI-compatible server, wait for its /health with a timeout, run the worker over the job's
 * shard, stop the server, and exit with a code AWS Batch's retry strategy reads (EXIT_CODES).
 *
 * SIGTERM (Batch stopping the job: TerminateJob or the attempt timeout, with 30 s before SIGKILL),
 * the Spot interruption notice (two minutes before EC2 takes the instance back; Batch sends no
 * SIGTERM then, spotNotice.ts) and the attempt's own deadline abort the worker's signal: calls in
 * flight are cut, the worker commits what it has journaled, and the job exits `interrupted` to be
 * retried, after which the worker asks only what is still pending. The server is stopped last, so
 * nothing in flight loses it before the worker has let go.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import type { ShardLog } from '../run/shardRunnerDeps.js';
import { sleep } from '../run/sleep.js';

/**
 * How a job ends; the job definition's retry strategy (infra/constructs/GpuBatch.ts) maps them:
 * `config` and `serverExited` end the job (a retry would fail the same way), every other failure
 * is retried, and `interrupted` always is.
 */
export const EXIT_CODES = {
  /** The shard is done (or the budget is spent: a retry could not help). */
  ok: 0,
  /** The worker failed (S3, DynamoDB, a bug), or the server died mid-shard: retried. */
  failed: 1,
  /** The job's configuration is wrong (manifest, campaign, model): not retried. */
  config: 2,
  /** vLLM did not answer /health within the startup timeout: retried (another host may do). */
  startupTimeout: 3,
  /** vLLM exited before it was healthy (out of memory, bad weights, bad flags): not retried. */
  serverExited: 4,
  /** Stopped by SIGTERM or the deadline with items left, what it had committed (EX_TEMPFAIL): retried. */
  interrupted: 75,
} as const;
export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

/** Exit codes AWS Batch must not retry (the job definition's EXIT rules): a retry would fail the same way. */
export const NOT_RETRIED_EXIT_CODES: readonly ExitCode[] = [EXIT_CODES.config, EXIT_CODES.serverExited];

/** Where the job logs: the worker's log, since the job hands it on to the shards it runs (runGpuShard). */
export type JobLog = ShardLog;

export interface ServerSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  /** `http://127.0.0.1:8000/health`: 200 once the model is loaded. */
  readonly healthUrl: string;
  readonly startupTimeoutMs: number;
  /** Between health probes (default 1 s). */
  readonly pollMs?: number;
  /** SIGTERM, then SIGKILL after this long (default 20 s). */
  readonly stopGraceMs?: number;
  /** Where the server's stdout and stderr go (default this process's stderr, hence the job's log). */
  readonly output?: NodeJS.WritableStream;
}

/** What the worker reports: items left pending, and whether the budget stopped it. */
export interface WorkResult {
  readonly pending: number;
  readonly stopped?: 'budget';
}

/** Where SIGTERM comes from: `process` in the job, an emitter in tests. */
export interface SignalSource {
  on(signal: 'SIGTERM' | 'SIGINT', listener: () => void): unknown;
  off(signal: 'SIGTERM' | 'SIGINT', listener: () => void): unknown;
}

export interface ProbeJobOptions {
  /** The model's server; absent for a simulated model, which needs none. */
  readonly server?: ServerSpec;
  /** The worker over the job's shard; stops when `signal` aborts, after committing. */
  work(signal: AbortSignal): Promise<WorkResult>;
  /** Errors that retrying cannot fix (a bad manifest, campaign or model): exit `config`. */
  isConfigError?(err: unknown): boolean;
  /** Stop the worker this long after the start (before the attempt's timeout). */
  readonly deadlineMs?: number;
  readonly signals?: SignalSource;
  /**
   * Watches for a warning that the instance is going away (the Spot notice): `onWarning` stops the
   * worker as SIGTERM does. Called once at the start; the watch ends when `until` aborts.
   */
  watchInterruption?(onWarning: (what: string) => void, until: AbortSignal): void;
  readonly log: JobLog;
}

interface Running {
  readonly child: ChildProcess;
  /** Aborts when the server exits (or cannot be started). */
  readonly died: AbortSignal;
  readonly exited: Promise<void>;
  /** The last lines the server wrote, for the message when it dies. */
  tail(): string;
}

const TAIL_BYTES = 4096;

function startServer(spec: ServerSpec, log: JobLog): Running {
  const died = new AbortController();
  const child = spawn(spec.command, [...spec.args], { env: spec.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  const out = spec.output ?? process.stderr;
  const keep = (chunk: Buffer): void => {
    out.write(chunk);
    tail = (tail + chunk.toString('utf8')).slice(-TAIL_BYTES);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      if (!died.signal.aborted) log.warn('vLLM server exited', { code, signal });
      died.abort(new Error(`vLLM exited (${signal ?? `code ${String(code)}`})`));
      resolve();
    });
    child.once('error', (err) => {
      log.error('vLLM server could not be started', { command: spec.command, error: err.message });
      died.abort(err);
      resolve();
    });
  });
  log.info('vLLM server starting', { command: spec.command, args: spec.args, pid: child.pid });
  return { child, died: died.signal, exited, tail: () => tail };
}

/**
 * Polls the health URL until it answers 200, the server exits, `stop` aborts or the startup
 * timeout passes.
 */
export async function waitForHealth(
  spec: Pick<ServerSpec, 'healthUrl' | 'startupTimeoutMs' | 'pollMs'>,
  died: AbortSignal,
  stop: AbortSignal,
): Promise<'healthy' | 'timeout' | 'exited' | 'aborted'> {
  const start = Date.now();
  const either = AbortSignal.any([died, stop]);
  // Probes 100 ms apart at first, doubling up to pollMs: a small model is up in seconds, a large one in minutes.
  let wait = Math.min(100, spec.pollMs ?? 1000);
  for (;;) {
    if (died.aborted) return 'exited';
    if (stop.aborted) return 'aborted';
    if (Date.now() - start > spec.startupTimeoutMs) return 'timeout';
    try {
      const res = await fetch(spec.healthUrl, { signal: AbortSignal.any([either, AbortSignal.timeout(2000)]) });
      await res.arrayBuffer().catch(() => undefined);
      if (res.status === 200) return 'healthy';
    } catch {
      // Not listening yet (ECONNREFUSED), or a probe cut short: try again.
    }
    await sleep(Math.min(wait, Math.max(0, spec.startupTimeoutMs - (Date.now() - start)) + 1), either);
    wait = Math.min(wait * 2, spec.pollMs ?? 1000);
  }
}

async function stopServer(s: Running, graceMs: number, log: JobLog): Promise<void> {
  if (s.died.aborted) return s.exited;
  s.child.kill('SIGTERM');
  const killed = await Promise.race([s.exited.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), graceMs).unref())]);
  if (killed) {
    log.warn('vLLM server ignored SIGTERM; killing it', { graceMs });
    s.child.kill('SIGKILL');
  }
  await s.exited;
}

/**
 * Runs one GPU job to its exit code.
 * @example process.exitCode = await runProbeJob({ server, work: (signal) => runGpuShard(…), log })
 */
export async function runProbeJob(o: ProbeJobOptions): Promise<ExitCode> {
  const { log } = o;
  const signals: SignalSource = o.signals ?? process;
  const stop = new AbortController();
  const onSignal = (name: 'SIGTERM' | 'SIGINT') => () => {
    if (stop.signal.aborted) return;
    log.warn(`${name}: stopping the worker; it commits what it has`, {});
    stop.abort(new Error(name));
  };
  const onTerm = onSignal('SIGTERM');
  const onInt = onSignal('SIGINT');
  signals.on('SIGTERM', onTerm);
  signals.on('SIGINT', onInt);
  const finished = new AbortController();
  o.watchInterruption?.((what) => {
    if (stop.signal.aborted) return;
    log.warn(`${what}: stopping the worker; it commits what it has`, {});
    stop.abort(new Error(what));
  }, finished.signal);
  const deadline =
    o.deadlineMs === undefined
      ? undefined
      : setTimeout(() => {
          log.warn('deadline reached: stopping the worker before the attempt times out', { deadlineMs: o.deadlineMs });
          stop.abort(new Error('deadline'));
        }, o.deadlineMs);
  deadline?.unref();
  let server: Running | undefined;
  try {
    if (o.server) {
      server = startServer(o.server, log);
      const started = Date.now();
      const ready = await waitForHealth(o.server, server.died, stop.signal);
      if (ready === 'exited') {
        log.error('vLLM exited before it was healthy; not retried', { tail: server.tail() });
        return EXIT_CODES.serverExited;
      }
      if (ready === 'timeout') {
        log.error('vLLM did not become healthy in time', { startupTimeoutMs: o.server.startupTimeoutMs, tail: server.tail() });
        return EXIT_CODES.startupTimeout;
      }
      if (ready === 'aborted') return EXIT_CODES.interrupted;
      log.info('vLLM server healthy', { seconds: Math.round((Date.now() - started) / 1000) });
    }
    const signal = server ? AbortSignal.any([stop.signal, server.died]) : stop.signal;
    let result: WorkResult;
    try {
      result = await o.work(signal);
    } catch (err) {
      if (o.isConfigError?.(err)) {
        log.error('the job is misconfigured; not retried', { error: String(err) });
        return EXIT_CODES.config;
      }
      log.error('the worker failed; Batch retries the job', { error: String(err) });
      return EXIT_CODES.failed;
    }
    log.info('shard run', { ...result });
    if (server?.died.aborted && !stop.signal.aborted) {
      log.error('vLLM exited during the shard; what was answered is committed, the rest is retried', { pending: result.pending, tail: server.tail() });
      return result.pending > 0 ? EXIT_CODES.failed : EXIT_CODES.ok;
    }
    if (result.pending > 0 && stop.signal.aborted && result.stopped !== 'budget') return EXIT_CODES.interrupted;
    return EXIT_CODES.ok;
  } finally {
    finished.abort();
    if (deadline) clearTimeout(deadline);
    signals.off('SIGTERM', onTerm);
    signals.off('SIGINT', onInt);
    if (server) await stopServer(server, o.server?.stopGraceMs ?? 20_000, log);
  }
}
