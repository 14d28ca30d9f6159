/**
 * A partition thread of the local run: opens what a partition needs (the campaign's context, its
 * Parquet writer, upstream DuckDB and providers), then runs the partitions the run sends it through
 * the same code as the main thread (wavePartition.ts), and says what became of each. Its ledger
 * calls run on the main thread (threadLedger.ts): one connection, one budget, as without threads.
 */
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { DuckDb, LocalBlobStore, ParquetWriter } from '../store/index.js';
import { createAnswerers } from './answerers.js';
import { contextFor } from './context.js';
import { RateLimiters } from './RateLimiter.js';
import type { StopState } from './stopState.js';
import { Semaphore } from './Semaphore.js';
import { ThreadLedger } from './threadLedger.js';
import { mergeStop, snapshotOf, threadError } from './threadMessages.js';
import type { FromThread, ThreadInit, ToThread } from './threadMessages.js';
import { runWavePartition } from './wavePartition.js';
import type { PartitionEnv } from './wavePartition.js';

/** How often the replies journaled here are reported to the progress bar. */
const REPORT_MS = 100;

const port = parentPort!;
const init = workerData as ThreadInit;
const post = (m: FromThread): void => port.postMessage(m);

try {
  const ctx = await contextFor(init.campaign, init.dataDir, init.languages ? { languages: init.languages } : undefined);
  const { providers, batchClients } = await createAnswerers(ctx, new RateLimiters());
  // Its calls run on the main thread's connection (threadLedger.ts).
  const ledger = new ThreadLedger(post);
  const writer = await ParquetWriter.create({ tmpDir: join(init.dataDir, '.tmp'), threads: 1 });
  const controller = new AbortController();
  const stop: StopState = {};
  let db: DuckDb | undefined;
  /** The partitions running here, waited for before the thread closes its stores. */
  const running = new Set<Promise<void>>();
  let ok = 0;
  let costUsd = 0;
  const report = (): void => {
    if (ok === 0 && costUsd === 0) return;
    post({ type: 'replies', ok, costUsd });
    ok = 0;
    costUsd = 0;
  };
  const timer = setInterval(report, REPORT_MS);
  const env: PartitionEnv = {
    ctx,
    dataDir: init.dataDir,
    store: new LocalBlobStore(init.dataDir),
    writer,
    providers,
    batchClients,
    shared: {
      campaign: init.campaign.name,
      runId: init.runId,
      retry: init.retry,
      ledger,
      semaphore: new Semaphore(init.concurrency),
      chunkSize: init.chunkSize,
      partRows: init.partRows,
      signal: controller.signal,
      onReply: (row) => {
        costUsd += row.cost_usd;
        if (row.status === 'ok') ok++;
      },
      ...(init.retryFailed ? { retryFailed: true } : {}),
      stop,
    },
    // One DuckDB thread and a smaller cap than the main thread's: it reads one partition's
    // upstream rows at a time, and every native thread and buffer here adds to the run's peak.
    upstreamDb: async () => (db ??= await DuckDb.open({ threads: 1, memoryLimit: '200MB' })),
    sliceSources: init.sliceSources,
    onePass: init.onePass,
  };
  port.on('message', (m: ToThread) => {
    if (m.type === 'ledgerReply') ledger.receive(m);
    else if (m.type === 'stop') {
      mergeStop(stop, m.stop);
      if (stop.reason === 'aborted') controller.abort();
    } else if (m.type === 'run') {
      const phase = ctx.graph.get(m.phase);
      const model = ctx.campaign.models.find((e) => e.id === m.model)!;
      const partition = runWavePartition(env, phase, model, m.language).then(
        ({ items, outcome }) => {
          report();
          post({ type: 'done', id: m.id, items, outcome, stop: snapshotOf(stop) });
        },
        (err: unknown) => {
          report();
          post({ type: 'failed', id: m.id, error: threadError(err) });
        },
      );
      running.add(partition);
      void partition.finally(() => running.delete(partition));
    } else {
      // A run that fails closes its threads while other partitions still run here. Their DuckDB
      // work must end before the instances close and the thread exits: a query that finishes
      // while Node tears the thread down throws where nothing can catch it, and the process
      // aborts before the run says why it failed.
      controller.abort();
      void Promise.allSettled([...running]).then(async () => {
        clearInterval(timer);
        report();
        db?.close();
        await writer.close().catch(() => undefined);
        post({ type: 'closed' });
        port.close();
      });
    }
  });
  post({ type: 'ready' });
} catch (err) {
  post({ type: 'failed', error: threadError(err) });
}
