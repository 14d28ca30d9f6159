/**
 * The DynamoDB stand-in (dynamoServer.ts, its own condition and update-expression parser) is the
 * only witness that the budget's conditional writes hold on AWS. Here it is
 * cross-checked against a kept emulator, dynalite (npm; no transactions): the same single-item
 * ledger cases — conditional puts, conditional updates with SET and ADD, condition failures, the
 * budget reservation pattern of lib/store/DynamoLedger.ts as its single-item writes, the item
 * marks, key-condition queries — sent to both through the same SDK client code, with equal
 * outcomes required: the same successes and error names, the same returned attributes and the
 * same stored items.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoLedger } from '../../lib/store/DynamoLedger.js';
import { startDynamoServer } from './dynamoServer.js';
import type { DynamoServer } from './dynamoServer.js';

const TABLES = ['ledger', 'budget'];
const CLIENT = { region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 };

let standIn: DynamoServer;
let emulator: Server;
const clients: { name: string; db: DynamoDBDocumentClient; raw: DynamoDBClient }[] = [];

beforeAll(async () => {
  standIn = await startDynamoServer();
  emulator = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => emulator.listen(0, '127.0.0.1', resolve));
  const emulatorUrl = `http://127.0.0.1:${(emulator.address() as AddressInfo).port}`;
  for (const [name, url] of [['stand-in', standIn.url], ['dynalite', emulatorUrl]] as const) {
    const raw = new DynamoDBClient({ ...CLIENT, endpoint: url });
    clients.push({ name, raw, db: DynamoDBDocumentClient.from(raw) });
  }
  // The stand-in makes tables on first use; dynalite needs them created (as the stack does).
  for (const TableName of TABLES) {
    await clients[1]!.raw.send(
      new CreateTableCommand({
        TableName,
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
  }
});

afterAll(async () => {
  for (const c of clients) c.raw.destroy();
  await standIn.close();
  await new Promise<void>((resolve) => emulator.close(() => resolve()));
});

type Command = GetCommand | PutCommand | UpdateCommand | DeleteCommand | QueryCommand;
/** What one request came to: its output's data fields, or the error's name. */
type Outcome = { ok: true; out: Record<string, unknown> } | { ok: false; error: string };

async function outcome(db: DynamoDBDocumentClient, command: Command): Promise<Outcome> {
  try {
    const out = (await db.send(command as never)) as Record<string, unknown>;
    const data = Object.fromEntries(Object.entries(out).filter(([k]) => ['Item', 'Items', 'Attributes', 'Count'].includes(k)));
    return { ok: true, out: data };
  } catch (err) {
    return { ok: false, error: (err as Error).name };
  }
}

/** Runs the same requests, in order, against both servers; returns each server's outcomes. */
async function both(steps: readonly (() => Command)[]): Promise<Record<string, Outcome[]>> {
  const out: Record<string, Outcome[]> = {};
  for (const c of clients) {
    out[c.name] = [];
    for (const step of steps) out[c.name]!.push(await outcome(c.db, step()));
  }
  return out;
}

let n = 0;
const fresh = (): string => `case-${++n}`;

/** Requires equal outcomes, and returns the stand-in's for the case's own assertions. */
async function expectSame(steps: readonly (() => Command)[]): Promise<Outcome[]> {
  const out = await both(steps);
  expect(out['stand-in'], 'the stand-in answers as dynalite does').toEqual(out['dynalite']);
  return out['stand-in']!;
}

const get = (TableName: string, pk: string, sk: string) => () => new GetCommand({ TableName, Key: { pk, sk }, ConsistentRead: true });
const failed = (o: Outcome): string | undefined => (o.ok ? undefined : o.error);

describe('the DynamoDB stand-in answers single-item ledger requests as dynalite does', () => {
  it('conditional put: attribute_not_exists(pk) admits the first write and refuses the second, leaving the first', async () => {
    const c = fresh();
    const put = (v: number) => () => new PutCommand({ TableName: 'budget', Item: { pk: c, sk: 'RES#r1', amount_usd: v, run_id: 'run-1' }, ConditionExpression: 'attribute_not_exists(pk)' });
    const out = await expectSame([put(0.25), put(0.5), get('budget', c, 'RES#r1')]);
    expect(out.map(failed)).toEqual([undefined, 'ConditionalCheckFailedException', undefined]);
  });

  it('the budget as DynamoLedger keeps it: init, reservations against the headroom until the cap refuses one, settle, release, a cap raised', async () => {
    const c = fresh();
    const key = { pk: c, sk: 'BUDGET' };
    const init = () =>
      new UpdateCommand({
        TableName: 'budget',
        Key: key,
        ConditionExpression: 'attribute_not_exists(pk)',
        UpdateExpression: 'SET cap_usd = :cap, spent_usd = :zero, reserved_usd = :zero, headroom_usd = :cap, run_id = :run',
        ExpressionAttributeValues: { ':cap': 1, ':zero': 0, ':run': 'run-1' },
      });
    // reserve: the budget item's half of DynamoLedger.reserve's transaction (dynalite has none)
    const reserve = (a: number) => () =>
      new UpdateCommand({
        TableName: 'budget',
        Key: key,
        ConditionExpression: 'attribute_exists(pk) AND headroom_usd >= :need',
        UpdateExpression: 'SET headroom_usd = headroom_usd - :a, reserved_usd = reserved_usd + :a',
        ExpressionAttributeValues: { ':a': a, ':need': a - 1e-12 },
        ReturnValues: 'ALL_NEW',
      });
    const settle = (spent: number, released: number) => () =>
      new UpdateCommand({
        TableName: 'budget',
        Key: key,
        ConditionExpression: 'attribute_exists(pk)',
        UpdateExpression: 'SET spent_usd = spent_usd + :spent, reserved_usd = reserved_usd - :released, headroom_usd = headroom_usd + :back',
        ExpressionAttributeValues: { ':spent': spent, ':released': released, ':back': released - spent },
        ReturnValues: 'ALL_NEW',
      });
    const raise = (oldCap: number, cap: number) => () =>
      new UpdateCommand({
        TableName: 'budget',
        Key: key,
        ConditionExpression: 'cap_usd = :old',
        UpdateExpression: 'SET cap_usd = :cap, headroom_usd = headroom_usd + :delta, run_id = :run',
        ExpressionAttributeValues: { ':old': oldCap, ':cap': cap, ':delta': cap - oldCap, ':run': 'run-2' },
        ReturnValues: 'UPDATED_NEW',
      });
    const out = await expectSame([
      init,
      init, // a second init is refused: the budget exists
      reserve(0.4),
      reserve(0.4),
      reserve(0.4), // 0.2 left: refused
      reserve(0.2), // exactly the headroom: granted
      settle(0.3, 0.4),
      settle(0, 0.4),
      raise(2, 3), // stale cap: refused
      raise(1, 2),
      reserve(1.3),
      get('budget', c, 'BUDGET'),
    ]);
    expect(out.map(failed)).toEqual([undefined, 'ConditionalCheckFailedException', undefined, undefined, 'ConditionalCheckFailedException', undefined, undefined, undefined, 'ConditionalCheckFailedException', undefined, undefined, undefined]);
    // DynamoDB's numbers are decimals: the headroom is exactly what is left, 0 after the last 0.2 of 1.
    expect(out[5]).toMatchObject({ ok: true, out: { Attributes: { headroom_usd: 0, reserved_usd: 1 } } });
    // (the settle's :back, 0.4 − 0.3, is computed in JavaScript before it is sent: 0.10000000000000003)
    expect(out.at(-1)).toEqual({ ok: true, out: { Item: { pk: c, sk: 'BUDGET', cap_usd: 2, spent_usd: 0.3, reserved_usd: 1.5, headroom_usd: 0.20000000000000004, run_id: 'run-2' } } });
  });

  it('a reservation on a campaign without a budget is refused (attribute_exists), and one past the cap on the first try', async () => {
    const c = fresh();
    const reserve = () =>
      new UpdateCommand({
        TableName: 'budget',
        Key: { pk: c, sk: 'BUDGET' },
        ConditionExpression: 'attribute_exists(pk) AND headroom_usd >= :need',
        UpdateExpression: 'SET headroom_usd = headroom_usd - :a, reserved_usd = reserved_usd + :a',
        ExpressionAttributeValues: { ':a': 0.1, ':need': 0.1 },
      });
    const out = await expectSame([reserve, get('budget', c, 'BUDGET')]);
    expect(out).toEqual([{ ok: false, error: 'ConditionalCheckFailedException' }, { ok: true, out: {} }]);
  });

  it('ADD counts from nothing and SET if_not_exists keeps a first value (the registration counter, the merged reservation)', async () => {
    const c = fresh();
    const add = (k: number) => () => new UpdateCommand({ TableName: 'ledger', Key: { pk: `SEQ#${c}#generate`, sk: 'SEQ' }, UpdateExpression: 'ADD next_seq :n', ExpressionAttributeValues: { ':n': k }, ReturnValues: 'ALL_NEW' });
    const merge = (s: number, run: string) => () =>
      new UpdateCommand({
        TableName: 'budget',
        Key: { pk: c, sk: 'RES#part#merged' },
        UpdateExpression: 'ADD amount_usd :s SET run_id = if_not_exists(run_id, :run)',
        ExpressionAttributeValues: { ':s': s, ':run': run },
        ReturnValues: 'ALL_NEW',
      });
    const out = await expectSame([add(25), add(25), add(7), merge(0.125, 'run-a'), merge(0.375, 'run-b')]);
    expect(out.at(-1)).toEqual({ ok: true, out: { Attributes: { pk: c, sk: 'RES#part#merged', amount_usd: 0.5, run_id: 'run-a' } } });
  });

  it('a release deletes a reservation only while it holds the amount read (amount_usd = :a)', async () => {
    const c = fresh();
    const put = () => new PutCommand({ TableName: 'budget', Item: { pk: c, sk: 'RES#r', amount_usd: 0.1 + 0.2, run_id: 'x' } });
    const del = (a: number) => () => new DeleteCommand({ TableName: 'budget', Key: { pk: c, sk: 'RES#r' }, ConditionExpression: 'amount_usd = :a', ExpressionAttributeValues: { ':a': a } });
    const out = await expectSame([put, del(0.3), del(0.1 + 0.2), del(0.1 + 0.2), get('budget', c, 'RES#r')]);
    // 0.1 + 0.2 is stored as JSON writes it (0.30000000000000004), not 0.3
    expect(out.map(failed)).toEqual([undefined, 'ConditionalCheckFailedException', undefined, 'ConditionalCheckFailedException', undefined]);
  });

  it('item marks: attribute_not_exists(#s) OR #s <> :done keeps an item done, with names bound by ExpressionAttributeNames', async () => {
    const c = fresh();
    const mark = (state: string, part: string) => () =>
      new UpdateCommand({
        TableName: 'ledger',
        Key: { pk: `ITEM#${c}#generate`, sk: 'item-1' },
        ConditionExpression: 'attribute_not_exists(#s) OR #s <> :done',
        UpdateExpression: 'SET #s = :state, part_key = :part, permanent = :perm',
        ExpressionAttributeNames: { '#s': 'state' },
        ExpressionAttributeValues: { ':done': 'done', ':state': state, ':part': part, ':perm': false },
      });
    const out = await expectSame([mark('failed', 'p1'), mark('done', 'p2'), mark('failed', 'p3'), mark('done', 'p4'), get('ledger', `ITEM#${c}#generate`, 'item-1')]);
    expect(out.map(failed)).toEqual([undefined, undefined, 'ConditionalCheckFailedException', 'ConditionalCheckFailedException', undefined]);
    expect(out.at(-1)).toMatchObject({ ok: true, out: { Item: { state: 'done', part_key: 'p2', permanent: false } } });
  });

  it('batch records: close with a TTL, cancel once with if_not_exists, refuse a cancel of a closed one (#s = :open)', async () => {
    const c = fresh();
    const key = { pk: `BATCH#${c}`, sk: 'b-1' };
    const record = () => new PutCommand({ TableName: 'ledger', Item: { ...key, state: 'open', reservation_id: 'r' }, ConditionExpression: 'attribute_not_exists(pk)' });
    const cancel = (at: string) => () =>
      new UpdateCommand({
        TableName: 'ledger',
        Key: key,
        ConditionExpression: '#s = :open',
        UpdateExpression: 'SET cancelled_at = if_not_exists(cancelled_at, :at)',
        ExpressionAttributeNames: { '#s': 'state' },
        ExpressionAttributeValues: { ':open': 'open', ':at': at },
        ReturnValues: 'ALL_NEW',
      });
    const close = () =>
      new UpdateCommand({
        TableName: 'ledger',
        Key: key,
        UpdateExpression: 'SET #s = :closed, #ttl = :ttl',
        ExpressionAttributeNames: { '#s': 'state', '#ttl': 'expires_at' },
        ExpressionAttributeValues: { ':closed': 'closed', ':ttl': 1_900_000_000 },
      });
    const out = await expectSame([record, record, cancel('t1'), cancel('t2'), close, cancel('t3'), get('ledger', key.pk, key.sk)]);
    expect(out.map(failed)).toEqual([undefined, 'ConditionalCheckFailedException', undefined, undefined, undefined, 'ConditionalCheckFailedException', undefined]);
    expect(out.at(-1)).toMatchObject({ ok: true, out: { Item: { state: 'closed', cancelled_at: 't1', expires_at: 1_900_000_000 } } });
  });

  it('comparisons: <>, <, <=, >, >= on numbers (by value) and strings (by bytes); an absent attribute or another type compares false, but <> true; reserved words refused', async () => {
    const c = fresh();
    const put = () => new PutCommand({ TableName: 'ledger', Item: { pk: c, sk: 'x', n: 5, s: 'beta' } });
    const check = (expr: string, values: Record<string, unknown>) => () =>
      new UpdateCommand({ TableName: 'ledger', Key: { pk: c, sk: 'x' }, ConditionExpression: expr, UpdateExpression: 'SET touched = :t', ExpressionAttributeValues: { ...values, ':t': true } });
    const cases: [string, Record<string, unknown>][] = [
      ['n <> :v', { ':v': 5 }],
      ['n <> :v', { ':v': 4 }],
      ['n < :v', { ':v': 5.5 }],
      ['n <= :v', { ':v': 5 }],
      ['n > :v', { ':v': 5 }],
      ['n >= :v', { ':v': 5 }],
      ['s < :v', { ':v': 'gamma' }],
      ['s > :v', { ':v': 'gamma' }],
      ['absent_n < :v', { ':v': 1 }],
      ['absent_n <> :v', { ':v': 1 }],
      ['absent_n = :v', { ':v': 1 }],
      ['n < :v', { ':v': 'six' }],
      ['n <> :v', { ':v': '5' }],
      ['n = :v', { ':v': 5.0 }],
      ['n = :v OR s = :w', { ':v': 0, ':w': 'beta' }],
      ['n = :v AND s = :w', { ':v': 5, ':w': 'alpha' }],
      ['#size > :v', { ':v': 1 }],
      ['size > :v', { ':v': 1 }],
    ];
    const out = await expectSame([put, ...cases.map(([e, v]) => check(e, v)), get('ledger', c, 'x')]);
    expect(out.slice(1, -1).map((o) => o.ok)).toEqual([false, true, true, true, false, true, true, false, false, true, false, false, true, true, true, false, false, false]);
    // an attribute name not bound, and a reserved word used bare, are refused
    expect(out.slice(-3, -1).map(failed)).toEqual(['ValidationException', 'ValidationException']);
  });

  it('queries by partition key and by begins_with on the sort key, in sort-key order', async () => {
    const c = fresh();
    const put = (sk: string) => () => new PutCommand({ TableName: 'budget', Item: { pk: c, sk, amount_usd: 1 } });
    const query = (expr: string, values: Record<string, unknown>) => () => new QueryCommand({ TableName: 'budget', KeyConditionExpression: expr, ExpressionAttributeValues: values, ConsistentRead: true });
    const out = await expectSame([
      put('RES#b'),
      put('BUDGET'),
      put('RES#a'),
      put('RESX'),
      query('pk = :c AND begins_with(sk, :r)', { ':c': c, ':r': 'RES#' }),
      query('pk = :c', { ':c': c }),
    ]);
    const keys = (o: Outcome | undefined): string[] => (o?.ok ? (o.out['Items'] as { sk: string }[]).map((i) => i.sk) : []);
    expect(keys(out[4])).toEqual(['RES#a', 'RES#b']);
    expect(keys(out[5])).toEqual(['BUDGET', 'RES#a', 'RES#b', 'RESX']);
  });

  it('DynamoLedger itself, where it needs no transaction: budget set and raised, items registered twice, pending and counts, failures recorded', async () => {
    // prepare: one ledger per server, the same calls on each
    const runOn = async (raw: DynamoDBClient): Promise<unknown[]> => {
      const ledger = new DynamoLedger({ ledgerTable: 'ledger', budgetTable: 'budget', client: raw });
      const c = 'ledger-case';
      const ids = Array.from({ length: 130 }, (_, i) => `item-${String(i).padStart(3, '0')}`);
      await ledger.initCampaign(c, 2.5, 'run-1');
      await ledger.initCampaign(c, 4, 'run-2');
      await ledger.registerItems(c, { phase: 'generate', model: 'm', language: 'en' }, ids.slice(0, 100));
      await ledger.registerItems(c, { phase: 'generate', model: 'm', language: 'en' }, ids.slice(90));
      await ledger.recordFailure({ campaign: c, execution: 'arn:e1', at: '2026-12-01T00:00:00.000Z', error: 'States.TaskFailed', cause: 'first' });
      await ledger.recordFailure({ campaign: c, execution: 'arn:e2', at: '2026-12-01T00:01:00.000Z', error: 'SondageFailed', cause: 'second' });
      return [
        await ledger.budget(c),
        [...(await ledger.pendingItems(c, 'generate'))].sort(),
        [...(await ledger.pendingAmong(c, { phase: 'generate', model: 'm', language: 'en' }, ['item-005', 'item-129', 'not-registered']))].sort(),
        await ledger.counts(c, 'generate'),
        await ledger.failures(c),
        [...(await ledger.committedParts(c, 'generate'))],
      ];
    };
    // act
    const [standInOut, dynaliteOut] = [await runOn(clients[0]!.raw), await runOn(clients[1]!.raw)];
    // assess
    expect(standInOut).toEqual(dynaliteOut);
    expect(standInOut[0]).toEqual({ cap_usd: 4, spent_usd: 0, reserved_usd: 0, orphaned_usd: 0, possibly_billed_usd: 0 });
    expect((standInOut[1] as string[]).length).toBe(130);
    expect(standInOut[3]).toEqual({ pending: 130, done: 0, failed: 0 });
  });
});
