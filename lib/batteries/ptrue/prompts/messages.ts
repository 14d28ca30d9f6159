/**
 * The messages of each phase's items, from a base item and the templates (templates.ts says where
 * each part goes and why). Pure: the same inputs give the same messages, hence the same item ids.
 */
import type { ChatMessage, LanguageCode } from '../../../api/battery.js';
import { OPTION_LETTERS, type BaseItem } from '../types.js';
import { languageName } from './languageNames.js';
import { renderTemplate } from './render.js';
import type { PromptTemplates } from './resolveTemplates.js';

/** The options of a multiple-choice item in one language, one a line: `A. …`. */
export function optionsBlock(item: BaseItem, language: LanguageCode): string {
  const options = item.options?.[language];
  if (!options) return '';
  return options.map((o, i) => `${OPTION_LETTERS[i]}. ${o}`).join('\n');
}

/** The question as the model saw it: the question, and for multiple choice its options. */
export function questionAsShown(item: BaseItem, language: LanguageCode): string {
  const q = item.question[language];
  if (q === undefined) throw new RangeError(`item ${item.id} has no question in ${language}`);
  return item.kind === 'multiple_choice' ? `${q}\n\n${optionsBlock(item, language)}` : q;
}

/** Generation: the question in `q`, the answer requested in `r` (§3.4). */
export function generateMessages(item: BaseItem, q: LanguageCode, r: LanguageCode, templates: PromptTemplates): ChatMessage[] {
  const template = templates.generate[item.kind][q];
  if (template === undefined) throw new RangeError(`no ${item.kind} template for ${q}`);
  const question = item.question[q];
  if (question === undefined) throw new RangeError(`item ${item.id} has no question in ${q}`);
  const content = renderTemplate(template, {
    question,
    options: optionsBlock(item, q),
    // A pair the name table lacks (a campaign language with its own templates) falls back to the code.
    response_language: languageName(q, r) ?? r,
  });
  return [{ role: 'user', content }];
}

/** Verification in `v` of a reply to the question in `q`, both held fixed (§3.5). */
export function verifyMessages(item: BaseItem, q: LanguageCode, v: LanguageCode, reply: string, templates: PromptTemplates): ChatMessage[] {
  const template = templates.verify[v];
  if (template === undefined) throw new RangeError(`no verifier template for ${v}`);
  return [{ role: 'user', content: renderTemplate(template, { question: questionAsShown(item, q), answer: reply }) }];
}

/**
 * The reference answer a judge and the simulator use for a reply requested in `r`: the reference
 * in `r`, else English, else the first given; for multiple choice the gold option's text in `r`.
 */
export function referenceFor(item: BaseItem, r: LanguageCode): string | null {
  if (item.kind === 'multiple_choice') {
    const i = OPTION_LETTERS.indexOf(item.answerLetter as (typeof OPTION_LETTERS)[number]);
    const text = item.options?.[r]?.[i] ?? item.options?.en?.[i];
    return text === undefined ? item.answerLetter : `${item.answerLetter}. ${text}`;
  }
  return item.answers[r] ?? item.answers.en ?? Object.values(item.answers)[0] ?? null;
}

/** The judge's prompt for a reply to the question in `q` requested in `r` (§4.2). */
export function judgeMessages(item: BaseItem, q: LanguageCode, r: LanguageCode, reply: string, templates: PromptTemplates): ChatMessage[] {
  const reference = referenceFor(item, r) ?? '(none)';
  const english = item.kind === 'multiple_choice' ? referenceFor(item, 'en') : item.answers.en;
  const content = renderTemplate(templates.judge, {
    question: questionAsShown(item, q),
    response: reply,
    reference,
    reference_en: english ?? '(none)',
    aliases: item.aliases.length > 0 ? item.aliases.join('; ') : '(none)',
    response_language: languageName('en', r) ?? r,
  });
  return [{ role: 'user', content }];
}
