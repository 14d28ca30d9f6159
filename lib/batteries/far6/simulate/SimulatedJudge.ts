/**
 * The simulated sentence judge (Same Judgment, Different Yes "Sentence judging"): codes what a reply asserts about
 * the reference proposition, ignoring the opening token. It looks for the item's two proposition
 * sentences in the reply text — the simulated respondent writes them verbatim — and labels the
 * reply P (only the reference occurs), NOT_P (only its opposite), BOTH (both) or NONE (neither:
 * refusals, no-position sentences, bare particles or letters). An opening particle, verdict word
 * or letter is never a whole proposition sentence, so it cannot move the label.
 *
 * With probability `error_rate` (keyed by the item, so reproducible) the label is replaced by one
 * of the three others, drawn uniformly: the judge's disagreement with a reference reader.
 *
 * Request: the user message holds `<reference_proposition>…</reference_proposition>` and
 * `<reply>…</reply>` (built by lib/read); GenerateRequest.item supplies the opposite proposition.
 * Answer: one rationale line, then `LABEL: <P|NOT_P|BOTH|NONE>`.
 */
import { SimulatedRequestError, seedFromKey, seededRandom } from '../../../api/battery.js';
import type { GenerateRequest, PromptItem, SimulatedModel, SimulatedReply } from '../../../api/battery.js';
import type { SimulatedJudgeConfig } from './simulationConfig.js';
import type { Far6Item } from '../types.js';

export const JUDGE_LABELS = ['P', 'NOT_P', 'BOTH', 'NONE'] as const;
export type JudgeLabel = (typeof JUDGE_LABELS)[number];

const RATIONALE: Readonly<Record<JudgeLabel, string>> = {
  P: 'The reply asserts the reference proposition.',
  NOT_P: 'The reply asserts the opposite of the reference proposition.',
  BOTH: 'The reply takes both sides or makes its answer conditional.',
  NONE: 'The reply takes no position on the reference proposition.',
};

/** Case-folded, width-folded, whitespace-collapsed text, so that matching ignores surface noise. */
function normalise(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/[\u2018\u2019\u02bc]/g, "'").replace(/\s+/g, ' ').trim();
}

/** A proposition as a search needle: normalised, without its sentence-final punctuation. */
function needle(sentence: string): string {
  return normalise(sentence).replace(/[\s.!?。！？…"'»」』)）]+$/u, '');
}

/** The text between the first opening tag and the last closing tag, or undefined. */
export function extractTag(text: string, tag: string): string | undefined {
  const open = `<${tag}>`;
  const start = text.indexOf(open);
  const end = text.lastIndexOf(`</${tag}>`);
  if (start < 0 || end < start + open.length) return undefined;
  return text.slice(start + open.length, end).trim();
}

/**
 * The judge's label before any simulated error: which of the two proposition sentences occur in
 * the reply. When one proposition contains the other ("It is wrong." inside "It is not the case
 * that it is wrong."), occurrences of the longer are removed before the shorter is sought.
 * @example judgeLabel('Yes. It was wrong.', 'It was wrong.', 'It was not wrong.') === 'P'
 */
export function judgeLabel(reply: string, reference: string, opposite: string): JudgeLabel {
  let text = normalise(reply);
  const ref = needle(reference);
  const opp = needle(opposite);
  let hasRef = false;
  let hasOpp = false;
  if (ref.length > 0 && opp.length > 0 && ref !== opp && (ref.includes(opp) || opp.includes(ref))) {
    const refLonger = ref.length > opp.length;
    const [long, short] = refLonger ? [ref, opp] : [opp, ref];
    const hasLong = text.includes(long);
    if (hasLong) text = text.split(long).join('\u0000');
    const hasShort = text.includes(short);
    hasRef = refLonger ? hasLong : hasShort;
    hasOpp = refLonger ? hasShort : hasLong;
  } else {
    hasRef = ref.length > 0 && text.includes(ref);
    hasOpp = opp.length > 0 && text.includes(opp);
  }
  return hasRef ? (hasOpp ? 'BOTH' : 'P') : hasOpp ? 'NOT_P' : 'NONE';
}

export interface SimulatedJudgeOptions {
  readonly seed: number;
  /** Campaign id of the judge model. */
  readonly modelId: string;
  readonly model?: string;
  readonly config: SimulatedJudgeConfig;
}

export class SimulatedJudge implements SimulatedModel {
  readonly effectsKey: string;
  readonly errorRate: number;
  readonly latencyMs: number;
  private readonly id: string;
  private readonly keyBase: string;

  constructor(private readonly options: SimulatedJudgeOptions) {
    this.id = `simulated/${options.model ?? options.modelId}`;
    this.keyBase = `sim:${options.seed}|judge|${options.modelId}|`;
    this.effectsKey = `${this.keyBase}effects`;
    this.errorRate = options.config.transient_error_rate;
    this.latencyMs = options.config.latency_ms;
  }

  reply(item: PromptItem, req: GenerateRequest): SimulatedReply {
    const user = [...req.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const reply = extractTag(user, 'reply');
    if (reply === undefined) {
      throw new SimulatedRequestError(`${this.id}: judge request for item ${item.item_id} has no <reply>…</reply> in its user message`, this.id);
    }
    const { P, notP } = (item as Far6Item).extras.propositions;
    const reference = extractTag(user, 'reference_proposition') ?? P;
    // The reference is normally the item's P; if a prompt names notP as reference, judge against P.
    const opposite = needle(reference) === needle(notP) ? P : notP;
    let label = judgeLabel(reply, reference, opposite);
    const rng = seededRandom(seedFromKey(this.keyBase + item.item_id));
    if (rng() < this.options.config.error_rate) {
      const others = JUDGE_LABELS.filter((l) => l !== label);
      label = others[Math.floor(rng() * others.length)] as JudgeLabel;
    }
    return { text: `${RATIONALE[label]}\nLABEL: ${label}` };
  }
}
