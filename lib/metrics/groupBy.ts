/**
 * Rows grouped by a key, each group and the groups in first-seen order — the step before every
 * per-cell estimate. (`Map.groupBy` does this from Node 21 on; sondage also runs on Node 20.)
 * @example groupBy([{ m: 'a', x: 1 }, { m: 'b', x: 2 }, { m: 'a', x: 3 }], (r) => r.m) // Map { 'a' => [x 1, x 3], 'b' => [x 2] }
 */
export function groupBy<T>(rows: Iterable<T>, keyOf: (row: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const k = keyOf(r);
    const list = out.get(k);
    if (list) list.push(r);
    else out.set(k, [r]);
  }
  return out;
}
