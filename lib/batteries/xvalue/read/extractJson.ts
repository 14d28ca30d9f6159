/**
 * Finding the JSON object a reply holds: the whole reply, a fenced ```json block, or the first
 * balanced {…} in running text ("Here is my judgment: {…}"). Strings are respected when braces
 * are counted, so a reason containing "}" does not cut the object short.
 */

/**
 * The object `text` holds as a whole, or undefined. Text that does not start with `{` and end
 * with `}` is no JSON object: it is turned down before JSON.parse, whose error (a SyntaxError with
 * its stack) cost more than the rest of reading a reply — half of the replies are labelled lines.
 */
function parseObject(text: string): Record<string, unknown> | undefined {
  if (text.charCodeAt(0) !== 0x7b || text.charCodeAt(text.length - 1) !== 0x7d) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The balanced `{…}` starting at `start`, or undefined. */
function balancedFrom(text: string, start: number): string | undefined {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return text.slice(start, i + 1);
  }
  return undefined;
}

/**
 * The first JSON object of a reply, or undefined.
 * @example findJsonObject('Sure.\n```json\n{"verdict": "Fail"}\n```') // { verdict: 'Fail' }
 */
export function findJsonObject(text: string): Record<string, unknown> | undefined {
  const whole = parseObject(text.trim());
  if (whole) return whole;
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  if (fenced) {
    const inner = parseObject((fenced[1] ?? '').trim());
    if (inner) return inner;
  }
  for (let i = text.indexOf('{'); i >= 0; i = text.indexOf('{', i + 1)) {
    const candidate = balancedFrom(text, i);
    const obj = candidate === undefined ? undefined : parseObject(candidate);
    if (obj) return obj;
  }
  return undefined;
}
