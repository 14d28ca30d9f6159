/**
 * Campaign-file issues as people read them: a path such as `models[2].provider`, the line it sits
 * on, and for an unknown key the closest known one ("did you mean").
 */
import type { z } from 'zod';
import type { FileIssue } from '../errors.js';

/** A FileIssue plus where it sits in the document, so a loader can add the YAML line. */
export interface CampaignIssue extends FileIssue {
  readonly segments: readonly (string | number)[];
}

export type LocatedIssue = Omit<CampaignIssue, 'file'>;
/** `models[2].provider` from `['models', 2, 'provider']`. */
export function formatPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of segments) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else {
      const key = String(seg);
      out += /^[A-Za-z_][\w-]*$/.test(key) ? (out ? `.${key}` : key) : `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}

/** Optimal string alignment distance: a swapped pair of letters counts as one edit. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => d[i]?.[j] ?? Infinity;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = v;
    }
  }
  return at(a.length, b.length);
}

/** The known word closest to `word`, when it is close enough to be a likely typo. */
export function closest(word: string, known: readonly string[]): string | undefined {
  const limit = Math.max(1, Math.min(3, Math.floor(word.length / 3)));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return bestDistance <= limit ? best : undefined;
}


interface JsonNode {
  properties?: Record<string, JsonNode>;
  items?: JsonNode;
  additionalProperties?: JsonNode | boolean;
  anyOf?: JsonNode[];
  oneOf?: JsonNode[];
  allOf?: JsonNode[];
}

/** Keys a JSON Schema allows in the mapping at `segments` (through anyOf, oneOf, allOf and records). */
export function knownKeysAt(schema: object, segments: readonly PropertyKey[]): string[] {
  const expand = (n: JsonNode): JsonNode[] => {
    const alternatives = [...(n.anyOf ?? []), ...(n.oneOf ?? []), ...(n.allOf ?? [])];
    return alternatives.length > 0 ? [n, ...alternatives.flatMap(expand)] : [n];
  };
  let nodes = [schema as JsonNode];
  for (const seg of segments) {
    nodes = nodes.flatMap(expand).flatMap((n) => {
      const next =
        typeof seg === 'number'
          ? n.items
          : (n.properties?.[String(seg)] ?? (typeof n.additionalProperties === 'object' ? n.additionalProperties : undefined));
      return next ? [next] : [];
    });
  }
  return [...new Set(nodes.flatMap(expand).flatMap((n) => Object.keys(n.properties ?? {})))];
}

function unknownKeyMessage(key: string, known: readonly string[]): string {
  const near = closest(key, known);
  if (near) return `unknown key "${key}"; did you mean "${near}"?`;
  return `unknown key "${key}"; known keys here: ${known.join(', ')}`;
}

/**
 * Zod's issues as campaign issues. An unknown key is reported at its own path with the keys the
 * schema allows there (`schema` is the campaign's JSON Schema); `explainKey` may say more about a
 * key first (a role another battery has).
 */
export function zodIssues(
  issues: readonly z.core.$ZodIssue[],
  schema: object,
  explainKey: (segments: readonly (string | number)[], key: string) => string | undefined = () => undefined,
): LocatedIssue[] {
  return issues.flatMap((iss) => {
    const segments = iss.path.filter((s): s is string | number => typeof s !== 'symbol');
    if (iss.code === 'unrecognized_keys') {
      const known = knownKeysAt(schema, segments);
      return iss.keys.map((key) => ({
        path: formatPath(segments),
        segments: [...segments, key],
        message: explainKey(segments, key) ?? unknownKeyMessage(key, known),
      }));
    }
    return [{ path: formatPath(segments), segments, message: iss.message }];
  });
}
