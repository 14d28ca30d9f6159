/**
 * The judge audit's sample (Same Judgment, Different Yes Appendix "Sentence judging"): a seeded sample of the judged
 * replies, stratified by model × language × answer constraint (the seed's "model, constraint
 * group, and language"), read again by a second judge model (`audit-second`) and by the primary
 * judge itself (`audit-retest`, test–retest). Both read the same sample. They are phases of the
 * battery like any other (phases.ts), so the budget, the ledger and resumption apply.
 */
import { stableId, uniformFromKey } from '../../api/battery.js';
import { AUDIT_PHASE_PREFIX } from './analysis/judgeAudit.js';
import { makeJudgeItem } from './read/index.js';
import type { JudgeSpec, JudgedReply } from './read/index.js';
import type { AnswerConstraint, Far6Item } from './types.js';

export const AUDIT_SECOND_PHASE = `${AUDIT_PHASE_PREFIX}second`;
export const AUDIT_RETEST_PHASE = `${AUDIT_PHASE_PREFIX}retest`;

/** What the sample is drawn from: a judged reply and the stratum it belongs to. */
export interface AuditCandidate {
  readonly item_id: string;
  readonly model: string;
  readonly language: string;
  readonly constraint: AnswerConstraint;
}

/** `model|language|constraint`: the audit's stratum. */
export function auditStratum(c: AuditCandidate): string {
  return `${c.model}|${c.language}|${c.constraint}`;
}

/**
 * The seeded, stratified audit sample: in every stratum, the `perStratum` candidates with the
 * smallest draw `uniformFromKey(`${seed}|judge-audit|${item_id}`)` (all of them where the stratum
 * is smaller). The draw belongs to the item alone, so the sample does not depend on the order or
 * the partitioning of the candidates, is the same in every run, and is the same for the second
 * judge and the retest. Returned in the candidates' order.
 * @example drawAuditSample(candidates, { seed: 7, perStratum: 30 })
 */
export function drawAuditSample<T extends AuditCandidate>(candidates: Iterable<T>, opts: { readonly seed: number; readonly perStratum: number }): T[] {
  const all = [...candidates];
  const byStratum = new Map<string, { c: T; u: number }[]>();
  for (const c of all) {
    const list = byStratum.get(auditStratum(c)) ?? [];
    list.push({ c, u: uniformFromKey(`${opts.seed}|judge-audit|${c.item_id}`) });
    byStratum.set(auditStratum(c), list);
  }
  const chosen = new Set<string>();
  for (const list of byStratum.values()) {
    list.sort((a, b) => a.u - b.u || (a.c.item_id < b.c.item_id ? -1 : a.c.item_id > b.c.item_id ? 1 : 0));
    for (const { c } of list.slice(0, opts.perStratum)) chosen.add(c.item_id);
  }
  return all.filter((c) => chosen.has(c.item_id));
}

/**
 * The audit item that has `judge` read `source`'s reply again in `phase`: the battery's judge item
 * (the same messages the primary judge saw), under the audit judge, with the phase in its ids, so
 * the ledger keeps the audit apart from the judge phase, a resumed run does not redo it, and a
 * retest is a new request (a simulated judge draws its noise afresh).
 */
export function auditItem(source: Far6Item, reply: JudgedReply, judge: JudgeSpec, phase: string): Far6Item {
  const item = makeJudgeItem(source, reply, judge);
  return {
    ...item,
    item_id: stableId({ judge_item_id: item.item_id, phase }),
    prompt_key: stableId({ judge_prompt_key: item.prompt_key, phase }),
    phase,
  };
}

