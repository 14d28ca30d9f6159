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

type PartNode<T> = Map<string, PartNode<T> | T[]>;

/**
 * groupBy with a key made of parts joined by `sep`: the same groups, in the same order, under the
 * same keys as `groupBy(rows, (r) => parts.map((p) => p(r)).join(sep))`, without a key string per
 * row. A row finds its group through one Map per part, by the part's own string (a factor's few
 * values, the same string objects row after row, whose hashes V8 keeps); a group's key is joined
 * once, at its first row. Parts that join to a key seen before (a part holding `sep`) share its
 * group, as one key string would.
 *
 * Why: P(True)'s analysis at the paper's size groups its 6.2 M rows by four or five factors several
 * times; a key string per row was ~30 M strings built, flattened, hashed and then collected.
 * @example groupByParts(rows, [(r) => r.model, (r) => r.q], '\u0000') // Map { 'a\u0000en' => [...], ... }
 */
export function groupByParts<T>(rows: Iterable<T>, parts: readonly ((row: T) => string)[], sep: string): Map<string, T[]> {
  if (parts.length === 0) throw new RangeError('groupByParts: no parts');
  const out = new Map<string, T[]>();
  const root: PartNode<T> = new Map();
  const last = parts.length - 1;
  const values = new Array<string>(parts.length);
  for (const r of rows) {
    let node = root;
    for (let i = 0; i < last; i++) {
      const v = parts[i]!(r);
      values[i] = v;
      let next = node.get(v) as PartNode<T> | undefined;
      if (next === undefined) {
        next = new Map();
        node.set(v, next);
      }
      node = next;
    }
    const v = parts[last]!(r);
    let list = node.get(v) as T[] | undefined;
    if (list === undefined) {
      values[last] = v;
      const key = values.join(sep);
      list = out.get(key);
      if (list === undefined) {
        list = [];
        out.set(key, list);
      }
      node.set(v, list);
    }
    list.push(r);
  }
  return out;
}
