import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { runPartition } from '../../lib/run/runPartition.js';
import { InstantProvider, localPartitionSpec, MemoryPartSink, partitionLedger, usePartitionCases, type PartitionBench } from '../helpers/partitionSpec.js';

// "What must hold": a partition whose calls come back faster than its parts are committed does not
// pile sealed parts up, each with its rows, behind the commit in progress: it stops starting
// chunks until that commit ends (runPartition.ts MAX_QUEUED_PARTS).

const CAMPAIGN = 'run-small';
const ITEMS = 80;

const BENCH: PartitionBench = {
  campaign: CAMPAIGN,
  price: { input_per_mtok: 2, output_per_mtok: 10 },
  retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0, timeoutMs: 30_000 },
  concurrency: 4,
  partRows: 4,
  readReply: () => [],
};

/** Parts whose writing waits until `open()`: a commit slower than the calls. */
class SlowSink extends MemoryPartSink {
  private release: () => void = () => {};
  private readonly gate = new Promise<void>((resolve) => (this.release = resolve));

  open(): void {
    this.release();
  }

  override async writeReplies(journalPath: string, partName: string): Promise<string> {
    await this.gate;
    return super.writeReplies(journalPath, partName);
  }
}

const cases = usePartitionCases('part-queue', ITEMS);

describe('runPartition with commits slower than its calls', () => {
  it('holds back new chunks while a part waits for its commit, then asks the rest once it ends', async () => {
    const runId = 'run-queue';
    const ledger = await partitionLedger(cases.dir, CAMPAIGN, runId);
    const provider = new InstantProvider();
    const sink = new SlowSink();
    try {
      const outcome = runPartition(localPartitionSpec(BENCH, cases.dir, cases.items, { runId, ledger, sink, provider }));
      // Let the partition go as far as it will while its first commit cannot end.
      let seen = -1;
      while (seen !== provider.calls) {
        seen = provider.calls;
        await sleep(50);
      }
      // The part committing, the chunks in flight and those of the part after it: a few chunks, not the partition.
      expect(provider.calls).toBeGreaterThan(0);
      expect(provider.calls).toBeLessThanOrEqual(6 * BENCH.partRows);
      sink.open();
      const done = await outcome;
      expect(done).toMatchObject({ done: ITEMS, failed: 0, pending: 0 });
      expect(provider.calls).toBe(ITEMS);
      expect(sink.rows().length).toBe(ITEMS);
    } finally {
      await ledger.close();
    }
  });
});
