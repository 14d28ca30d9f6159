/**
 * The import graph of the repository's TypeScript, read from the source text (static `import` /
 * `export … from` and dynamic `import('…')` of relative paths), for the layering and cycle tests.
 * Type-only imports are kept apart: they vanish at run time, so they cannot form a load-order
 * cycle, but they still count as a dependency between layers.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

export interface ImportEdge {
  /** Repository-relative path of the importing file. */
  readonly from: string;
  /** Repository-relative path of the imported file (`.ts`), or the bare package name. */
  readonly to: string;
  readonly typeOnly: boolean;
  readonly line: number;
  /** An `import('…')` expression: the module loads when the code first runs it, not with the importer. */
  readonly dynamic?: true;
}

/**
 * Import edges planted to show that a check catches what it should: `[from, to]` a value import,
 * `[from, to, 'type']` a type-only one, on lines 1, 2, … of their files in the order given (the
 * line a check's message names).
 * @example plantedImports(['lib/run/plan.ts', '@aws-sdk/client-s3'], ['lib/a.ts', 'lib/b.ts', 'type'])
 */
export function plantedImports(...imports: readonly (readonly [from: string, to: string, kind?: 'type'])[]): ImportEdge[] {
  return imports.map(([from, to, kind], i) => ({ from, to, typeOnly: kind === 'type', line: i + 1 }));
}

function walk(dir: string, out: string[]): void {
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) walk(full, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(full);
  }
}

const IMPORT = /^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm;
const DYNAMIC = /import\(\s*['"]([^'"]+)['"]\s*\)/g;

function resolve(root: string, file: string, spec: string): string {
  if (!spec.startsWith('.')) return spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
  const target = path.resolve(path.dirname(file), spec).replace(/\.js$/, '.ts');
  return path.relative(root, target).split(path.sep).join('/');
}

/** Every import of the `.ts` files under the given folders of `root`. */
export function importGraph(root: string, folders: readonly string[]): ImportEdge[] {
  const files: string[] = [];
  for (const f of folders) walk(path.join(root, f), files);
  const edges: ImportEdge[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const from = path.relative(root, file).split(path.sep).join('/');
    const lineOf = (index: number): number => text.slice(0, index).split('\n').length;
    for (const m of text.matchAll(IMPORT)) {
      // `import type { … }` and `export type { … }`; `import { type A }` counts as a value import (harmless: the tests treat both alike).
      const typeOnly = m[2] !== undefined;
      edges.push({ from, to: resolve(root, file, m[3]!), typeOnly, line: lineOf(m.index) });
    }
    for (const m of text.matchAll(DYNAMIC)) edges.push({ from, to: resolve(root, file, m[1]!), typeOnly: false, line: lineOf(m.index), dynamic: true });
  }
  return edges;
}

/** The import cycles among the given edges (each once, as a path that returns to its start). */
export function cycles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) if (e.to.endsWith('.ts')) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const found = new Map<string, string[]>();
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (n: string): void => {
    state.set(n, 'open');
    stack.push(n);
    for (const m of next.get(n) ?? []) {
      if (state.get(m) === 'open') {
        const cycle = stack.slice(stack.indexOf(m));
        const key = [...cycle].sort().join(' ');
        if (!found.has(key)) found.set(key, [...cycle, m]);
      } else if (!state.has(m)) visit(m);
    }
    stack.pop();
    state.set(n, 'done');
  };
  for (const n of [...next.keys()].sort()) if (!state.has(n)) visit(n);
  return [...found.values()];
}

/** What loads with a module when it loads: static value imports only (a type-only import vanishes, an `import()` waits for first use). */
export const atLoad = (e: ImportEdge): boolean => !e.typeOnly && !e.dynamic;

/** The modules reachable from `start` along the edges `follow` accepts, `start` included, sorted. */
export function reachableFrom(start: string, edges: readonly ImportEdge[], follow: (e: ImportEdge) => boolean = () => true): string[] {
  const seen = new Set<string>();
  const todo = [start];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const e of edges) if (e.from === file && follow(e)) todo.push(e.to);
  }
  return [...seen].sort();
}
