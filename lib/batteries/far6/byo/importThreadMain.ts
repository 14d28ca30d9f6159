/**
 * An import thread: reads the segments of a JSONL file the main thread sends (jsonlSegments.ts),
 * parses, checks and prepares their rows and sends each segment back packed (packedRows.ts), its
 * buffers moved rather than copied.
 */
import { parentPort } from 'node:worker_threads';
import { readSegment } from './jsonlSegments.js';
import { packSegment, transferList } from './packedRows.js';
import { RowPreparer } from './rowLines.js';
import type { FromImportThread, ToImportThread } from './importThreads.js';

const port = parentPort!;
// Kept across segments: its caches (reading maps, prompt keys) serve every segment of the thread.
const preparer = new RowPreparer();

port.on('message', (m: ToImportThread) => {
  void (async () => {
    try {
      const bytes = await readSegment(m.file, m.segment);
      const packed = packSegment(m.file, bytes, m.segment.first, preparer);
      port.postMessage({ type: 'packed', id: m.id, packed } satisfies FromImportThread, transferList(packed));
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      port.postMessage({ type: 'failed', id: m.id, message: e.message, stack: e.stack } satisfies FromImportThread);
    }
  })();
});
port.postMessage({ type: 'ready' } satisfies FromImportThread);
