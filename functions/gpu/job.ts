/**
 * One AWS Batch GPU job (an array child) over its dependencies: read the environment the job
 * definition and the submission set (GPU_ENV), load the uploaded campaign, fetch the model's
 * weights from the bucket, and hand the rest to lib: the server's life and the exit code to
 * lib/gpu/probeJob.ts, the shard to lib/run/runGpuShard.ts. Tests run it with local stores and a
 * fake vLLM; entry.ts builds the AWS ones.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { GPU_ENV } from '../../lib/config/index.js';
import { executionNameProblem, executionToken } from '../../lib/config/pipeline.js';
import { GPU_JOB } from '../../lib/config/sizing.js';
import type { ModelEntry } from '../../lib/design/campaign.js';
import { CampaignFileError, SondageError } from '../../lib/errors.js';
import { chargedSpan, preContainerSeconds, recordChargedUntil } from '../../lib/gpu/instanceClock.js';
import type { InstanceClock } from '../../lib/gpu/instanceClock.js';
import { instanceBound, instanceCharge, instanceReservationId } from '../../lib/gpu/instanceTime.js';
import { EXIT_CODES, runProbeJob } from '../../lib/gpu/probeJob.js';
import type { ExitCode, JobLog, ServerSpec, SignalSource } from '../../lib/gpu/probeJob.js';
import { watchSpotNotice } from '../../lib/gpu/spotNotice.js';
import { VLLM_HOST, VLLM_PORT, vllmBaseUrl, vllmServeArgs } from '../../lib/gpu/vllmArgs.js';
import { downloadCampaign } from '../../lib/run/campaignInput.js';
import type { RunContext } from '../../lib/run/context.js';
import { ManifestError, runGpuShard } from '../../lib/run/runGpuShard.js';
import type { BlobStore, Ledger } from '../../lib/store/types.js';
import { withoutProviderKeys } from '../shared/secrets.js';

/** What a job is told through its environment. */
export interface GpuJobEnv {
  readonly campaign: string;
  readonly execution: string;
  readonly manifestKey: string;
  readonly model: string;
  /** AWS_BATCH_JOB_ARRAY_INDEX in an array child, else GPU_ENV.shardIndex: the child's group of shards. */
  readonly index: number;
  readonly retryFailed: boolean;
  readonly deadlineSeconds?: number;
  /** AWS_BATCH_JOB_ID and AWS_BATCH_JOB_ATTEMPT: part names and reservation ids carry them. */
  readonly jobId: string;
  readonly attempt: string;
  readonly vllmCommand: string;
  /** The port vLLM listens on (GPU_ENV.vllmPort; default 8000). */
  readonly vllmPort?: number;
}

/** A configuration error of the job itself: exit `config`, not retried. */
export class GpuJobConfigError extends SondageError {
  constructor(message: string) {
    super(message);
    this.name = 'GpuJobConfigError';
  }
}


/**
 * The job's environment, every problem named at once.
 * @throws GpuJobConfigError naming the variables
 */
export function parseGpuEnv(env: NodeJS.ProcessEnv): GpuJobEnv {
  const problems: string[] = [];
  const need = (name: string, rule?: RegExp | ((v: string) => boolean)): string => {
    const v = env[name];
    if (!v) problems.push(`${name} is not set (the plan's job environment sets it)`);
    else if (rule && !(typeof rule === 'function' ? rule(v) : rule.test(v))) problems.push(`${name}=${JSON.stringify(v)} is not a valid name`);
    return v ?? '';
  };
  const campaign = need(GPU_ENV.campaign, /^[a-z0-9][a-z0-9._-]*$/);
  const execution = need(GPU_ENV.execution, (v) => executionNameProblem(v) === undefined);
  const manifestKey = need(GPU_ENV.manifestKey);
  const model = need(GPU_ENV.model);
  const rawIndex = env.AWS_BATCH_JOB_ARRAY_INDEX ?? env[GPU_ENV.shardIndex];
  const index = Number(rawIndex);
  if (rawIndex === undefined || rawIndex === '' || !Number.isInteger(index) || index < 0) {
    problems.push(`neither AWS_BATCH_JOB_ARRAY_INDEX nor ${GPU_ENV.shardIndex} holds a shard index (got ${JSON.stringify(rawIndex)})`);
  }
  const retry = env[GPU_ENV.retryFailed] ?? 'false';
  if (retry !== 'true' && retry !== 'false') problems.push(`${GPU_ENV.retryFailed} must be true or false, got ${JSON.stringify(retry)}`);
  const rawDeadline = env[GPU_ENV.deadlineSeconds];
  const deadline = rawDeadline === undefined || rawDeadline === '' ? undefined : Number(rawDeadline);
  if (deadline !== undefined && !(Number.isFinite(deadline) && deadline > 0)) problems.push(`${GPU_ENV.deadlineSeconds} must be a number of seconds, got ${JSON.stringify(rawDeadline)}`);
  const rawPort = env[GPU_ENV.vllmPort];
  const port = rawPort === undefined || rawPort === '' ? undefined : Number(rawPort);
  if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) problems.push(`${GPU_ENV.vllmPort} must be a TCP port, got ${JSON.stringify(rawPort)}`);
  if (problems.length > 0) throw new GpuJobConfigError(`GPU job environment: ${problems.join('; ')}`);
  return {
    campaign,
    execution,
    manifestKey,
    model,
    index,
    retryFailed: retry === 'true',
    ...(deadline !== undefined ? { deadlineSeconds: deadline } : {}),
    jobId: env.AWS_BATCH_JOB_ID ?? 'local',
    attempt: env.AWS_BATCH_JOB_ATTEMPT ?? '1',
    vllmCommand: env[GPU_ENV.vllmCommand] || 'vllm',
    ...(port !== undefined ? { vllmPort: port } : {}),
  };
}

export interface GpuJobDeps {
  readonly store: BlobStore;
  ledgerFor(runId: string): Ledger;
  /** Puts the provider secret's keys (HF_TOKEN among them) into process.env. */
  loadKeys(): Promise<void>;
  recordFailure(failure: { campaign: string; execution: string; at: string; error: string; cause: string }): Promise<void>;
  readonly tmpDir: string;
  /** Copies every object under a `weights/` prefix of the bucket into a local folder. */
  downloadWeights(prefix: string, dir: string): Promise<void>;
  redact(message: string): string;
  readonly log: JobLog;
  readonly signals?: SignalSource;
  /** The instance metadata service read for the Spot notice (default AWS_EC2_METADATA_SERVICE_ENDPOINT or 169.254.169.254). */
  readonly metadataEndpoint?: string;
  /** Where vLLM's own output goes (default stderr). */
  readonly serverOutput?: NodeJS.WritableStream;
  /** When the container started (Date.now() ms; default when runGpuJob is called): the attempt's instance time counts from it. */
  readonly startedAtMs?: number;
  /**
   * The host's uptime and the instance folder (fromEnv.ts: os.uptime() and GPU_ENV.instanceDir), from
   * which the time before the container is measured (lib/gpu/instanceClock.ts); absent: assumed.
   */
  readonly instanceClock?: InstanceClock;
  /** Publishes the campaign's spend once the attempt's instance time is settled (fromEnv.ts: CloudWatch metrics). */
  publishSpend?(spend: GpuSpend): Promise<void>;
}

/** One attempt's instance time, as settled in the budget. */
export interface GpuSpend {
  readonly campaign: string;
  readonly model: string;
  /** Seconds of the whole instance charged: from what it had been charged up to (measured on the instance, or assumed) to the attempt's end and Batch's idle tail. */
  readonly seconds: number;
  readonly usd: number;
  /** The ledger it was settled in (its budget holds the campaign's spend, GPU and API together). */
  readonly ledger: Ledger;
}

function entryOf(ctx: RunContext, id: string): ModelEntry {
  const entry = [...ctx.campaign.models, ...Object.values(ctx.campaign.roles)].find((e) => e.id === id);
  if (!entry) throw new GpuJobConfigError(`GPU job: campaign ${ctx.campaign.name} has no model ${JSON.stringify(id)}`);
  if (entry.runs_on !== 'gpu' || !entry.gpu) throw new GpuJobConfigError(`GPU job: model ${id} of campaign ${ctx.campaign.name} does not run on a GPU`);
  return entry;
}

const isConfigError = (err: unknown): boolean => err instanceof GpuJobConfigError || err instanceof ManifestError || err instanceof CampaignFileError;

/**
 * Runs the job to its exit code. Preparation (keys, campaign, weights) fails as `config` when the
 * inputs are wrong, `failed` (retried) when a service is.
 */
export async function runGpuJob(env: GpuJobEnv, deps: GpuJobDeps): Promise<ExitCode> {
  const startedAt = deps.startedAtMs ?? Date.now();
  const { log } = deps;
  const scratch = join(deps.tmpDir, 'sondage-gpu', executionToken(`${env.execution}-${env.index}-${env.attempt}`));
  const ledger = deps.ledgerFor(env.execution);
  const reservationId = instanceReservationId(env.execution, env.jobId, env.attempt);
  let ctx: RunContext;
  let entry: ModelEntry;
  let weightsDir: string | undefined;
  let reserved = false;
  // The instance's time before this container: its boot and image pull, or the gap since the last job on it.
  const pre = await preContainerSeconds(deps.instanceClock, startedAt);
  log.info('GPU instance time before the container', { seconds: Math.round(pre.seconds), measured: pre.measured, ...(pre.from ? { from: pre.from } : {}) });
  /** Settles the attempt's measured instance time (the reservation, or as spend where none was made) and publishes the spend. */
  const settle = async (gpu: NonNullable<ModelEntry['gpu']>): Promise<void> => {
    const end = Date.now();
    // From what the instance was charged up to (read again: a neighbour may have charged past it) to the end and Batch's idle tail.
    const span = await chargedSpan(deps.instanceClock, startedAt, pre, end);
    const charge = instanceCharge(gpu, span.seconds);
    try {
      await ledger.settle(env.campaign, reservationId, charge.usd);
      log.info('GPU instance time settled', { seconds: Math.round(charge.seconds), usd: charge.usd, reserved, ...(span.from ? { from: span.from } : {}) });
      await deps.publishSpend?.({ campaign: env.campaign, model: env.model, seconds: charge.seconds, usd: charge.usd, ledger });
    } catch (err) {
      // The reservation, if any, stays held: counted against the cap, billed as possibly spent by the next plan.
      log.error('GPU instance time not settled; its reservation stays counted', { error: deps.redact(String(err)) });
    }
    // The next job on this instance is charged from here (its reservation, if unsettled, covers up to here too).
    await recordChargedUntil(deps.instanceClock, span.untilMs).catch((err: unknown) => log.error('instance charge end not recorded; the next job here counts from the point recorded before, or from the boot', { error: String(err) }));
  };
  try {
    await deps.loadKeys();
    ctx = await downloadCampaign(deps.store, env.campaign, join(scratch, 'input'));
    entry = entryOf(ctx, env.model);
    // The attempt's most (the job definition's timeout, at on-demand) is held before anything is paid for.
    const bound = instanceBound(entry.gpu!, GPU_JOB.attemptTimeoutSeconds, pre.seconds);
    reserved = await ledger.reserve(env.campaign, reservationId, bound.usd);
    if (!reserved) {
      log.error('the budget cannot hold this attempt\'s instance time; not started (the items stay pending)', { boundUsd: bound.usd, boundHours: bound.seconds / 3600 });
      await settle(entry.gpu!);
      return EXIT_CODES.ok;
    }
    const prefix = entry.gpu!.weights_prefix;
    if (prefix !== undefined && entry.provider !== 'simulated') {
      weightsDir = join(scratch, 'weights');
      const started = Date.now();
      await deps.downloadWeights(prefix, weightsDir);
      log.info('weights downloaded', { prefix, seconds: Math.round((Date.now() - started) / 1000) });
    }
  } catch (err) {
    const config = isConfigError(err) || (err instanceof SondageError && /no .*campaign\.yaml in the bucket|uploaded as/.test(err.message));
    log.error(config ? 'the job is misconfigured; not retried' : 'the job could not prepare; Batch retries it', { error: deps.redact(String(err)) });
    if (reserved) await settle(entry!.gpu!);
    return config ? EXIT_CODES.config : EXIT_CODES.failed;
  }
  const gpu = entry.gpu!;
  const port = env.vllmPort ?? VLLM_PORT;
  const server: ServerSpec | undefined =
    entry.provider === 'simulated'
      ? undefined
      : {
          command: env.vllmCommand,
          args: ['serve', ...vllmServeArgs({ model: entry.model, ...(weightsDir ? { weightsDir } : {}), gpu, port })],
          // vLLM may run a model's own code (trust_remote_code): it gets the Hugging Face token, not the provider keys.
          env: { ...withoutProviderKeys(process.env), HF_HOME: join(scratch, 'hf') },
          healthUrl: `http://${VLLM_HOST}:${port}/health`,
          startupTimeoutMs: gpu.startup_timeout_s * 1000,
          ...(deps.serverOutput ? { output: deps.serverOutput } : {}),
        };
  // Part names and the lease carry the invocation, so it is unique per process, not only per
  // attempt: an attempt started again on a host that kept its /tmp (by hand, or a test's machine)
  // adopts the journals the first process left and adds its own parts beside that process's
  // committed ones. Named per attempt alone, its first part took the name of the first process's
  // part 00000, overwrote the committed replies in the bucket and failed on the ledger's commit.
  const invocation = executionToken(`${env.execution}-gpu-${env.jobId}-${env.attempt}-${randomBytes(3).toString('hex')}`);
  const deadlineSeconds = env.deadlineSeconds ?? GPU_JOB.attemptTimeoutSeconds - GPU_JOB.deadlineMarginSeconds;
  log.info('GPU job', { campaign: env.campaign, execution: env.execution, model: env.model, index: env.index, attempt: env.attempt, instance: gpu.instance_type });
  const probe = (): Promise<ExitCode> =>
    runProbeJob({
      ...(server ? { server } : {}),
      // From the container's start, as Batch's timeout counts (weights and the campaign took some already).
      deadlineMs: Math.max(0, deadlineSeconds * 1000 - (Date.now() - startedAt)),
      log,
      ...(deps.signals ? { signals: deps.signals } : {}),
      // On Spot, the two-minute notice stops the worker as SIGTERM would: Batch sends none before the instance goes.
      ...(gpu.capacity === 'spot'
        ? {
            watchInterruption: (onWarning: (what: string) => void, until: AbortSignal) =>
              void watchSpotNotice({
                until,
                ...(deps.metadataEndpoint !== undefined ? { endpoint: deps.metadataEndpoint } : {}),
                onNotice: (n) => onWarning(`Spot interruption notice (${n.action} at ${n.time})`),
                onUnavailable: (why) => log.info('Spot notice not watched', { why }),
              }),
          }
        : {}),
      isConfigError,
      work: async (signal) => {
        const controller = new AbortController();
        if (signal.aborted) controller.abort();
        else signal.addEventListener('abort', () => controller.abort(), { once: true });
        const out = await runGpuShard(
          ctx,
          { campaign: env.campaign, execution: env.execution, manifestKey: env.manifestKey, index: env.index, model: env.model, retryFailed: env.retryFailed },
          {
            store: deps.store,
            ledger,
            scratch: join(scratch, 'work'),
            log,
            recordFailure: deps.recordFailure,
            redact: deps.redact,
            deadline: { signal: controller.signal, check: () => {}, abort: () => controller.abort() },
            // After a runner error the worker waits at most this for its calls to end (Batch gives 30 s after SIGTERM;
            // a Spot notice, two minutes).
            remainingMs: () => 25_000,
            invocation,
            inFlight: gpu.in_flight,
            ...(server ? { baseUrl: vllmBaseUrl(port) } : {}),
          },
        );
        log.info('shards', { shards: out.shards.length, done: out.done, failed: out.failed, pending: out.pending, costUsd: out.costUsd });
        return { pending: out.pending, ...(out.stopped ? { stopped: out.stopped } : {}) };
      },
    });
  try {
    return await probe();
  } finally {
    // Every attempt that got this far settles what it measured, whatever its exit.
    await settle(gpu);
  }
}
