/**
 * What a partition thread loads before it runs its first partition. Each thread of a local run
 * loads its code again, through its own module loader (tsx, from the sources), on the core the
 * plan leaves idle, and the first wave waits for it: code a thread runs only off the usual path
 * loads on first use (`import()`), not with the thread.
 */
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/campaigns.js';
import { atLoad, importGraph, plantedImports, reachableFrom } from './importGraph.js';

const THREAD = 'lib/run/partitionThreadMain.ts';
/** The JavaScript Parquet reader: ~50 modules, needed only to read stored parts again (the design changed) or without DuckDB (Lambda). */
const JS_PARQUET = /^(lib\/store\/JsParquet\.ts|hyparquet|hyparquet-writer|fzstd)$/;

describe('what a partition thread loads when it starts', () => {
  const lib = importGraph(REPO_ROOT, ['lib']);

  it('not the JavaScript Parquet reader, which stays within reach for re-reading stored readings', () => {
    const loaded = reachableFrom(THREAD, lib, atLoad);
    expect(loaded).toContain('lib/run/refreshReadings.ts');
    expect(loaded.filter((m) => JS_PARQUET.test(m))).toEqual([]);
    expect(reachableFrom(THREAD, lib)).toContain('lib/store/JsParquet.ts');
  });

  it('the check sees a static import of it', () => {
    const planted = [...lib, ...plantedImports(['lib/run/refreshReadings.ts', 'lib/store/JsParquet.ts'])];
    expect(reachableFrom(THREAD, planted, atLoad).filter((m) => JS_PARQUET.test(m))).toContain('lib/store/JsParquet.ts');
  });
});
