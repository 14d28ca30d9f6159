/**
 * The pipeline's Lambda functions, run in-process as Lambda runs them: each invocation goes to an
 * idle container of its function or to a new one (a cold start builds the handler with
 * `createHandler` over clients made as the function's entry point makes them — plan and worker
 * through functions/shared/env.ts's storesFromEnv — and a /tmp of its own); the payload arrives as
 * JSON the interpreter serialised; the context tells the remaining time from the function's
 * synthesized timeout, on the fleet's clock (real, or a test's fake one that the report's polls
 * advance). Powertools output is collected, not printed.
 *
 * A worker can be made to crash mid-batch, after some of its parts are stored and committed: at
 * the next reply part's upload (before it is stored) or at the next part's ledger commit (the part
 * stored, its commit not made). It either throws inside the handler (which salvages what it
 * journaled, then fails the invocation), or the container is killed (every later S3 and DynamoDB
 * call of it fails, nothing is salvaged, and the invocation ends as Lambda reports a killed runtime).
 */
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { AthenaClient } from '@aws-sdk/client-athena';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
// eslint-disable-next-line no-restricted-imports -- the handlers' own Context type; lib/ still may not import it
import type { Context } from 'aws-lambda';
import { createHandler as createPlan, parseGpuQueues } from '../../../functions/plan/handler.js';
import { createHandler as createRecordFailure } from '../../../functions/record-failure/handler.js';
import { createHandler as createReport, REPORT_ATHENA } from '../../../functions/report/handler.js';
import { storesFromEnv } from '../../../functions/shared/env.js';
import { createHandler as createWorker } from '../../../functions/worker/handler.js';
import { ENV } from '../../../lib/config/index.js';
import { AthenaQueryable } from '../../../lib/store/AthenaQueryable.js';
import { DynamoLedger } from '../../../lib/store/DynamoLedger.js';
import { S3BlobStore } from '../../../lib/store/S3BlobStore.js';
import type { BlobStore, Ledger } from '../../../lib/store/types.js';
import { StatesError } from '../asl/errors.js';
import type { Json, LambdaFunction } from '../asl/types.js';
import type { AwsStandIns } from './awsStandIns.js';
import type { PipelineFunction, SynthesizedPipeline } from './synthesizedPipeline.js';
import { collectingPowertools } from '../powertools.js';

/**
 * How the next worker invocation crashes: after `after` parts went through, at the next reply
 * part's upload (`upload`: it is not stored) or at the next part's ledger commit (`commit`: it is
 * stored, not committed).
 */
export interface WorkerCrash {
  readonly kind: 'throw' | 'kill';
  /**
   * `mark`: right after a part's commit transaction reached DynamoDB, before its items are marked;
   * `publish`: after the commit, before the part's move out of staging into the table.
   */
  readonly at: 'upload' | 'commit' | 'mark' | 'publish';
  readonly after: number;
}

export interface Invocation {
  readonly fn: PipelineFunction;
  readonly requestId: string;
  readonly container: number;
  readonly cold: boolean;
  readonly payload: Json;
  outcome?: 'ok' | 'error' | 'killed';
  /** What the handler returned, as JSON (outcome ok). */
  output?: Json;
  error?: string;
}

type Handler = (event: unknown, context: Context) => Promise<unknown>;

/** The time the functions see: their deadlines, and the report's waits between Athena polls. */
export interface FleetClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** The real clock. */
export const realClock: FleetClock = { now: () => Date.now(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };

interface Container {
  readonly id: number;
  readonly handler: Handler;
  busy: boolean;
  /** Set when a crash killed it: its clients refuse every call from then on. */
  dead: boolean;
  /** A crash armed for this container's next invocation. */
  crash?: { kind: WorkerCrash['kind']; at: WorkerCrash['at']; partsLeft: number; fire: (err: Error) => void };
}

/** Thrown by a killed container's clients: the process is gone, nothing it sends arrives. */
class ContainerKilled extends Error {
  constructor() {
    super('the container was killed (injected crash); this call never left it');
    this.name = 'ContainerKilled';
  }
}

export class LambdaFleet {
  readonly invocations: Invocation[] = [];
  readonly logs: string[] = [];
  private readonly containers: Record<PipelineFunction, Container[]> = { plan: [], worker: [], report: [], recordFailure: [] };
  private readonly orphans: Promise<unknown>[] = [];
  private readonly clients: { destroy(): void }[] = [];
  private nextContainer = 0;
  private armed: WorkerCrash | undefined;

  constructor(
    private readonly pipeline: SynthesizedPipeline,
    private readonly standIns: AwsStandIns,
    private readonly scratch: string,
    /** Read at each call, so a test may swap its methods while the fleet runs. */
    private readonly clock: FleetClock = realClock,
  ) {}

  /**
   * The workers' lease on the ledger (lib/run/workerLease.ts), short here: a plan after a killed
   * worker waits this long at most. Beats every third of it, well within it on a busy machine,
   * which a plan that waits for workers still running needs (pipelineStop.test.ts). A test whose
   * plans never run beside a live worker may shorten it, before the workers' cold starts.
   */
  workerLeaseMs = 3_000;

  /** Called as each invocation starts (the function, and how many of its invocations came before): a test injects faults here. */
  onInvoke: ((fn: PipelineFunction, previous: number) => void) | undefined;

  /** Awaited before each reservation of a worker (the execution it works for): a test holds workers here. */
  onReserve: ((execution: string) => Promise<void>) | undefined;

  /** Told each reservation's answer (the execution, whether the ledger granted it): a test checks a fence here. */
  onReserved: ((execution: string, granted: boolean) => void) | undefined;

  /**
   * Every write the workers sent to DynamoDB (PutItem, UpdateItem, DeleteItem, BatchWriteItem,
   * TransactWriteItems), as sent: what the worker's IAM policy must allow (dynamoWrites.ts).
   */
  readonly workerDynamoWrites: { readonly command: string; readonly input: unknown }[] = [];

  /** The next worker invocation crashes as `crash` says. */
  crashNextWorker(crash: WorkerCrash): void {
    this.armed = crash;
  }

  /** The functions by ARN, for the interpreter's `lambda` integration. */
  integrations(): Record<string, LambdaFunction> {
    const out: Record<string, LambdaFunction> = {};
    for (const fn of Object.keys(this.containers) as PipelineFunction[]) out[this.pipeline.functions[fn].arn] = (payload) => this.invoke(fn, payload);
    return out;
  }

  /** Invocations of one function (all outcomes). */
  of(fn: PipelineFunction): Invocation[] {
    return this.invocations.filter((i) => i.fn === fn);
  }

  private async invoke(fn: PipelineFunction, payload: Json): Promise<unknown> {
    this.onInvoke?.(fn, this.of(fn).length);
    const pool = this.containers[fn];
    let container = pool.find((c) => !c.busy && !c.dead);
    const cold = container === undefined;
    if (!container) {
      container = await this.coldStart(fn);
      pool.push(container);
    }
    container.busy = true;
    const requestId = randomUUID();
    const record: Invocation = { fn, requestId, container: container.id, cold, payload };
    this.invocations.push(record);
    const synthesized = this.pipeline.functions[fn];
    const clock = this.clock;
    const deadline = clock.now() + synthesized.timeoutSeconds * 1000;
    const context = {
      functionName: synthesized.logicalId,
      functionVersion: '$LATEST',
      invokedFunctionArn: synthesized.arn,
      memoryLimitInMB: String(synthesized.memoryMb),
      awsRequestId: requestId,
      logGroupName: `/aws/lambda/${synthesized.logicalId}`,
      logStreamName: `stream-${container.id}`,
      callbackWaitsForEmptyEventLoop: true,
      getRemainingTimeInMillis: () => Math.max(0, deadline - clock.now()),
    } as unknown as Context;
    let killed: Promise<never> | undefined;
    if (fn === 'worker' && this.armed) {
      const crash = this.armed;
      this.armed = undefined;
      killed = new Promise<never>((_resolve, reject) => {
        container.crash = { kind: crash.kind, at: crash.at, partsLeft: crash.after, fire: reject };
      });
      killed.catch(() => {});
    }
    const work = container.handler(payload, context);
    try {
      const out = await (killed ? Promise.race([work, killed]) : work);
      record.outcome = 'ok';
      record.output = JSON.parse(JSON.stringify(out ?? null)) as Json;
      return out;
    } catch (err) {
      if (err instanceof ContainerKilled) {
        // The runtime died: Lambda answers for it; the handler's promise is left to wind down.
        record.outcome = 'killed';
        this.orphans.push(work.catch(() => {}));
        throw new StatesError('Runtime.ExitError', JSON.stringify({ errorType: 'Runtime.ExitError', errorMessage: `RequestId: ${requestId} Error: Runtime exited with error: signal: killed` }));
      }
      record.outcome = 'error';
      record.error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      throw err;
    } finally {
      container.busy = false;
      container.crash = undefined;
    }
  }

  private async coldStart(fn: PipelineFunction): Promise<Container> {
    const id = ++this.nextContainer;
    const tmpDir = path.join(this.scratch, `lambda-${fn}-${id}`);
    await mkdir(tmpDir, { recursive: true });
    const { logger, metrics } = collectingPowertools({ serviceName: `sondage-${fn}`, logLevel: 'INFO', into: this.logs });
    const names = this.standIns.names;
    const container: Container = { id, busy: false, dead: false, handler: undefined as unknown as Handler };
    let handler: Handler;
    switch (fn) {
      case 'plan': {
        const stores = storesFromEnv('plan', { withKeys: true });
        // The GPU queues as the entry point reads them, from the plan's own environment (a GPU stack only).
        const gpuQueues = parseGpuQueues(this.pipeline.functions.plan.environment[ENV.gpuQueues]);
        handler = createPlan({ ...stores, tmpDir, glueDatabase: names.glueDatabase, ...(gpuQueues ? { gpuQueues } : {}), logger, metrics });
        break;
      }
      case 'worker': {
        const stores = storesFromEnv('worker', { withKeys: true, dynamoClient: this.crashableDynamo(container) });
        handler = createWorker({ ...stores, store: this.crashableStore(container, stores.store), ledgerFor: (runId) => this.crashableLedger(container, stores.ledgerFor(runId), runId), tmpDir, logger, metrics, leaseMs: this.workerLeaseMs });
        break;
      }
      case 'report': {
        const client = new AthenaClient({});
        this.clients.push(client);
        handler = createReport({
          // As the entry point builds it, polling briskly (the stand-in answers within a poll or two),
          // waiting on the fleet's clock.
          athena: (resume, files) =>
            new AthenaQueryable({ workgroup: names.athenaWorkgroup, database: names.glueDatabase, client, pollInitialMs: 1, pollMaxMs: 5, sleep: (ms) => this.clock.sleep(ms), resume, ...files, ...REPORT_ATHENA }),
          store: new S3BlobStore({ bucket: names.bucket, clientConfig: { endpoint: this.standIns.s3.url, forcePathStyle: true } }),
          bucket: names.bucket,
          ledger: new DynamoLedger({ ledgerTable: names.ledgerTable, budgetTable: names.budgetTable, clientConfig: { endpoint: this.standIns.dynamo.url } }),
          tmpDir,
          logger,
          metrics,
        });
        break;
      }
      case 'recordFailure':
        handler = createRecordFailure({ ledger: new DynamoLedger({ ledgerTable: names.ledgerTable, budgetTable: names.budgetTable, clientConfig: { endpoint: this.standIns.dynamo.url } }), logger, metrics });
        break;
    }
    Object.assign(container, { handler });
    return container;
  }

  /** Counts a part towards an armed crash at `at`; crashes (throws, or kills the container) when it is due. */
  private crashPoint(container: Container, at: WorkerCrash['at'], what: string): void {
    const crash = container.crash;
    if (!crash || crash.at !== at) return;
    if (crash.partsLeft > 0) {
      crash.partsLeft--;
      return;
    }
    container.crash = undefined;
    if (crash.kind === 'kill') {
      container.dead = true;
      const err = new ContainerKilled();
      crash.fire(err);
      throw err;
    }
    throw new Error(`worker crashed at ${what} (injected)`);
  }

  /** The worker's store: the reply-part upload crash point, and nothing served once killed. */
  private crashableStore(container: Container, store: BlobStore): BlobStore {
    const alive = (): void => {
      if (container.dead) throw new ContainerKilled();
    };
    return {
      put: async (key, body) => {
        alive();
        if (/\/replies\/.*\.parquet$/.test(key)) this.crashPoint(container, 'upload', `the upload of ${key}`);
        await store.put(key, body);
      },
      get: async (key) => (alive(), store.get(key)),
      exists: async (key) => (alive(), store.exists(key)),
      list: async (prefix) => (alive(), store.list(prefix)),
      delete: async (key) => (alive(), store.delete(key)),
      // A committed part's move out of staging (lib/store/stagedParts.ts): the publish crash point.
      move: async (from, to) => {
        alive();
        if (/\/_staged\/.*\/replies\/.*\.parquet$/.test(from)) this.crashPoint(container, 'publish', `the move of ${from}`);
        return store.move ? store.move(from, to) : Promise.reject(new Error('the stand-in store has no move'));
      },
    };
  }

  /**
   * The worker's DynamoDB client, as the entry point makes it: the part-mark crash point (after a
   * commit transaction that puts a part record came back), and nothing sent once killed.
   */
  private crashableDynamo(container: Container): DynamoDBClient {
    const client = new DynamoDBClient(process.env[ENV.dynamoEndpoint] ? { endpoint: process.env[ENV.dynamoEndpoint] } : {});
    this.clients.push(client);
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (container.dead) throw new ContainerKilled();
        if (/^(Put|Update|Delete)ItemCommand$|^(BatchWrite|TransactWrite)ItemsCommand$/.test(context.commandName ?? '')) {
          this.workerDynamoWrites.push({ command: context.commandName!, input: args.input });
        }
        const out = await next(args);
        // The commit transaction puts the part record; the one that sets `marked` after the item marks names it too, and must not count.
        const input = context.commandName === 'TransactWriteItemsCommand' ? JSON.stringify(args.input) : '';
        if (input.includes('"PART#') && !input.includes('SET marked')) this.crashPoint(container, 'mark', 'the item marks of a committed part');
        return out;
      },
      { step: 'initialize', name: 'fleetCrashPoint' },
    );
    return client;
  }

  /** The worker's ledger: the part-commit crash point, and nothing served once killed. */
  private crashableLedger(container: Container, ledger: Ledger, runId: string): Ledger {
    return new Proxy(ledger, {
      get: (target, prop) => {
        const value = Reflect.get(target, prop, target) as unknown;
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          if (container.dead && prop !== 'close') throw new ContainerKilled();
          if (prop === 'reserve' && this.onReserve) await this.onReserve(runId);
          if (prop === 'commitPart') this.crashPoint(container, 'commit', `the commit of ${(args[0] as { partKey: string }).partKey}`);
          const out = await (value as (...a: unknown[]) => unknown).apply(target, args);
          if (prop === 'reserve') this.onReserved?.(runId, out === true);
          return out;
        };
      },
    });
  }

  /** Waits for the handlers of killed containers to wind down and frees the clients. */
  async close(): Promise<void> {
    await Promise.all(this.orphans);
    for (const c of this.clients) c.destroy();
  }
}
