/**
 * FAR-6's phase graph (Same Judgment, Different Yes §3, "Sentence judging", "Judged coverage"): `generate` asks every
 * item of the design and reads the opening by the fixed token rule; `judge` has the sentence judge
 * read the judged replies (its labels are readings of the generate items, stored beside the rule
 * readings); with a judge audit, `audit-second` and `audit-retest` have the second judge and the
 * judge itself read a seeded sample of the judged replies again, in their own readings folders.
 */
import { estimatePromptTokens } from '../../api/battery.js';
import type { CampaignCore, PartitionContext, PhaseEstimate, PhaseSpec, PromptItem, ReadingDraft, ReplyView } from '../../api/battery.js';
import { CODEBOOK_LABELS } from './analysis/judgeAudit.js';
import { AUDIT_RETEST_PHASE, AUDIT_SECOND_PHASE, auditItem, drawAuditSample } from './audit.js';
import type { Far6Data } from './design.js';
import { judgeSettingsOf } from './design.js';
import { expandFar6 } from './design/index.js';
import { judgeReaderId, makeJudgeItem, needsJudge, parseJudgeOutput, readOpening, readOpeningPlus } from './read/index.js';
import type { AnswerConstraint, Far6Item, Language } from './types.js';

/**
 * Typical reply lengths in tokens, used for the expected cost only (reservations always use
 * max_tokens): one sentence is ~25–45 tokens in every language of the battery, a letter ~2.
 */
export const EXPECTED_OUTPUT_TOKENS: Readonly<Record<AnswerConstraint, number>> = { free: 45, verdict: 45, yesno: 45, label: 3 };
/** The judge's instructions and codebook around the source prompt and reply, and its short answer. */
export const JUDGE_PROMPT_OVERHEAD_TOKENS = 320;
export const JUDGE_OUTPUT_TOKENS = 40;
/** What the judge's raw output keeps of a long answer. */
const RAW_CHARS = 2000;

const far6 = (item: PromptItem): Far6Item => item as Far6Item;

/** Same Judgment, Different Yes §3: the opening read by R and, for verdict openings, by R+. Free sentences have no rule reading. */
export function ruleReadings(item: Far6Item, text: string): ReadingDraft[] {
  const map = item.extras.reading_map;
  if (map.kind === 'none') return [];
  const out: ReadingDraft[] = [{ reader: 'rule', ...readOpening(text, map) }];
  if (map.kind === 'verdict') out.push({ reader: 'rule+', ...readOpeningPlus(text, map, item.language as Language) });
  return out;
}

/** The judge's label of the item it read (Same Judgment, Different Yes "Sentence judging"), under the reader `judge:<judge id>`. */
function judgeReading(judgeId: string): (item: PromptItem, reply: ReplyView) => ReadingDraft[] {
  const reader = judgeReaderId(judgeId);
  return (_item, reply) => {
    const { label, raw } = parseJudgeOutput(reply.text ?? '');
    return [{ reader, label, raw: raw.slice(0, RAW_CHARS) }];
  };
}

/** Expected and worst-case tokens of one generate item: what the judge sees of it and what its reply may take. */
function sourceTokens(source: Far6Item): { input: number; output: number; maxOutput: number } {
  const input = estimatePromptTokens(source.messages, source.language);
  const output = Math.min(source.settings.max_tokens ?? Infinity, EXPECTED_OUTPUT_TOKENS[source.factors.constraint]);
  return { input, output, maxOutput: source.settings.max_tokens ?? 1024 };
}

/** The FAR-6 phases a campaign runs: generate and judge, and the audit phases its judge block asks for. */
export function far6Phases(campaign: CampaignCore, data: Far6Data): PhaseSpec[] {
  const judge = judgeSettingsOf(campaign);
  const sampleRate = judge?.sampleRate ?? 0;
  const judged = (source: PromptItem): boolean => needsJudge(far6(source), campaign.seed, sampleRate);

  const generate: PhaseSpec = {
    name: 'generate',
    after: [],
    answeredBy: 'subject',
    expand: (p) =>
      expandFar6({
        campaign: campaign.name,
        seed: campaign.seed,
        phase: 'generate',
        model: p.answerer,
        design: { languages: [p.language as Language], forms: data.forms, constraints: data.constraints, repeats: data.repeats },
        stories: data.stories,
        pairs: data.pairsByLanguage.get(p.language as Language) ?? [],
        ...(p.planning ? { lazyIds: true } : {}),
      }),
    read: (item, reply) => ruleReadings(far6(item), reply.text ?? ''),
    expectedOutputTokens: (item) => EXPECTED_OUTPUT_TOKENS[far6(item).factors.constraint],
  };
  if (!judge) return [generate];

  const judgePhase: PhaseSpec = {
    name: 'judge',
    after: [{ phase: 'generate', take: ['reply'] }],
    answeredBy: { role: 'judge' },
    readingsOf: 'source',
    readingsFolder: 'generate',
    verb: 'judging',
    consumes: judged,
    *expand(p, up) {
      for (const source of p.items('generate')) {
        if (!judged(source)) continue;
        const reply = up.reply('generate', source.item_id);
        if (reply) yield makeJudgeItem(far6(source), { text: reply.text ?? '', attempt: reply.attempt }, p.answerer);
      }
    },
    read: judgeReading(judge.judge.id),
    estimate(p) {
      const judgeMax = p.answerer.settings.max_tokens ?? 256;
      const acc = { items: 0, inputTokens: 0, outputTokens: 0, maxInputTokens: 0, maxOutputTokens: 0 };
      // One pass, the items not kept (PartitionContext.each).
      for (const source of p.each('generate')) {
        if (!judged(source)) continue;
        const t = sourceTokens(far6(source));
        const input = t.input + t.output + JUDGE_PROMPT_OVERHEAD_TOKENS;
        acc.items++;
        acc.inputTokens += input;
        acc.outputTokens += JUDGE_OUTPUT_TOKENS;
        acc.maxInputTokens += input + t.maxOutput - t.output;
        acc.maxOutputTokens += judgeMax;
      }
      return acc;
    },
  };

  const audit = judge.audit;
  if (!audit) return [generate, judgePhase];
  const primary = judgeReaderId(judge.judge.id);
  const codebook: readonly string[] = CODEBOOK_LABELS;

  /** Same Judgment, Different Yes "Sentence judging": the sample of the replies the primary judge read with a codebook label, read again. */
  const auditPhase = (name: string, role: string): PhaseSpec => ({
    name,
    // The judge's labels are stored with the generate readings; the judge phase must have run.
    after: [
      { phase: 'generate', take: ['reply', 'readings'], readers: [primary] },
      { phase: 'judge', take: [] },
    ],
    answeredBy: { role },
    // The sample is drawn over the whole partition (strata are its answer constraints).
    shard: 'partition',
    readingsOf: 'source',
    verb: 'auditing',
    expand(p, up) {
      const candidates: { item_id: string; model: string; language: string; constraint: AnswerConstraint; source: Far6Item; reply: ReplyView }[] = [];
      for (const item of p.items('generate')) {
        const source = far6(item);
        const reply = up.reply('generate', source.item_id);
        if (!reply) continue;
        if (!up.readings('generate', source.item_id).some((r) => r.reader === primary && codebook.includes(r.label))) continue;
        candidates.push({ item_id: source.item_id, model: p.subject.id, language: p.language, constraint: source.factors.constraint, source, reply });
      }
      return drawAuditSample(candidates, { seed: audit.seed, perStratum: audit.per_stratum }).map((c) =>
        auditItem(c.source, { text: c.reply.text ?? '', attempt: c.reply.attempt }, p.answerer, name),
      );
    },
    // The audit item's model is the judge that reads it: the second judge, or the judge again.
    read: (item, reply) => judgeReading(item.model)(item, reply),
    estimate: (p) => auditEstimate(p, judged, audit.per_stratum),
  });
  const phases = [generate, judgePhase];
  if (audit.secondJudge) phases.push(auditPhase(AUDIT_SECOND_PHASE, 'second_judge'));
  if (audit.retest) phases.push(auditPhase(AUDIT_RETEST_PHASE, 'judge'));
  return phases;
}

/**
 * Within a partition the audit's strata are the answer constraints: min(per_stratum, judged) each,
 * at the stratum's mean judge prompt (every judged reply is assumed to get a reading).
 */
function auditEstimate(p: PartitionContext, judged: (source: PromptItem) => boolean, perStratum: number): PhaseEstimate {
  const strata = new Map<AnswerConstraint, { n: number; input: number; reserveInput: number }>();
  for (const item of p.each('generate')) {
    if (!judged(item)) continue;
    const source = far6(item);
    const t = sourceTokens(source);
    const input = t.input + t.output + JUDGE_PROMPT_OVERHEAD_TOKENS;
    const st = strata.get(source.factors.constraint) ?? { n: 0, input: 0, reserveInput: 0 };
    st.n++;
    st.input += input;
    st.reserveInput += input + t.maxOutput - t.output;
    strata.set(source.factors.constraint, st);
  }
  const judgeMax = p.answerer.settings.max_tokens ?? 256;
  const acc = { items: 0, inputTokens: 0, outputTokens: 0, maxInputTokens: 0, maxOutputTokens: 0 };
  for (const st of strata.values()) {
    const take = Math.min(perStratum, st.n);
    acc.items += take;
    acc.inputTokens += Math.round((st.input * take) / st.n);
    acc.outputTokens += JUDGE_OUTPUT_TOKENS * take;
    acc.maxInputTokens += Math.round((st.reserveInput * take) / st.n);
    acc.maxOutputTokens += judgeMax * take;
  }
  return acc;
}
