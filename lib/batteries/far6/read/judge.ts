import { cachedCanonicalJson, canonicalJson, idOfJson, uniformFromKey } from '../../../api/battery.js';
import type { ChatMessage } from '../../../api/battery.js';
import type { Far6Item, ReadingLabel } from '../types.js';
import { NO_READING } from '../design/readingMaps.js';
import { ReadingMapError } from './errors.js';
import type { JudgeReading, JudgeSpec, JudgedReply } from './types.js';

/**
 * The sentence judge (Same Judgment, Different Yes §3 and Appendix "Sentence judging"): "The judge sees the story,
 * instruction, question, pair-specific reference proposition, and verbatim reply. Its task is to
 * code what the reply asserts about that proposition while ignoring the opening token and its own
 * evaluation of the story." One uniform prompt for every language, constraint and form; the
 * codebook has the paper's four categories.
 */

/** The codebook, in the judge's system message. English for every item: the prompt is uniform. */
export const JUDGE_SYSTEM_PROMPT = `You code replies that language models gave to a question about a short story. For each reply you decide what it asserts about one reference proposition. The story, the question and the reply may be in any language; the codebook is the same for all.

Codebook:
- P: the reply asserts the reference proposition.
- NOT_P: the reply asserts the opposite of the reference proposition.
- BOTH: the reply takes both sides, or makes its position depend on conditions, facts or points of view it does not settle.
- NONE: the reply takes no position: a refusal, a comment about the question, a restatement of the story, or text that says nothing about the proposition.

Rules:
1. Ignore the reply's opening token: a yes/no particle, a letter or a single opening word was requested by the instruction, and how it maps to a side depends on answering conventions. Decide from what the reply asserts as a whole. A reply that consists of nothing but such a token takes NONE.
2. Ignore your own view of the story. Code what the reply says, not whether you agree with it.
3. A reply that takes one side and only adds a reservation still asserts that side; use BOTH only when it does not come down on one side.

You may reason briefly. End your answer with one final line, exactly one of:
LABEL: P
LABEL: NOT_P
LABEL: BOTH
LABEL: NONE`;

/** Shared by every judge prompt, and frozen: its JSON and token estimate are computed once (core/hash listCanonicalJson). */
const JUDGE_SYSTEM_MESSAGE: ChatMessage = Object.freeze({ role: 'system', content: JUDGE_SYSTEM_PROMPT });

/**
 * The messages that ask the judge to read one reply. The judge sees the source item's prompt (the
 * story, instruction and question, as the model saw them), the reference proposition P and its
 * opposite, and the reply verbatim. The user message always carries
 * `<reference_proposition>…</reference_proposition>` and `<reply>…</reply>` (the simulated judge
 * parses them); the reply is the last tag, so a reply that itself contains `</reply>` is recovered
 * by reading up to the last closing tag.
 * @example buildJudgeMessages(item, 'No, it was wrong.')[1].content.includes('<reply>No, it was wrong.</reply>')
 */
export function buildJudgeMessages(item: Far6Item, replyText: string): ChatMessage[] {
  const asked = item.messages.filter((m) => m.role !== 'assistant');
  const prompt =
    asked.length === 1 ? (asked[0]?.content ?? '') : asked.map((m) => `[${m.role}]\n${m.content}`).join('\n\n');
  const user = [
    'The model was given this prompt (story, instruction and question):',
    `<prompt>\n${prompt}\n</prompt>`,
    '',
    'Reference proposition (P):',
    `<reference_proposition>${item.extras.propositions.P}</reference_proposition>`,
    'Its opposite (NOT_P):',
    `<opposite_proposition>${item.extras.propositions.notP}</opposite_proposition>`,
    '',
    "The model's reply, verbatim:",
    `<reply>${replyText}</reply>`,
    '',
    'What does the reply assert about the reference proposition? End with the line LABEL: P, LABEL: NOT_P, LABEL: BOTH or LABEL: NONE.',
  ].join('\n');
  return [JUDGE_SYSTEM_MESSAGE, { role: 'user', content: user }];
}

const LABEL_LINE = /^[\s*_>#`-]*(?:final )?label[\s*_`]*[:：][\s*_`"'[(]*([a-z_ -]+?)[\s*_`"'\]).]*$/iu;
const LABEL_VALUES: Readonly<Record<string, ReadingLabel>> = {
  p: 'P',
  not_p: 'notP',
  'not p': 'notP',
  'not-p': 'notP',
  notp: 'notP',
  both: 'both',
  none: 'none',
};

/**
 * Reads the judge's answer: the last line of the form `LABEL: <value>` decides (markdown such as
 * `**LABEL:** NOT_P` and any case are tolerated). No such line, or a value outside P, NOT_P, BOTH
 * and NONE, reads `invalid`. `raw` is the whole output, kept for audit.
 * @example parseJudgeOutput('It condemns the act.\nLABEL: P') // { label: 'P', raw: '…' }
 */
export function parseJudgeOutput(text: string): JudgeReading {
  const lines = text.split(/\r?\n/);
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] ?? '';
    if (!/label/i.test(line)) continue;
    const m = LABEL_LINE.exec(line.trim());
    if (!m) continue;
    const value = (m[1] ?? '').trim().toLowerCase();
    return { label: LABEL_VALUES[value] ?? 'invalid', raw: text };
  }
  return { label: 'invalid', raw: text };
}

/** Changes whenever the judge prompt's wording changes, so judge item ids change with it. */
export const JUDGE_PROMPT_VERSION = 'far6-judge-1';

/**
 * stableId({ source_item_id, attempt, judge, phase, prompt: JUDGE_PROMPT_VERSION, reply, settings }),
 * its canonical JSON written out in sorted key order: the generic walk was a quarter of building
 * a judge item (550k of them in a full FAR-6 campaign). Tested equal to stableId.
 */
function judgeItemId(source: Far6Item, reply: JudgedReply, judge: JudgeSpec, phase: string): string {
  return idOfJson(
    `{"attempt":${canonicalJson(reply.attempt)},"judge":${JSON.stringify(judge.id)},"phase":${JSON.stringify(phase)},` +
      `"prompt":${JSON.stringify(JUDGE_PROMPT_VERSION)},"reply":${JSON.stringify(reply.text)},"settings":${cachedCanonicalJson(judge.settings)},` +
      `"source_item_id":${JSON.stringify(source.item_id)}}`,
  );
}

/** stableId({ source_prompt_key, judge, phase, settings }), written out as judgeItemId is. */
function judgePromptKey(source: Far6Item, judge: JudgeSpec, phase: string): string {
  return idOfJson(
    `{"judge":${JSON.stringify(judge.id)},"phase":${JSON.stringify(phase)},"settings":${cachedCanonicalJson(judge.settings)},"source_prompt_key":${JSON.stringify(source.prompt_key)}}`,
  );
}

/**
 * The judge-phase item that reads one reply of `source`. Language, factors and propositions are the
 * source's, so judged readings join the design; `model` is the judge's id and `source_item_id`
 * points back to the item whose reply is read (the reading row's `model` is the source model's).
 * The id hashes the source item, the reply's attempt, the judge, its messages (which hold the reply
 * text) and its settings: every stored reply gets its own judgment, and re-planning reproduces it.
 * The prompt key leaves out the reply and the attempt, so judgments of one source prompt share it.
 */
export function makeJudgeItem(
  source: Far6Item,
  reply: JudgedReply,
  judge: JudgeSpec,
  phase = 'judge',
): Far6Item {
  const messages = buildJudgeMessages(source, reply.text);
  return {
    // The messages are a function of the source item, the reply and the prompt version, so those
    // stand in for them: hashing the flat fields is several times cheaper than the nested messages.
    item_id: judgeItemId(source, reply, judge, phase),
    prompt_key: judgePromptKey(source, judge, phase),
    campaign: source.campaign,
    phase,
    battery: source.battery,
    model: judge.id,
    language: source.language,
    factors: source.factors,
    messages,
    settings: judge.settings,
    extras: { reading_map: NO_READING, propositions: source.extras.propositions },
    source_item_id: source.item_id,
  };
}

/**
 * Whether the sentence judge reads this item's replies (Same Judgment, Different Yes Appendix "Judged coverage"):
 * every free and verdict-first reply, every yes/no-first reply to the plain question and to the
 * negative interrogative; of the rest (yes/no-first under or-not and alternative questions, and
 * proposition labels) a seeded sample at `sampleRate`. The draw is `uniformFromKey(`${seed}${prompt_key}`)`,
 * so it is the same in every run and all repeats of a prompt are judged or none are.
 */
export function needsJudge(item: Far6Item, seed: number, sampleRate: number): boolean {
  if (!(sampleRate >= 0 && sampleRate <= 1)) {
    throw new ReadingMapError(`judge sample rate ${sampleRate} is outside [0, 1]; use a share such as 0.04`);
  }
  const { constraint, form } = item.factors;
  if (constraint === 'free' || constraint === 'verdict') return true;
  if (constraint === 'yesno' && (form === 'plain' || form === 'negint')) return true;
  if (sampleRate === 0) return false;
  return uniformFromKey(`${seed}${item.prompt_key}`) < sampleRate;
}
