import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SondageError } from '../../lib/errors.js';
import { serveLedgerCall, ThreadLedger } from '../../lib/run/threadLedger.js';
import { EmbeddedLedger } from '../../lib/store/index.js';
import { useTempDir } from '../helpers/campaigns.js';

// A partition thread's ledger: each call crosses (structured clone both ways, as postMessage does)
// to the main thread's EmbeddedLedger and answers as the ledger itself would.

const tmp = useTempDir('thread-ledger');
let ledger: EmbeddedLedger;
let client: ThreadLedger;

beforeEach(() => {
  ledger = new EmbeddedLedger(tmp.dir, { runId: 'run-2' });
  client = new ThreadLedger((call) => serveLedgerCall(ledger, structuredClone(call), (reply) => client.receive(structuredClone(reply))));
});

// Hooks run in reverse on the way out: the ledger is closed before useTempDir removes its folder.
afterEach(async () => {
  await ledger.close();
});

const partition = { phase: 'generate', model: 'alpha', language: 'en' };

describe('ThreadLedger', () => {
  it('reserves, commits and counts through the main thread’s ledger', async () => {
    await ledger.initCampaign('c', 1, 'run-2');
    await client.registerPartition('c', partition, ['a', 'b', 'c']);
    expect(await client.pendingAmong('c', partition, ['a', 'b', 'c'])).toEqual(new Set(['a', 'b', 'c']));
    expect(await client.reserve('c', 'r1', 0.6, { ...partition, itemIds: ['a', 'b'] })).toBe(true);
    expect(await client.reserve('c', 'r2', 0.6, { ...partition, itemIds: ['c'] })).toBe(false);
    await client.commitPart({ campaign: 'c', ...partition, partKey: 'p1', done: ['a', 'b'], failed: [], reservationIds: ['r1'], costUsd: 0.1 });
    expect(await client.counts('c', 'generate')).toEqual({ pending: 1, done: 2, failed: 0 });
    expect(await client.committedParts('c', 'generate')).toEqual(new Set(['p1']));
    expect((await client.budget('c')).spent_usd).toBeCloseTo(0.1, 12);
  });

  it('resolves a killed run’s reservations with the costs the thread looks up', async () => {
    const dead = new EmbeddedLedger(tmp.dir, { runId: 'run-1' });
    await dead.initCampaign('c', 10, 'run-1');
    await dead.registerPartition('c', partition, ['a', 'b', 'c']);
    await dead.reserve('c', 'old', 3, { ...partition, itemIds: ['a', 'b', 'c'] });
    await dead.close();
    await ledger.initCampaign('c', 10, 'run-2');
    await ledger.orphanStale('c', 'run-2', 'hold');
    const asked: string[] = [];
    // 'a' came back (the journal shows it); 'b' and 'c' are possibly billed at their own maximum.
    const out = await client.resolveOrphans('c', partition, new Set(['a']), (id) => {
      asked.push(id);
      return id === 'b' ? 0.5 : 0.25;
    });
    expect(out).toEqual({ resolved: 1, billedUsd: 0.75 });
    expect(asked.sort()).toEqual(['a', 'b', 'c']);
    const budget = await ledger.budget('c');
    expect(budget.possibly_billed_usd).toBeCloseTo(0.75, 12);
    expect(budget.reserved_usd).toBe(0);
  });

  it('rejects with the ledger’s own error, as a SondageError with its message', async () => {
    await ledger.initCampaign('c', 1, 'run-2');
    const commit = { campaign: 'c', phase: 'generate', model: 'm', language: 'en', partKey: 'p1', done: [], failed: [], costUsd: 0 };
    await client.commitPart(commit);
    const err = await client.commitPart(commit).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SondageError);
    expect((err as Error).message).toMatch(/part p1 .* is already committed/);
  });
});
