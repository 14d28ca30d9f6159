import { z } from 'zod';
import { CampaignFileError, formatIssues, kindOf, parseYamlFile, readTextFile, shortValue } from '../../../api/battery.js';
import type { FileIssue, YamlFile } from '../../../api/battery.js';
import { LANGUAGES, STORY_GROUPS } from '../types.js';
import type { Far6Story, Language, StoryRendering } from '../types.js';

// Same Judgment, Different Yes "Stories and prompts": each story has a group fixed before any run and one rendering
// per language, screened for "name, length, script". This module is that screen for a stories
// file: the name (agent) must appear in the text, the text must be in the language's script, and
// every language the campaign asks for must be present.

const LANGUAGE_SET: ReadonlySet<string> = new Set(LANGUAGES);

// Story ids end up in item hashes, table columns and file names: keep them to a portable slug.
const STORY_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

// At most 60 characters of a value: a wrong path may point at a file that holds a secret.
const describe = shortValue;

/** "missing; expected X" for an absent key, else "expected X, got Y". */
const expected = (what: string, input: unknown): string =>
  input === undefined ? `missing; expected ${what}` : `expected ${what}, got ${describe(input)}`;

const nonEmptyText = (what: string) =>
  z
    .string({ error: (iss) => expected(`${what} as a string`, iss.input) })
    .trim()
    .min(1, { error: `${what} is empty; expected ${what === 'text' ? 'the vignette' : "the protagonist's name"}` });

const renderingSchema = z
  .strictObject(
    { agent: nonEmptyText('agent'), text: nonEmptyText('text') },
    {
      error: (iss) =>
        iss.code === 'unrecognized_keys'
          ? `unexpected key(s) ${iss.keys.map((k) => describe(k)).join(', ')}; a rendering has only agent and text`
          : expected('a mapping { agent, text }', iss.input),
    },
  )
  .superRefine(({ agent, text }, ctx) => {
    // Templates refer to the act through the agent ("what Finn did"), so the text must spell
    // the name exactly as the agent field does.
    if (!agent || !text || text.includes(agent)) return; // empty ones are already reported
    const hint =
      text.normalize('NFC').includes(agent.normalize('NFC'))
        ? ' (it does after Unicode NFC normalisation: retype one of them so both use the same characters)'
        : '; write the agent exactly as the text spells it';
    ctx.addIssue({ code: 'custom', path: ['agent'], message: `${describe(agent)} does not appear in the text${hint}` });
  });

const storySchema = z.strictObject(
  {
    id: z
      .string({ error: (iss) => expected('a story id string', iss.input) })
      .regex(STORY_ID, { error: (iss) => `${describe(iss.input)} is not a usable id; use letters, digits, '-', '_' or '.', starting with a letter or digit` }),
    group: z.enum(STORY_GROUPS, {
      error: (iss) =>
        iss.input === undefined
          ? `missing; expected one of ${STORY_GROUPS.join(', ')}`
          : `${describe(iss.input)} is not a story group; use one of ${STORY_GROUPS.join(', ')}`,
    }),
    // Keys and values are checked by hand below, so that an unknown language and a missing one
    // are reported together with the rendering problems of the same story.
    renderings: z.record(z.string(), z.unknown(), {
      error: (iss) => expected('a mapping from language to { agent, text }', iss.input),
    }),
  },
  {
    error: (iss) =>
      iss.code === 'unrecognized_keys'
        ? `unexpected key(s) ${iss.keys.map((k) => describe(k)).join(', ')}; a story has id, group and renderings`
        : expected('a story mapping { id, group, renderings }', iss.input),
  },
);

const fileSchema = z.strictObject(
  {
    stories: z
      .array(z.unknown(), { error: (iss) => expected('a list of stories', iss.input) })
      .min(1, { error: 'the list is empty; expected at least one story' }),
  },
  {
    error: (iss) =>
      iss.code === 'unrecognized_keys'
        ? `unexpected top-level key(s) ${iss.keys.map((k) => describe(k)).join(', ')}; the file has one key, stories`
        : // The kind only, never the content: the file may not be a stories file at all (a .env).
          `expected a mapping with a "stories" list, got ${kindOf(iss.input)}; is this the stories file?`,
  },
);

/** `['stories', 3, 'renderings', 'ko']` → `stories[3].renderings.ko`. */
function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else {
      const name = String(key);
      // A key is a value too: at most 60 characters of it (its line is then that of its mapping).
      out += /^[A-Za-z_][\w-]*$/.test(name) && name.length <= 60 ? `${out ? '.' : ''}${name}` : `[${describe(name)}]`;
    }
  }
  return out;
}

function zodIssues(file: string, prefix: readonly PropertyKey[], error: z.ZodError): FileIssue[] {
  return error.issues.map((i) => ({ file, path: formatPath([...prefix, ...i.path]), message: i.message }));
}

/**
 * Why `text` is not written in `language`'s script, or `undefined` when it is. Conservative on
 * purpose (Same Judgment, Different Yes "Stories and prompts": the rendering screen checks script): it catches a
 * rendering pasted under the wrong language, not every stray character.
 * @example scriptIssue('ja', '健太は財布を拾った。') === undefined
 */
export function scriptIssue(language: Language, text: string): string | undefined {
  const han = /\p{Script=Han}/u.test(text);
  const kana = /[\p{Script=Hiragana}\p{Script=Katakana}]/u.test(text);
  const hangul = /\p{Script=Hangul}/u.test(text);
  const latin = /\p{Script=Latin}/u.test(text);
  switch (language) {
    case 'zh':
      if (!han) return 'expected Chinese text in Han characters, found none';
      if (kana || hangul) return `expected Chinese text, found ${kana ? 'Japanese kana' : 'Korean Hangul'}`;
      return undefined;
    case 'ja':
      if (!kana) return 'expected Japanese text with kana (hiragana or katakana), found none';
      if (hangul) return 'expected Japanese text, found Korean Hangul';
      return undefined;
    case 'ko':
      if (!hangul) return 'expected Korean text in Hangul, found none';
      if (kana) return 'expected Korean text, found Japanese kana';
      return undefined;
    case 'en':
    case 'de':
    case 'fr':
      if (!latin) return `expected ${language} text in Latin script, found none`;
      if (han || kana || hangul) return `expected ${language} text in Latin script, found CJK or Hangul characters`;
      return undefined;
  }
}

function checkRenderings(
  file: string,
  at: readonly PropertyKey[],
  raw: Readonly<Record<string, unknown>>,
  languages: readonly Language[],
  issues: FileIssue[],
): Partial<Record<Language, StoryRendering>> {
  const out: Partial<Record<Language, StoryRendering>> = {};
  for (const [key, value] of Object.entries(raw)) {
    const path = [...at, key];
    if (!LANGUAGE_SET.has(key)) {
      issues.push({ file, path: formatPath(path), message: `${describe(key)} is not a known language; use one of ${LANGUAGES.join(', ')}` });
      continue;
    }
    const language = key as Language;
    const parsed = renderingSchema.safeParse(value);
    if (!parsed.success) {
      issues.push(...zodIssues(file, path, parsed.error));
      continue;
    }
    const script = scriptIssue(language, parsed.data.text);
    if (script) {
      issues.push({ file, path: formatPath([...path, 'text']), message: script });
      continue;
    }
    out[language] = parsed.data;
  }
  for (const language of languages) {
    if (!Object.hasOwn(raw, language)) {
      issues.push({
        file,
        path: formatPath([...at, language]),
        message: `missing; the campaign asks for ${languages.join(', ')}, so every story needs a { agent, text } rendering in ${language}`,
      });
    }
  }
  return out;
}

/**
 * Validates an already-parsed stories document (the YAML's value) and returns its stories in file
 * order. Every problem is collected; one `CampaignFileError` lists them all.
 * @example parseStories({ stories: [{ id: 's1', group: 'acceptable', renderings: { en: { agent: 'Finn', text: 'Finn helped.' } } }] }, 'inline', ['en'])
 */
export function parseStories(raw: unknown, file: string, languages: readonly Language[]): Far6Story[] {
  const issues: FileIssue[] = [];
  const top = fileSchema.safeParse(raw);
  if (!top.success) throw storiesError(file, zodIssues(file, [], top.error));

  const stories: Far6Story[] = [];
  const firstIndexOfId = new Map<string, number>();
  top.data.stories.forEach((entry, index) => {
    const at = ['stories', index];
    const before = issues.length;
    const parsed = storySchema.safeParse(entry);
    if (!parsed.success) issues.push(...zodIssues(file, at, parsed.error));

    // Check whatever parts did parse, so one bad field does not hide the others' problems.
    const record = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
    const id = typeof record.id === 'string' ? record.id : undefined;
    if (id !== undefined) {
      const first = firstIndexOfId.get(id);
      if (first === undefined) firstIndexOfId.set(id, index);
      else issues.push({ file, path: formatPath([...at, 'id']), message: `${describe(id)} repeats the id of stories[${first}]; story ids must be unique` });
    }
    const rawRenderings = record.renderings;
    const renderings =
      typeof rawRenderings === 'object' && rawRenderings !== null && !Array.isArray(rawRenderings)
        ? checkRenderings(file, [...at, 'renderings'], rawRenderings as Record<string, unknown>, languages, issues)
        : {};

    if (parsed.success && issues.length === before) {
      stories.push({ id: parsed.data.id, group: parsed.data.group, renderings });
    }
  });

  if (issues.length > 0) throw storiesError(file, issues);
  return stories;
}

/**
 * Reads and validates a FAR-6 stories file (YAML, `stories: [{ id, group, renderings }]`; see
 * `examples/far6/stories.yaml`). Each story must have a rendering in every language of `languages`.
 * @example const stories = await loadStories('examples/far6/stories.yaml', ['en', 'ja']);
 */
export async function loadStories(file: string, languages: readonly Language[]): Promise<Far6Story[]> {
  const text = await readTextFile(file, 'stories file', 'a YAML file with a "stories" list');
  let yaml: YamlFile;
  try {
    yaml = parseYamlFile(file, text);
  } catch (err) {
    throw err instanceof CampaignFileError ? storiesError(file, err.issues) : err;
  }
  try {
    return parseStories(yaml.value, file, languages);
  } catch (err) {
    if (!(err instanceof CampaignFileError)) throw err;
    // The line of each path, as the campaign file's errors give it.
    throw storiesError(file, err.issues.map((i) => ({ ...i, message: withLine(i.message, i.path, yaml) })));
  }
}

/** `message (line N)` for a `stories[1].renderings.de`-style path that the YAML file can place. */
function withLine(message: string, at: string, yaml: YamlFile): string {
  if (at === '' || at.startsWith('line ')) return message;
  const segments = [...at.matchAll(/\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]|([^.[\]]+)/g)].map((m) =>
    m[1] !== undefined ? Number(m[1]) : m[2] !== undefined ? (JSON.parse(`"${m[2]}"`) as string) : m[3]!,
  );
  const line = yaml.lineOf(segments);
  return line === undefined ? message : `${message} (line ${line})`;
}

function storiesError(file: string, issues: readonly FileIssue[]): CampaignFileError {
  const count = issues.length === 1 ? '1 problem' : `${issues.length} problems`;
  return new CampaignFileError(`stories file ${file} has ${count}:\n${formatIssues(issues)}`, issues);
}
