/**
 * What importReplies does with the rows of each file, in file order, whichever thread prepared
 * them: the checks across rows (RowResolver), then the accepted rows' lines to the staging files
 * (TableSink), and the issues and warnings. Rows come either as chunks of records read in process
 * (`stageChunk`) or as segments prepared and packed by an import thread (`stagePacked`).
 */
import type { FileIssue } from '../../../api/battery.js';
import type { Language } from '../types.js';
import { jsonlLineIssue, jsonlLineProblem } from './load.js';
import { PACKED_TABLES } from './packedRows.js';
import type { PackedLines, PackedSegment } from './packedRows.js';
import { RowPreparer } from './rowLines.js';
import type { TableSink } from './tables.js';
import type { RawFile } from './types.js';
import { RowResolver, validateFile } from './validate.js';
import type { ResolvedRow } from './validate.js';

/** What one file gave besides its rows: the columns the schema does not know and label rows without letters. */
export interface FileNotes {
  readonly unknown: Set<string>;
  labelsWithoutLetters: number;
}

/** The rows of a packed table kept so far in one run of consecutive rows, staged when the run ends. */
class KeptRun {
  private start = -1;
  private next = 0;

  constructor(
    private readonly lines: PackedLines,
    private readonly stage: (bytes: Uint8Array) => void,
  ) {}

  keep(i: number): void {
    if (this.start < 0) this.start = i;
    this.next = i + 1;
  }

  skip(): void {
    this.end();
  }

  end(): void {
    if (this.start < 0) return;
    const from = this.start === 0 ? 0 : (this.lines.ends[this.start - 1] as number);
    this.stage(this.lines.bytes.subarray(from, this.lines.ends[this.next - 1]));
    this.start = -1;
  }
}

export class RowStager {
  readonly issues: FileIssue[] = [];
  readonly resolver = new RowResolver();
  private readonly preparer = new RowPreparer();
  /** Rows read, valid or not. */
  total = 0;
  /** Rows that became replies. */
  accepted = 0;

  constructor(private readonly sink: TableSink) {}

  /** Validates a chunk of records read in process and stages its valid rows. */
  stageChunk(raw: RawFile, notes: FileNotes): void {
    this.total += raw.records.length;
    for (const issue of raw.issues ?? []) this.issues.push(issue);
    const v = validateFile(raw, (row) => {
      const prepared = this.preparer.prepare(row);
      const firstOfItem = this.resolver.add(prepared);
      if (firstOfItem !== undefined) {
        this.sink.add(prepared, firstOfItem);
        this.accepted++;
      }
    });
    // Loops, not push(...issues): a spread of a million entries overflows the call stack.
    for (const issue of v.issues) this.issues.push(issue);
    for (const c of v.unknownColumns) notes.unknown.add(c);
    notes.labelsWithoutLetters += v.labelsWithoutLetters;
  }

  /**
   * Stages a packed segment of `file` whose first record is row `rowOffset + 1` and first line is
   * line `lineOffset + 1`: its prepared rows through the checks across rows, the records the
   * thread declined through validateFile as in process, all in file order. A line that is not
   * JSON is a problem of its line, as in process.
   */
  stagePacked(file: string, s: PackedSegment, rowOffset: number, lineOffset: number, notes: FileNotes): void {
    this.total += s.records;
    for (const c of s.unknownColumns) notes.unknown.add(c);
    notes.labelsWithoutLetters += s.labelsWithoutLetters;
    for (const m of s.readingMaps) this.sink.addReadingMap(m);
    const partitions = s.partitions.map((key) => key.split('\u0000') as [string, Language]);
    const runs = s.tables.map((lines, t) => new KeptRun(lines, (bytes) => this.sink.addBytes(PACKED_TABLES[t]!, bytes)));
    const [prompts, replies, readings, rule] = runs as [KeptRun, KeptRun, KeptRun, KeptRun];
    // One object for every row: the resolver copies what it keeps.
    const r: { -readonly [K in keyof ResolvedRow]: ResolvedRow[K] } = {
      file,
      row: 0,
      identity: '',
      item_id: '',
      prompt_key: '',
      repeat: 0,
      attempt: 0,
      status: 'ok',
      okWithoutContent: false,
      story: '',
      story_group: '',
    };
    let d = 0;
    const stageDeclinedBefore = (row: number): void => {
      if (d >= s.declined.length || (s.declined[d] as { row: number }).row >= row) return;
      for (const run of runs) run.end();
      for (; d < s.declined.length && s.declined[d]!.row < row; d++) {
        const { row: local, text } = s.declined[d]!;
        // Parsed again here: the thread parsed it once already, so it is JSON.
        const record = JSON.parse(text) as unknown;
        this.total--;
        this.stageChunk({ file, format: 'jsonl', records: [record], firstRow: rowOffset + local }, notes);
      }
    };
    const n = s.row.length;
    for (let i = 0; i < n; i++) {
      const local = s.row[i] as number;
      stageDeclinedBefore(local);
      r.row = rowOffset + local;
      r.identity = s.identity[i] as string;
      r.item_id = s.itemId[i] as string;
      r.prompt_key = s.promptKey[i] as string;
      r.repeat = s.repeat[i] as number;
      r.attempt = s.attempt[i] as number;
      r.status = s.ok[i] === 1 ? 'ok' : 'error';
      r.okWithoutContent = s.okWithoutContent[i] === 1;
      r.story = s.story[i] as string;
      r.story_group = s.storyGroup[i] as string;
      const firstOfItem = this.resolver.add(r);
      if (firstOfItem === undefined) {
        for (const run of runs) run.skip();
        continue;
      }
      this.accepted++;
      const [model, language] = partitions[s.partition[i] as number]!;
      this.sink.count(model, language, firstOfItem, s.readingsGiven[i] as number);
      if (firstOfItem) prompts.keep(i);
      else prompts.skip();
      replies.keep(i);
      readings.keep(i);
      rule.keep(i);
    }
    stageDeclinedBefore(Number.POSITIVE_INFINITY);
    for (const run of runs) run.end();
    for (const bad of s.syntaxErrors) {
      try {
        JSON.parse(bad.text);
        this.issues.push(jsonlLineProblem(file, lineOffset + bad.line, 'not valid JSON'));
      } catch (err) {
        this.issues.push(jsonlLineIssue(file, lineOffset + bad.line, err));
      }
    }
  }
}
