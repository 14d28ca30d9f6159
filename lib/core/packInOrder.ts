/**
 * Groups `items` in order: a group takes the next item while its total `weight` stays within
 * `capacity` and it holds fewer than `maxCount` items; an item heavier than `capacity` stands
 * alone. What a provider's batch (requests and bytes) and a GPU job's array child (seconds of
 * work) are cut by; `weight` is called once per item, in order, and may throw to refuse one.
 * @example packInOrder([5, 5, 4, 20], (n) => n, 10) // [[5, 5], [4], [20]]
 */
export function packInOrder<T>(items: Iterable<T>, weight: (item: T) => number, capacity: number, maxCount = Infinity): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let load = 0;
  for (const item of items) {
    const w = weight(item);
    if (current.length > 0 && (current.length >= maxCount || load + w > capacity)) {
      out.push(current);
      current = [];
      load = 0;
    }
    current.push(item);
    load += w;
  }
  if (current.length > 0) out.push(current);
  return out;
}
