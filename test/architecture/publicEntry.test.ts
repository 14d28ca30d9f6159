/**
 * A battery imports sondage through one entry, `sondage/battery` (lib/api/battery.ts): a battery of
 * one's own can reach nothing else, and the built-in three should prove that the entry is enough.
 * The test battery `relay` and the scaffold already import only the entry. The built-in three still
 * reach the modules listed in NOT_YET_THROUGH_THE_ENTRY directly; the list may shrink (move a module's
 * helpers into the entry, then drop it here) but never grow: a built-in battery that reaches a module
 * of lib/ outside its own folder and outside this list fails.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/campaigns.js';
import { importGraph } from './importGraph.js';

const ENTRY = 'lib/api/battery.ts';

/** Modules the built-in batteries still import directly rather than through the entry. */
const NOT_YET_THROUGH_THE_ENTRY: readonly string[] = [
  'lib/battery/byoIssues.ts',
  'lib/battery/defineBattery.ts',
  'lib/battery/readers/firstTokenProbability.ts',
  'lib/battery/readoutHealth.ts',
  'lib/battery/schemas.ts',
  'lib/battery/types.ts',
  'lib/core/fileText.ts',
  'lib/core/hash.ts',
  'lib/core/languages.ts',
  'lib/core/settings.ts',
  'lib/core/types.ts',
  'lib/errors.ts',
  'lib/metrics/calibration.ts',
  'lib/metrics/classification.ts',
  'lib/metrics/rank.ts',
  'lib/metrics/regression.ts',
  'lib/metrics/spread.ts',
  'lib/metrics/stats.ts',
  'lib/metrics/variance.ts',
  'lib/pricing/pricing.ts',
  'lib/providers/errors.ts',
  'lib/providers/simulated/approximateTokens.ts',
  'lib/providers/simulated/types.ts',
  'lib/providers/types.ts',
  'lib/query/errors.ts',
  'lib/query/rowReader.ts',
  'lib/query/sql.ts',
  'lib/query/types.ts',
  'lib/report/csv.ts',
  'lib/report/html/escape.ts',
  'lib/report/html/page.ts',
  'lib/report/html/svg.ts',
  'lib/report/html/table.ts',
  'lib/report/html/types.ts',
  'lib/report/markdown.ts',
  'lib/store/DuckDb.ts',
  'lib/store/duckdbApi.ts',
  'lib/store/layout.ts',
  'lib/store/schemas.ts',
  'lib/store/types.ts',
];

describe('batteries import sondage through the public entry', () => {
  it('a built-in battery reaches lib/ outside its folder only through the entry or a module not yet moved behind it', () => {
    const outside = importGraph(REPO_ROOT, ['lib']).filter((e) => {
      const own = /^lib\/batteries\/(far6|xvalue|ptrue)\//.exec(e.from);
      return own && e.to.startsWith('lib/') && !e.to.startsWith(`lib/batteries/${own[1]}/`) && e.to !== ENTRY;
    });
    expect(outside.length).toBeGreaterThan(0);
    const stray = outside.filter((e) => !NOT_YET_THROUGH_THE_ENTRY.includes(e.to)).map((e) => `${e.from}:${e.line} imports ${e.to}`);
    expect(stray, 'import it from lib/api/battery.ts (add it to the entry if a battery needs it)').toEqual([]);
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
