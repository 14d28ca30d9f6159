import { z } from 'zod';
import { CampaignFileError, formatIssues, kindOf, parseYamlFile, readTextFileSync, shortValue, withLines } from '../../../api/battery.js';
import type { FileIssue, YamlFile } from '../../../api/battery.js';
import { LANGUAGES } from '../types.js';
import type { Language } from '../types.js';
import { templatesFor } from './languages/registry.js';
import { caseFold } from './readingMaps.js';
import { CONSTRUCTIONS } from './types.js';
import type { ConceptPair, ConceptTerm } from './types.js';

const quotedList = (values: readonly string[]): string => values.map((v) => `"${v}"`).join(', ');

/** "missing; expected X" for an absent key, else "expected X, got Y" (Y at most 60 characters). */
const expected = (what: string, input: unknown): string => (input === undefined ? `missing; expected ${what}` : `expected ${what}, got ${shortValue(input)}`);

/** A strict mapping whose unknown keys are named with the keys it has. */
const mapping = <S extends z.core.$ZodLooseShape>(what: string, shape: S) =>
  z.strictObject(shape, {
    error: (iss) =>
      iss.code === 'unrecognized_keys'
        ? `unknown key(s) ${iss.keys.map((k) => JSON.stringify(k)).join(', ')}; ${what} has ${Object.keys(shape).join(', ')}`
        : expected(`${what} mapping { ${Object.keys(shape).join(', ')} }`, iss.input),
  });

const nonEmpty = (what: string) =>
  z
    .string({ error: (iss) => expected(what, iss.input) })
    .trim()
    .min(1, { error: `is empty; expected ${what}` });

const termSchema = mapping('a side', {
  verdict: nonEmpty('the verdict word'),
  verdict_forms: z.array(nonEmpty('an opening'), { error: (iss) => expected('a list of openings', iss.input) }).default([]),
  forms: z.record(z.string(), z.string({ error: (iss) => expected('a word form', iss.input) }).trim(), {
    error: (iss) => expected('a map of form name to word form', iss.input),
  }),
});

const pairSchema = mapping('a concept pair', {
  id: z
    .string({ error: (iss) => expected('an id like "en.wrong-right"', iss.input) })
    .regex(/^[a-z]{2}\.[a-z0-9][a-z0-9-]*$/, { error: (iss) => `${shortValue(iss.input)} is not an id like "en.wrong-right"` }),
  language: z.enum(LANGUAGES, {
    error: (iss) => (iss.input === undefined ? `missing; expected one of ${quotedList(LANGUAGES)}` : `unknown language ${shortValue(iss.input)}; expected one of ${quotedList(LANGUAGES)}`),
  }),
  construction: z.enum(CONSTRUCTIONS, {
    error: (iss) =>
      iss.input === undefined ? `missing; expected one of ${quotedList(CONSTRUCTIONS)}` : `unknown construction ${shortValue(iss.input)}; expected one of ${quotedList(CONSTRUCTIONS)}`,
  }),
  reference: termSchema,
  counterpart: termSchema,
});

const fileSchema = z.strictObject(
  { pairs: z.array(pairSchema, { error: (iss) => expected('a list of concept pairs', iss.input) }) },
  {
    error: (iss) =>
      iss.code === 'unrecognized_keys'
        ? `unknown top-level key(s) ${iss.keys.map((k) => JSON.stringify(k)).join(', ')}; the file has one key, pairs`
        : // The kind only, never the content: the file may not be a concept-pair file at all (a .env).
          `expected a mapping with a "pairs" list, got ${kindOf(iss.input)}; is this the concept-pair file?`,
  },
);

/** `['pairs', 3, 'reference']` → `pairs[3].reference`. */
function pathText(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key)),
    '',
  );
}

/** Zod's issues as file issues, with where they sit; an unknown key at the key itself. */
function schemaIssues(file: string, error: z.ZodError): (FileIssue & { segments: PropertyKey[] })[] {
  return error.issues.flatMap((i) => {
    const at = i.path.filter((s): s is string | number => typeof s !== 'symbol');
    if (i.code === 'unrecognized_keys') return i.keys.map((k) => ({ file, path: pathText([...at, k]), segments: [...at, k], message: i.message }));
    return [{ file, path: pathText(at), segments: at, message: i.message }];
  });
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
  return checkConceptPairs(raw, file, languages, () => undefined);
}

/** parseConceptPairs, with the line of each issue's path (` (line N)`) where `lineOf` can place it. */
function checkConceptPairs(raw: unknown, file: string, languages: readonly Language[], lineOf: YamlFile['lineOf']): ConceptPair[] {
  const fail = (issues: readonly (FileIssue & { segments: readonly PropertyKey[] })[], cause?: unknown): never => {
    const located = withLines(issues, lineOf).map(({ segments: _segments, ...issue }) => issue);
    throw new CampaignFileError(formatIssues(located), located, cause === undefined ? undefined : { cause });
  };
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) return fail(schemaIssues(file, parsed.error), parsed.error);
  const issues: (FileIssue & { segments: PropertyKey[] })[] = [];
  const segmentsOf = (path: string): PropertyKey[] => [...path.matchAll(/\[(\d+)\]|([^.[\]]+)/g)].map((m) => (m[1] !== undefined ? Number(m[1]) : m[2]!));
  const seen = new Map<string, number>();
  const pairs: ConceptPair[] = parsed.data.pairs;
  pairs.forEach((pair, i) => {
    const path = `pairs[${i}]`;
    const first = seen.get(pair.id);
    if (first !== undefined) {
      issues.push({ file, path: `${path}.id`, segments: ['pairs', i, 'id'], message: `duplicate id "${pair.id}" (first at pairs[${first}]); ids must be unique` });
    } else {
      seen.set(pair.id, i);
    }
    for (const issue of conceptPairIssues(pair, path)) issues.push({ file, ...issue, segments: segmentsOf(issue.path) });
  });
  for (const language of languages) {
    if (!pairs.some((p) => p.language === language)) {
      issues.push({
        file,
        path: 'pairs',
        segments: ['pairs'],
        message: `no concept pair for campaign language "${language}"; expected at least one pair with language: ${language}`,
      });
    }
  }
  if (issues.length > 0) fail(issues);
  return pairs.filter((p) => languages.includes(p.language));
}

/**
 * Reads a concept-pair YAML file (examples/far6/concept-pairs.yaml) and returns the pairs of the
 * campaign's languages. Bad input throws a CampaignFileError naming the file, the path inside it
 * and what was expected.
 * @example const pairs = loadConceptPairs('examples/far6/concept-pairs.yaml', ['en', 'ja']);
 */
export function loadConceptPairs(file: string, languages: readonly Language[]): ConceptPair[] {
  const text = readTextFileSync(file, 'concept-pair file', 'a YAML file with a "pairs" list');
  const { value, lineOf } = parseYamlFile(file, text);
  return checkConceptPairs(value, file, languages, lineOf);
}
