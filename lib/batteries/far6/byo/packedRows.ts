/**
 * One segment of a JSONL file (whole lines) → its rows, prepared and packed for another thread
 * (importThreads.ts). Cloning a prepared row per row back to the main thread cost it nearly what
 * the worker saved (measured on the 1M-row import): here what crosses is a handful of arrays per
 * segment — each table's lines as one UTF-8 buffer with the byte offset where each row's lines
 * end, the ids the checks across rows need as arrays of strings and numbers — so that the main
 * thread does little more than those checks and writing bytes.
 *
 * Only rows the quick check takes (quickRow.ts) are prepared here. Any other record — not an
 * object, declined by the quick check, label letters that are wrong, a reading map the token rule
 * cannot read — is sent back as its line, and the main thread runs it through validateFile and
 * RowPreparer exactly as the in-process import does, so that every message about a bad row comes
 * from the same code with the same row number.
 */
import { quickRow } from './quickRow.js';
import type { RowPreparer, StagedReadingMap } from './rowLines.js';
import { KNOWN_COLUMNS, labelLetters } from './validate.js';

/** The staged lines of TableSink, in this order in `PackedSegment.tables`. */
export const PACKED_TABLES = ['prompts', 'replies', 'readings', 'rule'] as const;
export type PackedTable = (typeof PACKED_TABLES)[number];

/** One table's lines of a segment's prepared rows: row i's lines are `bytes[ends[i-1] .. ends[i])`, each ending in `\n`. */
export interface PackedLines {
  readonly bytes: Uint8Array;
  readonly ends: Uint32Array;
}

/** A record the main thread must check itself: `row` is its record number within the segment (1-based). */
export interface DeclinedRecord {
  readonly row: number;
  readonly text: string;
}

/** A segment's rows, packed. Record and line numbers are within the segment (1-based); the main thread adds the offsets. */
export interface PackedSegment {
  /** Lines read, blank ones included (JSONL syntax errors are named by line). */
  readonly lines: number;
  /** Records read (non-blank lines that are JSON). */
  readonly records: number;
  /** Lines that are not JSON, each a problem of its line (the main thread parses them again for the message). */
  readonly syntaxErrors: readonly { readonly line: number; readonly text: string }[];
  /** Prepared rows, in file order: their record numbers, ids and what the checks across rows read. */
  readonly row: Int32Array;
  readonly identity: string[];
  readonly itemId: string[];
  readonly promptKey: string[];
  readonly story: string[];
  readonly storyGroup: string[];
  readonly repeat: Int32Array;
  readonly attempt: Int32Array;
  /** Status ok with neither text nor readings (RowResolver rejects it): 1, else 0. */
  readonly okWithoutContent: Uint8Array;
  /** Status ok: 1, else 0 (RowResolver finds each item's chosen reply from these). */
  readonly ok: Uint8Array;
  /** Index into `partitions` (`model\u0000language`). */
  readonly partition: Int32Array;
  readonly partitions: string[];
  /** Readings each row gives (the count of its `readings` lines). */
  readonly readingsGiven: Int32Array;
  readonly tables: readonly PackedLines[];
  /** The reading maps the prepared rows' prompt lines name by key. */
  readonly readingMaps: StagedReadingMap[];
  readonly declined: DeclinedRecord[];
  readonly unknownColumns: string[];
  readonly labelsWithoutLetters: number;
}

/** A growing UTF-8 buffer of one table's lines with the end offset of each row's. */
class LineBuffer {
  private bytes: Buffer;
  private length = 0;
  private readonly ends: number[] = [];

  constructor(capacity: number) {
    this.bytes = Buffer.allocUnsafe(Math.max(1024, capacity));
  }

  line(text: string): void {
    // At most 3 bytes per UTF-16 unit, and the newline.
    const need = this.length + text.length * 3 + 1;
    if (need > this.bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, this.bytes.length * 2));
      this.bytes.copy(grown, 0, 0, this.length);
      this.bytes = grown;
    }
    this.length += this.bytes.write(text, this.length, 'utf8');
    this.bytes[this.length++] = 0x0a;
  }

  endRow(): void {
    this.ends.push(this.length);
  }

  packed(): PackedLines {
    // A copy of the used part only, so that the buffer moved to the main thread holds no slack.
    const bytes = new Uint8Array(this.length);
    bytes.set(this.bytes.subarray(0, this.length));
    return { bytes, ends: Uint32Array.from(this.ends) };
  }
}

/** The UTF-8 byte order mark, skipped at the start of a file as readReplyChunks skips its decoded U+FEFF. */
const BOM = [0xef, 0xbb, 0xbf] as const;

/**
 * Prepares a segment's bytes (whole lines of a JSONL file; `first`: the file's first segment, whose
 * byte order mark is skipped as readReplyChunks skips it). `preparer` is kept across segments for
 * its caches. Lines are split and parsed as readReplyChunks does: on `\n`, blank lines skipped.
 * Each line is decoded on its own (a newline byte is never part of another UTF-8 character, so
 * the text is the same as the whole segment's decoding gives): a line of Latin-1 text then becomes
 * a one-byte string, which JSON.parse reads about twice as fast as a slice of a segment that holds
 * one wider character anywhere.
 */
export function packSegment(file: string, bytes: Uint8Array, first: boolean, preparer: RowPreparer): PackedSegment {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const bom = first && buf.length >= 3 && buf[0] === BOM[0] && buf[1] === BOM[1] && buf[2] === BOM[2] ? 3 : 0;
  const sizeHint = buf.length - bom;
  const tables = PACKED_TABLES.map((t) => new LineBuffer(t === 'replies' || t === 'prompts' ? sizeHint : sizeHint / 8));
  const row: number[] = [];
  const identity: string[] = [];
  const itemId: string[] = [];
  const promptKey: string[] = [];
  const story: string[] = [];
  const storyGroup: string[] = [];
  const repeat: number[] = [];
  const attempt: number[] = [];
  const okWithoutContent: number[] = [];
  const ok: number[] = [];
  const partition: number[] = [];
  const partitions: string[] = [];
  const partitionIndex = new Map<string, number>();
  const readingsGiven: number[] = [];
  const declined: DeclinedRecord[] = [];
  // The preparer gives one object per distinct map: a set of a few dozen.
  const readingMaps = new Set<StagedReadingMap>();
  const unknown = new Set<string>();
  let labelsWithoutLetters = 0;
  let lines = 0;
  let records = 0;
  const syntaxErrors: { line: number; text: string }[] = [];
  let start = bom;
  // The bytes after the last newline are no line unless there are some (readReplyChunks' last take).
  while (start < buf.length) {
    let end = buf.indexOf(0x0a, start);
    if (end === -1) end = buf.length;
    const line = buf.toString('utf8', start, end);
    start = end + 1;
    lines++;
    if (line.trim() === '') continue;
    let record: unknown;
    try {
      record = JSON.parse(line) as unknown;
    } catch {
      syntaxErrors.push({ line: lines, text: line });
      continue;
    }
    records++;
    const quick = record !== null && typeof record === 'object' && !Array.isArray(record) ? quickRow(record as Record<string, unknown>, false) : undefined;
    const letters = quick ? labelLetters(quick) : undefined;
    if (!quick || (letters !== undefined && letters !== 'missing')) {
      declined.push({ row: records, text: line });
      continue;
    }
    const prepared = preparer.prepare({ file, row: records, value: quick });
    if (prepared.ruleError !== undefined) {
      // Thrown when the main thread stages the row, with the error object it has always had.
      declined.push({ row: records, text: line });
      continue;
    }
    for (const k in record as Record<string, unknown>) if (!KNOWN_COLUMNS.has(k)) unknown.add(k);
    if (letters === 'missing') labelsWithoutLetters++;
    row.push(records);
    identity.push(prepared.identity);
    itemId.push(prepared.item_id);
    promptKey.push(prepared.prompt_key);
    story.push(prepared.story);
    storyGroup.push(prepared.story_group);
    repeat.push(prepared.repeat);
    attempt.push(prepared.attempt);
    okWithoutContent.push(prepared.okWithoutContent ? 1 : 0);
    ok.push(prepared.status === 'ok' ? 1 : 0);
    const key = `${prepared.model}\u0000${prepared.language}`;
    let p = partitionIndex.get(key);
    if (p === undefined) partitionIndex.set(key, (p = partitions.push(key) - 1));
    partition.push(p);
    readingsGiven.push(prepared.readingLines.length);
    readingMaps.add(prepared.readingMap);
    const [prompts, replies, readings, rule] = tables as [LineBuffer, LineBuffer, LineBuffer, LineBuffer];
    prompts.line(prepared.promptLine);
    replies.line(prepared.replyLine);
    for (const l of prepared.readingLines) readings.line(l);
    for (const l of prepared.ruleLines) rule.line(l);
    for (const t of tables) t.endRow();
  }
  return {
    lines,
    records,
    syntaxErrors,
    row: Int32Array.from(row),
    identity,
    itemId,
    promptKey,
    story,
    storyGroup,
    repeat: Int32Array.from(repeat),
    attempt: Int32Array.from(attempt),
    okWithoutContent: Uint8Array.from(okWithoutContent),
    ok: Uint8Array.from(ok),
    partition: Int32Array.from(partition),
    partitions,
    readingsGiven: Int32Array.from(readingsGiven),
    tables: tables.map((t) => t.packed()),
    readingMaps: [...readingMaps],
    declined,
    unknownColumns: [...unknown],
    labelsWithoutLetters,
  };
}

/** The buffers `postMessage` can move instead of copying. */
export function transferList(s: PackedSegment): ArrayBuffer[] {
  const out = [s.row, s.repeat, s.attempt, s.okWithoutContent, s.ok, s.partition, s.readingsGiven, ...s.tables.flatMap((t) => [t.bytes, t.ends])].map((a) => a.buffer as ArrayBuffer);
  return [...new Set(out)];
}
