/**
 * A fresh LocalBlobStore in a temp folder and a JsParquetWriter for each test of a file: what the
 * tests that write Parquet parts by hand (replies, readings) before running a stage over them share.
 */
import { afterEach, beforeEach } from 'vitest';
import { JsParquetWriter } from '../../lib/store/JsParquet.js';
import { LocalBlobStore } from '../../lib/store/LocalBlobStore.js';
import { useTempDir } from './campaigns.js';

export interface LocalParts {
  readonly store: LocalBlobStore;
  readonly writer: JsParquetWriter;
}

/**
 * Registers the hooks; read the fields inside tests and hooks only.
 *
 * @example
 * const parts = useLocalParts('refresh');
 * it('…', async () => { await parts.writer.writePart(parts.store, target, rows); });
 */
export function useLocalParts(prefix: string): LocalParts {
  const tmp = useTempDir(prefix);
  let made: LocalParts | undefined;
  beforeEach(() => {
    made = { store: new LocalBlobStore(tmp.dir), writer: new JsParquetWriter() };
  });
  afterEach(async () => {
    await made?.writer.close();
    made = undefined;
  });
  const live = (): LocalParts => {
    if (made === undefined) throw new Error(`useLocalParts('${prefix}'): read outside a test or hook`);
    return made;
  };
  return {
    get store() {
      return live().store;
    },
    get writer() {
      return live().writer;
    },
  };
}
