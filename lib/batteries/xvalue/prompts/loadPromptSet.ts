/**
 * Replacing prompts from the campaign file (`design.prompts: prompts.yaml`, README.md "Prompts").
 * The file may replace any template, for every language or for one language, and the region a
 * language's prompts name; what it leaves out keeps its default. Every template is checked before
 * the run: unknown prompt ids and languages, placeholders a prompt does not have, and a template
 * that leaves out the pair are errors naming the file and the path inside it.
 *
 * ```yaml
 * templates:
 *   defonly:
 *     system: You are a careful content reviewer.
 *     user: |
 *       … {{language}} … {{region}} … {{question}} … {{answer}} … {{reply_format}}
 * languages:
 *   zh:
 *     step1: { user: "… {{question}} … {{answer}} …" }
 * regions:
 *   pt: Portugal
 * ```
 */
import { z } from 'zod';
import { CampaignFileError, formatIssues, kindOf, parseYamlFile, readTextFile, shortValue } from '../../../api/battery.js';
import type { FileIssue } from '../../../api/battery.js';
import { LANGUAGE_CONTEXT } from '../languages.js';
import { LANGUAGES } from '../types.js';
import type { Language } from '../types.js';
import { DEFAULT_TEMPLATES } from './defaultTemplates.js';
import { REQUIRED_PLACEHOLDERS, allowedPlaceholders, placeholdersOf } from './renderPrompt.js';
import { PROMPT_IDS } from './types.js';
import type { PromptId, PromptSet, PromptTemplate } from './types.js';

/** The templates and regions of Table 9, unchanged. */
export const DEFAULT_PROMPT_SET: PromptSet = { templates: DEFAULT_TEMPLATES, byLanguage: {}, contexts: LANGUAGE_CONTEXT };

const unknownKeys = (expected: string) => (iss: { code?: string; keys?: string[] }) =>
  iss.code === 'unrecognized_keys' ? `unknown key(s) ${(iss.keys ?? []).map((k) => `"${k}"`).join(', ')}; expected ${expected}` : undefined;

const templateSchema = z.strictObject(
  {
    system: z.string().optional(),
    user: z.string({ error: 'expected the user message as text' }).refine((s) => s.trim() !== '', { error: 'the user message is empty' }),
  },
  { error: unknownKeys('system, user') },
);

const templatesSchema = z.record(z.string(), templateSchema);

export const promptOverridesSchema = z.strictObject(
  {
    templates: templatesSchema.optional(),
    languages: z.record(z.string(), templatesSchema).optional(),
    regions: z.record(z.string(), z.string().refine((s) => s.trim() !== '', { error: 'the region is empty' })).optional(),
  },
  {
    error: (iss) =>
      unknownKeys('templates, languages, regions')(iss) ??
      // The kind only, never the content: the file may not be a prompts file at all.
      (iss.code === 'invalid_type' ? `expected a mapping with templates, languages or regions, got ${kindOf(iss.input)}; is this the prompts file?` : undefined),
  },
);

export type PromptOverrides = z.output<typeof promptOverridesSchema>;

function isPromptId(id: string): id is PromptId {
  return (PROMPT_IDS as readonly string[]).includes(id);
}

function isLanguage(code: string): code is Language {
  return (LANGUAGES as readonly string[]).includes(code);
}

/** Checks one template's placeholders; pushes one issue per problem. */
function checkTemplate(id: PromptId, t: PromptTemplate, file: string, at: string, issues: FileIssue[]): void {
  const allowed = allowedPlaceholders(id);
  for (const part of ['system', 'user'] as const) {
    const text = t[part];
    if (text === undefined) continue;
    for (const name of placeholdersOf(text)) {
      if (!allowed.includes(name)) {
        issues.push({ file, path: `${at}.${part}`, message: `unknown placeholder {{${name}}}; prompt ${id} takes ${allowed.map((a) => `{{${a}}}`).join(', ')}` });
      }
    }
  }
  const used = new Set([...placeholdersOf(t.user), ...placeholdersOf(t.system ?? '')]);
  const missing = REQUIRED_PLACEHOLDERS.filter((r) => !used.has(r));
  if (missing.length > 0) {
    issues.push({ file, path: at, message: `the template never inserts ${missing.map((m) => `{{${m}}}`).join(' and ')}; every prompt must show the pair it judges` });
  }
}

function checkTemplates(raw: Readonly<Record<string, PromptTemplate>>, file: string, at: string, issues: FileIssue[]): Partial<Record<PromptId, PromptTemplate>> {
  const out: Partial<Record<PromptId, PromptTemplate>> = {};
  for (const [id, t] of Object.entries(raw)) {
    if (!isPromptId(id)) {
      issues.push({ file, path: `${at}.${id}`, message: `unknown prompt id ${shortValue(id)}; expected one of ${PROMPT_IDS.join(', ')}` });
      continue;
    }
    checkTemplate(id, t, file, `${at}.${id}`, issues);
    out[id] = t;
  }
  return out;
}

/**
 * Applies validated overrides to the defaults. Throws CampaignFileError listing every issue.
 * @example promptSetFrom({ regions: { pt: 'Portugal' } }, 'prompts.yaml').contexts.pt.region // 'Portugal'
 */
export function promptSetFrom(raw: unknown, file: string): PromptSet {
  const issues: FileIssue[] = [];
  const parsed = promptOverridesSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    for (const iss of parsed.error.issues) issues.push({ file, path: iss.path.map(String).join('.'), message: iss.message });
    throw new CampaignFileError(`invalid prompt templates:\n${formatIssues(issues)}`, issues);
  }
  const o = parsed.data;
  const templates = { ...DEFAULT_TEMPLATES, ...checkTemplates(o.templates ?? {}, file, 'templates', issues) };
  const byLanguage: Partial<Record<Language, Partial<Record<PromptId, PromptTemplate>>>> = {};
  for (const [code, set] of Object.entries(o.languages ?? {})) {
    if (!isLanguage(code)) {
      issues.push({ file, path: `languages.${code}`, message: `unknown language ${shortValue(code)}; expected one of ${LANGUAGES.join(', ')}` });
      continue;
    }
    byLanguage[code] = checkTemplates(set, file, `languages.${code}`, issues);
  }
  const contexts = { ...LANGUAGE_CONTEXT };
  for (const [code, region] of Object.entries(o.regions ?? {})) {
    if (!isLanguage(code)) {
      issues.push({ file, path: `regions.${code}`, message: `unknown language ${shortValue(code)}; expected one of ${LANGUAGES.join(', ')}` });
      continue;
    }
    contexts[code] = { ...LANGUAGE_CONTEXT[code], region: region.trim() };
  }
  if (issues.length > 0) throw new CampaignFileError(`invalid prompt templates:\n${formatIssues(issues)}`, issues);
  return { templates, byLanguage, contexts };
}

/**
 * Reads a prompts file (YAML or JSON) named by `design.prompts`; without one, the defaults.
 * @example const prompts = await loadPromptSet(path.resolve(campaign.folder, design.prompts))
 */
export async function loadPromptSet(file: string | undefined): Promise<PromptSet> {
  if (file === undefined) return DEFAULT_PROMPT_SET;
  const text = await readTextFile(file, 'prompts file', 'prompt templates as YAML or JSON');
  return promptSetFrom(parseYamlFile(file, text).value, file);
}
