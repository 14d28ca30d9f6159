/**
 * A JSONL file cut into byte ranges of whole lines, so that threads can each read and parse their
 * own (importThreads.ts). A cut is always just after a newline byte: in UTF-8 0x0A is never part of
 * another character, so each range decodes to exactly the text the whole file's decoding gives
 * for it, and no line is split.
 */
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';

/** A range of whole lines: bytes `start` to `end` (exclusive); `first` when it starts the file. */
export interface Segment {
  readonly start: number;
  readonly end: number;
  readonly first: boolean;
}

/** Bytes read at a time while looking for the newline after a cut. */
const PROBE_BYTES = 64 * 1024;

/**
 * The segments of a file of `size` bytes, each about `bytes` long (longer by the rest of the line
 * a cut falls in), in file order. Reads only a little around each cut.
 */
export async function* jsonlSegments(fh: FileHandle, size: number, bytes: number): AsyncGenerator<Segment> {
  let start = 0;
  const probe = Buffer.allocUnsafe(PROBE_BYTES);
  while (start < size) {
    let end = Math.min(size, start + Math.max(1, bytes));
    // Move the cut to just after the next newline at or past it.
    while (end < size) {
      const { bytesRead } = await fh.read(probe, 0, Math.min(PROBE_BYTES, size - (end - 1)), end - 1);
      const nl = probe.subarray(0, bytesRead).indexOf(0x0a);
      if (nl !== -1) {
        end = end - 1 + nl + 1;
        break;
      }
      end = Math.min(size, end - 1 + bytesRead + 1);
    }
    yield { start, end, first: start === 0 };
    start = end;
  }
}

/** The bytes of a segment (packedRows.ts decodes them line by line). */
export async function readSegment(file: string, segment: Segment): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(segment.end - segment.start);
    let at = 0;
    while (at < buf.length) {
      const { bytesRead } = await fh.read(buf, at, buf.length - at, segment.start + at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return buf.subarray(0, at);
  } finally {
    await fh.close();
  }
}
