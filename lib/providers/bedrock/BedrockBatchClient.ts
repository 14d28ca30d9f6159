import { createHash, randomUUID } from 'node:crypto';
import {
  BedrockClient,
  CreateModelInvocationJobCommand,
  GetModelInvocationJobCommand,
  ListModelInvocationJobsCommand,
  StopModelInvocationJobCommand,
} from '@aws-sdk/client-bedrock';
import type { GetModelInvocationJobCommandOutput } from '@aws-sdk/client-bedrock';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { GenerateRequest } from '../types.js';
import type { BatchClient, BatchHandle, BatchItemResult, BatchLimits, BatchLookup, BatchLookupResult, BatchPhase, BatchRequest, BatchState } from '../batchTypes.js';
import { ProviderCallError } from '../errors.js';
import { classifyStatus } from '../sdkErrors.js';
import { splitBatch } from '../splitBatch.js';
import { completeResults } from '../openai/OpenAIBatchClient.js';
import { awsClientConfig, bedrockErrorContext } from './BedrockConverseProvider.js';
import type { BedrockConnection } from './BedrockConverseProvider.js';
import { toBedrockCallError } from './bedrockErrors.js';
import type { BedrockErrorContext } from './bedrockErrors.js';
import { fromWireResponse, settingsSent, toWireRequest } from './converseWire.js';

import { BEDROCK_BATCH_LIMITS, BEDROCK_BATCH_MIN_RECORDS } from '../batchLimits.js';

export { BEDROCK_BATCH_LIMITS, BEDROCK_BATCH_MIN_RECORDS };

/** A job submitted this long before an intent's time may still be its own (clock skew). */
const CLOCK_SLACK_MS = 2_000;

/** Where a model's batch jobs keep their files, and the service role Bedrock reads and writes them with. */
export interface BedrockBatchSettings {
  /** `s3://bucket/prefix`: each job writes `<prefix>/<job name>/input.jsonl` and reads back `<prefix>/<job name>/output/`. */
  readonly s3Uri: string;
  /** The service role Bedrock assumes to read the input and write the output (bedrock.amazonaws.com trusts it). */
  readonly roleArn: string;
}

/**
 * A record's id from its place in the submission: `R` and ten digits, the 11-character
 * alphanumeric form Bedrock's documentation gives. Item ids never travel as record ids, so their
 * characters need not fit Bedrock's rule; the place maps back through the handle's `customIds`.
 */
export function recordIdOf(index: number): string {
  return `R${String(index).padStart(10, '0')}`;
}

function indexOfRecord(recordId: unknown): number | undefined {
  if (typeof recordId !== 'string' || !/^R\d{10}$/.test(recordId)) return undefined;
  return Number(recordId.slice(1));
}

/** One input line of a `Converse` job: the record id and the same body as the synchronous call. Pure: exported for tests. */
export function toBatchRecord(r: BatchRequest, index: number, provider: string): { recordId: string; modelInput: ReturnType<typeof toWireRequest> } {
  return { recordId: recordIdOf(index), modelInput: toWireRequest(r.request, provider) };
}

/**
 * One output line: `modelOutput` (a Converse response) through the synchronous mapping, or
 * `error` classified by its HTTP-like `errorCode` (429 and 5xx re-queued, 4xx permanent). A line
 * whose record id is not one of the handle's places is ignored. Pure: exported for tests.
 */
export function fromBatchRecord(line: unknown, handle: BatchHandle): BatchItemResult | undefined {
  if (line === null || typeof line !== 'object') return undefined;
  const { recordId, modelOutput, error } = line as { recordId?: unknown; modelOutput?: unknown; error?: { errorCode?: unknown; errorMessage?: unknown } };
  const index = indexOfRecord(recordId);
  const customId = index === undefined ? undefined : handle.customIds[index];
  if (customId === undefined) return undefined;
  const provider = handle.provider;
  if (error !== undefined && error !== null) {
    const code = typeof error.errorCode === 'number' ? error.errorCode : Number(error.errorCode);
    const { errorClass, retryable } = Number.isFinite(code) ? classifyStatus(code, undefined) : { errorClass: 'http_error' as const, retryable: false };
    return { customId, ok: false, errorClass, retryable, message: `${provider}: batch record ${String(recordId)} error ${String(error.errorCode)}: ${String(error.errorMessage ?? '').slice(0, 300)}` };
  }
  try {
    return { customId, ok: true, result: fromWireResponse(modelOutput, provider) };
  } catch (err) {
    const e = err as ProviderCallError;
    return { customId, ok: false, errorClass: e.errorClass, message: e.message, retryable: e.retryable, ...(e.usage ? { usage: e.usage } : {}) };
  }
}

/** Bedrock's job status → the normalised phase. */
const PHASES: Readonly<Record<string, BatchPhase>> = {
  Submitted: 'pending',
  Validating: 'pending',
  Scheduled: 'pending',
  InProgress: 'running',
  Stopping: 'cancelling',
  Completed: 'ended',
  PartiallyCompleted: 'ended',
  Failed: 'ended',
  Stopped: 'ended',
  Expired: 'ended',
};

function parseS3Uri(uri: string): { bucket: string; prefix: string } {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(uri);
  if (!m) throw new ProviderCallError(`bedrock: batch s3_uri ${JSON.stringify(uri)} is not s3://bucket/prefix`, 'bedrock', 'bad_request', false);
  return { bucket: m[1]!, prefix: m[2]!.replace(/\/+$/, '') };
}

const join = (...parts: string[]): string => parts.filter((p) => p !== '').join('/');

export type BedrockBatchClientOptions = BedrockConnection & BedrockBatchSettings;

/**
 * Bedrock batch inference (the `Converse` invocation type) at the batch price: the requests go to
 * S3 as one JSONL file, CreateModelInvocationJob runs them, GetModelInvocationJob is polled, and
 * the output JSONL is read back from S3 and mapped to the submitted ids by record id, each id
 * exactly once (a repeated line is not counted twice; a missing one comes back as a retryable
 * `batch_missing`). The job is tagged twice against a second submission: its name and its
 * `clientRequestToken` both derive from the run's submission key, so a retried create returns the
 * same job and `find` recognises it by name. Persisting the handle and reserving the budget are the
 * run's job (lib/run/runBatchPartition.ts).
 */
export class BedrockBatchClient implements BatchClient {
  readonly id: string;
  readonly limits: BatchLimits = BEDROCK_BATCH_LIMITS;
  readonly #bedrock: BedrockClient;
  readonly #s3: S3Client;
  readonly #model: string;
  readonly #roleArn: string;
  readonly #bucket: string;
  readonly #prefix: string;
  readonly #errors: BedrockErrorContext;

  constructor(options: BedrockBatchClientOptions) {
    this.#model = options.model;
    this.id = `bedrock/${options.model}`;
    this.#roleArn = options.roleArn;
    ({ bucket: this.#bucket, prefix: this.#prefix } = parseS3Uri(options.s3Uri));
    this.#errors = bedrockErrorContext(this.id, options, 'bedrock');
    const config = awsClientConfig(options);
    this.#bedrock = new BedrockClient(config);
    this.#s3 = new S3Client({ ...config, ...(options.endpoint !== undefined ? { forcePathStyle: true } : {}) });
  }

  settingsSent(req: GenerateRequest): Record<string, unknown> {
    return settingsSent(toWireRequest(req, this.id));
  }

  split(requests: readonly BatchRequest[]): BatchRequest[][] {
    // +1 for the newline; the record id is the same length for every place.
    return splitBatch(requests, (r) => Buffer.byteLength(JSON.stringify(toBatchRecord(r, 0, this.id))) + 1, this.limits);
  }

  /** The job name and client request token of a submission key (a fresh one without). */
  jobNameOf(submissionKey: string | undefined): string {
    return `sondage-${createHash('sha256').update(submissionKey ?? randomUUID()).digest('hex').slice(0, 32)}`;
  }

  #fail(err: unknown): ProviderCallError {
    return toBedrockCallError(err, this.#errors);
  }

  /**
   * Uploads the input file and creates the job. Write the handle to the ledger before anything else.
   * @throws ProviderCallError `bad_request` for a repeated custom id, fewer records than Bedrock's
   *   minimum (use mode: sync for so few), or more than one job may hold (use `split`).
   */
  async submit(requests: readonly BatchRequest[], signal?: AbortSignal, submissionKey?: string): Promise<BatchHandle> {
    const ids = requests.map((r) => r.customId);
    const fail = (msg: string) => new ProviderCallError(`${this.id}: ${msg}`, this.id, 'bad_request', false);
    if (new Set(ids).size !== ids.length) throw fail('a batch repeats a custom id; results could not be matched');
    if (ids.length < BEDROCK_BATCH_MIN_RECORDS) {
      throw fail(`a Bedrock batch inference job takes at least ${BEDROCK_BATCH_MIN_RECORDS} records and this one has ${ids.length}; use mode: sync for this model, or a design with more items per model and language`);
    }
    if (this.split(requests).length > 1) throw fail(`${requests.length} requests exceed one job's limits; split them first`);
    const jobName = this.jobNameOf(submissionKey);
    const inputKey = join(this.#prefix, jobName, 'input.jsonl');
    const body = requests.map((r, i) => JSON.stringify(toBatchRecord(r, i, this.id))).join('\n') + '\n';
    const opts = signal ? { abortSignal: signal } : {};
    try {
      await this.#s3.send(new PutObjectCommand({ Bucket: this.#bucket, Key: inputKey, Body: body, ContentType: 'application/jsonl' }), opts);
      const job = await this.#bedrock.send(
        new CreateModelInvocationJobCommand({
          jobName,
          // Bedrock ignores a create whose token it has seen and answers with the same job.
          clientRequestToken: jobName.slice('sondage-'.length),
          roleArn: this.#roleArn,
          modelId: this.#model,
          modelInvocationType: 'Converse',
          inputDataConfig: { s3InputDataConfig: { s3Uri: `s3://${this.#bucket}/${inputKey}`, s3InputFormat: 'JSONL' } },
          outputDataConfig: { s3OutputDataConfig: { s3Uri: `s3://${this.#bucket}/${join(this.#prefix, jobName, 'output')}/` } },
        }),
        opts,
      );
      if (job.jobArn === undefined) throw new ProviderCallError(`${this.id}: CreateModelInvocationJob answered without a jobArn`, this.id, 'malformed_response', true);
      return { provider: this.id, batchId: job.jobArn, customIds: ids };
    } catch (err) {
      throw this.#fail(err);
    }
  }

  /**
   * A job `submit` may have created for the intent: the one named from its submission key,
   * submitted since its time (less a 2 s clock slack) and not already recorded. The name is
   * unique to the key, so no job's contents need reading.
   */
  async find(lookup: BatchLookup, signal?: AbortSignal): Promise<BatchLookupResult> {
    const jobName = this.jobNameOf(lookup.submissionKey);
    const opts = signal ? { abortSignal: signal } : {};
    try {
      let nextToken: string | undefined;
      do {
        const page = await this.#bedrock.send(
          new ListModelInvocationJobsCommand({ nameContains: jobName, submitTimeAfter: new Date(lookup.createdAt - CLOCK_SLACK_MS), ...(nextToken ? { nextToken } : {}) }),
          opts,
        );
        const job = (page.invocationJobSummaries ?? []).find((j) => j.jobName === jobName && j.jobArn !== undefined && !lookup.exclude?.has(j.jobArn));
        if (job) return { status: 'found', handle: { provider: this.id, batchId: job.jobArn!, customIds: [...lookup.customIds] } };
        nextToken = page.nextToken;
      } while (nextToken);
    } catch (err) {
      throw this.#fail(err);
    }
    return { status: 'absent' };
  }

  async #job(handle: BatchHandle, signal?: AbortSignal): Promise<GetModelInvocationJobCommandOutput> {
    return this.#bedrock.send(new GetModelInvocationJobCommand({ jobIdentifier: handle.batchId }), signal ? { abortSignal: signal } : {});
  }

  async poll(handle: BatchHandle, signal?: AbortSignal): Promise<BatchState> {
    try {
      const job = await this.#job(handle, signal);
      const status = job.status ?? 'Submitted';
      const phase = PHASES[status] ?? 'running';
      return {
        phase,
        status,
        done: phase === 'ended',
        counts: { total: job.totalRecordCount ?? handle.customIds.length, succeeded: job.successRecordCount ?? 0, failed: job.errorRecordCount ?? 0 },
        ...(status === 'Failed' && job.message ? { error: job.message } : {}),
      };
    } catch (err) {
      throw this.#fail(err);
    }
  }

  /**
   * Every submitted request's result, once the job has ended: each `.jsonl.out` file under the
   * job's output folder (`<output s3Uri>/<job id>/`) read and mapped by record id. A job that
   * failed as a whole gives `batch_failed` for the ids it did not answer, re-queued only when its
   * message says it ran out of time or capacity; a stopped or expired one `batch_missing`.
   * @throws ProviderCallError when the job has not ended yet (poll first); an output line that does
   *   not parse fails the whole read (retryable: the output can be read again at no cost).
   */
  async results(handle: BatchHandle, signal?: AbortSignal): Promise<BatchItemResult[]> {
    const opts = signal ? { abortSignal: signal } : {};
    try {
      const job = await this.#job(handle, signal);
      const status = job.status ?? 'Submitted';
      if (PHASES[status] !== 'ended') {
        throw new ProviderCallError(`${this.id}: batch job ${handle.batchId} is ${status}; poll until it has ended`, this.id, 'bad_request', false);
      }
      const outUri = job.outputDataConfig?.s3OutputDataConfig?.s3Uri;
      const found: BatchItemResult[] = [];
      if (outUri !== undefined) {
        const { bucket, prefix } = parseS3Uri(outUri);
        const folder = `${join(prefix, handle.batchId.split('/').pop()!)}/`;
        for (const key of await this.#keys(bucket, folder, opts)) {
          if (!key.endsWith('.jsonl.out')) continue;
          const object = await this.#s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }), opts);
          const text = (await object.Body?.transformToString('utf8')) ?? '';
          for (const raw of text.split('\n')) {
            if (raw.trim() === '') continue;
            const r = fromBatchRecord(JSON.parse(raw) as unknown, handle);
            if (r) found.push(r);
          }
        }
      }
      const failure = status === 'Failed' ? { message: job.message ?? 'no message', retryable: /time|capacity|quota|throttl|internal/i.test(job.message ?? '') } : undefined;
      return completeResults(handle, found, status, failure);
    } catch (err) {
      if (err instanceof SyntaxError) {
        throw new ProviderCallError(`${this.id}: batch job ${handle.batchId} output is not JSONL; read it again`, this.id, 'malformed_response', true, undefined, undefined, { cause: err });
      }
      throw this.#fail(err);
    }
  }

  async #keys(bucket: string, prefix: string, opts: { abortSignal?: AbortSignal }): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.#s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) }), opts);
      for (const o of page.Contents ?? []) if (o.Key !== undefined) keys.push(o.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  async cancel(handle: BatchHandle, signal?: AbortSignal): Promise<void> {
    try {
      await this.#bedrock.send(new StopModelInvocationJobCommand({ jobIdentifier: handle.batchId }), signal ? { abortSignal: signal } : {});
    } catch (err) {
      throw this.#fail(err);
    }
  }
}
