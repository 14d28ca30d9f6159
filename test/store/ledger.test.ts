import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import Database from 'better-sqlite3';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { seededRandom } from '../../lib/core/hash.js';
import { SondageError } from '../../lib/errors.js';
import { EmbeddedLedger, PartCommittedError } from '../../lib/store/index.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'sondage-ledger-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let dir: string;
let ledger: EmbeddedLedger;
let n = 0;
beforeEach(() => {
  dir = path.join(root, `t${n++}`);
  ledger = new EmbeddedLedger(dir, { runId: 'run-1' });
});
afterEach(async () => {
  await ledger.close();
});

const ids = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

/** A data folder whose ledger.sqlite an earlier sondage wrote: the tables and rows of `sql`, nothing else. */
function ledgerWrittenBefore(sql: string): string {
  const old = path.join(root, `old${n++}`);
  mkdirSync(old, { recursive: true });
  const db = new Database(path.join(old, 'ledger.sqlite'));
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
  return old;
}

describe('EmbeddedLedger items', () => {
  it('registers items once, in order, and keeps known states', async () => {
    await ledger.initCampaign('c', 1, 'run-1');
    await ledger.registerItems('c', { phase: 'generate', model: 'm', language: 'en' }, ['b', 'a', 'c', 'a']);
    await ledger.commitPart({ campaign: 'c', phase: 'generate', model: 'm', language: 'en', partKey: 'p1', done: ['a'], failed: [], costUsd: 0 });
    await ledger.registerItems('c', { phase: 'generate', model: 'm', language: 'en' }, ['d', 'a', 'b']);

    expect([...(await ledger.pendingItems('c', 'generate'))]).toEqual(['b', 'c', 'd']);
    expect(await ledger.counts('c', 'generate')).toEqual({ pending: 3, done: 1, failed: 0 });
    // Phases and campaigns are separate.
    expect(await ledger.pendingItems('c', 'judge')).toEqual(new Set());
    expect(await ledger.counts('other', 'generate')).toEqual({ pending: 0, done: 0, failed: 0 });
  });

  it('tracks pending, done and failed across partial commits', async () => {
    await ledger.initCampaign('c', 10, 'run-1');
    await ledger.registerItems('c', { phase: 'g', model: 'm', language: 'en' }, ids('i', 10));

    await ledger.commitPart({ campaign: 'c', phase: 'g', model: 'm', language: 'en', partKey: 'part-1', done: ['i0', 'i1', 'i2'], failed: ['i3'], costUsd: 0.5 });
    expect([...(await ledger.pendingItems('c', 'g'))]).toEqual(['i3', 'i4', 'i5', 'i6', 'i7', 'i8', 'i9']);
    expect(await ledger.counts('c', 'g')).toEqual({ pending: 6, done: 3, failed: 1 });

    // A retried item that now succeeds turns done; a done item is never turned back to failed.
    await ledger.commitPart({ campaign: 'c', phase: 'g', model: 'm', language: 'en', partKey: 'part-2', done: ['i3', 'i4'], failed: ['i0', 'i5'], costUsd: 0.25 });
    expect(await ledger.counts('c', 'g')).toEqual({ pending: 4, done: 5, failed: 1 });
    expect([...(await ledger.pendingItems('c', 'g'))]).toEqual(['i5', 'i6', 'i7', 'i8', 'i9']);
    expect([...(await ledger.pendingAmong('c', { phase: 'g', model: 'm', language: 'en' }, ['i9', 'i0', 'i5', 'unknown']))]).toEqual(['i9', 'i5', 'unknown']);

    expect(await ledger.committedParts('c', 'g')).toEqual(new Set(['part-1', 'part-2']));
    expect(await ledger.committedParts('c', 'other')).toEqual(new Set());
    expect((await ledger.budget('c')).spent_usd).toBeCloseTo(0.75, 12);
  });

  it('commits a part atomically: a failure half-way changes nothing', async () => {
    await ledger.initCampaign('c', 10, 'run-1');
    await ledger.registerItems('c', { phase: 'g', model: 'm', language: 'en' }, ['a', 'b', 'c']);
    expect(await ledger.reserve('c', 'r1', 2)).toBe(true);

    // The failed id cannot be bound: SQLite fails after the part row and the done items were written.
    const broken = { campaign: 'c', phase: 'g', model: 'm', language: 'en', partKey: 'p1', done: ['a', 'b'], failed: [{} as unknown as string], reservationIds: ['r1'], costUsd: 1 };
    await expect(ledger.commitPart(broken)).rejects.toThrow();

    expect(await ledger.counts('c', 'g')).toEqual({ pending: 3, done: 0, failed: 0 });
    expect(await ledger.committedParts('c', 'g')).toEqual(new Set());
    expect(await ledger.budget('c')).toEqual({ cap_usd: 10, spent_usd: 0, reserved_usd: 2, orphaned_usd: 0, possibly_billed_usd: 0 });

    await ledger.commitPart({ ...broken, done: ['a', 'b'], failed: ['c'] });
    expect(await ledger.counts('c', 'g')).toEqual({ pending: 0, done: 2, failed: 1 });
    expect(await ledger.budget('c')).toEqual({ cap_usd: 10, spent_usd: 1, reserved_usd: 0, orphaned_usd: 0, possibly_billed_usd: 0 });
  });

  it('never adopts a part twice', async () => {
    await ledger.initCampaign('c', 10, 'run-1');
    await ledger.registerItems('c', { phase: 'g', model: 'm', language: 'en' }, ['a', 'b']);
    await ledger.commitPart({ campaign: 'c', phase: 'g', model: 'm', language: 'en', partKey: 'p1', done: ['a'], failed: [], costUsd: 1 });
    expect(await ledger.reserve('c', 'r2', 1)).toBe(true);

    const again = ledger.commitPart({ campaign: 'c', phase: 'g', model: 'm', language: 'en', partKey: 'p1', done: ['b'], failed: [], reservationIds: ['r2'], costUsd: 1 });
    await expect(again).rejects.toThrow(PartCommittedError);
    await expect(
      ledger.commitPart({ campaign: 'c', phase: 'g', model: 'm', language: 'en', partKey: 'p1', done: [], failed: [], costUsd: 1 }),
    ).rejects.toThrow(/part p1 of campaign "c" phase "g" is already committed/);

    expect(await ledger.counts('c', 'g')).toEqual({ pending: 1, done: 1, failed: 0 });
    expect(await ledger.budget('c')).toEqual({ cap_usd: 10, spent_usd: 1, reserved_usd: 1, orphaned_usd: 0, possibly_billed_usd: 0 });
  });

  it('settles every reservation of a multi-chunk part and adds the cost once', async () => {
    await ledger.initCampaign('c', 1, 'run-1');
    expect(await ledger.reserve('c', 'chunk-1', 0.4)).toBe(true);
    expect(await ledger.reserve('c', 'chunk-2', 0.4)).toBe(true);
    expect(await ledger.reserve('c', 'chunk-3', 0.4)).toBe(false);
    await ledger.commitPart({ campaign: 'c', phase: 'g', model: 'm', language: 'en', partKey: 'p', done: ['x'], failed: [], reservationIds: ['chunk-1', 'chunk-2'], costUsd: 0.3 });
    expect(await ledger.budget('c')).toEqual({ cap_usd: 1, spent_usd: 0.3, reserved_usd: 0, orphaned_usd: 0, possibly_billed_usd: 0 });
  });

  it('opens a ledger file from before permanent failures: the column is added, old failed items are asked again', async () => {
    await ledger.close();
    const p0 = 'campaigns/c/g/replies/model=m/language=en/part-0.parquet';
    const old = ledgerWrittenBefore(`CREATE TABLE items (campaign TEXT NOT NULL, phase TEXT NOT NULL, item_id TEXT NOT NULL,
               state TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed')), part_key TEXT, PRIMARY KEY (campaign, phase, item_id));
             INSERT INTO items VALUES ('c', 'g', 'x', 'failed', '${p0}'), ('c', 'g', 'y', 'done', '${p0}');`);
    ledger = new EmbeddedLedger(old, { runId: 'run-1' });
    const en = { phase: 'g', model: 'm', language: 'en' };
    expect([...(await ledger.pendingAmong('c', en, ['x', 'y', 'z']))]).toEqual(['x', 'z']);
    expect(await ledger.counts('c', 'g')).toEqual({ pending: 0, done: 1, failed: 1 });
    await ledger.initCampaign('c', 1, 'run-1');
    await ledger.commitPart({ campaign: 'c', ...en, partKey: 'p1', done: [], failed: [], failedPermanently: ['x', 'z'], costUsd: 0 });
    expect([...(await ledger.pendingAmong('c', en, ['x', 'y', 'z']))]).toEqual([]);
    await ledger.close();
    // Opened again (the column exists now): nothing to add, states kept.
    ledger = new EmbeddedLedger(old, { runId: 'run-2' });
    expect([...(await ledger.pendingAmong('c', en, ['x', 'y', 'z'], { retryFailed: true }))]).toEqual(['x', 'z']);
  });

  it('opens a ledger file from before items were keyed by partition: each item keeps its state in its partition, in registration order', async () => {
    await ledger.close();
    // The layout of the last ledgers keyed by id: partition columns, filled by registerPartition.
    const old = ledgerWrittenBefore(`CREATE TABLE items (campaign TEXT NOT NULL, phase TEXT NOT NULL, item_id TEXT NOT NULL,
               state TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed')), part_key TEXT, permanent INTEGER NOT NULL DEFAULT 0,
               model TEXT, language TEXT, retired INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (campaign, phase, item_id));
             INSERT INTO items VALUES
               ('c', 'g', 'e2', 'pending', NULL, 0, 'm', 'en', 0),
               ('c', 'g', 'e1', 'done', 'campaigns/c/g/replies/model=m/language=en/part-0.parquet', 0, 'm', 'en', 0),
               ('c', 'g', 'f1', 'failed', 'campaigns/c/g/replies/model=m/language=fr/part-0.parquet', 1, 'm', 'fr', 0),
               ('c', 'g', 'e3', 'pending', NULL, 0, 'm', 'en', 1),
               ('c', 'g', 'f2', 'pending', NULL, 0, 'm', 'fr', 0),
               -- registered without a partition (registerItems): placed by their part key, or not at all
               ('c', 'g', 'd1', 'done', 'campaigns/c/g/replies/model=m/language=de/part-0.parquet', 0, NULL, NULL, 0),
               ('c', 'g', 'd2', 'pending', NULL, 0, NULL, NULL, 0),
               ('c', 'g', 'q1', 'failed', 'gave-up-1', 0, NULL, NULL, 0),
               ('c', 'g', 'q2', 'done', 'elsewhere', 0, NULL, NULL, 0);`);
    ledger = new EmbeddedLedger(old, { runId: 'run-1' });
    const part = (language: string) => ({ phase: 'g', model: 'm', language });
    expect([...(await ledger.pendingAmong('c', part('en'), ['e1', 'e2', 'e3']))]).toEqual(['e2', 'e3']);
    expect([...(await ledger.pendingAmong('c', part('fr'), ['f1', 'f2']))]).toEqual(['f2']);
    expect([...(await ledger.pendingAmong('c', part('fr'), ['f1', 'f2'], { retryFailed: true }))]).toEqual(['f1', 'f2']);
    expect([...(await ledger.pendingAmong('c', part('de'), ['d1', 'd2']))]).toEqual(['d2']);
    // e3 stays retired; d2 and q1 had no partition to go to (asked again, as pending items are); q2 is counted done.
    expect(await ledger.counts('c', 'g')).toEqual({ pending: 2, done: 3, failed: 1 });
    expect([...(await ledger.pendingItems('c', 'g'))]).toEqual(['e2', 'f1', 'f2']);
    await ledger.close();
    ledger = new EmbeddedLedger(old, { runId: 'run-2' });
    expect(await ledger.counts('c', 'g')).toEqual({ pending: 2, done: 3, failed: 1 });
  });

  it('opens a ledger file whose items are keyed by the partition names: each item keeps its state, flags and order under its partition number', async () => {
    await ledger.close();
    const p0 = 'campaigns/c/g/replies/model=m/language=en/part-0.parquet';
    const old = ledgerWrittenBefore(`CREATE TABLE parts (campaign TEXT NOT NULL, phase TEXT NOT NULL, part_key TEXT NOT NULL, cost_usd REAL NOT NULL, PRIMARY KEY (campaign, phase, part_key));
             INSERT INTO parts VALUES ('c', 'g', '${p0}', 0.5);
             CREATE TABLE items (campaign TEXT NOT NULL, phase TEXT NOT NULL, model TEXT NOT NULL, language TEXT NOT NULL, item_id TEXT NOT NULL,
               state TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed')), part_key TEXT, permanent INTEGER NOT NULL DEFAULT 0,
               retired INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (campaign, phase, model, language, item_id));
             INSERT INTO items VALUES
               ('c', 'g', 'm', 'en', 'e2', 'pending', NULL, 0, 0),
               ('c', 'g', 'm', 'en', 'e1', 'done', '${p0}', 0, 0),
               ('c', 'g', 'm', 'fr', 'f1', 'failed', 'not-a-part', 1, 0),
               ('c', 'g', 'm', 'en', 'e3', 'pending', NULL, 0, 1),
               ('c', 'g', 'm', 'fr', 'f2', 'pending', NULL, 0, 0),
               ('other', 'g', 'm', 'en', 'e1', 'pending', NULL, 0, 0);`);
    ledger = new EmbeddedLedger(old, { runId: 'run-1' });
    const part = (language: string) => ({ phase: 'g', model: 'm', language });
    expect([...(await ledger.pendingAmong('c', part('en'), ['e1', 'e2', 'e3']))]).toEqual(['e2', 'e3']);
    expect([...(await ledger.pendingAmong('c', part('fr'), ['f1', 'f2']))]).toEqual(['f2']);
    expect([...(await ledger.pendingAmong('c', part('fr'), ['f1', 'f2'], { retryFailed: true }))]).toEqual(['f1', 'f2']);
    expect([...(await ledger.pendingAmong('other', part('en'), ['e1']))]).toEqual(['e1']);
    // e3 stays retired: not counted, not listed; registration order kept.
    expect(await ledger.counts('c', 'g')).toEqual({ pending: 2, done: 1, failed: 1 });
    expect([...(await ledger.pendingItems('c', 'g'))]).toEqual(['e2', 'f1', 'f2']);
    await ledger.close();
    const file = new Database(path.join(old, 'ledger.sqlite'), { readonly: true });
    try {
      // The done item names its part by the part's rowid; a key the parts table lacks names none.
      expect(file.prepare('SELECT i.item_id, pt.part_key FROM items i LEFT JOIN parts pt ON pt.rowid = i.part ORDER BY i.rowid').raw().all()).toEqual([
        ['e2', null], ['e1', p0], ['f1', null], ['e3', null], ['f2', null], ['e1', null],
      ]);
      expect(file.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'items_%'").all()).toEqual([]);
    } finally {
      file.close();
    }
    ledger = new EmbeddedLedger(old, { runId: 'run-2' });
    expect(await ledger.counts('c', 'g')).toEqual({ pending: 2, done: 1, failed: 1 });
  });

  it('registers a million ids in one call', async () => {
    const many = ids('item-', 1_000_000);
    await ledger.registerItems('big', { phase: 'g', model: 'm', language: 'en' }, many);
    await ledger.registerItems('big', { phase: 'g', model: 'm', language: 'en' }, many.slice(0, 1000));
    expect(await ledger.counts('big', 'g')).toEqual({ pending: 1_000_000, done: 0, failed: 0 });
    const pending = await ledger.pendingItems('big', 'g');
    expect(pending.size).toBe(1_000_000);
    const first = pending.values();
    expect([first.next().value, first.next().value]).toEqual(['item-0', 'item-1']);
  });
});

describe('EmbeddedLedger budget', () => {
  it('reserves up to the cap, exactly, and not a cent more', async () => {
    await ledger.initCampaign('c', 1, 'run-1');
    expect(await ledger.reserve('c', 'a', 0.7)).toBe(true);
    expect(await ledger.reserve('c', 'b', 0.30000001)).toBe(false);
    expect(await ledger.reserve('c', 'b', 0.3)).toBe(true); // 0.7 + 0.3 in floating point is within the tolerance
    expect(await ledger.budget('c')).toEqual({ cap_usd: 1, spent_usd: 0, reserved_usd: 1, orphaned_usd: 0, possibly_billed_usd: 0 });

    await ledger.settle('c', 'a', 0.5);
    await ledger.release('c', 'b');
    expect(await ledger.budget('c')).toEqual({ cap_usd: 1, spent_usd: 0.5, reserved_usd: 0, orphaned_usd: 0, possibly_billed_usd: 0 });
    expect(await ledger.reserve('c', 'c', 0.5)).toBe(true);
  });

  it('keeps spending and raises the cap when a campaign is initialised again', async () => {
    await ledger.initCampaign('c', 1, 'run-1');
    expect(await ledger.reserve('c', 'a', 1)).toBe(true);
    await ledger.settle('c', 'a', 1);
    expect(await ledger.reserve('c', 'b', 0.01)).toBe(false);
    await ledger.initCampaign('c', 2, 'run-2');
    expect(await ledger.budget('c')).toEqual({ cap_usd: 2, spent_usd: 1, reserved_usd: 0, orphaned_usd: 0, possibly_billed_usd: 0 });
    expect(await ledger.reserve('c', 'b', 0.01)).toBe(true);
  });

  it('rejects bad amounts, duplicate reservation ids and unknown campaigns', async () => {
    await ledger.initCampaign('c', 1, 'run-1');
    await expect(ledger.reserve('c', 'x', -1)).rejects.toThrow(/reservation amount must be a finite number of USD ≥ 0, got -1/);
    await expect(ledger.reserve('c', 'x', Number.NaN)).rejects.toThrow(SondageError);
    await expect(ledger.settle('c', 'x', Number.POSITIVE_INFINITY)).rejects.toThrow(/actual cost/);
    await expect(ledger.initCampaign('d', -5, 'r')).rejects.toThrow(/cap/);
    expect(await ledger.reserve('c', 'x', 0.1)).toBe(true);
    await expect(ledger.reserve('c', 'x', 0.1)).rejects.toThrow(/reservation "x" of campaign "c" already exists/);
    await expect(ledger.reserve('nope', 'y', 0.1)).rejects.toThrow(/campaign "nope" has no budget in .*ledger\.sqlite; call initCampaign first/);
    await expect(ledger.budget('nope')).rejects.toThrow(SondageError);
  });

  it("never releases a dead run's reservations: without a partition they count as possibly billed at once, against the cap", async () => {
    await ledger.initCampaign('c', 1, 'run-1');
    expect(await ledger.reserve('c', 'mine', 0.2)).toBe(true);
    const dead = new EmbeddedLedger(dir, { runId: 'run-0' });
    try {
      expect(await dead.reserve('c', 'theirs-1', 0.3)).toBe(true);
      expect(await dead.reserve('c', 'theirs-2', 0.4)).toBe(true);
    } finally {
      await dead.close();
    }
    expect(await ledger.reserve('c', 'more', 0.2)).toBe(false);

    expect(await ledger.orphanStale('c', 'run-1', 'hold')).toEqual({ count: 2, amountUsd: expect.closeTo(0.7, 12) as number });
    const b = await ledger.budget('c');
    expect(b.reserved_usd).toBeCloseTo(0.2, 12);
    expect(b.possibly_billed_usd).toBeCloseTo(0.7, 12);
    expect((await ledger.orphanStale('c', 'run-1', 'hold')).count).toBe(0);
    // 0.2 held + 0.7 possibly billed: one more 0.2 call would pass the cap of 1.
    expect(await ledger.reserve('c', 'more', 0.2)).toBe(false);
    expect(await ledger.reserve('c', 'more', 0.1)).toBe(true);
  });

  it("holds a dead run's scoped reservations until its partition's journals resolve them: replied calls free, the rest possibly billed", async () => {
    await ledger.initCampaign('c', 10, 'run-1');
    const part = { phase: 'generate', model: 'm', language: 'en' };
    const dead = new EmbeddedLedger(dir, { runId: 'run-0' });
    try {
      expect(await dead.reserve('c', 'r1', 3, { ...part, itemIds: ['a', 'b', 'c'] })).toBe(true);
      expect(await dead.reserve('c', 'r2', 1, { ...part, language: 'fr', itemIds: ['x'] })).toBe(true);
    } finally {
      await dead.close();
    }
    expect(await ledger.orphanStale('c', 'run-1', 'hold')).toEqual({ count: 2, amountUsd: 4 });
    expect(await ledger.budget('c')).toEqual({ cap_usd: 10, spent_usd: 0, reserved_usd: 4, orphaned_usd: 4, possibly_billed_usd: 0 });
    // Held: a dead run's calls are not in flight.
    expect(await ledger.inFlight('c')).toEqual(new Map());
    // The journal shows a and c came back (committed from it at their cost); b left no reply.
    expect(await ledger.resolveOrphans('c', part, new Set(['a', 'c']), () => 1)).toEqual({ resolved: 1, billedUsd: 1 });
    expect(await ledger.budget('c')).toEqual({ cap_usd: 10, spent_usd: 0, reserved_usd: 1, orphaned_usd: 1, possibly_billed_usd: 1 });
    // Another partition's orphan waits for its own.
    expect(await ledger.resolveOrphans('c', part, new Set(), () => 1)).toEqual({ resolved: 0, billedUsd: 0 });
    expect(await ledger.reserve('c', 'live', 2, { ...part, itemIds: ['d', 'e'] })).toBe(true);
    expect(await ledger.inFlight('c')).toEqual(new Map([['generate', 2]]));
  });

  it('registers a partition for the current design: dropped ids retired from the counts, returning ids restored, sizes recorded', async () => {
    await ledger.initCampaign('c', 10, 'run-1');
    const en = { phase: 'generate', model: 'm', language: 'en' };
    await ledger.registerPartition('c', en, ['a', 'b', 'c']);
    await ledger.registerPartition('c', { ...en, language: 'fr' }, ['x']);
    await ledger.commitPart({ campaign: 'c', ...en, partKey: 'p1', done: ['a', 'b'], failed: [], costUsd: 0 });
    await ledger.commitPart({ campaign: 'c', ...en, language: 'fr', partKey: 'p2', done: ['x'], failed: [], costUsd: 0 });
    expect(await ledger.counts('c', 'generate')).toEqual({ pending: 1, done: 3, failed: 0 });
    // The design changed: b dropped, d added.
    await ledger.registerPartition('c', en, ['a', 'c', 'd']);
    expect(await ledger.counts('c', 'generate')).toEqual({ pending: 2, done: 2, failed: 0 });
    expect([...(await ledger.pendingItems('c', 'generate'))]).toEqual(['c', 'd']);
    // Back again: b's state is its own.
    await ledger.registerPartition('c', en, ['a', 'b', 'c', 'd']);
    expect(await ledger.counts('c', 'generate')).toEqual({ pending: 2, done: 3, failed: 0 });
    expect(await ledger.partitions('c')).toEqual([
      { phase: 'generate', model: 'm', language: 'en', items: 4 },
      { phase: 'generate', model: 'm', language: 'fr', items: 1 },
    ]);
  });

  it('registers a large partition a slice at a time: other calls run between the slices, and an unfinished registration is done again', async () => {
    await ledger.initCampaign('c', 10, 'run-1');
    const en = { phase: 'generate', model: 'm', language: 'en' };
    const many = ids('i', 25_000);
    const order: string[] = [];
    const registering = ledger.registerPartition('c', en, many).then(() => order.push('registered'));
    const reserving = ledger.reserve('c', 'r1', 1, { ...en, itemIds: ['i0'] }).then(() => order.push('reserved'));
    await Promise.all([registering, reserving]);
    expect(order).toEqual(['reserved', 'registered']);
    expect(await ledger.counts('c', 'generate')).toEqual({ pending: 25_000, done: 0, failed: 0 });
    expect(await ledger.partitions('c')).toEqual([{ ...en, items: 25_000 }]);

    // A run killed after the first slices: ids registered, no digest. The next registration completes it.
    await ledger.registerItems('c', { ...en, language: 'fr' }, ids('f', 10_000));
    await ledger.registerPartition('c', { ...en, language: 'fr' }, ids('f', 20_000));
    expect(await ledger.counts('c', 'generate')).toEqual({ pending: 45_000, done: 0, failed: 0 });
    expect(await ledger.partitions('c')).toEqual([
      { ...en, items: 25_000 },
      { ...en, language: 'fr', items: 20_000 },
    ]);
  });

  it('retires, on a partition’s first registration, the ids registerItems gave it that its list lacks', async () => {
    await ledger.initCampaign('c', 10, 'run-1');
    const en = { phase: 'generate', model: 'm', language: 'en' };
    await ledger.registerItems('c', en, ['a', 'b', 'old']);
    await ledger.registerPartition('c', en, ['a', 'b', 'c']);
    expect([...(await ledger.pendingItems('c', 'generate'))]).toEqual(['a', 'b', 'c']);
    expect(await ledger.counts('c', 'generate')).toEqual({ pending: 3, done: 0, failed: 0 });
  });

  it('50 concurrent async workers never pass the cap', async () => {
    const cap = 3;
    await ledger.initCampaign('c', cap, 'run-1');
    const random = seededRandom(42);
    let worstCommitted = 0;
    let worstSpent = 0;
    let settled = 0;
    const observe = async (): Promise<void> => {
      const b = await ledger.budget('c');
      worstCommitted = Math.max(worstCommitted, b.spent_usd + b.reserved_usd);
      worstSpent = Math.max(worstSpent, b.spent_usd);
    };
    const worker = async (w: number): Promise<number> => {
      let refusals = 0;
      let calls = 0;
      for (let k = 0; refusals < 5; k++) {
        const id = `w${w}-${k}`;
        const amount = 0.005 + random() * 0.05;
        if (!(await ledger.reserve('c', id, amount))) {
          refusals++;
          await tick();
          continue;
        }
        refusals = 0;
        await observe();
        await tick();
        const actual = amount * random();
        await ledger.settle('c', id, actual);
        settled += actual;
        calls++;
        await observe();
      }
      return calls;
    };

    const calls = await Promise.all(Array.from({ length: 50 }, (_, w) => worker(w)));

    const b = await ledger.budget('c');
    expect(calls.reduce((s, c) => s + c, 0)).toBeGreaterThan(50);
    expect(worstCommitted).toBeLessThanOrEqual(cap + 1e-9);
    expect(worstSpent).toBeLessThanOrEqual(cap + 1e-9);
    expect(b.reserved_usd).toBe(0);
    expect(b.spent_usd).toBeLessThanOrEqual(cap + 1e-9);
    expect(b.spent_usd).toBeCloseTo(settled, 9);
    // The budget was really used up, so the cap was what stopped the workers.
    expect(b.spent_usd + 0.055).toBeGreaterThan(cap * 0.5);
  });

  it('4 processes on one ledger file never pass the cap, and lose no update', async () => {
    const cap = 4;
    const shared = path.join(root, 'multi');
    const parent = new EmbeddedLedger(shared, { runId: 'parent' });
    await parent.initCampaign('c', cap, 'parent');
    const script = path.join(import.meta.dirname, 'fixtures', 'ledgerWorker.ts');
    type Report = { spent: number; calls: number; maxCommitted: number; cap: number };
    const children: ChildProcess[] = [];
    try {
      const started = [1, 2, 3, 4].map((k) => {
        const child = fork(script, [shared, 'c', `child-${k}`, String(k)], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
        children.push(child);
        const ready = new Promise<void>((resolve) => child.once('message', () => resolve()));
        const report = new Promise<Report>((resolve, reject) => {
          child.on('message', (m) => typeof m === 'object' && resolve(m as Report));
          child.once('exit', (code) => reject(new Error(`ledger worker ${k} exited with ${code} before reporting`)));
        });
        return { child, ready, report };
      });
      // All four start reserving at once, so that they really compete.
      await Promise.all(started.map((s) => s.ready));
      for (const s of started) s.child.send('go');
      const reports = await Promise.all(started.map((s) => s.report));

      const b = await parent.budget('c');
      const total = reports.reduce((s, r) => s + r.spent, 0);
      expect(reports.every((r) => r.calls > 0)).toBe(true);
      expect(reports.every((r) => r.maxCommitted <= cap + 1e-9)).toBe(true);
      expect(b.spent_usd).toBeLessThanOrEqual(cap + 1e-9);
      expect(b.spent_usd).toBeCloseTo(total, 9);
      expect(b.reserved_usd).toBe(0);
      // Children stop only once the remaining budget cannot take one more call.
      expect(b.spent_usd).toBeGreaterThan(cap / 2);
    } finally {
      for (const c of children) if (c.exitCode === null && c.pid !== undefined) c.kill();
      await parent.close();
    }
  });
});
