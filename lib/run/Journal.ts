import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * An append-only NDJSON file of reply rows, written as each reply arrives. A reply that cost money
 * is on disk before anything else happens to it, so a killed run loses nothing: the next run adopts
 * the journals it finds and counts their cost once.
 */
export class Journal {
  private readonly stream: WriteStream;
  private rows = 0;

  private constructor(public readonly path: string) {
    this.stream = createWriteStream(path, { flags: 'a' });
  }

  static async open(dir: string, name: string): Promise<Journal> {
    await mkdir(dir, { recursive: true });
    return new Journal(join(dir, name));
  }

  /**
   * `open` without an await, for callers that must swap journals within one turn of the event
   * loop (a part runner replacing the part that chunks attach to).
   */
  static openSync(dir: string, name: string): Journal {
    mkdirSync(dir, { recursive: true });
    return new Journal(join(dir, name));
  }

  get count(): number {
    return this.rows;
  }

  append(row: object): void {
    this.stream.write(`${JSON.stringify(row)}\n`);
    this.rows++;
  }

  /** Flushes buffered writes to the file and closes it. */
  async close(): Promise<void> {
    await new Promise<void>((resolve, reject) => this.stream.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
}

/**
 * Reads the rows of journals left by a killed run. A torn last line (the process died mid-write)
 * is dropped: that reply's item stays pending and is asked again.
 */
export async function readJournal<T>(path: string): Promise<T[]> {
  const text = await readFile(path, 'utf8');
  const rows: T[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      rows.push(JSON.parse(line) as T);
    } catch {
      // Only the final line can be torn; anything else is kept.
    }
  }
  return rows;
}

export async function listJournals(dir: string): Promise<string[]> {
  try {
    const names = await readdir(dir);
    // A rewrite of an adopted journal that a kill interrupted: the journal itself is intact.
    for (const n of names) if (n.endsWith('.ndjson.tmp')) await rm(join(dir, n), { force: true });
    const files = names.filter((n) => n.endsWith('.ndjson')).sort();
    const out: string[] = [];
    for (const n of files) if ((await stat(join(dir, n))).size > 0) out.push(join(dir, n));
    else await rm(join(dir, n), { force: true });
    return out;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}
