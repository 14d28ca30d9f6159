/**
 * Filling a template: `{{name}}` placeholders replaced in one pass, so a question or an answer
 * that itself contains `{{…}}` is inserted verbatim and never expanded.
 */
import { filledMessage } from '../../../api/battery.js';
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
 * `text` as [literal, name, literal, name, …, literal]: filling it joins the literals with the
 * values, which is what one pass of `replace` over PLACEHOLDER gives (a value is never scanned
 * again). Cut once per PairTemplate (pairTemplateOf keeps them), not for every prompt.
 */
function partsOf(text: string): readonly string[] {
  const parts: string[] = [];
  let at = 0;
  for (const m of text.matchAll(PLACEHOLDER)) {
    parts.push(text.slice(at, m.index), m[1] as string);
    at = m.index + m[0].length;
  }
  parts.push(text.slice(at));
  return parts;
}

/**
 * A template with the values of its partition filled in (language, region, category, reply
 * format), cut at the placeholders the pair fills: `literals` take `names`' values between them.
 */
interface PairTemplate {
  readonly literals: readonly string[];
  readonly names: readonly string[];
}

/**
 * PairTemplates of each prompt set (which is never changed once loaded), by role, prompt id,
 * language and category: what fills them is the set's and these alone. A run has a few hundred.
 */
const pairTemplates = new WeakMap<PromptSet, Map<string, PairTemplate>>();

/**
 * The template of a message with the values of its partition filled in and cut at the other
 * placeholders. Its literals are one array for every prompt of the template in a language and
 * category: what is escaped and counted of a prompt's template is then escaped and counted once
 * (lib/core/filledText.ts).
 */
function pairTemplateOf(set: PromptSet, id: PromptId, language: Language, category: Category, role: ChatMessage['role'], text: string): PairTemplate {
  let templates = pairTemplates.get(set);
  if (templates === undefined) pairTemplates.set(set, (templates = new Map()));
  const key = `${role}\u0000${id}\u0000${language}\u0000${category}`;
  let template = templates.get(key);
  if (template === undefined) {
    const ctx = set.contexts[language];
    const fixed: Readonly<Record<string, string>> = {
      language: ctx.name,
      region: ctx.region,
      category: CATEGORY_NAMES[category],
      reply_format: replyFormat(id),
    };
    const parts = partsOf(text);
    const literals: string[] = [parts[0] as string];
    const names: string[] = [];
    for (let i = 1; i < parts.length; i += 2) {
      const name = parts[i] as string;
      const value = Object.hasOwn(fixed, name) ? fixed[name] : undefined;
      if (value === undefined) {
        names.push(name);
        literals.push(parts[i + 1] as string);
      } else literals[literals.length - 1] += value + (parts[i + 1] as string);
    }
    template = { literals, names };
    templates.set(key, template);
  }
  return template;
}

/**
 * The chat messages of one prompt. Each is a filled template (lib/core/filledText.ts): its id and
 * prompts row are serialized, and its tokens counted, from its pieces.
 * @example renderPrompt(set, 'defonly', 'zh', 'P&B', { question: '…', answer: '…' }) // [{ role: 'user', content: '… Chinese … China …' }]
 */
export function renderPrompt(set: PromptSet, id: PromptId, language: Language, category: Category, vars: PromptVars): ChatMessage[] {
  const t = templateFor(set, id, language);
  const messages: ChatMessage[] = [];
  if (t.system !== undefined && t.system.trim() !== '') messages.push(fill(set, id, language, category, vars, 'system', t.system));
  messages.push(fill(set, id, language, category, vars, 'user', t.user));
  return messages;
}

/**
 * One message of renderPrompt. A function of the module, not a closure made per prompt: the plan
 * renders every prompt of a campaign (600,000 and more at the X-Value bench's size), and under
 * tsx's loader (the benches' main thread, SONDAGE_SOURCE_BUNDLE=0) every closure made is also
 * named by a call (esbuild's keepNames): two per prompt cost that bench's plan 0.3–0.5 s.
 */
function fill(set: PromptSet, id: PromptId, language: Language, category: Category, vars: PromptVars, role: ChatMessage['role'], text: string): ChatMessage {
  const template = pairTemplateOf(set, id, language, category, role, text);
  const values: string[] = [];
  for (const name of template.names) {
    const v = vars[name as keyof PromptVars];
    // Templates are validated when loaded, so this is a programming error, not a user's.
    if (v === undefined) throw new Error(`prompt ${id}: no value for {{${name}}}`);
    values.push(v);
  }
  return filledMessage(role, template.literals, values);
}
