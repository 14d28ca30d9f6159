/**
 * JSONPath as Step Functions reads it in the JSONPath query language (states-language.net, "Paths"
 * and "Reference Paths"): `$`, `.field`, `['field']`, `[index]`, and, outside reference paths, the
 * `[*]` / `.*` wildcard, whose result is the array of what it matched. Filters, slices, unions and
 * deep scans (`..`) are refused: no definition of sondage uses them, and an interpreter that half
 * understood them would vouch for results it did not compute.
 */
import { UnsupportedAslError, runtimeError, StatesError } from './errors.js';
import type { Json, JsonObject } from './types.js';

export type Segment = { readonly kind: 'field'; readonly name: string } | { readonly kind: 'index'; readonly index: number } | { readonly kind: 'wildcard' };

const cache = new Map<string, readonly Segment[]>();

/** The segments of a path; throws UnsupportedAslError for syntax the interpreter does not implement. */
export function parsePath(path: string): readonly Segment[] {
  const hit = cache.get(path);
  if (hit) return hit;
  if (typeof path !== 'string' || !path.startsWith('$')) throw new UnsupportedAslError(`${JSON.stringify(path)} is not a JSONPath (it must start with "$")`);
  const out: Segment[] = [];
  let i = 1;
  const fail = (what: string): never => {
    throw new UnsupportedAslError(`JSONPath ${JSON.stringify(path)}: ${what} at character ${i}`);
  };
  while (i < path.length) {
    const c = path[i];
    if (c === '.') {
      if (path[i + 1] === '.') fail('deep scan ".."');
      if (path[i + 1] === '*') {
        out.push({ kind: 'wildcard' });
        i += 2;
        continue;
      }
      const m = /^[^.[\]\s'"()?@,:]+/.exec(path.slice(i + 1));
      if (!m) fail('a field name expected after "."');
      out.push({ kind: 'field', name: m![0] });
      i += 1 + m![0].length;
    } else if (c === '[') {
      const rest = path.slice(i);
      let m = /^\[\s*'((?:[^'\\]|\\.)*)'\s*\]/.exec(rest) ?? /^\[\s*"((?:[^"\\]|\\.)*)"\s*\]/.exec(rest);
      if (m) {
        out.push({ kind: 'field', name: m[1]!.replace(/\\(.)/g, '$1') });
        i += m[0].length;
        continue;
      }
      m = /^\[\s*(\d+)\s*\]/.exec(rest);
      if (m) {
        out.push({ kind: 'index', index: Number(m[1]) });
        i += m[0].length;
        continue;
      }
      if (/^\[\s*\*\s*\]/.test(rest)) {
        out.push({ kind: 'wildcard' });
        i += /^\[\s*\*\s*\]/.exec(rest)![0].length;
        continue;
      }
      fail('only [\'name\'], [index] and [*] are implemented (no filters, slices, unions or negative indexes)');
    } else {
      fail(`unexpected ${JSON.stringify(c)}`);
    }
  }
  cache.set(path, out);
  return out;
}

/** Whether the path names one value (no wildcard): a reference path, where the language requires one. */
export function isReferencePath(path: string): boolean {
  return parsePath(path).every((s) => s.kind !== 'wildcard');
}

/** Throws unless `path` is a reference path (InputPath, ResultPath, OutputPath, Variable, …Path fields). */
export function assertReferencePath(path: string, field: string): void {
  if (!isReferencePath(path)) throw new UnsupportedAslError(`${field} ${JSON.stringify(path)} must be a reference path (no wildcard)`);
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The value at `path` in `data`: `{ found: false }` when a segment is missing. A path with a
 * wildcard gives the array of its matches (possibly empty), as Jayway JSONPath does in Step Functions.
 */
export function readPath(data: Json, path: string): { readonly found: boolean; readonly value?: Json } {
  const segments = parsePath(path);
  const indefinite = segments.some((s) => s.kind === 'wildcard');
  let nodes: Json[] = [data];
  for (const s of segments) {
    const next: Json[] = [];
    for (const n of nodes) {
      if (s.kind === 'field') {
        if (isObject(n) && Object.prototype.hasOwnProperty.call(n, s.name)) next.push(n[s.name]!);
      } else if (s.kind === 'index') {
        if (Array.isArray(n) && s.index < n.length) next.push(n[s.index]!);
      } else if (Array.isArray(n)) next.push(...n);
      else if (isObject(n)) next.push(...Object.values(n));
    }
    if (!indefinite && next.length === 0) return { found: false };
    nodes = next;
  }
  return indefinite ? { found: true, value: nodes } : { found: true, value: nodes[0]! };
}

/** The value at `path`, or States.Runtime naming the field that read it (what Step Functions reports). */
export function requirePath(data: Json, path: string, field: string): Json {
  const { found, value } = readPath(data, path);
  if (!found) throw runtimeError(`The JSONPath ${JSON.stringify(path)} specified for the field ${JSON.stringify(field)} could not be found in the input ${JSON.stringify(truncate(JSON.stringify(data)))}`);
  return value!;
}

function truncate(s: string): string {
  return s.length > 400 ? `${s.slice(0, 400)}…` : s;
}

/**
 * ResultPath (states-language.net, "ResultPath"): the state's raw input with `result` placed at
 * `path`, fields created as needed; `$` is the result itself. An intermediate field that exists
 * but is not an object fails the state with States.ResultPathMatchFailure. The input is not
 * changed (a copy is returned).
 */
export function writeResultPath(input: Json, path: string, result: Json): Json {
  const segments = parsePath(path);
  if (segments.length === 0) return result;
  if (segments.some((s) => s.kind !== 'field')) throw new UnsupportedAslError(`ResultPath ${JSON.stringify(path)}: only field names are implemented`);
  if (!isObject(input)) {
    throw new StatesError('States.ResultPathMatchFailure', `Unable to apply ResultPath ${JSON.stringify(path)} to input ${truncate(JSON.stringify(input))}: the input is not an object`);
  }
  const root: JsonObject = structuredClone(input);
  let node: JsonObject = root;
  segments.forEach((s, i) => {
    const name = (s as { name: string }).name;
    if (i === segments.length - 1) {
      node[name] = result;
      return;
    }
    const child = node[name];
    if (child === undefined) node = node[name] = {};
    else if (isObject(child)) node = child;
    else throw new StatesError('States.ResultPathMatchFailure', `Unable to apply ResultPath ${JSON.stringify(path)}: field ${JSON.stringify(name)} holds ${Array.isArray(child) ? 'an array' : typeof child}, not an object`);
  });
  return root;
}
