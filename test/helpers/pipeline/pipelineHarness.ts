/**
 * The synthesized state machine executed for real: the definition `cdk synth`
 * writes, run by the test ASL interpreter, its Lambda tasks answered by the real handlers
 * (lambdaFleet.ts) and its Athena step by the Athena stand-in, against S3, DynamoDB and Secrets
 * Manager stand-ins. A campaign is uploaded as `sondage start --aws` uploads it and started with
 * the input it sends; what the run stored is read back from the stand-ins for the assertions.
 *
 * @example
 * const p = await startPipeline();
 * const ctx = await p.upload(campaignFile);
 * const run = await p.execute({ campaign: ctx.campaign.name });
 * expect(run.result.status).toBe('SUCCEEDED');
 * await p.close();
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AthenaClient, GetQueryExecutionCommand, StartQueryExecutionCommand } from '@aws-sdk/client-athena';
import type { StartQueryExecutionCommandInput } from '@aws-sdk/client-athena';
import { executionName } from '../../../lib/cli/aws.js';
import { campaignInputFiles } from '../../../lib/cli/commands/start.js';
import type { ExecutionInput } from '../../../lib/config/pipeline.js';
import { loadRunContext } from '../../../lib/run/context.js';
import type { RunContext } from '../../../lib/run/context.js';
import { DynamoLedger } from '../../../lib/store/DynamoLedger.js';
import { readParquet, tableGlob } from '../../../lib/store/index.js';
import { S3BlobStore } from '../../../lib/store/S3BlobStore.js';
import type { BudgetState } from '../../../lib/store/types.js';
import { tempDir } from '../campaigns.js';
import { StatesError } from '../asl/errors.js';
import { startExecution } from '../asl/interpreter.js';
import type { ExecutionOptions, ExecutionRecord } from '../asl/interpreter.js';
import type { Integrations, Json, TaskCall } from '../asl/types.js';
import { CREDENTIALS, REGION, startAwsStandIns } from './awsStandIns.js';
import type { AwsStandIns } from './awsStandIns.js';
import { GpuBatchFleet } from './gpuBatchFleet.js';
import { LambdaFleet, realClock } from './lambdaFleet.js';
import type { FleetClock } from './lambdaFleet.js';
import { synthesizePipeline } from './synthesizedPipeline.js';
import type { SynthesizedPipeline } from './synthesizedPipeline.js';

export interface PipelineOptions {
  /** CDK context (e.g. the GPU queue). */
  readonly context?: Record<string, string>;
  /** Answers `batch:submitJob.sync`; default on a GPU stack: the GPU job code over the stand-ins (gpuBatchFleet.ts). */
  readonly batchSubmitJobSync?: Integrations['batchSubmitJobSync'];
}

/**
 * A fake clock for the Athena stand-in, the functions' deadlines and the report's polls: it stands
 * still but for each poll's wait, which takes `pollMs` whatever the poller asked, and each Wait
 * state of the execution, which takes its seconds.
 */
export interface FakeClock {
  now(): number;
  /** Moves it on by `ms`. */
  advance(ms: number): void;
}

/** What one phase stored and the ledger holds of it. */
export interface PhaseAccount {
  /** Successful reply rows per item id. */
  readonly okPerItem: ReadonlyMap<string, number>;
  /** Every stored reply row (every attempt). */
  readonly rows: number;
  /** Sum of cost_usd over every stored reply row. */
  readonly storedCostUsd: number;
  readonly ledger: { readonly pending: number; readonly done: number; readonly failed: number };
}

export interface Accounting {
  readonly phases: Readonly<Record<string, PhaseAccount>>;
  readonly budget: BudgetState;
  readonly storedCostUsd: number;
}

export interface Pipeline {
  readonly synthesized: SynthesizedPipeline;
  readonly standIns: AwsStandIns;
  readonly fleet: LambdaFleet;
  /** AWS Batch running the GPU jobs, on a stack synthesized with the GPU context (unless a test plugs in its own hook). */
  readonly gpu?: GpuBatchFleet;
  /** The data bucket, for assertions (its own client). */
  readonly store: S3BlobStore;
  /** The ledger, for assertions (its own client). */
  readonly ledger: DynamoLedger;
  /** Uploads a campaign file and the files it names, as `sondage start --aws` does. */
  upload(file: string): Promise<RunContext>;
  /** From now on the stand-ins and the functions run on a fake clock (see FakeClock); Wait states advance it. */
  useFakeClock(pollMs: number): FakeClock;
  /** Starts an execution with `input` and runs it to its end. */
  execute(input: ExecutionInput, options?: Partial<Pick<ExecutionOptions, 'onWait' | 'maxTransitions'>>): Promise<ExecutionRecord>;
  /** The result files the report wrote, by name. */
  results(campaign: string): Promise<Map<string, string>>;
  /** The bucket's Parquet of a campaign copied to a local folder laid out like it (for DuckDB). */
  localCopy(campaign: string): Promise<string>;
  /** Stored replies and ledger, phase by phase, for the accounting invariants. */
  accounting(campaign: string, phases: readonly string[]): Promise<Accounting>;
  close(): Promise<void>;
}

/** Step Functions' output of a `.sync` task: timestamps as epoch milliseconds, no SDK metadata. */
function asStepFunctionsJson(value: unknown): Json {
  return JSON.parse(JSON.stringify(value, (k, v: unknown) => (k === '$metadata' ? undefined : v instanceof Date ? v.getTime() : v))) as Json;
}

/** `athena:startQueryExecution.sync` over the Athena stand-in: start, poll until done, GetQueryExecution's answer. */
function athenaSync(client: AthenaClient) {
  return async (parameters: Json, _call: TaskCall): Promise<Json> => {
    const send = async <T>(f: () => Promise<T>): Promise<T> => {
      try {
        return await f();
      } catch (err) {
        const e = err as Error;
        throw new StatesError(`Athena.${e.name}`, e.message);
      }
    };
    const started = await send(() => client.send(new StartQueryExecutionCommand(parameters as unknown as StartQueryExecutionCommandInput)));
    for (;;) {
      const out = await send(() => client.send(new GetQueryExecutionCommand({ QueryExecutionId: started.QueryExecutionId })));
      const state = out.QueryExecution?.Status?.State;
      if (state === 'SUCCEEDED') return asStepFunctionsJson({ QueryExecution: out.QueryExecution });
      if (state === 'FAILED' || state === 'CANCELLED') throw new StatesError('States.TaskFailed', JSON.stringify(asStepFunctionsJson({ QueryExecution: out.QueryExecution })));
      await new Promise((r) => setTimeout(r, 1));
    }
  };
}

export async function startPipeline(options: PipelineOptions = {}): Promise<Pipeline> {
  const synthesized = synthesizePipeline(options.context);
  const scratch = await tempDir('pipeline');
  // Swapped for a fake one by useFakeClock; the stand-in and the fleet read it at each call.
  const clock: FleetClock = { ...realClock };
  let fake: FakeClock | undefined;
  const standIns = await startAwsStandIns(synthesized, scratch.dir, () => clock.now());
  const fleet = new LambdaFleet(synthesized, standIns, scratch.dir, clock);
  const gpu = synthesized.gpu && !options.batchSubmitJobSync ? new GpuBatchFleet(synthesized.gpu, scratch.dir) : undefined;
  const batchSubmitJobSync = options.batchSubmitJobSync ?? gpu?.integration();
  const athena = new AthenaClient({ endpoint: standIns.athena.url, region: REGION, credentials: CREDENTIALS });
  const store = new S3BlobStore({ bucket: standIns.names.bucket, clientConfig: { endpoint: standIns.s3.url, region: REGION, credentials: CREDENTIALS, forcePathStyle: true } });
  const ledger = new DynamoLedger({ ledgerTable: standIns.names.ledgerTable, budgetTable: standIns.names.budgetTable, clientConfig: { endpoint: standIns.dynamo.url, region: REGION, credentials: CREDENTIALS } });
  const names = new Set<string>();
  let copies = 0;

  const integrations: Integrations = {
    lambda: fleet.integrations(),
    athenaStartQueryExecutionSync: athenaSync(athena),
    ...(batchSubmitJobSync ? { batchSubmitJobSync } : {}),
    s3: {
      getObject: async (bucket, key) => (bucket === standIns.names.bucket ? store.get(key) : undefined),
      putObject: async (bucket, key, body) => {
        if (bucket !== standIns.names.bucket) throw new StatesError('States.ResultWriterFailed', `no bucket ${bucket}`);
        await store.put(key, body);
      },
    },
  };

  const localCopy = async (campaign: string): Promise<string> => {
    const dir = path.join(scratch.dir, `copy-${++copies}`);
    for (const key of await store.list(`campaigns/${campaign}/`)) {
      if (!key.endsWith('.parquet')) continue;
      await mkdir(path.dirname(path.join(dir, key)), { recursive: true });
      await writeFile(path.join(dir, key), (await store.get(key))!);
    }
    return dir;
  };

  return {
    synthesized,
    standIns,
    fleet,
    ...(gpu ? { gpu } : {}),
    store,
    ledger,
    async upload(file) {
      const ctx = await loadRunContext(file);
      for (const f of await campaignInputFiles(ctx.campaign, ctx.battery)) await store.put(f.key, f.body ?? (await readFile(f.local)));
      return ctx;
    },
    useFakeClock(pollMs) {
      let t = Date.parse('2030-01-01T00:00:00Z');
      const f: FakeClock = { now: () => t, advance: (ms) => void (t += ms) };
      clock.now = f.now;
      clock.sleep = async () => f.advance(pollMs);
      fake = f;
      return f;
    },
    async execute(input, more = {}) {
      let name = executionName(input.campaign);
      while (names.has(name)) {
        await new Promise((r) => setTimeout(r, 2));
        name = executionName(input.campaign);
      }
      names.add(name);
      const clockWait = fake ? { onWait: (w: { seconds?: number }) => fake!.advance((w.seconds ?? 0) * 1000) } : {};
      return startExecution(synthesized.machine.definition, input as unknown as Json, { integrations, name, stateMachineArn: synthesized.machine.arn, ...clockWait, ...more });
    },
    async results(campaign) {
      const prefix = `campaigns/${campaign}/results/`;
      const out = new Map<string, string>();
      for (const key of await store.list(prefix)) out.set(key.slice(prefix.length), Buffer.from((await store.get(key))!).toString('utf8'));
      return out;
    },
    localCopy,
    async accounting(campaign, phases) {
      const dir = await localCopy(campaign);
      const out: Record<string, PhaseAccount> = {};
      let storedCostUsd = 0;
      for (const phase of phases) {
        const rows = await readParquet<{ item_id: string; status: string; cost_usd: number }>(tableGlob(dir, campaign, phase, 'replies'), 'SELECT item_id, status, cost_usd FROM parts');
        const okPerItem = new Map<string, number>();
        for (const r of rows) if (r.status === 'ok') okPerItem.set(r.item_id, (okPerItem.get(r.item_id) ?? 0) + 1);
        const cost = rows.reduce((s, r) => s + r.cost_usd, 0);
        storedCostUsd += cost;
        out[phase] = { okPerItem, rows: rows.length, storedCostUsd: cost, ledger: await ledger.counts(campaign, phase) };
      }
      return { phases: out, budget: await ledger.budget(campaign), storedCostUsd };
    },
    async close() {
      await fleet.close();
      await ledger.close();
      athena.destroy();
      await standIns.close();
      await scratch.cleanup();
    },
  };
}
