/**
 * The same replies read twice (Same Judgment, Different Yes §3 last paragraph, §4 Figure 2b, §7 Figure 5): reply-level
 * disagreement between the token rule and the sentence judge among replies both read decisively,
 * and the polarity share of the negative-interrogative token given its judged sentence.
 *
 * The fixed rule reads yes as affirming the term the question names; after a negative
 * interrogative that is the polarity mapping. So a reply whose token reading agrees with its judged
 * sentence follows the polarity mapping, and one that disagrees follows the truth/agreement
 * mapping: the polarity share is the agreement rate on those replies.
 */
import type { Proposition } from '../types.js';
import { RowReader } from '../../../api/battery.js';
import { FAR6_SQL } from '../sqlLibrary.js';
import { readDesignCell } from './parseRows.js';
import type {
  AgreementResults,
  DisagreementSummary,
  PolarityLevel,
  PolarityShare,
  Queryable,
  ReadingAgreementRow,
  ReplyDisagreement,
  TableSources,
} from './types.js';

const FILE = 'reading_agreement.sql';

/** reading_agreement.sql with its placeholders filled. */
export function renderAgreementSql(tables: TableSources): string {
  return FAR6_SQL.render('reading_agreement', tables);
}

/** Runs reading_agreement.sql on `db` and checks its rows. */
export async function runReadingAgreement(db: Queryable, tables: TableSources): Promise<ReadingAgreementRow[]> {
  return parseAgreementRows(await FAR6_SQL.run(db, 'reading_agreement', tables));
}


/**
 * Typed rows of reading_agreement.sql (DuckDB gives numbers or bigints, Athena strings); a row
 * that breaks the contract is reported with its index and column.
 */
export function parseAgreementRows(raw: readonly Record<string, unknown>[]): ReadingAgreementRow[] {
  return RowReader.readRows(FILE, raw, (rd, r, i): ReadingAgreementRow => {
    const str = (c: string): string => rd.string(r, i, c, { nonEmpty: true });
    const count = (c: string): number => rd.number(r, i, c, { integer: true });
    const row: ReadingAgreementRow = {
      ...readDesignCell(rd, r, i),
      concept_pair: str('concept_pair'),
      construction: str('construction'),
      named: rd.oneOf<Proposition>(r, i, 'named', ['P', 'notP']),
      reader_a: str('reader_a'),
      reader_b: str('reader_b'),
      n_both_decisive: count('n_both_decisive'),
      n_agree: count('n_agree'),
    };
    if (row.n_agree > row.n_both_decisive) rd.fail(i, 'n_agree', `at most n_both_decisive (${row.n_both_decisive})`, r.n_agree);
    if (row.reader_a !== '' && row.reader_a >= row.reader_b) rd.fail(i, 'reader_b', `a reader after reader_a "${row.reader_a}"`, r.reader_b);
    return row;
  });
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Same Judgment, Different Yes Figure 2b: per cell, form, constraint and reader pair, the share of replies with both
 * readings decisive whose readings differ; then per form, constraint and reader pair, the mean
 * over cells (each cell weighted equally, as the seed's "mean disagreement across cells").
 */
export function replyDisagreement(rows: readonly ReadingAgreementRow[]): { cells: ReplyDisagreement[]; summary: DisagreementSummary[] } {
  const cells = new Map<string, { key: Omit<ReplyDisagreement, 'n_both_decisive' | 'n_disagree' | 'disagreement'>; n: number; agree: number }>();
  for (const r of rows) {
    const k = [r.form, r.constraint, r.reader_a, r.reader_b, r.model, r.language].join('\u0000');
    const c = cells.get(k) ?? { key: { model: r.model, language: r.language, form: r.form, constraint: r.constraint, reader_a: r.reader_a, reader_b: r.reader_b }, n: 0, agree: 0 };
    c.n += r.n_both_decisive;
    c.agree += r.n_agree;
    cells.set(k, c);
  }
  const out = [...cells.values()]
    .map((c): ReplyDisagreement => ({ ...c.key, n_both_decisive: c.n, n_disagree: c.n - c.agree, disagreement: c.n > 0 ? (c.n - c.agree) / c.n : null }))
    .sort((x, y) => cmp(x.form, y.form) || cmp(x.constraint, y.constraint) || cmp(x.reader_a, y.reader_a) || cmp(x.reader_b, y.reader_b) || cmp(x.model, y.model) || cmp(x.language, y.language));
  const groups = new Map<string, { key: Pick<DisagreementSummary, 'form' | 'constraint' | 'reader_a' | 'reader_b'>; rates: number[]; n: number }>();
  for (const c of out) {
    const k = [c.form, c.constraint, c.reader_a, c.reader_b].join('\u0000');
    const g = groups.get(k) ?? { key: { form: c.form, constraint: c.constraint, reader_a: c.reader_a, reader_b: c.reader_b }, rates: [], n: 0 };
    if (c.disagreement !== null) g.rates.push(c.disagreement);
    g.n += c.n_both_decisive;
    groups.set(k, g);
  }
  const summary = [...groups.values()].map(
    (g): DisagreementSummary => ({
      ...g.key,
      n_cells: g.rates.length,
      n_both_decisive: g.n,
      mean_disagreement: g.rates.length ? g.rates.reduce((a, b) => a + b, 0) / g.rates.length : null,
      min_disagreement: g.rates.length ? Math.min(...g.rates) : null,
      max_disagreement: g.rates.length ? Math.max(...g.rates) : null,
    }),
  );
  return { cells: out, summary };
}

const LEVELS: readonly { level: PolarityLevel; model: boolean; language: boolean; construction: boolean; wording: boolean }[] = [
  { level: 'model', model: true, language: false, construction: false, wording: false },
  { level: 'language', model: false, language: true, construction: false, wording: false },
  { level: 'cell', model: true, language: true, construction: false, wording: false },
  { level: 'construction', model: false, language: true, construction: true, wording: false },
  { level: 'construction_model', model: true, language: true, construction: true, wording: false },
  { level: 'wording', model: false, language: true, construction: true, wording: true },
  { level: 'wording_model', model: true, language: true, construction: true, wording: true },
];

/** A judge reader: the sentence reading, as opposed to the token rule (`rule`). */
function isJudge(reader: string): boolean {
  return reader.startsWith('judge:');
}

/**
 * Same Judgment, Different Yes §7: polarity shares of the negative-interrogative yes/no token given the judged
 * sentence, per model, language, cell, construction family and wording (with and without the
 * model). Levels that pool models also give the mean of the models' shares (Figure 5c's bars).
 */
export function polarityShares(rows: readonly ReadingAgreementRow[]): PolarityShare[] {
  const usable = rows.filter(
    (r) => r.form === 'negint' && r.constraint === 'yesno' && ((r.reader_a === 'rule' && isJudge(r.reader_b)) || (r.reader_b === 'rule' && isJudge(r.reader_a))),
  );
  const out: PolarityShare[] = [];
  for (const spec of LEVELS) {
    const groups = new Map<string, { row: Omit<PolarityShare, 'n_replies' | 'n_polarity' | 'share' | 'model_mean'>; n: number; agree: number; byModel: Map<string, { n: number; agree: number }> }>();
    for (const r of usable) {
      const judge = r.reader_a === 'rule' ? r.reader_b : r.reader_a;
      const row = {
        level: spec.level,
        judge,
        model: spec.model ? r.model : '',
        language: spec.language ? r.language : '',
        construction: spec.construction ? r.construction : '',
        wording: spec.wording ? `${r.concept_pair}:${r.named}` : '',
      };
      const k = [judge, row.model, row.language, row.construction, row.wording].join('\u0000');
      const g = groups.get(k) ?? { row, n: 0, agree: 0, byModel: new Map<string, { n: number; agree: number }>() };
      g.n += r.n_both_decisive;
      g.agree += r.n_agree;
      const m = g.byModel.get(r.model) ?? { n: 0, agree: 0 };
      m.n += r.n_both_decisive;
      m.agree += r.n_agree;
      g.byModel.set(r.model, m);
      groups.set(k, g);
    }
    const level = [...groups.values()].map((g): PolarityShare => {
      const shares = [...g.byModel.values()].filter((m) => m.n > 0).map((m) => m.agree / m.n);
      return {
        ...g.row,
        n_replies: g.n,
        n_polarity: g.agree,
        share: g.n > 0 ? g.agree / g.n : null,
        model_mean: spec.model || shares.length === 0 ? null : shares.reduce((a, b) => a + b, 0) / shares.length,
      };
    });
    level.sort((x, y) => cmp(x.judge, y.judge) || cmp(x.language, y.language) || cmp(x.construction, y.construction) || cmp(x.wording, y.wording) || cmp(x.model, y.model));
    out.push(...level);
  }
  return out;
}

/** Disagreement and polarity shares from the rows of reading_agreement.sql. */
export function agreementAnalysis(rows: readonly ReadingAgreementRow[]): AgreementResults {
  const { cells, summary } = replyDisagreement(rows);
  return { disagreement: cells, disagreementSummary: summary, polarity: polarityShares(rows) };
}
