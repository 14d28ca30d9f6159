/**
 * Choice rules (states-language.net, "Choice Rules"): And / Or / Not over data-test expressions,
 * each a Variable and one comparison operator: String*, Numeric*, Boolean*, Timestamp* (each also
 * as …Path, comparing with another value of the input), StringMatches with `*` wildcards, and the
 * type tests IsNull, IsPresent, IsNumeric, IsString, IsBoolean, IsTimestamp. A comparison between
 * values of other types than the operator's is false. A Variable (or a …Path operand) that is
 * absent fails the execution with States.Runtime, except under IsPresent: that is what the
 * service does, and why Pipeline.ts defaults retryFailed before anything reads it.
 */
import { runtimeError, UnsupportedAslError } from './errors.js';
import { assertReferencePath, readPath } from './jsonPath.js';
import type { Json } from './types.js';

type Compare = 'String' | 'Numeric' | 'Boolean' | 'Timestamp';
const RELATIONS = ['Equals', 'LessThan', 'GreaterThan', 'LessThanEquals', 'GreaterThanEquals'] as const;
type Relation = (typeof RELATIONS)[number];
const TYPE_TESTS = ['IsNull', 'IsPresent', 'IsNumeric', 'IsString', 'IsBoolean', 'IsTimestamp'] as const;

/** Every comparison operator name (with and without Path), for checking rules. */
export const COMPARISON_OPERATORS: readonly string[] = [
  ...(['String', 'Numeric', 'Timestamp'] as const).flatMap((t) => RELATIONS.flatMap((r) => [`${t}${r}`, `${t}${r}Path`])),
  'BooleanEquals',
  'BooleanEqualsPath',
  'StringMatches',
  ...TYPE_TESTS,
];

/** RFC 3339 date-time as the service accepts it (`2016-08-18T17:33:00Z`, fractions and offsets allowed). */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

export function isTimestamp(v: unknown): v is string {
  return typeof v === 'string' && TIMESTAMP.test(v) && !Number.isNaN(Date.parse(v));
}

export type ChoiceRule = Readonly<Record<string, unknown>>;

/** Checks a rule's shape: one operator, a Variable on data tests, operands of the right type. */
export function checkRule(rule: ChoiceRule, top: boolean): void {
  const keys = Object.keys(rule).filter((k) => k !== 'Comment' && !(top && k === 'Next'));
  if (top && typeof rule.Next !== 'string') throw new UnsupportedAslError(`a Choices rule without Next: ${JSON.stringify(rule)}`);
  if ('And' in rule || 'Or' in rule) {
    const op = 'And' in rule ? 'And' : 'Or';
    if (keys.length !== 1 || !Array.isArray(rule[op]) || (rule[op] as unknown[]).length === 0) throw new UnsupportedAslError(`${op} takes a non-empty array of rules and nothing else: ${JSON.stringify(rule)}`);
    for (const r of rule[op] as ChoiceRule[]) checkRule(r, false);
    return;
  }
  if ('Not' in rule) {
    if (keys.length !== 1 || typeof rule.Not !== 'object' || rule.Not === null) throw new UnsupportedAslError(`Not takes one rule: ${JSON.stringify(rule)}`);
    return checkRule(rule.Not as ChoiceRule, false);
  }
  if (typeof rule.Variable !== 'string') throw new UnsupportedAslError(`a data-test rule needs a Variable: ${JSON.stringify(rule)}`);
  checkVariable(rule.Variable, 'Variable');
  const ops = keys.filter((k) => k !== 'Variable');
  if (ops.length !== 1 || !COMPARISON_OPERATORS.includes(ops[0]!)) {
    throw new UnsupportedAslError(`a data-test rule needs exactly one of ${COMPARISON_OPERATORS.join(', ')}; got ${ops.join(', ') || 'none'}`);
  }
  const op = ops[0]!;
  const operand = rule[op];
  if (op.endsWith('Path')) {
    if (typeof operand !== 'string') throw new UnsupportedAslError(`${op} takes a path, got ${JSON.stringify(operand)}`);
    checkVariable(operand, op);
  } else if (op.startsWith('Is') || op.startsWith('Boolean')) {
    if (typeof operand !== 'boolean') throw new UnsupportedAslError(`${op} takes true or false, got ${JSON.stringify(operand)}`);
  } else if (op.startsWith('Numeric')) {
    if (typeof operand !== 'number') throw new UnsupportedAslError(`${op} takes a number, got ${JSON.stringify(operand)}`);
  } else if (op.startsWith('Timestamp')) {
    if (!isTimestamp(operand)) throw new UnsupportedAslError(`${op} takes an RFC 3339 timestamp, got ${JSON.stringify(operand)}`);
  } else if (typeof operand !== 'string') throw new UnsupportedAslError(`${op} takes a string, got ${JSON.stringify(operand)}`);
}

function checkVariable(path: string, field: string): void {
  assertReferencePath(path.startsWith('$$') ? path.slice(1) : path, field);
}

function read(path: string, input: Json, context: Json): { found: boolean; value?: Json } {
  return path.startsWith('$$') ? readPath(context, path.slice(1)) : readPath(input, path);
}

function absent(path: string): never {
  throw runtimeError(`Invalid path ${JSON.stringify(path)}: The choice state's condition path references an invalid value.`);
}

function relate(relation: Relation, c: number): boolean {
  switch (relation) {
    case 'Equals':
      return c === 0;
    case 'LessThan':
      return c < 0;
    case 'GreaterThan':
      return c > 0;
    case 'LessThanEquals':
      return c <= 0;
    case 'GreaterThanEquals':
      return c >= 0;
  }
}

/** StringMatches: `*` matches any run of characters; `\*` and `\\` are a literal star and backslash. */
export function stringMatches(value: string, pattern: string): boolean {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && (pattern[i + 1] === '*' || pattern[i + 1] === '\\')) re += `\\${pattern[++i]}`;
    else if (c === '*') re += '[\\s\\S]*';
    else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`).test(value);
}

function compare(kind: Compare, a: Json, b: Json): number | undefined {
  switch (kind) {
    case 'String':
      return typeof a === 'string' && typeof b === 'string' ? (a < b ? -1 : a > b ? 1 : 0) : undefined;
    case 'Numeric':
      return typeof a === 'number' && typeof b === 'number' ? a - b : undefined;
    case 'Boolean':
      return typeof a === 'boolean' && typeof b === 'boolean' ? (a === b ? 0 : 1) : undefined;
    case 'Timestamp':
      return isTimestamp(a) && isTimestamp(b) ? Date.parse(a) - Date.parse(b) : undefined;
  }
}

/** Whether the rule holds for the input. */
export function evaluateRule(rule: ChoiceRule, input: Json, context: Json): boolean {
  if (Array.isArray(rule.And)) return (rule.And as ChoiceRule[]).every((r) => evaluateRule(r, input, context));
  if (Array.isArray(rule.Or)) return (rule.Or as ChoiceRule[]).some((r) => evaluateRule(r, input, context));
  if (rule.Not !== undefined) return !evaluateRule(rule.Not as ChoiceRule, input, context);
  const variable = rule.Variable as string;
  const op = Object.keys(rule).find((k) => COMPARISON_OPERATORS.includes(k));
  if (!op) throw new UnsupportedAslError(`no comparison operator in ${JSON.stringify(rule)}`);
  const { found, value } = read(variable, input, context);
  if (op === 'IsPresent') return found === rule.IsPresent;
  if (!found) absent(variable);
  const v = value!;
  switch (op) {
    case 'IsNull':
      return (v === null) === rule.IsNull;
    case 'IsNumeric':
      return (typeof v === 'number') === rule.IsNumeric;
    case 'IsString':
      return (typeof v === 'string') === rule.IsString;
    case 'IsBoolean':
      return (typeof v === 'boolean') === rule.IsBoolean;
    case 'IsTimestamp':
      return isTimestamp(v) === rule.IsTimestamp;
    case 'StringMatches':
      return typeof v === 'string' && stringMatches(v, rule.StringMatches as string);
  }
  const m = /^(String|Numeric|Boolean|Timestamp)(Equals|LessThanEquals|GreaterThanEquals|LessThan|GreaterThan)(Path)?$/.exec(op);
  if (!m) throw new UnsupportedAslError(`operator ${op}`);
  let other = rule[op] as Json;
  if (m[3]) {
    const o = read(other as string, input, context);
    if (!o.found) absent(other as string);
    other = o.value!;
  }
  const c = compare(m[1] as Compare, v, other);
  return c !== undefined && relate(m[2] as Relation, c);
}
