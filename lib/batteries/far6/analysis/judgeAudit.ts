/**
 * The judge audit (Same Judgment, Different Yes Appendix "Sentence judging", Table 7): a seeded, stratified sample of
 * judged replies is read again by a second judge model and by the same judge (test–retest). Per
 * stratum (model × language × answer constraint, the seed's "model, constraint group, and
 * language") and pooled, the percent agreement with the primary judge, Cohen's kappa over the four
 * codebook categories, and the counts of replies on which the primary judge was decisive and on
 * which the two readings take opposite decisive sides (P against notP).
 */
import { ANSWER_CONSTRAINTS } from '../types.js';
import { AnalysisError, RowReader, analysisQueryError } from '../../../api/battery.js';
import { FAR6_SQL } from '../sqlLibrary.js';
import { readDesignCell } from './parseRows.js';
import type { AgreementStats, JudgeAuditLevel, JudgeAuditPairRow, JudgeAuditResults, JudgeAuditRow, Queryable, TableSources } from './types.js';

const FILE = 'judge_audit.sql';
/** Audit phases are `audit-<comparison>`; the analysis finds them by this prefix. */
export const AUDIT_PHASE_PREFIX = 'audit-';
/** Same Judgment, Different Yes "Sentence judging": the judge's four categories; `invalid` (no readable label) is outside them. */
export const CODEBOOK_LABELS = ['P', 'notP', 'both', 'none'] as const;
type CodebookLabel = (typeof CODEBOOK_LABELS)[number];
/** Two-sided 95 % normal quantile, for the Wilson interval. */
const Z95 = 1.959963984540054;

function isCodebook(label: string | null): label is CodebookLabel {
  return label !== null && (CODEBOOK_LABELS as readonly string[]).includes(label);
}

const isDecisive = (label: string): boolean => label === 'P' || label === 'notP';

/**
 * Wilson score interval of a share k / n at 95 % (better behaved than the normal interval near
 * 0 and 1, where audit agreement lives).
 * @example wilsonInterval(95, 100) // [0.888…, 0.978…]
 */
export function wilsonInterval(k: number, n: number): [number, number] | null {
  if (n <= 0) return null;
  const p = k / n;
  const z2 = Z95 * Z95;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (Z95 * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/**
 * Agreement of two readings of the same replies, given as (primary, audit) label pairs. Pairs with
 * a label outside the codebook (`invalid`) are left out. Cohen's kappa is
 * (p_o − p_e) / (1 − p_e) with p_e = Σ_k p_primary(k) · p_audit(k) over P, notP, both and none,
 * computed on the counts, (n·agree − Σ a_k b_k) / (n² − Σ a_k b_k), so that hand-computed tables
 * give exact values. It is undefined (null, with the reason in `kappa_note`) without pairs, and
 * when both readings put every reply in one and the same category: then p_o = p_e = 1 and kappa
 * is 0 / 0, although the agreement is perfect.
 * @example agreementStats([['P', 'P'], ['notP', 'notP'], ['P', 'notP'], ['none', 'none']]).kappa // 7/11
 */
export function agreementStats(pairs: Iterable<readonly [primary: string, audit: string]>): AgreementStats {
  const primaryCount = new Map<CodebookLabel, number>();
  const auditCount = new Map<CodebookLabel, number>();
  let n = 0;
  let agree = 0;
  let primaryDecisive = 0;
  let bothDecisive = 0;
  let opposite = 0;
  for (const [a, b] of pairs) {
    if (!isCodebook(a) || !isCodebook(b)) continue;
    n++;
    if (a === b) agree++;
    primaryCount.set(a, (primaryCount.get(a) ?? 0) + 1);
    auditCount.set(b, (auditCount.get(b) ?? 0) + 1);
    if (isDecisive(a)) primaryDecisive++;
    if (isDecisive(a) && isDecisive(b)) {
      bothDecisive++;
      if (a !== b) opposite++;
    }
  }
  let chance = 0;
  for (const k of CODEBOOK_LABELS) chance += (primaryCount.get(k) ?? 0) * (auditCount.get(k) ?? 0);
  let kappa: number | null = null;
  let note = '';
  if (n === 0) note = 'no reply with a codebook label from both readings';
  else if (chance === n * n) {
    const only = [...primaryCount.keys()][0] ?? '';
    note = `both readings put every reply in one category (${only}): chance agreement is 1 and kappa is 0/0`;
  } else kappa = (n * agree - chance) / (n * n - chance);
  const interval = wilsonInterval(agree, n);
  return {
    n,
    n_agree: agree,
    agreement: n > 0 ? agree / n : null,
    agreement_low: interval?.[0] ?? null,
    agreement_high: interval?.[1] ?? null,
    kappa,
    kappa_note: note,
    n_primary_decisive: primaryDecisive,
    n_both_decisive: bothDecisive,
    n_opposite: opposite,
  };
}

// ---- the SQL stage -------------------------------------------------------------------------

/**
 * judge_audit.sql with its placeholders filled: `{{readings}}` by a source that holds the
 * generate-phase and the audit readings together, `{{query:prompt_items}}` by the shared query.
 */
export function renderJudgeAuditSql(tables: TableSources): string {
  return FAR6_SQL.render('judge_audit', tables);
}

/**
 * Runs judge_audit.sql on `db`. `tables.readings` must hold the audit readings beside the
 * generate-phase readings (their `phase` column tells them apart); `tables.prompts` the generate prompts.
 */
export async function runJudgeAudit(db: Queryable, tables: TableSources): Promise<JudgeAuditPairRow[]> {
  const sql = renderJudgeAuditSql(tables);
  let raw: Record<string, unknown>[];
  try {
    raw = await db.all(sql);
  } catch (err) {
    throw analysisQueryError(FILE, err);
  }
  return parseJudgeAuditRows(raw);
}

/** Typed rows of judge_audit.sql; a row that breaks the contract is reported with its index and column. */
export function parseJudgeAuditRows(raw: readonly Record<string, unknown>[]): JudgeAuditPairRow[] {
  return RowReader.readRows(FILE, raw, (rd, r, i): JudgeAuditPairRow => {
    const str = (c: string): string => rd.string(r, i, c, { nonEmpty: true });
    return {
      phase: str('phase'),
      item_id: str('item_id'),
      ...readDesignCell(rd, r, i),
      audit_reader: str('audit_reader'),
      audit_label: str('audit_label'),
      primary_reader: rd.optionalString(r, i, 'primary_reader'),
      primary_label: rd.optionalString(r, i, 'primary_label'),
    };
  });
}

// ---- pooling -------------------------------------------------------------------------------

export interface JudgeAuditOptions {
  /**
   * The primary judge's reader (`judge:<id>`). Needed only when the generate readings hold more
   * than one sentence judge; otherwise the one there is taken.
   */
  readonly primaryReader?: string;
}

interface Pair {
  readonly comparison: string;
  readonly primary_reader: string;
  readonly audit_reader: string;
  readonly model: string;
  readonly language: string;
  readonly constraint: string;
  readonly primary: string | null;
  readonly audit: string;
}

const LEVELS: readonly JudgeAuditLevel[] = ['all', 'model', 'language', 'constraint', 'stratum'];

function levelKey(p: Pair, level: JudgeAuditLevel): { model: string; language: string; constraint: string } {
  return {
    model: level === 'model' || level === 'stratum' ? p.model : '*',
    language: level === 'language' || level === 'stratum' ? p.language : '*',
    constraint: level === 'constraint' || level === 'stratum' ? p.constraint : '*',
  };
}

/**
 * One audit reading per (phase, item, audit reader) with the primary judge's label of the same
 * reply. The primary reader is `primaryReader` when given, else the item's only generate-phase
 * judge, else the one that is the audit reader itself (a retest).
 */
function resolvePairs(rows: readonly JudgeAuditPairRow[], opts: JudgeAuditOptions): Pair[] {
  const groups = new Map<string, JudgeAuditPairRow[]>();
  for (const r of rows) {
    const key = `${r.phase}\u0000${r.item_id}\u0000${r.audit_reader}`;
    const list = groups.get(key);
    if (list) list.push(r);
    else groups.set(key, [r]);
  }
  const pairs: Pair[] = [];
  for (const list of groups.values()) {
    const first = list[0] as JudgeAuditPairRow;
    const candidates = list.filter((r) => r.primary_reader !== null);
    let chosen: JudgeAuditPairRow | undefined;
    if (opts.primaryReader !== undefined) chosen = candidates.find((r) => r.primary_reader === opts.primaryReader);
    else if (candidates.length === 1) chosen = candidates[0];
    else if (candidates.length > 1) {
      chosen = candidates.find((r) => r.primary_reader === first.audit_reader);
      if (!chosen) {
        const readers = candidates.map((r) => r.primary_reader).join(', ');
        throw new AnalysisError(
          `judge audit: item ${first.item_id} has several sentence-judge readings (${readers}) and none is named primary; pass primaryReader`,
        );
      }
    }
    pairs.push({
      comparison: first.phase.startsWith(AUDIT_PHASE_PREFIX) ? first.phase.slice(AUDIT_PHASE_PREFIX.length) : first.phase,
      primary_reader: chosen?.primary_reader ?? opts.primaryReader ?? '',
      audit_reader: first.audit_reader,
      model: first.model,
      language: first.language,
      constraint: first.constraint,
      primary: chosen?.primary_label ?? null,
      audit: first.audit_label,
    });
  }
  return pairs;
}

/**
 * Pools the audit pairs per comparison (second judge, retest) at every level: all, per model, per
 * language, per answer constraint, and per stratum (model × language × constraint). Rows are
 * sorted by comparison, level (in that order) and key, so the CSV is the same in every run.
 */
export function judgeAuditAnalysis(rows: readonly JudgeAuditPairRow[], opts: JudgeAuditOptions = {}): JudgeAuditResults {
  const pairs = resolvePairs(rows, opts);
  const groups = new Map<string, { row: Omit<JudgeAuditRow, keyof AgreementStats | 'n_sampled' | 'n_unlabeled'>; pairs: Pair[] }>();
  for (const p of pairs) {
    for (const level of LEVELS) {
      const k = levelKey(p, level);
      const key = [p.comparison, p.primary_reader, p.audit_reader, level, k.model, k.language, k.constraint].join('\u0000');
      let g = groups.get(key);
      if (!g) {
        g = { row: { comparison: p.comparison, primary_reader: p.primary_reader, audit_reader: p.audit_reader, level, ...k }, pairs: [] };
        groups.set(key, g);
      }
      g.pairs.push(p);
    }
  }
  const out: JudgeAuditRow[] = [];
  for (const { row, pairs: list } of groups.values()) {
    const stats = agreementStats(list.flatMap((p) => (p.primary === null ? [] : [[p.primary, p.audit] as const])));
    out.push({ ...row, n_sampled: list.length, n_unlabeled: list.length - stats.n, ...stats });
  }
  // Code-point order, not localeCompare: the CSV must not depend on the machine's locale.
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const constraintOrder = (c: string) => (ANSWER_CONSTRAINTS as readonly string[]).indexOf(c);
  out.sort(
    (a, b) =>
      cmp(a.comparison, b.comparison) ||
      cmp(a.primary_reader, b.primary_reader) ||
      cmp(a.audit_reader, b.audit_reader) ||
      LEVELS.indexOf(a.level) - LEVELS.indexOf(b.level) ||
      cmp(a.model, b.model) ||
      cmp(a.language, b.language) ||
      constraintOrder(a.constraint) - constraintOrder(b.constraint),
  );
  return { rows: out };
}
