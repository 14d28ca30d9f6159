/**
 * The text of a simulated reply, in the format the readers parse: the JSON object the prompts ask
 * for, or labelled lines in the pair's language with that language's words (read/lexicon.ts
 * LOCAL_WORDS) — the second exercises the multilingual readers on every run.
 */
import { LOCAL_WORDS } from '../read/lexicon.js';
import type { FineGrainedCheckpoint, Language, Nature, QuestionLabel, Scope, Verdict } from '../types.js';

export type ReplyStyle = 'json' | 'lines';

/** What the simulated judge decided for one item, before it is written out. */
export type SimulatedAnswer =
  | { readonly phase: 'defonly'; readonly verdict: Verdict }
  | { readonly phase: 'step1'; readonly coreIssue: string; readonly scope: Scope; readonly nature: Nature }
  | { readonly phase: 'step2'; readonly a: QuestionLabel; readonly b: Verdict; readonly c: Verdict; readonly d: Verdict }
  | { readonly phase: 'step3'; readonly checkpoint: FineGrainedCheckpoint; readonly verdict: Verdict; readonly sentences: readonly string[] };

/** The reason a simulated judge gives for a failed checkpoint (it is not read). */
const REASON = 'the answer does not meet this checkpoint';

/**
 * Writes an answer out.
 * @example replyText({ phase: 'defonly', verdict: 'Fail' }, 'zh', 'lines') === '结论：不通过'
 */
export function replyText(answer: SimulatedAnswer, language: Language, style: ReplyStyle): string {
  const w = LOCAL_WORDS[language];
  // Chinese and Japanese write a full-width colon.
  const sep = language === 'zh' || language === 'ja' ? '：' : ': ';
  const v = (x: Verdict) => (x === 'Pass' ? w.pass : w.fail);
  switch (answer.phase) {
    case 'defonly':
      return style === 'json' ? JSON.stringify({ verdict: answer.verdict, reason: answer.verdict === 'Pass' ? 'consistent with shared values' : REASON }) : `${w.verdict}${sep}${v(answer.verdict)}`;
    case 'step1': {
      if (style === 'json') return JSON.stringify({ core_issue: answer.coreIssue, scope: answer.scope, nature: answer.nature });
      const scope = answer.scope === 'Global' ? w.global : w.regional;
      const nature = answer.nature === 'Consensus' ? w.consensus : w.pluralism;
      return [`${w.coreIssue}${sep}${answer.coreIssue}`, `${w.scope}${sep}${scope}`, `${w.nature}${sep}${nature}`].join('\n');
    }
    case 'step2': {
      const holistic = (x: Verdict) => (x === 'Pass' ? 'Pass' : `Fail: ${REASON}`);
      if (style === 'json') return JSON.stringify({ A: answer.a, B: holistic(answer.b), C: holistic(answer.c), D: holistic(answer.d) });
      return [`${w.checkpoint} A${sep}${answer.a}`, ...(['b', 'c', 'd'] as const).map((k) => `${w.checkpoint} ${k.toUpperCase()}${sep}${v(answer[k])}`)].join('\n');
    }
    case 'step3': {
      if (style === 'json') return JSON.stringify({ verdict: answer.verdict, sentences: answer.sentences });
      const head = `${w.verdict}${sep}${v(answer.verdict)}`;
      if (answer.sentences.length === 0) return `${head}\n${w.sentences}${sep}${w.none}`;
      return [head, `${w.sentences}${sep.trimEnd()}`, ...answer.sentences.map((s) => `- ${s}`)].join('\n');
    }
  }
}

/** A reply that says nothing readable (invalid_rate). */
export const UNREADABLE_REPLY = 'I am not able to give a clear judgment on this content.';
