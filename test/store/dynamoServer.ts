/**
 * A DynamoDB-compatible server on 127.0.0.1 for the DynamoLedger tests: the JSON protocol
 * (`X-Amz-Target: DynamoDB_20120810.*`) for the operations and the expression forms DynamoLedger
 * uses, nothing more. DynamoDB Local needs Java and dynalite a native binding (classic-level via
 * `level`), and no packages could be added in this step, so this one speaks the subset.
 *
 * Each request is handled to completion before the next (one Node event-loop turn), which is the
 * property the budget test relies on: DynamoDB applies a conditional write or a transaction
 * atomically. Unsupported syntax throws, so a ledger change that needs more fails loudly here.
 *
 * Faults, for the pipeline's fault tests: `injectFault` makes the next matching requests answer
 * ThrottlingException or ProvisionedThroughputExceededException (HTTP 400, as DynamoDB answers
 * them) or InternalServerError (500) before anything is read or written, as DynamoDB refuses a
 * throttled request whole.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer, STAND_IN_KEEP_ALIVE_MS } from '../helpers/localServer.js';
import { DYNAMODB_RESERVED_WORDS } from './dynamoReservedWords.js';

type AttributeValue = { S: string } | { N: string } | { BOOL: boolean } | { NULL: true };
type Item = Record<string, AttributeValue>;
type Values = Record<string, AttributeValue>;
type Names = Record<string, string>;

interface Ctx {
  readonly names: Names;
  readonly values: Values;
}

/** Requests to refuse: the next `times` requests of these operations (default: any). */
export interface DynamoFault {
  readonly times: number;
  readonly type: 'ThrottlingException' | 'ProvisionedThroughputExceededException' | 'InternalServerError';
  readonly operations?: readonly string[];
}

export interface DynamoServer {
  readonly url: string;
  /** Refuses the next matching requests with the fault's error. */
  injectFault(fault: DynamoFault): void;
  /** Requests refused by injected faults so far. */
  readonly faultsServed: number;
  /** Requests served, by operation (the tests assert that transactions were used). */
  readonly calls: Map<string, number>;
  /**
   * Writes that BatchWriteItem hands back as UnprocessedItems (a throttled partition) before it
   * processes any more; counts down. Lets a test check that the caller retries them.
   */
  unprocessedWrites: number;
  /**
   * Keys that BatchGetItem hands back as UnprocessedKeys (throttled reads) before it answers any
   * more; counts down. Lets a test check that the caller asks for them again.
   */
  unprocessedReads: number;
  /** Items per Scan page before a LastEvaluatedKey (DynamoDB stops at 1 MB; small in tests, so paging is exercised). */
  scanPageSize: number;
  /** The raw items of a table, for assertions on what the ledger wrote. */
  items(table: string): Item[];
  close(): Promise<void>;
}

class Failed extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

const keyOf = (item: Item): string => `${JSON.stringify(item.pk)}|${JSON.stringify(item.sk)}`;

function name(token: string, ctx: Ctx): string {
  if (token.startsWith('#')) {
    const n = ctx.names[token];
    if (n === undefined) throw new Failed('ValidationException', `undefined name ${token}`);
    return n;
  }
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(token)) throw new Failed('ValidationException', `unsupported path ${token}`);
  // DynamoDB refuses a reserved word used as an attribute name outside ExpressionAttributeNames.
  if (DYNAMODB_RESERVED_WORDS.has(token.toUpperCase())) throw new Failed('ValidationException', `Attribute name is a reserved keyword; reserved keyword: ${token}`);
  return token;
}

/**
 * DynamoDB numbers are decimals (up to 38 digits), and its arithmetic is exact: 0.1 + 0.2 is 0.3,
 * where binary floating point gives 0.30000000000000004. A number here is a bigint of digits and a
 * decimal scale, so that ADD, SET a + b and comparisons give what DynamoDB gives.
 */
interface Decimal {
  readonly digits: bigint;
  readonly scale: number;
}

function decimal(text: string): Decimal {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw new Failed('ValidationException', `${text} is not a number`);
  const fraction = m[3] ?? '';
  const exponent = Number(m[4] ?? 0);
  let digits = BigInt(`${m[2] || '0'}${fraction}`);
  let scale = fraction.length - exponent;
  if (scale < 0) {
    digits *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { digits: m[1] === '-' ? -digits : digits, scale };
}

function aligned(a: Decimal, b: Decimal): [bigint, bigint, number] {
  const scale = Math.max(a.scale, b.scale);
  return [a.digits * 10n ** BigInt(scale - a.scale), b.digits * 10n ** BigInt(scale - b.scale), scale];
}

/** The sum (or difference) of two N values, written as DynamoDB writes numbers: no exponent, no trailing zeros. */
function addNumbers(a: string, b: string, sign: 1 | -1): string {
  const [x, y, scale] = aligned(decimal(a), decimal(b));
  const sum = x + (sign === 1 ? y : -y);
  const negative = sum < 0n;
  let text = (negative ? -sum : sum).toString().padStart(scale + 1, '0');
  if (scale > 0) text = `${text.slice(0, -scale)}.${text.slice(-scale)}`.replace(/\.?0+$/, '');
  return text === '0' ? '0' : `${negative ? '-' : ''}${text}`;
}

function compareNumbers(a: string, b: string): number {
  const [x, y] = aligned(decimal(a), decimal(b));
  return x < y ? -1 : x > y ? 1 : 0;
}

function value(token: string, item: Item, ctx: Ctx): AttributeValue | undefined {
  token = token.trim();
  if (token.startsWith(':')) {
    const v = ctx.values[token];
    if (v === undefined) throw new Failed('ValidationException', `undefined value ${token}`);
    return v;
  }
  return item[name(token, ctx)];
}

function numText(v: AttributeValue | undefined, what: string): string {
  if (!v || !('N' in v)) throw new Failed('ValidationException', `${what} is not a number`);
  return v.N;
}

function equal(a: AttributeValue | undefined, b: AttributeValue | undefined): boolean {
  if (!a || !b) return false;
  if ('N' in a && 'N' in b) return compareNumbers(a.N, b.N) === 0;
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Order of two values of the same type (N by value, S by UTF-8 bytes, as DynamoDB orders them); undefined for others. */
function order(a: AttributeValue, b: AttributeValue): number | undefined {
  if ('N' in a && 'N' in b) return compareNumbers(a.N, b.N);
  if ('S' in a && 'S' in b) return Buffer.compare(Buffer.from(a.S, 'utf8'), Buffer.from(b.S, 'utf8'));
  return undefined;
}

function condition(expr: string | undefined, item: Item | undefined, ctx: Ctx): boolean {
  if (!expr) return true;
  const it = item ?? {};
  return expr.split(/\s+OR\s+/).some((alt) =>
    alt.split(/\s+AND\s+/).every((term) => {
      term = term.trim();
      let m = /^attribute_(not_)?exists\(\s*([#\w]+)\s*\)$/.exec(term);
      if (m) return (it[name(m[2]!, ctx)] === undefined) === (m[1] !== undefined);
      m = /^begins_with\(\s*([#\w]+)\s*,\s*(:\w+)\s*\)$/.exec(term);
      if (m) {
        const v = value(m[1]!, it, ctx);
        const p = value(m[2]!, it, ctx);
        return !!v && 'S' in v && !!p && 'S' in p && v.S.startsWith(p.S);
      }
      m = /^([#:\w]+)\s*(=|<>|>=|<=|>|<)\s*([#:\w]+)$/.exec(term);
      if (!m) throw new Failed('ValidationException', `unsupported condition term "${term}"`);
      const [a, b] = [value(m[1]!, it, ctx), value(m[3]!, it, ctx)];
      switch (m[2]) {
        case '=':
          return equal(a, b);
        case '<>':
          // An absent attribute is unequal to any value (DynamoDB, and dynalite, say true).
          return !equal(a, b);
        default: {
          // An absent attribute, or values of different types, compare false (no error).
          const c = a && b ? order(a, b) : undefined;
          if (c === undefined) return false;
          return m[2] === '>=' ? c >= 0 : m[2] === '<=' ? c <= 0 : m[2] === '>' ? c > 0 : c < 0;
        }
      }
    }),
  );
}

function operand(token: string, item: Item, ctx: Ctx): AttributeValue | undefined {
  token = token.trim();
  const m = /^if_not_exists\(\s*([#\w]+)\s*,\s*(:\w+)\s*\)$/.exec(token);
  if (m) return item[name(m[1]!, ctx)] ?? value(m[2]!, item, ctx);
  return value(token, item, ctx);
}

function update(expr: string, item: Item, ctx: Ctx): Item {
  const next: Item = { ...item };
  const clauses = expr.split(/\b(SET|ADD)\s+/).filter((s) => s.trim() !== '');
  for (let i = 0; i < clauses.length; i += 2) {
    const kind = clauses[i];
    const body = clauses[i + 1] ?? '';
    const actions = body.split(/,(?![^()]*\))/).map((a) => a.trim()).filter((a) => a !== '');
    for (const action of actions) {
      if (kind === 'ADD') {
        const [path, v] = action.split(/\s+/);
        const n = name(path!, ctx);
        const old = item[n];
        next[n] = { N: addNumbers(old ? numText(old, n) : '0', numText(value(v!, item, ctx), v!), 1) };
      } else if (kind === 'SET') {
        const m = /^([#\w]+)\s*=\s*(.+)$/.exec(action);
        if (!m) throw new Failed('ValidationException', `unsupported SET action "${action}"`);
        const rhs = m[2]!;
        const arith = /^(.+?)\s+([+-])\s+(.+)$/.exec(rhs);
        let v: AttributeValue | undefined;
        if (arith) {
          const [a, b] = [numText(operand(arith[1]!, item, ctx), arith[1]!), numText(operand(arith[3]!, item, ctx), arith[3]!)];
          v = { N: addNumbers(a, b, arith[2] === '+' ? 1 : -1) };
        } else {
          v = operand(rhs, item, ctx);
        }
        if (v === undefined) throw new Failed('ValidationException', `SET ${m[1]}: operand has no value`);
        next[name(m[1]!, ctx)] = v;
      } else {
        throw new Failed('ValidationException', `unsupported update clause ${kind}`);
      }
    }
  }
  return next;
}

export async function startDynamoServer(): Promise<DynamoServer> {
  const tables = new Map<string, Map<string, Item>>();
  const calls = new Map<string, number>();
  const state: { unprocessedWrites: number; unprocessedReads: number; scanPageSize: number } = { unprocessedWrites: 0, unprocessedReads: 0, scanPageSize: 1000 };
  const faults: { left: number; fault: DynamoFault }[] = [];
  let faultsServed = 0;
  const table = (n: string): Map<string, Item> => {
    let t = tables.get(n);
    if (!t) tables.set(n, (t = new Map()));
    return t;
  };
  const ctxOf = (r: { ExpressionAttributeNames?: Names; ExpressionAttributeValues?: Values }): Ctx => ({
    names: r.ExpressionAttributeNames ?? {},
    values: r.ExpressionAttributeValues ?? {},
  });

  interface WriteRequest {
    TableName: string;
    Key?: Item;
    Item?: Item;
    ConditionExpression?: string;
    UpdateExpression?: string;
    ExpressionAttributeNames?: Names;
    ExpressionAttributeValues?: Values;
    ReturnValues?: string;
  }
  // Checks a write; returns the function that applies it (so a transaction checks all, then applies all).
  const prepare = (kind: 'Put' | 'Update' | 'Delete' | 'ConditionCheck', r: WriteRequest): (() => Item | undefined) => {
    const t = table(r.TableName);
    const key = kind === 'Put' ? r.Item! : r.Key!;
    const id = keyOf(key);
    const current = t.get(id);
    const ctx = ctxOf(r);
    if (!condition(r.ConditionExpression, current, ctx)) throw new Failed('ConditionalCheckFailedException', 'The conditional request failed');
    if (kind === 'Put') return () => (t.set(id, { ...r.Item! }), r.Item);
    if (kind === 'Delete') return () => (t.delete(id), undefined);
    if (kind === 'ConditionCheck') return () => undefined;
    const next = update(r.UpdateExpression ?? '', { ...(current ?? {}), ...r.Key! }, ctx);
    return () => (t.set(id, next), next);
  };

  /**
   * A write and the attributes its ReturnValues asks for: ALL_OLD / ALL_NEW the whole item before
   * or after, UPDATED_OLD / UPDATED_NEW only the attributes the update set or added.
   */
  const returned = (b: Record<string, unknown>, kind: 'Put' | 'Update' | 'Delete'): unknown => {
    const r = b as unknown as WriteRequest;
    const mode = r.ReturnValues ?? 'NONE';
    const allowed = kind === 'Update' ? ['NONE', 'ALL_OLD', 'UPDATED_OLD', 'ALL_NEW', 'UPDATED_NEW'] : ['NONE', 'ALL_OLD'];
    if (!allowed.includes(mode)) throw new Failed('ValidationException', `ReturnValues ${mode} is not valid for ${kind}Item`);
    const key = kind === 'Put' ? r.Item! : r.Key!;
    const before = table(r.TableName).get(keyOf(key));
    const after = prepare(kind, r)();
    const changed = Object.keys(after ?? {}).filter((k) => JSON.stringify(after![k]) !== JSON.stringify(before?.[k]) || !(k in (before ?? {})));
    const pick = (item: Item | undefined, keys: string[]): Item => Object.fromEntries(keys.filter((k) => item?.[k] !== undefined).map((k) => [k, item![k]!]));
    switch (mode) {
      case 'ALL_OLD':
        return before ? { Attributes: before } : {};
      case 'ALL_NEW':
        return { Attributes: after };
      case 'UPDATED_OLD':
        return before ? { Attributes: pick(before, changed) } : {};
      case 'UPDATED_NEW':
        return { Attributes: pick(after, changed) };
      default:
        return {};
    }
  };

  const handlers: Record<string, (body: Record<string, unknown>) => unknown> = {
    GetItem: (b) => {
      const item = table(b.TableName as string).get(keyOf(b.Key as Item));
      return item ? { Item: item } : {};
    },
    PutItem: (b) => returned(b, 'Put'),
    DeleteItem: (b) => returned(b, 'Delete'),
    UpdateItem: (b) => returned(b, 'Update'),
    Query: (b) => {
      const ctx = ctxOf(b as unknown as WriteRequest);
      const items = [...table(b.TableName as string).values()]
        .filter((item) => condition(b.KeyConditionExpression as string, item, ctx))
        .sort((x, y) => ((x.sk as { S: string }).S < (y.sk as { S: string }).S ? -1 : 1));
      return { Items: items, Count: items.length, ScannedCount: items.length };
    },
    // `sondage purge --aws` (lib/store/DynamoCampaignItems.ts): parallel segments, pages, a projection; no filter.
    Scan: (b) => {
      if (b.FilterExpression !== undefined) throw new Failed('ValidationException', 'FilterExpression is not served by the test server');
      const total = (b.TotalSegments as number | undefined) ?? 1;
      const segment = (b.Segment as number | undefined) ?? 0;
      // A stable spread of keys over segments, as DynamoDB's hash of the partition key does.
      const segmentOf = (id: string): number => [...id].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) % total;
      const after = b.ExclusiveStartKey ? keyOf(b.ExclusiveStartKey as Item) : undefined;
      const mine = [...table(b.TableName as string).entries()]
        .filter(([id]) => segmentOf(id) === segment && (after === undefined || id > after))
        .sort(([x], [y]) => (x < y ? -1 : 1));
      const page = mine.slice(0, state.scanPageSize);
      const ctx = ctxOf(b as unknown as WriteRequest);
      const names = typeof b.ProjectionExpression === 'string' ? b.ProjectionExpression.split(',').map((t) => name(t.trim(), ctx)) : undefined;
      const items = page.map(([, item]) => (names ? Object.fromEntries(Object.entries(item).filter(([k]) => names.includes(k))) : item));
      const last = page.at(-1)?.[1];
      return {
        Items: items,
        Count: items.length,
        ScannedCount: items.length,
        ...(mine.length > page.length && last ? { LastEvaluatedKey: { pk: last.pk, sk: last.sk } } : {}),
      };
    },
    BatchGetItem: (b) => {
      const responses: Record<string, Item[]> = {};
      const unprocessed: Record<string, { Keys: Item[] } & Record<string, unknown>> = {};
      for (const [t, req] of Object.entries(b.RequestItems as Record<string, { Keys: Item[] }>)) {
        if (req.Keys.length > 100) throw new Failed('ValidationException', 'Too many items requested for the BatchGetItem call');
        const ids = req.Keys.map(keyOf);
        if (new Set(ids).size !== ids.length) throw new Failed('ValidationException', 'Provided list of item keys contains duplicates');
        const held = Math.min(state.unprocessedReads, req.Keys.length);
        state.unprocessedReads -= held;
        if (held > 0) unprocessed[t] = { ...req, Keys: req.Keys.slice(0, held) };
        responses[t] = req.Keys.slice(held)
          .map((k) => table(t).get(keyOf(k)))
          .filter((i): i is Item => i !== undefined);
      }
      return { Responses: responses, UnprocessedKeys: unprocessed };
    },
    BatchWriteItem: (b) => {
      const unprocessed: Record<string, unknown[]> = {};
      for (const [t, reqs] of Object.entries(b.RequestItems as Record<string, { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }[]>)) {
        if (reqs.length > 25) throw new Failed('ValidationException', 'Too many items requested for the BatchWriteItem call');
        const ids = reqs.map((r) => keyOf(r.PutRequest?.Item ?? r.DeleteRequest!.Key));
        if (new Set(ids).size !== ids.length) throw new Failed('ValidationException', 'Provided list of item keys contains duplicates');
        for (const r of reqs) {
          if (state.unprocessedWrites > 0) {
            state.unprocessedWrites--;
            (unprocessed[t] ??= []).push(r);
          } else if (r.PutRequest) table(t).set(keyOf(r.PutRequest.Item), { ...r.PutRequest.Item });
          else table(t).delete(keyOf(r.DeleteRequest!.Key));
        }
      }
      return { UnprocessedItems: unprocessed };
    },
    TransactWriteItems: (b) => {
      const list = b.TransactItems as Record<string, WriteRequest>[];
      const reasons: { Code: string; Message?: string }[] = [];
      const apply: (() => unknown)[] = [];
      for (const entry of list) {
        const [kind, r] = Object.entries(entry)[0] as ['Put' | 'Update' | 'Delete' | 'ConditionCheck', WriteRequest];
        try {
          apply.push(prepare(kind, r));
          reasons.push({ Code: 'None' });
        } catch (err) {
          if (!(err instanceof Failed) || err.type !== 'ConditionalCheckFailedException') throw err;
          reasons.push({ Code: 'ConditionalCheckFailed', Message: err.message });
        }
      }
      if (reasons.some((r) => r.Code !== 'None')) {
        throw new Failed('TransactionCanceledException', `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`, {
          CancellationReasons: reasons,
        });
      }
      for (const a of apply) a();
      return {};
    },
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const op = String(req.headers['x-amz-target'] ?? '').replace('DynamoDB_20120810.', '');
      calls.set(op, (calls.get(op) ?? 0) + 1);
      let status = 200;
      let out: unknown;
      try {
        const hit = faults.find((f) => f.left > 0 && (f.fault.operations?.includes(op) ?? true));
        if (hit) {
          hit.left--;
          faultsServed++;
          const { type } = hit.fault;
          // ThrottlingException is a coral availability error; the others are DynamoDB's own.
          const prefix = type === 'ThrottlingException' ? 'com.amazon.coral.availability' : 'com.amazonaws.dynamodb.v20120810';
          res.writeHead(type === 'InternalServerError' ? 500 : 400, { 'content-type': 'application/x-amz-json-1.0' });
          res.end(JSON.stringify({ __type: `${prefix}#${type}`, message: type === 'InternalServerError' ? 'Internal server error' : 'Rate of requests exceeds the allowed throughput.' }));
          return;
        }
        const handler = handlers[op];
        if (!handler) throw new Failed('UnknownOperationException', `operation ${op} is not served by the test server`);
        out = handler(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
      } catch (err) {
        status = 400;
        const e = err instanceof Failed ? err : new Failed('InternalServerError', String(err));
        if (!(err instanceof Failed)) status = 500;
        out = { __type: `com.amazonaws.dynamodb.v20120810#${e.type}`, message: e.message, ...e.extra };
      }
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify(out));
    });
  });
  server.keepAliveTimeout = STAND_IN_KEEP_ALIVE_MS;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const out = Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    injectFault(fault: DynamoFault) {
      faults.push({ left: fault.times, fault });
    },
    calls,
    items: (t: string) => [...table(t).values()],
    close: () => closeServer(server),
  });
  // A getter, not a copy: Object.assign would read it once.
  return Object.defineProperty(out, 'faultsServed', { get: () => faultsServed, enumerable: true }) as typeof out & { readonly faultsServed: number };
}
