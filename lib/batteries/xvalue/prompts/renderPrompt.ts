/**
 * Filling a template: `{{name}}` placeholders replaced in one pass, so a question or an answer
 * that itself contains `{{…}}` is inserted verbatim and never expanded.
 */
import type { ChatMessage } from '../../../api/battery.js';
import { CATEGORY_NAMES } from '../types.js';
import type { Category, Language } from '../types.js';
import { REPLY_FORMATS } from './defaultTemplates.js';
import type { PromptId, PromptSet, PromptTemplate, PromptVars } from './types.js';

export const PLACEHOLDER = /\{\{\s*([a-z_]+)\s*\}\}/g;

const COMMON = ['language', 'region', 'category', 'question', 'answer', 'reply_format'] as const;
const STEP2 = ['core_issue', 'scope', 'nature'] as const;

/** The placeholders a template of this id may use. */
export function allowedPlaceholders(id: PromptId): readonly string[] {
  return id.startsWith('step2.') ? [...COMMON, ...STEP2] : COMMON;
}

/** The placeholders every template must use: without the pair there is nothing to judge. */
export const REQUIRED_PLACEHOLDERS = ['question', 'answer'] as const;

/** The placeholder names a text uses, in order of first use. */
export function placeholdersOf(text: string): string[] {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1] as string))];
}

function replyFormat(id: PromptId): string {
  return REPLY_FORMATS[id.split('.')[0] as keyof typeof REPLY_FORMATS];
}

/** The template used for a prompt id in a language: the language's own, else the general one. */
export function templateFor(set: PromptSet, id: PromptId, language: Language): PromptTemplate {
  return set.byLanguage[language]?.[id] ?? set.templates[id];
}

/**
 * The chat messages of one prompt.
 * @example renderPrompt(set, 'defonly', 'zh', 'P&B', { question: '…', answer: '…' }) // [{ role: 'user', content: '… Chinese … China …' }]
 */
export function renderPrompt(set: PromptSet, id: PromptId, language: Language, category: Category, vars: PromptVars): ChatMessage[] {
  const ctx = set.contexts[language];
  const values: Readonly<Record<string, string | undefined>> = {
    language: ctx.name,
    region: ctx.region,
    category: CATEGORY_NAMES[category],
    reply_format: replyFormat(id),
    ...vars,
  };
  const fill = (text: string): string =>
    text.replace(PLACEHOLDER, (whole, name: string) => {
      const v = values[name];
      // Templates are validated when loaded, so this is a programming error, not a user's.
      if (v === undefined) throw new Error(`prompt ${id}: no value for ${whole}`);
      return v;
    });
  const t = templateFor(set, id, language);
  const messages: ChatMessage[] = [];
  if (t.system !== undefined && t.system.trim() !== '') messages.push({ role: 'system', content: fill(t.system) });
  messages.push({ role: 'user', content: fill(t.user) });
  return messages;
}
