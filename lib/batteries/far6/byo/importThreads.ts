/**
 * Threads that parse, check and prepare the rows of a large JSONL file (importThreadMain.ts), so
 * that the import's main thread keeps only the checks across rows and the writing. The file is
 * cut into segments of whole lines (jsonlSegments.ts); each thread reads its segments itself and
 * sends them back packed (packedRows.ts); the main thread takes them in file order.
 */
import { open } from 'node:fs/promises';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { CampaignFileError } from '../../../api/battery.js';
import { jsonlSegments } from './jsonlSegments.js';
import type { Segment } from './jsonlSegments.js';
import type { PackedSegment } from './packedRows.js';

export type ToImportThread = { readonly type: 'segment'; readonly id: number; readonly file: string; readonly segment: Segment };
export type FromImportThread =
  | { readonly type: 'ready' }
  | { readonly type: 'packed'; readonly id: number; readonly packed: PackedSegment }
  | { readonly type: 'failed'; readonly id: number; readonly message: string; readonly stack?: string | undefined };

/**
 * Below this many bytes of JSONL the file is imported on the main thread: each thread loads the
 * code anew (~0.5 s from a clone's bundle, lib/core/sourceBundle.mjs) and warms up its caches, and
 * only files well past that gain from threads.
 */
export const THREAD_MIN_BYTES = 64 * 2 ** 20;
/** Bytes per segment: ~5,000 rows of a typical export, a few MB of table lines in flight per segment. */
export const SEGMENT_BYTES = 4 * 2 ** 20;
/** Segments handed out ahead of the one the main thread takes, per thread: bounds the memory of lines waiting. */
const AHEAD_PER_THREAD = 2;
/**
 * A thread's young generation: a segment makes many short-lived strings and objects; as for the
 * partition threads (lib/run/partitionThreads.ts), a larger one than V8's default spends less time
 * in scavenges. At 128 MB (semi-spaces of ~42 MB) most of a segment's objects die before a
 * scavenge: a thread packs a segment with about a tenth less CPU than at 64 MB; larger gains nothing.
 */
const YOUNG_GENERATION_MB = 128;

/**
 * How many import threads: `requested` when given (0: none, all in process); none for less than
 * THREAD_MIN_BYTES of JSONL; else one per core, at least 2 and at most 4.
 */
export function importThreadCount(jsonlBytes: number, requested?: number): number {
  if (requested !== undefined) return Math.max(0, requested);
  if (jsonlBytes < THREAD_MIN_BYTES) return 0;
  return Math.max(2, Math.min(4, os.availableParallelism()));
}

interface Task {
  resolve(p: PackedSegment): void;
  reject(err: Error): void;
}

class ImportThread {
  readonly tasks = new Map<number, Task>();
  readonly ready: Promise<void>;
  private failure?: Error;

  constructor(readonly worker: Worker) {
    let started!: () => void;
    let refused!: (err: Error) => void;
    this.ready = new Promise<void>((resolve, reject) => ((started = resolve), (refused = reject)));
    worker.on('message', (m: FromImportThread) => {
      if (m.type === 'ready') return started();
      const task = this.tasks.get(m.id);
      this.tasks.delete(m.id);
      if (m.type === 'packed') task?.resolve(m.packed);
      else {
        const err = new Error(m.message);
        if (m.stack !== undefined) err.stack = m.stack;
        task?.reject(err);
      }
    });
    // A thread that dies (a crash, not an error it reported) fails what it was running.
    const fail = (err: Error): void => {
      this.failure ??= err;
      refused(err);
      for (const t of this.tasks.values()) t.reject(err);
      this.tasks.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`an import thread exited (code ${code})`)));
  }

  run(id: number, file: string, segment: Segment): Promise<PackedSegment> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.tasks.set(id, { resolve, reject });
      this.worker.postMessage({ type: 'segment', id, file, segment } satisfies ToImportThread);
    });
  }
}

/** The threads of one import: started once, used for each large JSONL file, closed at the end. */
export class ImportThreads {
  private nextId = 0;

  private constructor(private readonly threads: readonly ImportThread[]) {}

  /** Starts `n` threads; resolves once each has loaded its code. */
  static async start(n: number): Promise<ImportThreads> {
    const threads = Array.from(
      { length: n },
      () => new ImportThread(new Worker(new URL('./importThread.mjs', import.meta.url), { resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } })),
    );
    const self = new ImportThreads(threads);
    try {
      await Promise.all(threads.map((t) => t.ready));
    } catch (err) {
      await self.close();
      throw err;
    }
    return self;
  }

  get size(): number {
    return this.threads.length;
  }

  /**
   * The segments of `file` (`size` bytes), packed by the threads, in file order. At most
   * AHEAD_PER_THREAD segments per thread are out at a time; a segment a thread could not read
   * makes the file unreadable, as it is for the in-process reader.
   */
  async *packed(file: string, size: number, segmentBytes = SEGMENT_BYTES): AsyncGenerator<PackedSegment> {
    const fh = await open(file, 'r');
    try {
      const segments = jsonlSegments(fh, size, segmentBytes);
      const queue: Promise<PackedSegment>[] = [];
      const fill = async (): Promise<void> => {
        while (queue.length < this.threads.length * AHEAD_PER_THREAD) {
          const next = await segments.next();
          if (next.done) return;
          const thread = this.threads.reduce((a, b) => (b.tasks.size < a.tasks.size ? b : a));
          const p = thread.run(this.nextId++, file, next.value);
          // Awaited in turn below; until then a failure must not count as unhandled.
          p.catch(() => undefined);
          queue.push(p);
        }
      };
      await fill();
      while (queue.length > 0) {
        let segment: PackedSegment;
        try {
          segment = await queue.shift()!;
        } catch (err) {
          throw new CampaignFileError(`${file}: cannot be read as JSONL: ${(err as Error).message}`, [], { cause: err });
        }
        await fill();
        yield segment;
      }
    } finally {
      await fh.close();
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }
}
