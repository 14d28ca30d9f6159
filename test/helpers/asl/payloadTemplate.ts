/**
 * Payload templates (states-language.net, "Payload Template"): Parameters, ItemSelector,
 * ResultSelector, an ItemBatcher's BatchInput, the ItemReader's and ResultWriter's Parameters. A
 * field whose name ends in `.$` is renamed without it and its value computed: `$…` a path into the
 * template's input, `$$…` a path into the context object, anything else an intrinsic call. Nested
 * objects and arrays are rendered the same way; everything else is copied as written.
 */
import { StatesError, UnsupportedAslError } from './errors.js';
import { evaluateIntrinsic, isIntrinsic, parseIntrinsic } from './intrinsics.js';
import { parsePath, requirePath } from './jsonPath.js';
import type { Json, JsonObject } from './types.js';

/** Checks every `.$` value of a template parses (paths and intrinsics), without evaluating. */
export function checkTemplate(template: unknown, field: string): void {
  if (Array.isArray(template)) return template.forEach((t) => checkTemplate(t, field));
  if (template === null || typeof template !== 'object') return;
  for (const [key, value] of Object.entries(template)) {
    if (key.endsWith('.$')) {
      if (typeof value !== 'string') throw new UnsupportedAslError(`${field}: "${key}" must be a path or an intrinsic call, got ${JSON.stringify(value)}`);
      if (value.startsWith('$$')) parsePath(value.slice(1));
      else if (value.startsWith('$')) parsePath(value);
      else if (isIntrinsic(value)) parseIntrinsic(value);
      else throw new UnsupportedAslError(`${field}: "${key}" value ${JSON.stringify(value)} is neither a path nor an intrinsic call`);
    } else checkTemplate(value, field);
  }
}

/** The value of one `.$` expression. */
export function evaluateExpression(expression: string, input: Json, context: Json, field: string): Json {
  if (expression.startsWith('$$')) return requirePath(context, expression.slice(1), field);
  if (expression.startsWith('$')) return requirePath(input, expression, field);
  if (isIntrinsic(expression)) return evaluateIntrinsic(parseIntrinsic(expression), { input, context, field });
  throw new UnsupportedAslError(`${field}: ${JSON.stringify(expression)} is neither a path nor an intrinsic call`);
}

/** Renders a template against the input and the context object. */
export function renderTemplate(template: unknown, input: Json, context: Json, field = 'Parameters'): Json {
  if (Array.isArray(template)) return template.map((t) => renderTemplate(t, input, context, field));
  if (template === null || typeof template !== 'object') return template as Json;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(template)) {
    if (key.endsWith('.$')) {
      const name = key.slice(0, -2);
      if (Object.prototype.hasOwnProperty.call(template, name)) {
        throw new StatesError('States.Runtime', `${field}: both "${name}" and "${key}" are given`, { terminal: true });
      }
      out[name] = evaluateExpression(String(value), input, context, key);
    } else out[key] = renderTemplate(value, input, context, field);
  }
  return out;
}
