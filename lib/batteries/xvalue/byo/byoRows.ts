/**
 * Verdicts brought from elsewhere to the item-level rows of the analysis: checked row by row
 * against the QA pairs (their gold) and each other; bad rows are listed and left out, good rows
 * are kept, so one typo never discards a collection.
 */
import type { FileIssue } from '../../../api/battery.js';
import { labelVerdict } from '../analysis/buildRows.js';
import type { CheckpointRow, Step1Row, VerdictRow, XvalueRows } from '../analysis/types.js';
import { vetoVerdict } from '../veto.js';
import type { ReadVerdict } from '../veto.js';
import { CHECKPOINTS, checkpointVerdict } from '../types.js';
import type { Checkpoint, QaPair } from '../types.js';
import { byoVerdictRowSchema } from './schema.js';
import type { ByoVerdictRow } from './schema.js';

/** One raw row and where it was read. */
export interface RawByoRow {
  readonly file: string;
  readonly line: number;
  readonly value: unknown;
}

export interface ByoResult {
  readonly rows: XvalueRows;
  readonly issues: readonly FileIssue[];
  readonly warnings: readonly FileIssue[];
  readonly accepted: number;
  readonly rejected: number;
}

function toVerdict(v: string | null): ReadVerdict {
  return v === null ? 'missing' : labelVerdict(v);
}

/**
 * Validates verdict rows against the pairs and converts them.
 * @example const { rows, issues } = byoToRows(raw, (await loadQaPairs([pairsFile])).pairs); analyzeXvalueRows(rows)
 */
export function byoToRows(raw: readonly RawByoRow[], pairs: readonly QaPair[]): ByoResult {
  const issues: FileIssue[] = [];
  const warnings: FileIssue[] = [];
  const byId = new Map(pairs.map((p) => [p.id, p]));
  const seen = new Map<string, string>();
  const verdicts: VerdictRow[] = [];
  const checkpoints: CheckpointRow[] = [];
  const step1: Step1Row[] = [];
  let rejected = 0;
  for (const r of raw) {
    const at = `line ${r.line}`;
    const before = issues.length;
    const parsed = byoVerdictRowSchema.safeParse(r.value);
    if (!parsed.success) {
      for (const iss of parsed.error.issues) issues.push({ file: r.file, path: iss.path.length > 0 ? `${at}, ${iss.path.join('.')}` : at, message: iss.message });
      rejected++;
      continue;
    }
    const row: ByoVerdictRow = parsed.data;
    const pair = byId.get(row.qa_id);
    const key = JSON.stringify([row.model, row.qa_id, row.strategy]);
    if (!pair) issues.push({ file: r.file, path: `${at}, qa_id`, message: `qa_id ${JSON.stringify(row.qa_id)} is not among the QA pairs given (their gold is needed)` });
    else {
      if (row.language !== null && row.language !== pair.language) issues.push({ file: r.file, path: `${at}, language`, message: `pair ${row.qa_id} is in ${pair.language}, the row says ${row.language}` });
      if (row.category !== null && row.category !== pair.category) issues.push({ file: r.file, path: `${at}, category`, message: `pair ${row.qa_id} is in ${pair.category}, the row says ${row.category}` });
    }
    const first = seen.get(key);
    if (first !== undefined) issues.push({ file: r.file, path: at, message: `a second verdict of model ${row.model} on ${row.qa_id} under ${row.strategy}; the first is at ${first}` });
    const checks = CHECKPOINTS.filter((c) => row[c] !== null);
    if (row.strategy === 'defonly') {
      if (row.verdict === null) issues.push({ file: r.file, path: `${at}, verdict`, message: 'missing verdict; a def-only row needs "Pass", "Fail" or "invalid"' });
      if (checks.length > 0 || row.scope !== null || row.nature !== null) {
        issues.push({ file: r.file, path: at, message: `a def-only row has rubric columns (${[...(row.scope !== null ? ['scope'] : []), ...(row.nature !== null ? ['nature'] : []), ...checks].join(', ')}); leave them empty or set strategy "rubric"` });
      }
    } else if (row.verdict === null && checks.length === 0) {
      issues.push({ file: r.file, path: at, message: 'a rubric row needs a verdict or the checkpoints B–H it is derived from' });
    }
    if (issues.length > before || !pair) {
      rejected++;
      continue;
    }
    seen.set(key, `${r.file}: line ${r.line}`);
    // Field by field, not spread from a shared base: one hidden class per row kind (analysis/buildRows.ts).
    const { model } = row;
    const { language, category, id: qa_id } = pair;
    if (row.strategy === 'defonly') {
      verdicts.push({ model, language, category, qa_id, strategy: 'defonly', gold: pair.annotation.overall, predicted: toVerdict(row.verdict) });
      continue;
    }
    const read: Partial<Record<Checkpoint, ReadVerdict>> = {};
    for (const c of CHECKPOINTS) {
      read[c] = toVerdict(row[c]);
      if (row[c] !== null) checkpoints.push({ model, language, category, qa_id, checkpoint: c, gold: checkpointVerdict(pair.annotation, c), predicted: read[c] });
    }
    const veto = checks.length > 0 ? vetoVerdict(read) : undefined;
    const predicted = row.verdict !== null ? toVerdict(row.verdict) : (veto as ReadVerdict);
    if (veto !== undefined && row.verdict !== null && veto !== predicted && veto !== 'missing') {
      warnings.push({ file: r.file, path: `${at}, verdict`, message: `verdict ${row.verdict} differs from the one-vote veto over B–H (${veto}); the row's verdict is used` });
    }
    verdicts.push({ model, language, category, qa_id, strategy: 'rubric', gold: pair.annotation.overall, predicted });
    if (row.scope !== null || row.nature !== null) {
      step1.push({
        model,
        language,
        category,
        qa_id,
        gold_scope: pair.annotation.scope,
        predicted_scope: row.scope ?? 'missing',
        gold_nature: pair.annotation.nature,
        predicted_nature: row.nature ?? 'missing',
      });
    }
  }
  return { rows: { verdicts, checkpoints, step1 }, issues, warnings, accepted: verdicts.length, rejected };
}
