import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileSizes } from '../helpers/runData.js';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SondageError } from '../../lib/errors.js';
import { DynamoCampaignItems, ledgerKeyCampaign } from '../../lib/store/DynamoCampaignItems.js';
import { DynamoLedger } from '../../lib/store/DynamoLedger.js';
import { EmbeddedLedgerRows } from '../../lib/store/EmbeddedLedgerRows.js';
import { CampaignBusyError, UnknownCampaignError } from '../../lib/store/errors.js';
import { EmbeddedLedger, LocalBlobStore, acquireRunLock } from '../../lib/store/index.js';
import { LocalCampaignFiles } from '../../lib/store/LocalCampaignFiles.js';
import { formatBytes, formatCounts, purgeCampaign } from '../../lib/store/purge.js';
import type { CampaignGuard, PurgeSource, PurgeSurvey } from '../../lib/store/purge.js';
import { runLockGuard } from '../../lib/store/runLockGuard.js';
import { S3BlobStore } from '../../lib/store/S3BlobStore.js';
import { S3CampaignObjects } from '../../lib/store/S3CampaignObjects.js';
import type { BlobStore, Ledger } from '../../lib/store/types.js';
import { startDynamoServer } from './dynamoServer.js';
import type { DynamoServer } from './dynamoServer.js';
import { startS3Server } from './s3Server.js';
import type { S3Server } from './s3Server.js';

const CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' };
const BUCKET = 'purge-data';

let root: string;
let s3: S3Server;
let dynamo: DynamoServer;
beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'sondage-purge-'));
  [s3, dynamo] = await Promise.all([startS3Server(), startDynamoServer()]);
});
afterAll(async () => {
  await Promise.all([s3.close(), dynamo.close()]);
  rmSync(root, { recursive: true, force: true });
});

/** Every kind of row the Ledger interface writes for a campaign: budget, reservations, items, parts, batch and intent. */
async function fillLedger(ledger: Ledger, c: string): Promise<void> {
  await ledger.initCampaign(c, 5, 'run-1');
  await ledger.registerItems(c, { phase: 'generate', model: 'm', language: 'en' }, ['i1', 'i2', 'i3']);
  await ledger.registerItems(c, { phase: 'judge', model: 'm', language: 'en' }, ['j1']);
  expect(await ledger.reserve(c, 'r-open', 0.1)).toBe(true);
  expect(await ledger.reserve(c, 'r-part', 0.1)).toBe(true);
  await ledger.commitPart({ campaign: c, phase: 'generate', model: 'm', language: 'en', partKey: 'part-1.parquet', done: ['i1'], failed: ['i2'], reservationIds: ['r-part'], costUsd: 0.05 });
  expect(await ledger.reserve(c, 'r-intent', 0.2)).toBe(true);
  await ledger.recordBatchIntent({ campaign: c, phase: 'generate', model: 'm', language: 'en', provider: 'openai/x', submissionKey: 'sub-1', customIds: ['i3'], reservationId: 'r-intent', createdAt: 1 });
  expect(await ledger.reserve(c, 'r-batch', 0.2)).toBe(true);
  await ledger.recordBatch({ campaign: c, phase: 'judge', model: 'm', language: 'en', batchId: 'b1', handleJson: '{}', reservationId: 'r-batch' });
}

/** The files a run leaves: parts, a journal, the uploaded input, results, the plan. */
async function fillFiles(store: BlobStore, c: string): Promise<void> {
  await store.put(`campaigns/${c}/generate/replies/model=m/language=en/part-1.parquet`, 'x'.repeat(1500));
  await store.put(`campaigns/${c}/generate/prompts/model=m/language=en/part-1.parquet`, 'p'.repeat(500));
  await store.put(`campaigns/${c}/generate/_journal/model=m/language=en/journal-1.jsonl`, '{}\n');
  await store.put(`campaigns/${c}/input/campaign.yaml`, 'name: x\n');
  await store.put(`campaigns/${c}/results/summary.md`, '# results\n');
  await store.put(`campaigns/${c}/plan.json`, '{}');
}

/** Confirms, and remembers what it was shown. */
function yes(): { confirm: (s: readonly PurgeSurvey[]) => Promise<boolean>; shown: PurgeSurvey[] } {
  const shown: PurgeSurvey[] = [];
  return { shown, confirm: async (s) => (shown.push(...s), true) };
}

const open: CampaignGuard = { enter: async () => {}, check: async () => {}, leave: async () => {} };

const tree = fileSizes;

/** Every row of every table of the embedded ledger, as text, sorted. */
function sqliteRows(dataDir: string): string[] {
  const db = new Database(path.join(dataDir, 'ledger.sqlite'), { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[];
    // An item names its campaign through its partition's number: shown with it.
    const rows = (t: string): object[] => db.prepare(t === 'items' ? 'SELECT p.campaign, i.* FROM items i LEFT JOIN item_partitions p USING (pid)' : `SELECT * FROM "${t}"`).all() as object[];
    return tables.flatMap((t) => rows(t).map((r) => `${t} ${JSON.stringify(r)}`)).sort();
  } finally {
    db.close();
  }
}

/** The two backends, each: stores to fill, the sources and guard of a purge, and everything it holds. */
interface Backend {
  readonly aws: boolean;
  readonly store: BlobStore;
  readonly ledger: Ledger;
  sources(): PurgeSource[];
  guard(campaign: string): CampaignGuard;
  snapshot(): string[];
  close(): Promise<void>;
}

function localBackend(): Backend {
  const dataDir = mkdtempSync(path.join(root, 'local-'));
  const ledger = new EmbeddedLedger(dataDir, { runId: 'run-1' });
  return {
    aws: false,
    store: new LocalBlobStore(dataDir),
    ledger,
    sources: () => [new LocalCampaignFiles(dataDir), new EmbeddedLedgerRows(dataDir)],
    guard: (c) => runLockGuard(dataDir, c),
    snapshot: () => [...Object.entries(tree(path.join(dataDir, 'campaigns'))).map(([k, v]) => `${k} ${v}`), ...sqliteRows(dataDir)].sort(),
    close: () => ledger.close(),
  };
}

let tables = 0;
function awsBackend(): Backend {
  const n = ++tables;
  const ledgerTable = `ledger-${n}`;
  const budgetTable = `budget-${n}`;
  const config = { endpoint: dynamo.url, region: 'us-east-1', credentials: CREDENTIALS, maxAttempts: 1 };
  const ledger = new DynamoLedger({ ledgerTable, budgetTable, clientConfig: config });
  const s3Client = new S3Client({ endpoint: s3.url, region: 'us-east-1', credentials: CREDENTIALS, forcePathStyle: true, maxAttempts: 1 });
  const dynamoClient = new DynamoDBClient(config);
  const bucket = `${BUCKET}-${n}`;
  return {
    aws: true,
    store: new S3BlobStore({ bucket, client: s3Client }),
    ledger,
    sources: () => [new S3CampaignObjects({ bucket, client: s3Client }), new DynamoCampaignItems({ ledgerTable, budgetTable, client: dynamoClient })],
    guard: () => open,
    snapshot: () =>
      [
        ...[...s3.objects].filter(([id]) => id.startsWith(`${bucket}/`)).map(([id, body]) => `${id} ${body.length}`),
        ...[...s3.versions].filter(([id]) => id.startsWith(`${bucket}/`)).map(([id, v]) => `${id} ${JSON.stringify(v.map((x) => x.versionId))}`),
        ...[ledgerTable, budgetTable].flatMap((t) => dynamo.items(t).map((i) => `${t} ${JSON.stringify(i)}`)),
      ].sort(),
    close: async () => {
      await ledger.close();
      s3Client.destroy();
      dynamoClient.destroy();
    },
  };
}

describe.each([
  ['local (data folder + SQLite ledger)', localBackend],
  ['AWS (S3 + DynamoDB stand-ins)', awsBackend],
])('purge %s', (_name, make) => {
  it('deletes exactly one campaign, after showing what it holds; a campaign whose name starts the same is untouched', async () => {
    // prepare: three campaigns, two of them with names one prefix of the other
    const b = make();
    for (const c of ['alpha', 'alpha2', 'beta']) {
      await fillLedger(b.ledger, c);
      await fillFiles(b.store, c);
    }
    const before = b.snapshot();
    if (b.aws) {
      dynamo.scanPageSize = 3; // the Scan pages
      s3.pageSize = 2; // so does ListObjectVersions
      dynamo.unprocessedWrites = 4; // and throttled deletes are sent again
    }
    const asked = yes();
    // act
    const progress = new Map<string, number>();
    const outcome = await purgeCampaign({
      campaign: 'alpha',
      sources: b.sources(),
      guard: b.guard('alpha'),
      confirm: asked.confirm,
      onProgress: (survey, n) => progress.set(survey.where, n),
    });
    // assess: what was shown
    expect(asked.shown).toHaveLength(2);
    const shown = asked.shown.flatMap((s) => s.counts);
    const count = (what: RegExp) => shown.filter((c) => what.test(c.what)).reduce((n, c) => n + c.count, 0);
    expect(shown.filter((c) => c.bytes !== undefined).reduce((n, c) => n + c.count, 0)).toBe(6); // files or objects
    expect(count(/item states/)).toBe(4);
    expect(count(/committed parts/)).toBe(1);
    expect(count(/reservations/)).toBe(3); // r-open, r-intent, r-batch (r-part was settled)
    expect(count(/budget \(cap and spend\)/)).toBe(1);
    expect(shown.reduce((n, c) => n + (c.bytes ?? 0), 0)).toBeGreaterThanOrEqual(2000);
    expect(outcome.deleted).toHaveLength(2);
    // the ledger's progress ends at everything it showed
    const ledgerSurvey = asked.shown[1]!;
    expect(progress.get(ledgerSurvey.where)).toBe(ledgerSurvey.counts.reduce((n, c) => n + c.count, 0));
    // assess: alpha is gone, the others are exactly as they were
    const after = b.snapshot();
    const ofAlpha = (l: string): boolean => /alpha(?![0-9])/.test(l);
    expect(before.filter(ofAlpha).length).toBeGreaterThan(15);
    expect(after).toEqual(before.filter((l) => !ofAlpha(l)));
    if (b.aws) expect([dynamo.unprocessedWrites, (dynamo.calls.get('Scan') ?? 0) > 4]).toEqual([0, true]);
    // and a second purge finds nothing
    await expect(purgeCampaign({ campaign: 'alpha', sources: b.sources(), guard: b.guard('alpha'), confirm: yes().confirm })).rejects.toThrow(UnknownCampaignError);
    await b.close();
    dynamo.scanPageSize = 1000;
    s3.pageSize = 1000;
  });

  it('deletes nothing when the confirmation is refused, and refuses an unknown campaign or a name with path characters', async () => {
    const b = make();
    await fillLedger(b.ledger, 'keep');
    await fillFiles(b.store, 'keep');
    const before = b.snapshot();
    const outcome = await purgeCampaign({ campaign: 'keep', sources: b.sources(), guard: b.guard('keep'), confirm: async () => false });
    expect(outcome.deleted).toBeUndefined();
    expect(b.snapshot()).toEqual(before);

    const unknown = purgeCampaign({ campaign: 'nobody', sources: b.sources(), guard: b.guard('nobody'), confirm: async () => true });
    await expect(unknown).rejects.toThrow(UnknownCampaignError);
    await expect(purgeCampaign({ campaign: 'nobody', sources: b.sources(), guard: b.guard('nobody'), confirm: async () => true })).rejects.toThrow(
      /campaign "nobody" has nothing to purge: nothing in .*nobody.*, nor in .*; check the name/,
    );
    for (const bad of ['../keep', 'keep/generate', '..', 'a b']) {
      await expect(purgeCampaign({ campaign: bad, sources: b.sources(), guard: b.guard('keep'), confirm: async () => true })).rejects.toThrow(
        `campaign name ${JSON.stringify(bad)} is not a safe path segment`,
      );
    }
    expect(b.snapshot()).toEqual(before);
    await b.close();
  });
});

describe('purge locally: the run lock', () => {
  it('refuses while a live run holds the lock, deletes nothing and leaves the lock to its holder', async () => {
    const b = localBackend();
    await fillLedger(b.ledger, 'busy');
    await fillFiles(b.store, 'busy');
    const lock = await acquireRunLock((b.store as LocalBlobStore).root, 'busy', 'run-live');
    const before = b.snapshot();
    let asked = false;
    const attempt = purgeCampaign({ campaign: 'busy', sources: b.sources(), guard: b.guard('busy'), confirm: async () => (asked = true) });
    await expect(attempt).rejects.toThrow(CampaignBusyError);
    await expect(purgeCampaign({ campaign: 'busy', sources: b.sources(), guard: b.guard('busy'), confirm: async () => true })).rejects.toThrow(
      new RegExp(`nothing purged: campaign "busy" is already running in process ${process.pid} \\(run run-live, .*\\); stop it first`),
    );
    expect(asked).toBe(false);
    expect(b.snapshot()).toEqual(before);
    expect(existsSync(lock.path)).toBe(true);
    // once the run has ended, the purge goes through and removes the folder with its lock
    await lock.release();
    await purgeCampaign({ campaign: 'busy', sources: b.sources(), guard: b.guard('busy'), confirm: async () => true });
    expect(existsSync(path.dirname(lock.path))).toBe(false);
    await b.close();
  });

  it('holds the lock while it asks: a run starting meanwhile is refused; an unknown campaign gets no folder', async () => {
    const b = localBackend();
    const dataDir = (b.store as LocalBlobStore).root;
    await fillFiles(b.store, 'held');
    await purgeCampaign({
      campaign: 'held',
      sources: b.sources(),
      guard: b.guard('held'),
      confirm: async () => {
        await expect(acquireRunLock(dataDir, 'held', 'run-meanwhile')).rejects.toThrow(/already running/);
        return false;
      },
    });
    // declined: the lock is released, the files stay
    await (await acquireRunLock(dataDir, 'held', 'run-after')).release();
    expect(Object.keys(tree(path.join(dataDir, 'campaigns', 'held')))).toContain(path.join('input', 'campaign.yaml'));
    await expect(purgeCampaign({ campaign: 'ghost', sources: b.sources(), guard: b.guard('ghost'), confirm: async () => true })).rejects.toThrow(UnknownCampaignError);
    expect(existsSync(path.join(dataDir, 'campaigns', 'ghost'))).toBe(false);
    await b.close();
  });

  it("purges every table of the embedded ledger: each one keys its rows by campaign, or by a partition that names it", async () => {
    const dataDir = mkdtempSync(path.join(root, 'schema-'));
    await new EmbeddedLedger(dataDir).close();
    const all = new EmbeddedLedgerRows(dataDir).tables();
    expect(all.length).toBeGreaterThanOrEqual(7);
    expect(all.filter((t) => t.byCampaign === undefined)).toEqual([]);
    expect(all.find((t) => t.name === 'items')?.byCampaign).toMatch(/item_partitions WHERE campaign = \?/);
  });
});

describe('purge on AWS: S3 versions and failures', () => {
  it('deletes older versions and delete markers too, and counts them apart', async () => {
    const b = awsBackend();
    await fillFiles(b.store, 'versioned');
    const key = 'campaigns/versioned/plan.json';
    const bucket = (b.store as S3BlobStore).bucket;
    s3.versions.set(`${bucket}/${key}`, [{ versionId: 'v-old', body: Buffer.from('{"old":true}') }]);
    s3.versions.set(`${bucket}/campaigns/versioned/gone.json`, [{ versionId: 'm-1' }, { versionId: 'v-1', body: Buffer.from('gone') }]);
    s3.versions.set(`${bucket}/campaigns/other/plan.json`, [{ versionId: 'v-other', body: Buffer.from('{}') }]);
    const [objects] = b.sources();
    const survey = await objects!.survey('versioned');
    expect(survey.where).toBe(`s3://${bucket}/campaigns/versioned/`);
    expect(survey.counts).toEqual([
      { what: 'objects', count: 6, bytes: 1500 + 500 + 3 + 8 + 10 + 2 },
      { what: 'older versions of objects', count: 2, bytes: 12 + 4 },
      { what: 'delete markers', count: 1 },
    ]);
    await objects!.purge('versioned', survey);
    expect(b.snapshot().filter((l) => l.includes('versioned'))).toEqual([]);
    expect(s3.versions.has(`${bucket}/campaigns/other/plan.json`)).toBe(true);
    await b.close();
  });

  it('names the objects S3 refused to delete, deletes the rest, and says to run it again', async () => {
    const b = awsBackend();
    await fillFiles(b.store, 'refused');
    await fillLedger(b.ledger, 'refused');
    s3.refuseDeletes.add('campaigns/refused/results/summary.md');
    try {
      const attempt = purgeCampaign({ campaign: 'refused', sources: b.sources(), guard: open, confirm: async () => true });
      await expect(attempt).rejects.toThrow(
        /purge of "refused" stopped in s3:\/\/.*\/campaigns\/refused\/: 1 of 6 object versions could not be deleted \(5 were\): campaigns\/refused\/results\/summary\.md \(version null\): AccessDenied Access Denied; run `sondage purge` again/,
      );
      // the ledger comes after the objects: it is still whole, so a second purge finds the campaign
      expect(b.snapshot().filter((l) => l.includes('refused') && !l.includes('summary.md')).some((l) => l.startsWith('budget'))).toBe(true);
    } finally {
      s3.refuseDeletes.clear();
    }
    await purgeCampaign({ campaign: 'refused', sources: b.sources(), guard: open, confirm: async () => true });
    expect(b.snapshot().filter((l) => l.includes('refused'))).toEqual([]);
    await b.close();
  });

  it('recognises every ledger key of a campaign, whatever follows the name', () => {
    expect(['ITEM#demo#generate', 'PART#demo#judge', 'SEQ#demo#generate', 'BATCH#demo', 'FAILURE#demo', 'ITEM#demo#generate#07'].map(ledgerKeyCampaign)).toEqual(
      Array(6).fill('demo'),
    );
    expect(['ITEM#demo2#generate', 'demo', 'item#demo', 'BATCH#', 'ITEM##x'].map(ledgerKeyCampaign)).toEqual(['demo2', undefined, undefined, undefined, undefined]);
  });

  it('finds the recorded failures of a campaign (rows only the DynamoDB ledger has)', async () => {
    const b = awsBackend();
    const ledger = b.ledger as DynamoLedger;
    await ledger.initCampaign('failing', 1, 'run-1');
    await ledger.recordFailure({ campaign: 'failing', execution: 'arn:x', at: '2026-12-01T00:00:00Z', error: 'States.TaskFailed', cause: 'x' });
    await ledger.recordFailure({ campaign: 'failing2', execution: 'arn:y', at: '2026-12-01T00:00:00Z', error: 'States.TaskFailed', cause: 'y' });
    const items = b.sources()[1]!;
    const survey = await items.survey('failing');
    expect(survey.counts).toEqual([
      { what: 'ledger: recorded failures', count: 1 },
      { what: 'budget: budget (cap and spend)', count: 1 },
    ]);
    await items.purge('failing', survey);
    expect(b.snapshot().filter((l) => /failing(?!2)/.test(l))).toEqual([]);
    expect(b.snapshot().filter((l) => l.includes('failing2'))).toHaveLength(1);
    await b.close();
  });
});

describe('formatting', () => {
  it('shows sizes in decimal units and one line per kind of thing', () => {
    expect([0, 999, 1000, 1_234_567, 45_600_000_000].map(formatBytes)).toEqual(['0 B', '999 B', '1.0 kB', '1.2 MB', '46 GB']);
    expect(formatCounts('s3://b/campaigns/x/', [{ what: 'objects', count: 12_345, bytes: 2_000_000 }, { what: 'delete markers', count: 0 }, { what: 'reservations', count: 2 }])).toEqual([
      '  s3://b/campaigns/x/',
      '    objects       12,345  (2.0 MB)',
      '    reservations  2',
    ]);
  });

  it('refuses a campaign name that is not a string segment before looking anywhere', async () => {
    const looked: string[] = [];
    const source: PurgeSource = { survey: async (c) => (looked.push(c), { where: 'x', counts: [], plan: [] }), purge: async () => [] };
    await expect(purgeCampaign({ campaign: 'a/b', sources: [source], guard: open, confirm: async () => true })).rejects.toThrow(SondageError);
    expect(looked).toEqual([]);
  });
});
