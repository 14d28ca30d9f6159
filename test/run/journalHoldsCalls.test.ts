import type { WriteStream } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { Journal } from '../../lib/run/Journal.js';
import { runPartition } from '../../lib/run/runPartition.js';
import { InstantProvider, localPartitionSpec, MemoryPartSink, partitionLedger, usePartitionCases, type PartitionBench } from '../helpers/partitionSpec.js';

// "What must hold": a partition whose replies come faster than its journal reaches the disk stops
// starting calls once the journal is 1 MiB behind (Journal.ts BACKLOG_BYTES), so the replies a
// kill -9 could lose from the write buffer stay about 1 MiB, not the partition.

const CAMPAIGN = 'run-small';
const ITEMS = 80;
/** Each reply: without a wait, a whole partition's lines are buffered before the first write ends. */
const REPLY_BYTES = 64 * 1024;
const CHUNK = 4;

const BENCH: PartitionBench = {
  campaign: CAMPAIGN,
  price: { input_per_mtok: 2, output_per_mtok: 10 },
  retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0, timeoutMs: 30_000 },
  concurrency: 4,
  partRows: 1_000,
  readReply: () => [],
};

const cases = usePartitionCases('journal-holds', ITEMS);

describe('runPartition with replies faster than its journal', () => {
  it('keeps the lines not yet written near 1 MiB, and journals every reply', async () => {
    const runId = 'run-journal';
    const ledger = await partitionLedger(cases.dir, CAMPAIGN, runId);
    const append = Journal.prototype.append;
    let most = 0;
    const spy = vi.spyOn(Journal.prototype, 'append').mockImplementation(function (this: Journal, row: object, billed?: number) {
      append.call(this, row, billed);
      most = Math.max(most, (this as unknown as { stream: WriteStream }).stream.writableLength);
    });
    try {
      const sink = new MemoryPartSink();
      const done = await runPartition(localPartitionSpec(BENCH, cases.dir, cases.items, { runId, ledger, sink, provider: new InstantProvider((req) => `${req.item!.item_id} ${'x'.repeat(REPLY_BYTES)}`), chunkSize: CHUNK }));
      expect(done).toMatchObject({ done: ITEMS, failed: 0, pending: 0 });
      expect(sink.rows().length).toBe(ITEMS);
      // 1 MiB, and the calls already started when the journal got there: the chunks in flight
      // (runPartition's maxInFlight, 2 + concurrency / chunk) and one more line.
      const inFlight = (2 + BENCH.concurrency / CHUNK) * CHUNK + 1;
      expect(most).toBeGreaterThan(1024 * 1024);
      expect(most).toBeLessThan(1024 * 1024 + inFlight * (REPLY_BYTES + 1024));
    } finally {
      spy.mockRestore();
      await ledger.close();
    }
  });
});
