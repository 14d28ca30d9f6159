/**
 * Typed views of the SQL stage's rows. DuckDB returns numbers or bigints, Athena returns strings;
 * both become numbers here, and a row that does not fit the contract is reported with the query,
 * the row and the column, rather than turning into NaN further down.
 */
import { ANSWER_CONSTRAINTS, QUESTION_FORMS } from '../types.js';
import type { AnswerConstraint, Proposition, QuestionForm } from '../types.js';
import { RowReader } from '../../../api/battery.js';
import type { ChunkOptions } from '../../../api/battery.js';
import type { CellKey, CellSummaryRow, ItemShareRow, ReplyTotalsRow } from './types.js';

const PROPOSITIONS: readonly Proposition[] = ['P', 'notP'];

/** Where a row of the design stands: its cell (model, language), question form and answer constraint. */
export interface DesignCell extends CellKey {
  readonly form: QuestionForm;
  readonly constraint: AnswerConstraint;
}

/**
 * Reads the columns that place a query row in the design (model and language non-empty, form and
 * constraint among the design's), for the queries whose rows are pooled by them.
 */
export function readDesignCell(rd: RowReader, r: Record<string, unknown>, i: number): DesignCell {
  return {
    model: rd.string(r, i, 'model', { nonEmpty: true }),
    language: rd.string(r, i, 'language', { nonEmpty: true }),
    form: rd.oneOf(r, i, 'form', QUESTION_FORMS),
    constraint: rd.oneOf(r, i, 'constraint', ANSWER_CONSTRAINTS),
  };
}

/**
 * How the item rows are read from an engine that reads chunks (Queryable.startChunks): an item's
 * prompt_key only in label items' rows, the only rows parseItemShareRows reads it in. Read in every
 * row, the keys were ~1.5 M strings of 32 characters made one by one at FAR-6's full size: the
 * analysis bench took a median 11.8 s with them against 10.85 s without (six runs each).
 */
export const ITEM_ROW_CHUNKS: ChunkOptions = { textOnlyWhere: { prompt_key: { column: 'constraint', is: 'label' } } };

/**
 * Item rows from item_shares.sql; `secondListed` (from {@link parseLabelMaps}) fills `second_listed`
 * for label items, keyed by `model\u0000language\u0000prompt_key` (the only use of prompt_key, read in
 * label rows only: ITEM_ROW_CHUNKS). `offset`: the index of `rows[0]` in the query's result, where
 * the rows come a chunk at a time.
 */
export function parseItemShareRows(
  rows: readonly Record<string, unknown>[],
  secondListed: ReadonlyMap<string, Proposition> = new Map(),
  file = 'item_shares.sql',
  offset = 0,
): ItemShareRow[] {
  return RowReader.readRows(file, rows, (rd, r, i): ItemShareRow => {
    const model = rd.string(r, i, 'model');
    const language = rd.string(r, i, 'language');
    const constraint = rd.oneOf(r, i, 'constraint', ANSWER_CONSTRAINTS);
    const row: ItemShareRow = {
      model,
      language,
      reader: rd.string(r, i, 'reader'),
      form: rd.oneOf(r, i, 'form', QUESTION_FORMS),
      constraint,
      story: rd.string(r, i, 'story'),
      story_group: rd.string(r, i, 'story_group'),
      concept_pair: rd.string(r, i, 'concept_pair'),
      construction: rd.string(r, i, 'construction'),
      named: rd.oneOf(r, i, 'named', PROPOSITIONS),
      option_order: rd.number(r, i, 'option_order', { integer: true }),
      n_replies: rd.number(r, i, 'n_replies', { integer: true }),
      n_p: rd.number(r, i, 'n_p', { integer: true }),
      n_notp: rd.number(r, i, 'n_notp', { integer: true }),
      n_both: rd.number(r, i, 'n_both', { integer: true }),
      n_none: rd.number(r, i, 'n_none', { integer: true }),
      n_invalid: rd.number(r, i, 'n_invalid', { integer: true }),
      second_listed: constraint === 'label' ? (secondListed.get(labelKey(model, language, rd.string(r, i, 'prompt_key'))) ?? null) : null,
    };
    const labelled = row.n_p + row.n_notp + row.n_both + row.n_none + row.n_invalid;
    if (labelled !== row.n_replies) {
      rd.issue(
        i,
        'n_replies',
        `expected n_p + n_notp + n_both + n_none + n_invalid (${labelled}), got ${row.n_replies}: a reading carries a label outside P, notP, both, none, invalid`,
      );
    }
    return row;
  }, offset);
}

export function labelKey(model: string, language: string, promptKey: string): string {
  return `${model}\u0000${language}\u0000${promptKey}`;
}

/**
 * Which proposition each label item lists second, from label_maps.sql rows: the reading map's
 * `letters` are in the order the prompt lists them (lib/design/types.ts ReadingMap).
 */
export function parseLabelMaps(rows: readonly Record<string, unknown>[], file = 'label_maps.sql'): Map<string, Proposition> {
  const rd = new RowReader(file);
  const out = new Map<string, Proposition>();
  // Items share a handful of reading maps (2 distinct among FAR-6's 161,280 label items at full
  // size): each distinct text is parsed once.
  const parsed = new Map<string, ReturnType<typeof secondListedOf>>();
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as Record<string, unknown>;
    const key = labelKey(rd.string(r, i, 'model'), rd.string(r, i, 'language'), rd.string(r, i, 'prompt_key'));
    const raw = rd.string(r, i, 'reading_map_json');
    let second = parsed.get(raw);
    if (second === undefined) parsed.set(raw, (second = secondListedOf(raw)));
    // Replies brought from elsewhere may give no letters: no second-listed preference for them.
    if (second === null) continue;
    if (typeof second !== 'string') {
      rd.issue(i, `reading_map_json${second.path}`, second.message);
      continue;
    }
    const before = out.get(key);
    if (before !== undefined && before !== second) {
      rd.issue(i, 'reading_map_json', `prompt_key ${key.split('\u0000')[2]} has two reading maps that list different propositions second`);
    }
    out.set(key, second);
  }
  rd.done();
  return out;
}

function secondListedOf(raw: string): Proposition | null | { path: string; message: string } {
  let map: unknown;
  try {
    map = JSON.parse(raw);
  } catch (err) {
    return { path: '', message: `expected JSON, got ${JSON.stringify(raw.slice(0, 80))} (${(err as Error).message})` };
  }
  const letters = (map as { letters?: unknown } | null)?.letters;
  if (letters === undefined) return null;
  if (!Array.isArray(letters) || letters.length !== 2) {
    return { path: '.letters', message: `expected the two letters of a proposition-label item, got ${JSON.stringify(letters) ?? 'nothing'}` };
  }
  const props = letters.map((l) => (l as { proposition?: unknown } | null)?.proposition);
  if (!props.every((p) => p === 'P' || p === 'notP') || props[0] === props[1]) {
    return { path: '.letters', message: `expected one letter for P and one for notP, got ${JSON.stringify(props)}` };
  }
  return props[1] as Proposition;
}

/** Rows of cell_summary.sql. */
export function parseCellSummaryRows(rows: readonly Record<string, unknown>[], file = 'cell_summary.sql'): CellSummaryRow[] {
  return RowReader.readRows(file, rows, (rd, r, i): CellSummaryRow => {
    const p = rd.number(r, i, 'p_share', { nullable: true });
    return {
      model: rd.string(r, i, 'model'),
      language: rd.string(r, i, 'language'),
      form: rd.string(r, i, 'form'),
      constraint: rd.string(r, i, 'constraint'),
      reader: rd.string(r, i, 'reader'),
      replies: rd.number(r, i, 'replies', { integer: true }),
      decisive: rd.number(r, i, 'decisive', { integer: true }),
      n_p: rd.number(r, i, 'n_p', { integer: true }),
      decisive_share: rd.number(r, i, 'decisive_share'),
      p_share: Number.isNaN(p) ? null : p,
    };
  });
}

/** Rows of reply_totals.sql. */
export function parseReplyTotalsRows(rows: readonly Record<string, unknown>[], file = 'reply_totals.sql'): ReplyTotalsRow[] {
  return RowReader.readRows(file, rows, (rd, r, i): ReplyTotalsRow => {
    const cost = rd.number(r, i, 'cost_usd', { nullable: true });
    const outside = rd.number(r, i, 'cost_outside_design_usd', { nullable: true });
    return {
      model: rd.string(r, i, 'model'),
      language: rd.string(r, i, 'language'),
      attempts: rd.number(r, i, 'attempts', { integer: true }),
      ok_attempts: rd.number(r, i, 'ok_attempts', { integer: true }),
      items_ok: rd.number(r, i, 'items_ok', { integer: true }),
      simulated_attempts: rd.number(r, i, 'simulated_attempts', { integer: true }),
      cost_usd: Number.isNaN(cost) ? 0 : cost,
      attempts_outside_design: rd.number(r, i, 'attempts_outside_design', { integer: true }),
      cost_outside_design_usd: Number.isNaN(outside) ? 0 : outside,
    };
  });
}
