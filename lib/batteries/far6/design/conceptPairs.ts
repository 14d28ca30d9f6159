import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { CampaignFileError, formatIssues } from '../../../errors.js';
import type { FileIssue } from '../../../errors.js';
import { LANGUAGES } from '../types.js';
import type { Language } from '../types.js';
import { templatesFor } from './languages/registry.js';
import { caseFold } from './readingMaps.js';
import { CONSTRUCTIONS } from './types.js';
import type { ConceptPair, ConceptTerm } from './types.js';

const quotedList = (values: readonly string[]): string => values.map((v) => `"${v}"`).join(', ');

const termSchema = z.strictObject({
  verdict: z.string().trim().min(1, { error: 'expected a non-empty verdict word' }),
  verdict_forms: z.array(z.string().trim().min(1, { error: 'expected a non-empty opening' })).default([]),
  forms: z.record(z.string(), z.string().trim(), { error: 'expected a map of form name to word form' }),
});

const pairSchema = z.strictObject({
  id: z.string().regex(/^[a-z]{2}\.[a-z0-9][a-z0-9-]*$/, { error: 'expected an id like "en.wrong-right"' }),
  language: z.enum(LANGUAGES, {
    error: (iss) => `unknown language ${JSON.stringify(iss.input)}; expected one of ${quotedList(LANGUAGES)}`,
  }),
  construction: z.enum(CONSTRUCTIONS, {
    error: (iss) => `unknown construction ${JSON.stringify(iss.input)}; expected one of ${quotedList(CONSTRUCTIONS)}`,
  }),
  reference: termSchema,
  counterpart: termSchema,
});

const fileSchema = z.strictObject({
  pairs: z.array(pairSchema, { error: 'expected a list of concept pairs' }),
});

/** `['pairs', 3, 'reference']` → `pairs[3].reference`. */
function pathText(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key)),
    '',
  );
}

/**
 * Problems of one pair that the schema cannot see: the forms its language's templates need, the
 * id's language prefix, and a verdict opening claimed by both sides. Each message says what was
 * expected; `path` is the pair's path in its file.
 */
export function conceptPairIssues(pair: ConceptPair, path: string): { path: string; message: string }[] {
  const issues: { path: string; message: string }[] = [];
  if (!pair.id.startsWith(`${pair.language}.`)) {
    issues.push({ path: `${path}.id`, message: `"${pair.id}" should start with its language, "${pair.language}."` });
  }
  const tpl = templatesFor(pair.language).constructions[pair.construction];
  const required = tpl.forms;
  const optional = tpl.optionalForms ?? [];
  const known = [...required, ...optional];
  for (const side of ['reference', 'counterpart'] as const) {
    const forms = pair[side].forms;
    for (const key of required) {
      if (!forms[key]) {
        issues.push({
          path: `${path}.${side}.forms.${key}`,
          message: `missing form "${key}"; the ${pair.language} ${pair.construction} templates need ${quotedList(required)}`,
        });
      }
    }
    for (const key of Object.keys(forms)) {
      if (!known.includes(key)) {
        issues.push({
          path: `${path}.${side}.forms.${key}`,
          message: `unknown form "${key}"; the ${pair.language} ${pair.construction} templates use ${quotedList(known)}`,
        });
      }
    }
  }
  const refOpenings = new Set(openings(pair.reference));
  for (const o of openings(pair.counterpart)) {
    if (refOpenings.has(o)) {
      issues.push({
        path: `${path}.counterpart`,
        message: `verdict opening "${o}" is also the reference side's; each opening must name one side`,
      });
    }
  }
  return issues;
}

function openings(term: ConceptTerm): string[] {
  return [term.verdict, ...term.verdict_forms].map(caseFold);
}

/**
 * Validates parsed concept-pair data (`{ pairs: [...] }`) for a campaign's languages and returns
 * the pairs of those languages, in file order. Throws one CampaignFileError listing every issue.
 * @example parseConceptPairs(yaml.parse(text), 'pairs.yaml', ['en', 'de'])
 */
export function parseConceptPairs(raw: unknown, file: string, languages: readonly Language[]): ConceptPair[] {
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const issues: FileIssue[] = parsed.error.issues.map((i) => ({ file, path: pathText(i.path), message: i.message }));
    throw new CampaignFileError(formatIssues(issues), issues, { cause: parsed.error });
  }
  const issues: FileIssue[] = [];
  const seen = new Map<string, number>();
  const pairs: ConceptPair[] = parsed.data.pairs;
  pairs.forEach((pair, i) => {
    const path = `pairs[${i}]`;
    const first = seen.get(pair.id);
    if (first !== undefined) {
      issues.push({ file, path: `${path}.id`, message: `duplicate id "${pair.id}" (first at pairs[${first}]); ids must be unique` });
    } else {
      seen.set(pair.id, i);
    }
    for (const issue of conceptPairIssues(pair, path)) issues.push({ file, ...issue });
  });
  for (const language of languages) {
    if (!pairs.some((p) => p.language === language)) {
      issues.push({
        file,
        path: 'pairs',
        message: `no concept pair for campaign language "${language}"; expected at least one pair with language: ${language}`,
      });
    }
  }
  if (issues.length > 0) throw new CampaignFileError(formatIssues(issues), issues);
  return pairs.filter((p) => languages.includes(p.language));
}

/**
 * Reads a concept-pair YAML file (examples/far6/concept-pairs.yaml) and returns the pairs of the
 * campaign's languages. Bad input throws a CampaignFileError naming the file, the path inside it
 * and what was expected.
 * @example const pairs = loadConceptPairs('examples/far6/concept-pairs.yaml', ['en', 'ja']);
 */
export function loadConceptPairs(file: string, languages: readonly Language[]): ConceptPair[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const issue = { file, path: '', message: `cannot read the concept-pair file (${(err as Error).message})` };
    throw new CampaignFileError(formatIssues([issue]), [issue], { cause: err });
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    const issue = { file, path: '', message: `not valid YAML: ${(err as Error).message}` };
    throw new CampaignFileError(formatIssues([issue]), [issue], { cause: err });
  }
  return parseConceptPairs(raw, file, languages);
}
