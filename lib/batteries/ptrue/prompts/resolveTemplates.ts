/**
 * The templates a campaign runs with: the defaults (templates.ts), each replaceable under
 * `design.prompts` of the campaign file. Every replacement is checked: it must contain its required
 * placeholders and no unknown one; every problem is reported at once, naming the file and the field
 * (`demo.yaml: design.prompts.verify.fr: …`).
 */
import { CampaignFileError, formatIssues } from '../../../api/battery.js';
import type { FileIssue, LanguageCode } from '../../../api/battery.js';
import { BENCHMARK_KINDS, type BenchmarkKind } from '../types.js';
import { placeholdersOf } from './render.js';
import { GENERATE_TEMPLATES, JUDGE_TEMPLATE, PLACEHOLDERS, VERIFY_TEMPLATES } from './templates.js';

/** What the campaign file may give under `design.prompts` (all optional). */
export interface TemplateOverrides {
  readonly generate?: Partial<Record<BenchmarkKind, Readonly<Record<string, string>>>>;
  readonly verify?: Readonly<Record<string, string>>;
  readonly judge?: string;
}

/** The templates of one campaign, for its languages. */
export interface PromptTemplates {
  readonly generate: Readonly<Record<BenchmarkKind, Readonly<Record<LanguageCode, string>>>>;
  readonly verify: Readonly<Record<LanguageCode, string>>;
  readonly judge: string;
}

function check(template: string, spec: { readonly required: readonly string[]; readonly optional: readonly string[] }, file: string, path: string, issues: FileIssue[]): void {
  const used = placeholdersOf(template);
  const missing = spec.required.filter((p) => !used.includes(p));
  const unknown = used.filter((p) => !spec.required.includes(p) && !spec.optional.includes(p));
  const allowed = [...spec.required, ...spec.optional].map((p) => `{${p}}`).join(', ');
  if (missing.length > 0) {
    issues.push({ file, path, message: `the template has no ${missing.map((p) => `{${p}}`).join(', ')} placeholder; it must contain ${spec.required.map((p) => `{${p}}`).join(' and ')}` });
  }
  if (unknown.length > 0) issues.push({ file, path, message: `unknown placeholder ${unknown.map((p) => `{${p}}`).join(', ')}; use ${allowed} (write {{ and }} for literal braces)` });
}

/**
 * The templates for `languages` (question and response) and `verifierLanguages`, defaults overlaid
 * with the campaign's. A language with no default template must be given one.
 * @throws CampaignFileError listing every bad or missing template.
 */
export function resolveTemplates(
  overrides: TemplateOverrides | undefined,
  languages: readonly LanguageCode[],
  verifierLanguages: readonly LanguageCode[],
  file: string,
  at = 'design.prompts',
): PromptTemplates {
  const issues: FileIssue[] = [];
  const pick = (defaults: Readonly<Record<string, string>>, given: Readonly<Record<string, string>> | undefined, langs: readonly LanguageCode[], path: string, spec: Parameters<typeof check>[1]) => {
    const out: Record<LanguageCode, string> = {};
    for (const [lang, t] of Object.entries(given ?? {})) {
      if (!langs.includes(lang)) issues.push({ file, path: `${path}.${lang}`, message: `"${lang}" is not a language of the design (${langs.join(', ')})` });
      else if (typeof t !== 'string' || t.trim() === '') issues.push({ file, path: `${path}.${lang}`, message: 'expected the template as text' });
      else check(t, spec, file, `${path}.${lang}`, issues);
    }
    for (const lang of langs) {
      const t = given?.[lang] ?? defaults[lang];
      if (t === undefined) issues.push({ file, path: `${path}.${lang}`, message: `no default template for "${lang}"; give one here` });
      else out[lang] = t;
    }
    return out;
  };
  const generate = Object.fromEntries(
    BENCHMARK_KINDS.map((kind) => [kind, pick(GENERATE_TEMPLATES[kind], overrides?.generate?.[kind], languages, `${at}.generate.${kind}`, PLACEHOLDERS.generate[kind])]),
  ) as Record<BenchmarkKind, Record<LanguageCode, string>>;
  const verify = pick(VERIFY_TEMPLATES, overrides?.verify, verifierLanguages, `${at}.verify`, PLACEHOLDERS.verify);
  const judge = overrides?.judge ?? JUDGE_TEMPLATE;
  if (overrides?.judge !== undefined) check(overrides.judge, PLACEHOLDERS.judge, file, `${at}.judge`, issues);
  if (issues.length > 0) throw new CampaignFileError(`${file}: ${issues.length} problem${issues.length === 1 ? '' : 's'} in the prompt templates\n${formatIssues(issues)}`, issues);
  return { generate, verify, judge };
}
