/**
 * A battery imports sondage through one entry, `sondage/battery` (lib/api/battery.ts): a battery of
 * one's own can reach nothing else, and the built-in three prove that the entry is enough — each
 * reaches lib/ outside its own folder only through it. The test battery `relay` and the scaffold
 * import only the entry too. What the entry pulls in is a battery's whole view of sondage, so it
 * must not drag the CLI, the run, the analysis driver or AWS code into a battery's process.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/campaigns.js';
import { atLoad, importGraph, plantedImports, reachableFrom, type ImportEdge } from './importGraph.js';

const ENTRY = 'lib/api/battery.ts';

/** Imports by a battery's module (any folder under lib/batteries/) of lib/ outside that folder, other than the entry. */
function pastTheEntry(edges: readonly ImportEdge[]): string[] {
  return edges
    .filter((e) => {
      const own = /^lib\/batteries\/([^/]+)\//.exec(e.from);
      return own && e.to.startsWith('lib/') && !e.to.startsWith(`lib/batteries/${own[1]}/`) && e.to !== ENTRY;
    })
    .map((e) => `${e.from}:${e.line} imports ${e.to}`);
}

/** The modules reachable from the entry along the edges `follow` accepts. */
function fromTheEntry(edges: readonly ImportEdge[], follow?: (e: ImportEdge) => boolean): string[] {
  return reachableFrom(ENTRY, edges, follow);
}

/** What a battery must not depend on through the entry, not even for a type. */
const NOT_FOR_BATTERIES = /^(lib\/(cli|run|analysis|design|batteries)\/|functions\/|infra\/|@aws-sdk\/|aws-cdk-lib|constructs$|@middy\/|aws-lambda$|@aws-lambda-powertools\/)/;

describe('batteries import sondage through the public entry', () => {
  const lib = importGraph(REPO_ROOT, ['lib']);

  it('a built-in battery reaches lib/ outside its own folder only through the entry', () => {
    for (const b of ['far6', 'xvalue', 'ptrue']) expect(lib.some((e) => e.from.startsWith(`lib/batteries/${b}/`) && e.to === ENTRY), b).toBe(true);
    expect(pastTheEntry(lib), 'import it from lib/api/battery.ts (add it to the entry if a battery needs it)').toEqual([]);
  });

  it('a deep import is caught, a battery-internal one and one through the entry are not', () => {
    const planted = plantedImports(
      ['lib/batteries/xvalue/x.ts', 'lib/metrics/stats.ts'],
      ['lib/batteries/ptrue/y.ts', 'lib/core/types.ts', 'type'],
      ['lib/batteries/far6/z.ts', 'lib/batteries/xvalue/types.ts', 'type'],
      ['lib/batteries/xvalue/x.ts', 'lib/batteries/xvalue/types.ts'],
      ['lib/batteries/xvalue/x.ts', ENTRY],
    );
    expect(pastTheEntry(planted)).toEqual([
      'lib/batteries/xvalue/x.ts:1 imports lib/metrics/stats.ts',
      'lib/batteries/ptrue/y.ts:2 imports lib/core/types.ts',
      'lib/batteries/far6/z.ts:3 imports lib/batteries/xvalue/types.ts',
    ]);
  });

  it('the entry depends on no CLI, run, analysis, campaign-parser, battery or AWS code, and loads DuckDB only on first use', () => {
    expect(fromTheEntry(lib)).toContain('lib/store/DuckDb.ts');
    expect(fromTheEntry(lib).filter((m) => NOT_FOR_BATTERIES.test(m))).toEqual([]);
    expect(fromTheEntry(lib)).toContain('@duckdb/node-api');
    expect(fromTheEntry(lib, atLoad).filter((m) => m.startsWith('@duckdb/'))).toEqual([]);
    // The walks do see what a planted import would bring.
    const planted = [
      ...lib,
      ...plantedImports(
        ['lib/metrics/stats.ts', 'lib/run/planted.ts', 'type'],
        ['lib/report/csv.ts', '@duckdb/node-api'],
      ),
    ];
    expect(fromTheEntry(planted).filter((m) => NOT_FOR_BATTERIES.test(m))).toEqual(['lib/run/planted.ts']);
    expect(fromTheEntry(planted, atLoad).filter((m) => m.startsWith('@duckdb/'))).toEqual(['@duckdb/node-api']);
  });

  it('the test battery relay imports lib/ only through the entry', () => {
    const edges = importGraph(REPO_ROOT, ['test/batteries/relay']).filter((e) => !e.from.endsWith('.test.ts') && e.to.startsWith('lib/'));
    expect(edges.length).toBeGreaterThan(0);
    expect(edges.filter((e) => e.to !== ENTRY).map((e) => `${e.from}:${e.line} imports ${e.to}`)).toEqual([]);
  });

  it('the scaffold imports sondage only as sondage/battery', () => {
    const text = readFileSync(path.join(REPO_ROOT, 'templates', 'battery', 'index.mjs'), 'utf8');
    const specifiers = [...text.matchAll(/^\s*import\s[^'"]*['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
    expect(specifiers.filter((s) => !s.startsWith('node:'))).toEqual(['sondage/battery']);
  });
});
