/**
 * The Map state, inline and distributed (Step Functions developer guide, "Map state",
 * "Distributed Map state"):
 *
 * - the items come from ItemsPath (default `$`) or, distributed, from an ItemReader: a JSON array
 *   (or JSON Lines) object read with `s3:getObject`, at most ReaderConfig.MaxItems(Path);
 * - ItemSelector (or the older Parameters) renders each item, with `$$.Map.Item.Index` and
 *   `$$.Map.Item.Value` in the context object; then an ItemBatcher groups the items, by
 *   MaxItemsPerBatch(Path) and MaxInputBytesPerBatch(Path), into child inputs
 *   `{ "Items": [...], "BatchInput": {...} }` (BatchInput rendered against the Map's input);
 * - at most MaxConcurrency(Path) iterations run at once (0: no limit);
 * - inline, an iteration's error is the Map's error; distributed, each batch is a child execution,
 *   and the Map fails with States.ExceedToleratedFailureThreshold once the failed items are more
 *   than ToleratedFailureCount(Path) or more than ToleratedFailurePercentage(Path) percent of all
 *   items (both 0 by default: any failure fails the Map); no child is started after that;
 * - a ResultWriter (`s3:putObject`) writes manifest.json and SUCCEEDED_0.json / FAILED_0.json
 *   under `<Prefix>/<map run id>/`, and the Map's result is then `{ MapRunArn, ResultWriterDetails }`;
 *   without one the result is the array of the (succeeded) iterations' outputs, in item order.
 */
import { randomUUID } from 'node:crypto';
import { runtimeError, StatesError, UnsupportedAslError } from './errors.js';
import { requirePath } from './jsonPath.js';
import { renderTemplate } from './payloadTemplate.js';
import { checkPayloadSize, PAYLOAD_LIMIT_BYTES, roundTrip } from './payloadLimits.js';
import type { Runner, Scope } from './interpreter.js';
import type { AslState, AslStates, Json, JsonObject, S3Access } from './types.js';

interface ChildOutcome {
  readonly index: number;
  readonly input: Json;
  readonly items: number;
  readonly name: string;
  readonly arn: string;
  readonly startDate: string;
  readonly stopDate: string;
  readonly output?: Json;
  readonly error?: StatesError;
}

/** An integer of a field or its …Path twin, read from the Map's input. */
function numberField(state: AslState, field: string, input: Json, fallback: number, check: (n: number) => boolean, what: string): number {
  const path = state[`${field}Path`];
  const value = path !== undefined ? requirePath(input, String(path), `${field}Path`) : (state[field] ?? fallback);
  if (typeof value !== 'number' || !check(value)) throw runtimeError(`${field}${path !== undefined ? `Path ${String(path)}` : ''} of the Map gives ${JSON.stringify(value)}; expected ${what}`);
  return value;
}

/** Runs `work` over indexes 0…n-1, at most `limit` at a time (0: all), stopping new starts once `stop()` says so. */
async function pool(n: number, limit: number, stop: () => boolean, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < n && !stop()) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.min(n, limit === 0 ? n : limit) }, lane));
}

async function readItems(runner: Runner, name: string, state: AslState, input: Json, ctx: Json): Promise<Json[]> {
  if (state.ItemReader === undefined) {
    const items = requirePath(input, (state.ItemsPath as string | undefined) ?? '$', 'ItemsPath');
    if (!Array.isArray(items)) throw runtimeError(`ItemsPath of ${JSON.stringify(name)} gives ${items === null ? 'null' : typeof items}, not an array`);
    return items;
  }
  const reader = state.ItemReader as { Parameters: unknown; ReaderConfig: { InputType: string; MaxItems?: number; MaxItemsPath?: string } };
  const params = renderTemplate(reader.Parameters, input, ctx, 'ItemReader.Parameters') as { Bucket?: Json; Key?: Json };
  if (typeof params.Bucket !== 'string' || typeof params.Key !== 'string') throw runtimeError(`ItemReader of ${JSON.stringify(name)} needs Bucket and Key strings, got ${JSON.stringify(params)}`);
  const s3 = runner.options.integrations.s3;
  if (!s3) throw new UnsupportedAslError('the Map has an ItemReader but no s3 integration is plugged in');
  let body: Uint8Array | undefined;
  try {
    body = await s3.getObject(params.Bucket, params.Key);
  } catch (err) {
    // S3 refused the read (after its own retries): the Map Run cannot start.
    throw new StatesError('States.ItemReaderFailed', `s3://${params.Bucket}/${params.Key}: ${(err as Error).name}: ${(err as Error).message}`);
  }
  if (body === undefined) throw new StatesError('States.ItemReaderFailed', `s3://${params.Bucket}/${params.Key}: NoSuchKey: The specified key does not exist.`);
  const text = Buffer.from(body).toString('utf8');
  let items: Json[];
  try {
    items = reader.ReaderConfig.InputType === 'JSON' ? (JSON.parse(text) as Json[]) : text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Json);
  } catch (err) {
    throw new StatesError('States.ItemReaderFailed', `s3://${params.Bucket}/${params.Key} is not ${reader.ReaderConfig.InputType}: ${(err as Error).message}`);
  }
  if (!Array.isArray(items)) throw new StatesError('States.ItemReaderFailed', `s3://${params.Bucket}/${params.Key} does not hold a JSON array`);
  const rc = reader.ReaderConfig;
  if (rc.MaxItems !== undefined || rc.MaxItemsPath !== undefined) {
    const max = rc.MaxItemsPath !== undefined ? requirePath(input, rc.MaxItemsPath, 'MaxItemsPath') : rc.MaxItems!;
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 0) throw runtimeError(`MaxItems of ${JSON.stringify(name)} gives ${JSON.stringify(max)}`);
    if (max > 0) items = items.slice(0, max);
  }
  return items;
}

/** Groups the (selected) items into child inputs as the ItemBatcher says. */
function batch(state: AslState, items: Json[], input: Json, ctx: Json): { input: Json; items: number }[] {
  const b = state.ItemBatcher as Record<string, unknown> | undefined;
  if (!b) return items.map((item) => ({ input: item, items: 1 }));
  const maxItems = b.MaxItemsPerBatch !== undefined || b.MaxItemsPerBatchPath !== undefined ? numberField(b as AslState, 'MaxItemsPerBatch', input, 0, (n) => Number.isInteger(n) && n > 0, 'a positive integer') : Infinity;
  const maxBytes =
    b.MaxInputBytesPerBatch !== undefined || b.MaxInputBytesPerBatchPath !== undefined
      ? numberField(b as AslState, 'MaxInputBytesPerBatch', input, 0, (n) => Number.isInteger(n) && n > 0 && n <= PAYLOAD_LIMIT_BYTES, `a positive integer ≤ ${PAYLOAD_LIMIT_BYTES}`)
      : PAYLOAD_LIMIT_BYTES;
  const batchInput = b.BatchInput === undefined ? undefined : renderTemplate(b.BatchInput, input, ctx, 'ItemBatcher.BatchInput');
  const wrap = (group: Json[]): Json => (batchInput === undefined ? { Items: group } : { Items: group, BatchInput: batchInput });
  const out: { input: Json; items: number }[] = [];
  let group: Json[] = [];
  for (const item of items) {
    const bytes = Buffer.byteLength(JSON.stringify(wrap([...group, item])), 'utf8');
    if (group.length > 0 && (group.length >= maxItems || bytes > maxBytes)) {
      out.push({ input: wrap(group), items: group.length });
      group = [];
    }
    group.push(item);
    if (Buffer.byteLength(JSON.stringify(wrap(group)), 'utf8') > maxBytes) {
      throw new StatesError('States.DataLimitExceeded', `one item of the Map is over MaxInputBytesPerBatch (${maxBytes} bytes) on its own`, { terminal: true });
    }
  }
  if (group.length > 0) out.push({ input: wrap(group), items: group.length });
  return out;
}

/** The Map's result before ResultSelector. */
export async function runMap(runner: Runner, name: string, state: AslState, input: Json, scope: Scope, retryCount: number): Promise<Json> {
  const processor = (state.ItemProcessor ?? state.Iterator) as AslStates & { ProcessorConfig?: { Mode?: string } };
  const distributed = processor.ProcessorConfig?.Mode === 'DISTRIBUTED';
  const ctx = runner.context(scope, name, retryCount);
  const path = `${scope.path}${name}`;
  const raw = await readItems(runner, name, state, input, ctx);
  const selector = state.ItemSelector ?? state.Parameters;
  const selected = selector === undefined ? raw : raw.map((value, index) => renderTemplate(selector, input, runner.context(scope, name, retryCount, { Map: { Item: { Index: index, Value: value } } }), 'ItemSelector'));
  const children = distributed ? batch(state, selected, input, ctx) : selected.map((item) => ({ input: item, items: 1 }));
  const concurrency = numberField(state, 'MaxConcurrency', input, 0, (n) => Number.isInteger(n) && n >= 0, 'an integer ≥ 0');
  // Either threshold applies where given (both: the Map fails past either); neither given: 0 %.
  const given = (field: string): boolean => distributed && (state[field] !== undefined || state[`${field}Path`] !== undefined);
  const toleratedCount = given('ToleratedFailureCount') ? numberField(state, 'ToleratedFailureCount', input, 0, (n) => Number.isInteger(n) && n >= 0, 'an integer ≥ 0') : undefined;
  const toleratedPercent =
    given('ToleratedFailurePercentage') || toleratedCount === undefined ? numberField(state, 'ToleratedFailurePercentage', input, 0, (n) => n >= 0 && n <= 100, 'a number from 0 to 100') : undefined;
  const totalItems = children.reduce((s, c) => s + c.items, 0);
  const mapRunId = randomUUID();
  const mapRunArn = `${scope.identity.stateMachineArn.replace(':stateMachine:', ':mapRun:')}/${scope.identity.name}:${mapRunId}`;
  const outcomes: ChildOutcome[] = [];
  let failedItems = 0;
  const exceeded = (): boolean =>
    (toleratedCount !== undefined && failedItems > toleratedCount) || (toleratedPercent !== undefined && totalItems > 0 && (failedItems / totalItems) * 100 > toleratedPercent);
  let inlineError: StatesError | undefined;

  await pool(children.length, concurrency, () => (distributed ? failedItems > 0 && exceeded() : inlineError !== undefined), async (i) => {
    const child = children[i]!;
    checkPayloadSize(child.input, `the input of ${JSON.stringify(name)} iteration ${i}`);
    const childName = distributed ? `${mapRunId.slice(0, 8)}-${i}` : scope.identity.name;
    const childArn = distributed ? `${scope.identity.stateMachineArn.replace(':stateMachine:', ':execution:')}/${scope.identity.name}:${childName}` : scope.executionArn;
    const childScope: Scope = distributed
      ? {
          identity: { ...scope.identity, name: childName, stateMachineArn: `${scope.identity.stateMachineArn}/${name}` },
          executionArn: childArn,
          executionInput: roundTrip(child.input),
          startTime: new Date().toISOString(),
          path: `${path}[${i}]/`,
          transitions: { count: 0 },
        }
      : { ...scope, path: `${path}[${i}]/` };
    const startDate = new Date().toISOString();
    try {
      const output = await runner.runStates(processor, child.input, childScope);
      outcomes.push({ index: i, input: child.input, items: child.items, name: childName, arn: childArn, startDate, stopDate: new Date().toISOString(), output });
    } catch (err) {
      if (!(err instanceof StatesError)) throw err;
      // Inline, an iteration is part of this execution: its error is the Map's (a terminal one
      // ends the execution). Distributed, a child is an execution of its own: whatever ended it,
      // States.Runtime included, it is one failed child.
      if (!distributed) {
        inlineError ??= err;
        if (err.terminal) throw err;
        return;
      }
      failedItems += child.items;
      outcomes.push({ index: i, input: child.input, items: child.items, name: childName, arn: childArn, startDate, stopDate: new Date().toISOString(), error: err });
    }
  });
  outcomes.sort((a, b) => a.index - b.index);
  if (!distributed) {
    if (inlineError) throw inlineError;
    return outcomes.map((o) => o.output!);
  }
  const failed = failedItems > 0 && exceeded();
  runner.record({ type: 'MapRunEnded', state: name, path, items: totalItems, children: children.length, failedItems, status: failed ? 'FAILED' : 'SUCCEEDED' });
  if (failed) {
    throw new StatesError(
      'States.ExceedToleratedFailureThreshold',
      `The specified tolerated failure threshold was exceeded: ${failedItems} of ${totalItems} items failed (tolerated: ${toleratedCount ?? '-'} items, ${toleratedPercent ?? '-'} %); first failure: ${outcomes.find((o) => o.error)?.error?.error}`,
    );
  }
  if (state.ResultWriter === undefined) return outcomes.filter((o) => o.output !== undefined).map((o) => o.output!);
  return writeResults(runner, name, state, input, ctx, mapRunArn, mapRunId, outcomes);
}

/** A ResultWriter write; S3 refusing it fails the Map with States.ResultWriterFailed. */
async function writeObject(s3: S3Access, bucket: string, key: string, body: string): Promise<void> {
  try {
    await s3.putObject(bucket, key, body);
  } catch (err) {
    throw new StatesError('States.ResultWriterFailed', `s3://${bucket}/${key}: ${(err as Error).name}: ${(err as Error).message}`);
  }
}

async function writeResults(runner: Runner, name: string, state: AslState, input: Json, ctx: Json, mapRunArn: string, mapRunId: string, outcomes: ChildOutcome[]): Promise<Json> {
  const writer = state.ResultWriter as { Parameters: unknown; WriterConfig?: { OutputType?: string; Transformation?: string } };
  const params = renderTemplate(writer.Parameters, input, ctx, 'ResultWriter.Parameters') as { Bucket?: Json; Prefix?: Json };
  if (typeof params.Bucket !== 'string') throw runtimeError(`ResultWriter of ${JSON.stringify(name)} needs a Bucket`);
  const s3 = runner.options.integrations.s3;
  if (!s3) throw new UnsupportedAslError('the Map has a ResultWriter but no s3 integration is plugged in');
  const prefix = typeof params.Prefix === 'string' && params.Prefix !== '' ? `${params.Prefix.replace(/\/+$/, '')}/` : '';
  const folder = `${prefix}${mapRunId}/`;
  const transformation = writer.WriterConfig?.Transformation ?? 'NONE';
  const jsonl = writer.WriterConfig?.OutputType === 'JSONL';
  const entry = (o: ChildOutcome): Json => {
    if (transformation !== 'NONE' && o.output !== undefined) return o.output;
    const base: JsonObject = {
      ExecutionArn: o.arn,
      Input: JSON.stringify(o.input),
      InputDetails: { Included: true },
      Name: o.name,
      RedriveCount: 0,
      RedriveStatus: 'NOT_REDRIVABLE',
      StartDate: o.startDate,
      StateMachineArn: mapRunArn,
      Status: o.error ? 'FAILED' : 'SUCCEEDED',
      StopDate: o.stopDate,
    };
    return o.error ? { ...base, Error: o.error.error, Cause: o.error.causeText } : { ...base, Output: JSON.stringify(o.output), OutputDetails: { Included: true } };
  };
  const files: Record<'SUCCEEDED' | 'FAILED' | 'PENDING', { Key: string; Size: number }[]> = { SUCCEEDED: [], FAILED: [], PENDING: [] };
  for (const status of ['SUCCEEDED', 'FAILED'] as const) {
    const list = outcomes.filter((o) => (status === 'FAILED') === (o.error !== undefined));
    if (list.length === 0) continue;
    let values = list.map(entry);
    if (transformation === 'FLATTEN' && status === 'SUCCEEDED') values = values.flatMap((v) => (Array.isArray(v) ? v : [v]));
    const body = jsonl ? values.map((v) => JSON.stringify(v)).join('\n') : JSON.stringify(values);
    const key = `${folder}${status}_0.${jsonl ? 'jsonl' : 'json'}`;
    await writeObject(s3, params.Bucket, key, body);
    files[status].push({ Key: key, Size: Buffer.byteLength(body) });
  }
  const manifestKey = `${folder}manifest.json`;
  await writeObject(s3, params.Bucket, manifestKey, JSON.stringify({ DestinationBucket: params.Bucket, MapRunArn: mapRunArn, ResultFiles: files }));
  return { MapRunArn: mapRunArn, ResultWriterDetails: { Bucket: params.Bucket, Key: manifestKey } };
}
