/**
 * The intrinsic functions of the JSONPath query language (Step Functions developer guide,
 * "Intrinsic functions"), parsed and evaluated: States.Format, StringToJson, JsonToString, Array,
 * ArrayPartition, ArrayContains, ArrayRange, ArrayGetItem, ArrayLength, ArrayUnique, Base64Encode,
 * Base64Decode, Hash, JsonMerge, MathRandom, MathAdd, StringSplit and UUID. Arguments are string
 * literals in single quotes, numbers, true / false / null, paths (`$.a`, `$$.Execution.Name`) and
 * nested calls. A call that cannot be evaluated fails the state with States.IntrinsicFailure, as
 * the service does; a name the interpreter does not know is refused.
 */
import { createHash, randomUUID } from 'node:crypto';
import { StatesError, UnsupportedAslError } from './errors.js';
import { requirePath } from './jsonPath.js';
import type { Json } from './types.js';

export type IntrinsicArg =
  | { readonly kind: 'literal'; readonly value: Json }
  | { readonly kind: 'path'; readonly path: string }
  | { readonly kind: 'call'; readonly call: IntrinsicCall };
export interface IntrinsicCall {
  readonly name: string;
  readonly args: readonly IntrinsicArg[];
}

const FUNCTIONS = new Set([
  'States.Format',
  'States.StringToJson',
  'States.JsonToString',
  'States.Array',
  'States.ArrayPartition',
  'States.ArrayContains',
  'States.ArrayRange',
  'States.ArrayGetItem',
  'States.ArrayLength',
  'States.ArrayUnique',
  'States.Base64Encode',
  'States.Base64Decode',
  'States.Hash',
  'States.JsonMerge',
  'States.MathRandom',
  'States.MathAdd',
  'States.StringSplit',
  'States.UUID',
]);

/** Whether a `.$` value is an intrinsic call rather than a path. */
export function isIntrinsic(text: string): boolean {
  return /^\s*States\.\w+\s*\(/.test(text);
}

/** Parses one intrinsic call; throws UnsupportedAslError for syntax or names it does not implement. */
export function parseIntrinsic(text: string): IntrinsicCall {
  let i = 0;
  const fail = (what: string): never => {
    throw new UnsupportedAslError(`intrinsic ${JSON.stringify(text)}: ${what} at character ${i}`);
  };
  const space = (): void => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const call = (): IntrinsicCall => {
    space();
    const m = /^States\.\w+/.exec(text.slice(i));
    if (!m) fail('a States.<Function> name expected');
    const name = m![0];
    if (!FUNCTIONS.has(name)) throw new UnsupportedAslError(`intrinsic function ${name} is not implemented (known: ${[...FUNCTIONS].join(', ')})`);
    i += name.length;
    space();
    if (text[i] !== '(') fail('"(" expected');
    i++;
    const args: IntrinsicArg[] = [];
    space();
    if (text[i] === ')') {
      i++;
      return { name, args };
    }
    for (;;) {
      args.push(arg());
      space();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === ')') {
        i++;
        return { name, args };
      }
      fail('"," or ")" expected');
    }
  };
  const arg = (): IntrinsicArg => {
    space();
    const rest = text.slice(i);
    if (rest.startsWith("'")) {
      // Escapes: \' and \\ here; \{ and \} are kept for States.Format, which reads them as literal braces.
      let out = '';
      i++;
      while (i < text.length && text[i] !== "'") {
        if (text[i] === '\\' && i + 1 < text.length) {
          const next = text[i + 1]!;
          out += next === "'" || next === '\\' ? next : `\\${next}`;
          i += 2;
        } else out += text[i++];
      }
      if (text[i] !== "'") fail('unterminated string');
      i++;
      return { kind: 'literal', value: out };
    }
    if (rest.startsWith('States.')) return { kind: 'call', call: call() };
    if (rest.startsWith('$')) {
      // A path runs to the next "," or ")" outside brackets and quotes.
      let depth = 0;
      let quote: string | undefined;
      const start = i;
      for (; i < text.length; i++) {
        const c = text[i]!;
        if (quote) {
          if (c === quote) quote = undefined;
        } else if (c === "'" || c === '"') quote = c;
        else if (c === '[') depth++;
        else if (c === ']') depth--;
        else if (depth === 0 && (c === ',' || c === ')')) break;
      }
      return { kind: 'path', path: text.slice(start, i).trim() };
    }
    const num = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(rest);
    if (num) {
      i += num[0].length;
      return { kind: 'literal', value: Number(num[0]) };
    }
    for (const [word, value] of [['true', true], ['false', false], ['null', null]] as const) {
      if (rest.startsWith(word)) {
        i += word.length;
        return { kind: 'literal', value };
      }
    }
    return fail('an argument expected');
  };
  const out = call();
  space();
  if (i !== text.length) fail('text after the call');
  return out;
}

function failure(name: string, message: string): StatesError {
  return new StatesError('States.IntrinsicFailure', `${name}: ${message}`);
}

function kind(v: Json): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

function deepEqual(a: Json, b: Json): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}
function canonical(v: Json): Json {
  if (Array.isArray(v)) return v.map(canonical);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k]!)]));
  return v;
}

/** A seeded generator for States.MathRandom with a seed (mulberry32): the same seed, the same number. */
function seeded(seed: number): number {
  let t = (seed + 0x6d2b79f5) | 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

export interface IntrinsicScope {
  /** The input paths read (`$`). */
  readonly input: Json;
  /** The context object paths read (`$$`). */
  readonly context: Json;
  /** Field being rendered, for error messages. */
  readonly field: string;
}

/** Evaluates a parsed call. */
export function evaluateIntrinsic(call: IntrinsicCall, scope: IntrinsicScope): Json {
  const args = call.args.map((a): Json => {
    if (a.kind === 'literal') return a.value;
    if (a.kind === 'call') return evaluateIntrinsic(a.call, scope);
    return a.path.startsWith('$$') ? requirePath(scope.context, a.path.slice(1), scope.field) : requirePath(scope.input, a.path, scope.field);
  });
  const n = call.name;
  const arity = (min: number, max = min): void => {
    if (args.length < min || args.length > max) throw failure(n, `expects ${min === max ? min : `${min} to ${max}`} arguments, got ${args.length}`);
  };
  const str = (i: number): string => {
    const v = args[i]!;
    if (typeof v !== 'string') throw failure(n, `argument ${i + 1} must be a string, got ${kind(v)}`);
    return v;
  };
  const int = (i: number): number => {
    const v = args[i]!;
    if (typeof v !== 'number' || !Number.isInteger(v)) throw failure(n, `argument ${i + 1} must be an integer, got ${JSON.stringify(v)}`);
    return v;
  };
  const arr = (i: number): Json[] => {
    const v = args[i]!;
    if (!Array.isArray(v)) throw failure(n, `argument ${i + 1} must be an array, got ${kind(v)}`);
    return v;
  };
  switch (n) {
    case 'States.Format': {
      if (args.length < 1) throw failure(n, 'expects a template');
      const template = str(0);
      const values = args.slice(1);
      let out = '';
      let used = 0;
      for (let i = 0; i < template.length; i++) {
        const c = template[i]!;
        if (c === '\\' && (template[i + 1] === '{' || template[i + 1] === '}' || template[i + 1] === '\\')) {
          out += template[++i];
        } else if (c === '{' && template[i + 1] === '}') {
          if (used >= values.length) throw failure(n, `the template has more {} than the ${values.length} value(s) given`);
          const v = values[used++]!;
          if (typeof v === 'object' && v !== null) throw failure(n, `value ${used} is ${kind(v)}; only strings, numbers, booleans and null can be formatted`);
          out += typeof v === 'string' ? v : JSON.stringify(v);
          i++;
        } else out += c;
      }
      if (used !== values.length) throw failure(n, `${values.length} value(s) given for ${used} {}`);
      return out;
    }
    case 'States.StringToJson':
      arity(1);
      try {
        return JSON.parse(str(0)) as Json;
      } catch {
        throw failure(n, `${JSON.stringify(args[0])} is not JSON`);
      }
    case 'States.JsonToString':
      arity(1);
      if (call.args[0]!.kind !== 'path') throw failure(n, 'expects a path');
      return JSON.stringify(args[0]);
    case 'States.Array':
      return args;
    case 'States.ArrayPartition': {
      arity(2);
      const [a, size] = [arr(0), int(1)];
      if (size < 1) throw failure(n, `chunk size must be positive, got ${size}`);
      const out: Json[] = [];
      for (let i = 0; i < a.length; i += size) out.push(a.slice(i, i + size));
      return out;
    }
    case 'States.ArrayContains':
      arity(2);
      return arr(0).some((v) => deepEqual(v, args[1]!));
    case 'States.ArrayRange': {
      arity(3);
      const [start, end, step] = [int(0), int(1), int(2)];
      if (step === 0) throw failure(n, 'step must not be 0');
      const out: number[] = [];
      for (let v = start; step > 0 ? v <= end : v >= end; v += step) {
        out.push(v);
        if (out.length > 1000) throw failure(n, 'the range has more than 1,000 items');
      }
      return out;
    }
    case 'States.ArrayGetItem': {
      arity(2);
      const [a, i] = [arr(0), int(1)];
      if (i < 0 || i >= a.length) throw failure(n, `index ${i} is out of range for an array of ${a.length}`);
      return a[i]!;
    }
    case 'States.ArrayLength':
      arity(1);
      return arr(0).length;
    case 'States.ArrayUnique': {
      arity(1);
      const out: Json[] = [];
      for (const v of arr(0)) if (!out.some((u) => deepEqual(u, v))) out.push(v);
      return out;
    }
    case 'States.Base64Encode':
      arity(1);
      return Buffer.from(str(0), 'utf8').toString('base64');
    case 'States.Base64Decode':
      arity(1);
      return Buffer.from(str(0), 'base64').toString('utf8');
    case 'States.Hash': {
      arity(2);
      const algorithms: Record<string, string> = { MD5: 'md5', 'SHA-1': 'sha1', 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };
      const algorithm = algorithms[str(1)];
      if (!algorithm) throw failure(n, `algorithm ${JSON.stringify(args[1])} is not one of ${Object.keys(algorithms).join(', ')}`);
      const data = typeof args[0] === 'string' ? args[0] : JSON.stringify(args[0]);
      return createHash(algorithm).update(data).digest('hex');
    }
    case 'States.JsonMerge': {
      arity(3);
      const [a, b, deep] = args;
      if (deep !== false) throw failure(n, 'only a shallow merge (third argument false) is defined');
      if (kind(a!) !== 'object' || kind(b!) !== 'object') throw failure(n, 'both arguments must be objects');
      return { ...(a as object), ...(b as object) } as Json;
    }
    case 'States.MathRandom': {
      arity(2, 3);
      const [start, end] = [int(0), int(1)];
      if (end < start) throw failure(n, `end ${end} is below start ${start}`);
      const r = args.length === 3 ? seeded(int(2)) : Math.random();
      return start + Math.floor(r * (end - start + 1));
    }
    case 'States.MathAdd': {
      arity(2);
      const [a, b] = args;
      if (typeof a !== 'number' || typeof b !== 'number') throw failure(n, `both arguments must be numbers, got ${kind(a!)} and ${kind(b!)}`);
      return a + b;
    }
    case 'States.StringSplit': {
      arity(2);
      const [s, delimiters] = [str(0), str(1)];
      const out: string[] = [];
      let current = '';
      for (const c of s) {
        if (delimiters.includes(c)) {
          if (current !== '') out.push(current);
          current = '';
        } else current += c;
      }
      if (current !== '') out.push(current);
      return out;
    }
    case 'States.UUID':
      arity(0);
      return randomUUID();
    default:
      throw new UnsupportedAslError(`intrinsic function ${n} is not implemented`);
  }
}
