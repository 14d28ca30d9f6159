/**
 * The judge audit's phases (seed 000 Appendix "Sentence judging"): a seeded sample of the judged
 * replies, stratified by model × language × answer constraint (the seed's "model, constraint
 * group, and language"), read again by a second judge model (`audit-second`) and by the primary
 * judge itself (`audit-retest`, test–retest). Both read the same sample. They run after the judge
 * phase through the same runPhase as every phase, so the budget, the ledger and resumption apply.
 */
import { join } from 'node:path';
import { AUDIT_PHASE_PREFIX, CODEBOOK_LABELS } from '../batteries/far6/analysis/judgeAudit.js';
import { parquetSource } from '../query/sql.js';
import { FAR6_SQL } from '../batteries/far6/sqlLibrary.js';
import type { BatteryModel, LoadedBattery } from '../design/battery.js';
import type { Campaign, ModelEntry } from '../design/campaign.js';
import { stableId, uniformFromKey } from '../core/hash.js';
import type { LanguageCode, PromptItem } from '../core/types.js';
import type { AnswerConstraint } from '../batteries/far6/types.js';
import { layout, readParquetSql, sqlString, tableGlob } from '../store/index.js';
import type { DuckDb, ParquetWriter } from '../store/index.js';
import type { BlobStore, ReadingRow, ReplyRow } from '../store/types.js';
import type { PartitionSpec } from './runPartition.js';
import { judgeReader } from './partitionSpec.js';

export const AUDIT_SECOND_PHASE = `${AUDIT_PHASE_PREFIX}second`;
export const AUDIT_RETEST_PHASE = `${AUDIT_PHASE_PREFIX}retest`;

/** One audit phase: its name and the judge that reads the sample in it. */
export interface AuditPhaseSpec {
  readonly phase: string;
  readonly judge: ModelEntry;
}

/** The audit phases the campaign asks for, in run order (second judge, then retest); none without `judge.audit`. */
export function auditPhases(campaign: Campaign): AuditPhaseSpec[] {
  const audit = campaign.judge.audit;
  if (!audit) return [];
  const out: AuditPhaseSpec[] = [];
  if (audit.second_judge) out.push({ phase: AUDIT_SECOND_PHASE, judge: audit.second_judge });
  if (audit.retest) out.push({ phase: AUDIT_RETEST_PHASE, judge: campaign.judge });
  return out;
}

/** Whether a phase is an audit phase. */
export function isAuditPhase(phase: string): boolean {
  return phase.startsWith(AUDIT_PHASE_PREFIX);
}

/**
 * Where a phase's readings are stored. Judge readings live beside the rule readings of the
 * generate phase; audit readings in their own phase folder, so that the main analysis never
 * counts the audit judges as readers of their own (judge_audit.sql reads both).
 */
export function readingsPhaseOf(phase: string): string {
  return isAuditPhase(phase) ? phase : 'generate';
}

/**
 * A partition's spec with its readings where readingsPhaseOf puts them: an audit partition's go
 * to the audit phase's own readings folder instead of beside the generate readings; any other
 * spec is returned as it is.
 */
export function withAuditReadings(spec: PartitionSpec, writer: ParquetWriter, store: BlobStore): PartitionSpec {
  if (!isAuditPhase(spec.phase)) return spec;
  const phase = readingsPhaseOf(spec.phase);
  return {
    ...spec,
    sink: {
      ...spec.sink,
      writeReadings: async (rows, partName) => {
        if (rows.length === 0) return;
        await writer.writePart(store, { campaign: spec.campaign, phase, table: 'readings', model: spec.model, language: spec.language, partName }, rows, { trusted: true });
      },
    },
  };
}

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
export function auditItem(
  battery: LoadedBattery,
  source: PromptItem,
  reply: { readonly text: string; readonly attempt: number },
  judge: BatteryModel,
  phase: string,
): PromptItem {
  const item = battery.judgeItem(source, reply, judge);
  return {
    ...item,
    item_id: stableId({ judge_item_id: item.item_id, phase }),
    prompt_key: stableId({ judge_prompt_key: item.prompt_key, phase }),
    phase,
  };
}

/**
 * The chosen reply (chosen_replies.sql, the rule the judge phase uses) of every item of one
 * partition that the primary judge read with a codebook label (P, notP, both, none; not
 * `invalid`): the replies the audit can draw.
 */
async function judgedReplies(db: DuckDb, dataDir: string, campaign: Campaign, model: string, language: LanguageCode) {
  const glob = (table: 'replies' | 'readings') => `${join(dataDir, layout.partitionPrefix(campaign.name, 'generate', table, model, language))}*.parquet`;
  if (!(await db.hasFiles(glob('replies'))) || !(await db.hasFiles(glob('readings')))) return new Map<string, { text: string; attempt: number }>();
  const replies = readParquetSql(glob('replies'));
  const readings = readParquetSql(glob('readings'));
  const chosen = FAR6_SQL.render('chosen_replies', { prompts: replies, replies, readings });
  const labels = CODEBOOK_LABELS.map(sqlString).join(', ');
  const rows = await db.all<{ item_id: string; text: string; attempt: number }>(
    `SELECT r.item_id, r.text, r.attempt
     FROM (${chosen}) c
     JOIN ${replies} r ON r.item_id = c.item_id AND r.attempt = c.attempt AND r.created_at = c.created_at
     WHERE r.status = 'ok'
       AND r.item_id IN (SELECT item_id FROM ${readings} WHERE reader = ${sqlString(`judge:${campaign.judge.id}`)} AND label IN (${labels}))`,
  );
  return new Map(rows.map((r) => [r.item_id, { text: r.text, attempt: Number(r.attempt) }]));
}

export interface AuditItemsArgs {
  readonly db: DuckDb;
  readonly dataDir: string;
  readonly campaign: Campaign;
  readonly battery: LoadedBattery;
  readonly model: BatteryModel;
  readonly language: LanguageCode;
  readonly spec: AuditPhaseSpec;
}

/**
 * The items of one audit phase for one model and language: the sample drawn from the replies the
 * primary judge read there (strata within a partition are the answer constraints), each as an
 * audit item for the phase's judge. Empty without `judge.audit`.
 */
export async function auditItems(args: AuditItemsArgs): Promise<PromptItem[]> {
  const { db, dataDir, campaign, battery, model, language, spec } = args;
  const audit = campaign.judge.audit;
  if (!audit) return [];
  const replies = await judgedReplies(db, dataDir, campaign, model.id, language);
  if (replies.size === 0) return [];
  const sources: { item_id: string; model: string; language: string; constraint: AnswerConstraint; source: PromptItem }[] = [];
  for (const source of battery.expand(model, language)) {
    if (replies.has(source.item_id)) sources.push({ item_id: source.item_id, model: model.id, language, constraint: source.factors['constraint'] as AnswerConstraint, source });
  }
  const judge: BatteryModel = { id: spec.judge.id, settings: spec.judge.settings };
  return drawAuditSample(sources, { seed: audit.seed, perStratum: audit.per_stratum }).map((c) =>
    auditItem(battery, c.source, replies.get(c.item_id) as { text: string; attempt: number }, judge, spec.phase),
  );
}

/**
 * The reading of an audit reply: it names the generate item whose reply was read (as the judge
 * phase's readings do) and is stored in the audit phase (`phase` column and folder).
 */
export function auditReadingRows(battery: LoadedBattery, judgeId: string, item: PromptItem, reply: ReplyRow): ReadingRow[] {
  return judgeReader(battery, judgeId, item.phase)(item, reply);
}

/**
 * What analyzeCampaign needs for the judge audit on local files: one readings source over the
 * generate readings and every audit phase's readings, and the primary judge's reader. Undefined
 * when no audit reading has been written.
 */
export async function auditAnalysisOptions(
  db: DuckDb,
  dataDir: string,
  campaign: Campaign,
): Promise<{ readings: string; primaryReader: string } | undefined> {
  const audits: string[] = [];
  for (const phase of [AUDIT_SECOND_PHASE, AUDIT_RETEST_PHASE]) {
    const glob = tableGlob(dataDir, campaign.name, phase, 'readings');
    if (await db.hasFiles(glob)) audits.push(glob);
  }
  const generate = tableGlob(dataDir, campaign.name, 'generate', 'readings');
  if (audits.length === 0 || !(await db.hasFiles(generate))) return undefined;
  return { readings: parquetSource([generate, ...audits]), primaryReader: `judge:${campaign.judge.id}` };
}
