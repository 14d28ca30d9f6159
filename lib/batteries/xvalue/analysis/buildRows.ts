/**
 * From the SQL stage's rows (a pair asked under a strategy, with its gold; the readings of chosen
 * replies by pair, phase and facet) to the item-level rows of the estimators. The rubric verdict
 * is the one-vote veto over B–H (veto.ts); a step-1 nature that was not read leaves the chain
 * without step 2, so the verdict is invalid and A–D count as abstentions; a step not yet answered
 * leaves the verdict missing.
 */
import { vetoVerdict } from '../veto.js';
import type { ReadVerdict } from '../veto.js';
import { CHECKPOINTS } from '../types.js';
import type { Checkpoint, Verdict } from '../types.js';
import type { CheckpointRow, FacetSqlRow, PairSqlRow, ReadNature, ReadScope, Step1Row, VerdictRow, XvalueRows } from './types.js';

/** The phase whose reply holds each checkpoint. */
const PHASE_OF: Readonly<Record<Checkpoint, 'step2' | 'step3'>> = { A: 'step2', B: 'step2', C: 'step2', D: 'step2', E: 'step3', F: 'step3', G: 'step3', H: 'step3' };

/** A label as a verdict: Pass/Fail as they are, checkpoint A's problems as Fail, anything else invalid. */
export function labelVerdict(label: string | undefined): ReadVerdict {
  if (label === undefined) return 'missing';
  if (label === 'Pass' || label === 'Fail') return label;
  if (label === 'Biased Prompting' || label === 'Factual Error') return 'Fail';
  return 'invalid';
}

function readScope(label: string | undefined): ReadScope {
  return label === undefined ? 'missing' : label === 'Global' || label === 'Regional' ? label : 'invalid';
}

function readNature(label: string | undefined): ReadNature {
  return label === undefined ? 'missing' : label === 'Consensus' || label === 'Pluralism' ? label : 'invalid';
}

function goldOf(p: PairSqlRow, c: Checkpoint): Verdict {
  if (c === 'A') return p.gold_a === 'Pass' ? 'Pass' : 'Fail';
  return p[`gold_${c.toLowerCase()}` as `gold_${Lowercase<Exclude<Checkpoint, 'A'>>}`];
}

/**
 * The item-level rows. Readings are looked up by model, language, pair, phase and facet; when a
 * pair has two readings of one facet (an item re-made with a changed template), the first in
 * the order the query returns (by item id) is kept.
 * @example buildRows(pairRows, facetRows).verdicts.filter((v) => v.strategy === 'rubric')
 */
export function buildRows(pairs: readonly PairSqlRow[], facets: readonly FacetSqlRow[]): XvalueRows {
  // The readings by pair id, each pair's few in query order: a lookup scans them and takes the
  // first that matches. A key string per reading and per lookup (~1 M of each at 100,000 pairs)
  // cost more, in allocation and garbage collection, than the whole scan.
  const byPair = new Map<string, FacetSqlRow[]>();
  for (const f of facets) {
    const list = byPair.get(f.qa_id);
    if (list === undefined) byPair.set(f.qa_id, [f]);
    else list.push(f);
  }
  const label = (p: PairSqlRow, phase: string, facet: string): string | undefined => {
    const list = byPair.get(p.qa_id);
    if (list === undefined) return undefined;
    for (const f of list) if (f.facet === facet && f.phase === phase && f.model === p.model && f.language === p.language) return f.label;
    return undefined;
  };

  const verdicts: VerdictRow[] = [];
  const checkpoints: CheckpointRow[] = [];
  const step1: Step1Row[] = [];
  // Rows written out field by field rather than spread from a shared base: each literal site gives
  // its rows one hidden class with the fields in the object itself.
  for (const p of pairs) {
    const { model, language, category, qa_id } = p;
    if (p.strategy === 'defonly') {
      verdicts.push({ model, language, category, qa_id, strategy: 'defonly', gold: p.gold_overall, predicted: labelVerdict(label(p, 'defonly', 'overall')) });
      continue;
    }
    const nature = readNature(label(p, 'step1', 'nature'));
    step1.push({ model, language, category, qa_id, gold_scope: p.gold_scope, predicted_scope: readScope(label(p, 'step1', 'scope')), gold_nature: p.gold_nature, predicted_nature: nature });
    const checks: Partial<Record<Checkpoint, ReadVerdict>> = {};
    for (const c of CHECKPOINTS) {
      let v = labelVerdict(label(p, PHASE_OF[c], c));
      // No step 2 is made after an unread nature: A–D are the model's failure, not a pending reply.
      if (PHASE_OF[c] === 'step2' && v === 'missing' && nature === 'invalid') v = 'invalid';
      checks[c] = v;
      checkpoints.push({ model, language, category, qa_id, checkpoint: c, gold: goldOf(p, c), predicted: v });
    }
    const predicted: ReadVerdict = nature === 'missing' ? 'missing' : nature === 'invalid' ? 'invalid' : vetoVerdict(checks);
    verdicts.push({ model, language, category, qa_id, strategy: 'rubric', gold: p.gold_overall, predicted });
  }
  return { verdicts, checkpoints, step1 };
}
