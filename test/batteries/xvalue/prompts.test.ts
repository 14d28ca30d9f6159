import { describe, expect, it } from 'vitest';
import { CampaignFileError } from '../../../lib/errors.js';
import { LANGUAGE_CONTEXT } from '../../../lib/batteries/xvalue/languages.js';
import {
  DEFAULT_PROMPT_SET,
  DEFAULT_TEMPLATES,
  PROMPT_IDS,
  REPLY_FORMATS,
  allowedPlaceholders,
  loadPromptSet,
  placeholdersOf,
  promptSetFrom,
  renderPrompt,
} from '../../../lib/batteries/xvalue/prompts/index.js';
import { LANGUAGES } from '../../../lib/batteries/xvalue/types.js';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const vars = { question: 'Q?', answer: 'A.', core_issue: 'Core', scope: 'Regional', nature: 'Pluralism' };

describe('default prompts', () => {
  it('name the language and the country/region of Table 9 in every language', () => {
    expect(LANGUAGE_CONTEXT.pt).toEqual({ name: 'Portuguese', region: 'Brazil' });
    expect(LANGUAGE_CONTEXT.ar).toEqual({ name: 'Arabic', region: 'Arabic-speaking countries' });
    for (const language of LANGUAGES) {
      for (const id of PROMPT_IDS) {
        const [m] = renderPrompt(DEFAULT_PROMPT_SET, id, language, 'G&H', vars);
        expect(m?.content).toContain(`written in ${LANGUAGE_CONTEXT[language].name}`);
        expect(m?.content).toContain(LANGUAGE_CONTEXT[language].region);
      }
    }
  });

  it('use only their own placeholders, always show the pair, and ask for the reply format the reader parses', () => {
    expect(() => promptSetFrom({}, 'none')).not.toThrow();
    for (const id of PROMPT_IDS) {
      const used = placeholdersOf(DEFAULT_TEMPLATES[id].user);
      expect(used.every((u) => allowedPlaceholders(id).includes(u)), id).toBe(true);
      expect(used).toEqual(expect.arrayContaining(['question', 'answer', 'reply_format']));
    }
    const [m] = renderPrompt(DEFAULT_PROMPT_SET, 'step3.G', 'en', 'E&S', vars);
    expect(m?.content).toContain(REPLY_FORMATS.step3);
    expect(m?.content).not.toMatch(/\{\{/);
  });

  it('differ between Consensus and Pluralism only in the "[Answer] Evaluation Criteria" section (Appendix J.2)', () => {
    const c = DEFAULT_TEMPLATES['step2.consensus'].user;
    const p = DEFAULT_TEMPLATES['step2.pluralism'].user;
    const start = c.indexOf('[Answer] Evaluation Criteria');
    expect(start).toBeGreaterThan(0);
    expect(p.indexOf('[Answer] Evaluation Criteria')).toBe(start);
    const tail = c.slice(c.indexOf('\n\n[Question]\n{{question}}'));
    expect(c.slice(0, start)).toBe(p.slice(0, start));
    expect(p.endsWith(tail)).toBe(true);
    expect(c).toMatch(/Stance deviation[\s\S]*Justification for misconduct[\s\S]*Implicit steering/);
    expect(p).toMatch(/Regional adaptation[\s\S]*Missing perspectives[\s\S]*One-sided indoctrination/);
  });

  it('insert the pair verbatim: braces inside a question or answer are never expanded', () => {
    const [m] = renderPrompt(DEFAULT_PROMPT_SET, 'defonly', 'en', 'P&B', { question: 'What is {{answer}}?', answer: 'It is {{region}}.' });
    expect(m?.content).toContain('[Question]\nWhat is {{answer}}?\n\n[Answer]\nIt is {{region}}.');
  });
});

describe('prompt overrides from the campaign file (design.prompts)', () => {
  it('replace a template for every language, for one language, and a region', () => {
    const set = promptSetFrom(
      {
        templates: { defonly: { system: 'Be strict ({{language}}).', user: 'Judge {{question}} / {{answer}} for {{region}}. {{reply_format}}' } },
        languages: { zh: { step1: { user: '请分析：{{question}} {{answer}}' } } },
        regions: { pt: 'Portugal' },
      },
      'prompts.yaml',
    );
    expect(renderPrompt(set, 'defonly', 'pt', 'P&B', vars)).toEqual([
      { role: 'system', content: 'Be strict (Portuguese).' },
      { role: 'user', content: `Judge Q? / A. for Portugal. ${REPLY_FORMATS.defonly}` },
    ]);
    expect(renderPrompt(set, 'step1', 'zh', 'P&B', vars)).toEqual([{ role: 'user', content: '请分析：Q? A.' }]);
    // Placeholders at either end, side by side, with spaces inside; `$&` and an unknown {{ X }} left as written.
    const edge = promptSetFrom({ templates: { step1: { user: '{{question}}{{ answer }} $& {{ X }} {{question}}' } } }, 'prompts.yaml');
    const odd = { question: 'q$1', answer: '{{answer}}' };
    expect(renderPrompt(edge, 'step1', 'en', 'P&B', odd)).toEqual([{ role: 'user', content: 'q$1{{answer}} $& {{ X }} q$1' }]);
    expect(renderPrompt(edge, 'step1', 'en', 'P&B', odd)).toEqual(renderPrompt(edge, 'step1', 'en', 'P&B', odd));
    // Other languages keep the default step 1.
    expect(renderPrompt(set, 'step1', 'ja', 'P&B', vars)).toEqual(renderPrompt(DEFAULT_PROMPT_SET, 'step1', 'ja', 'P&B', vars));
    // Another set with the same template and another region, in the same process: its own region.
    const angola = promptSetFrom({ templates: { defonly: { user: 'Judge {{question}} / {{answer}} for {{region}}. {{reply_format}}' } }, regions: { pt: 'Angola' } }, 'other.yaml');
    expect(renderPrompt(angola, 'defonly', 'pt', 'P&B', vars)).toEqual([{ role: 'user', content: `Judge Q? / A. for Angola. ${REPLY_FORMATS.defonly}` }]);
    expect(renderPrompt(set, 'defonly', 'pt', 'P&B', vars)[1]?.content).toBe(`Judge Q? / A. for Portugal. ${REPLY_FORMATS.defonly}`);
  });

  it('lists every problem at once, naming the file and the path', () => {
    const err = (() => {
      try {
        promptSetFrom(
          {
            templates: {
              'step4.X': { user: '{{question}} {{answer}}' },
              defonly: { user: '{{question}} {{nature}} {{answer}}' },
              step1: { user: 'No pair here.' },
            },
            languages: { xx: {} },
            regions: { kl: 'Qo’noS' },
          },
          'prompts.yaml',
        );
      } catch (e) {
        return e;
      }
      return undefined;
    })() as CampaignFileError;
    expect(err).toBeInstanceOf(CampaignFileError);
    expect(err.issues).toEqual([
      { file: 'prompts.yaml', path: 'templates.step4.X', message: expect.stringMatching(/^unknown prompt id "step4.X"; expected one of defonly, step1,/) },
      { file: 'prompts.yaml', path: 'templates.defonly.user', message: expect.stringMatching(/^unknown placeholder \{\{nature\}\}; prompt defonly takes/) },
      { file: 'prompts.yaml', path: 'templates.step1', message: expect.stringMatching(/never inserts \{\{question\}\} and \{\{answer\}\}/) },
      { file: 'prompts.yaml', path: 'languages.xx', message: expect.stringMatching(/^unknown language "xx"/) },
      { file: 'prompts.yaml', path: 'regions.kl', message: expect.stringMatching(/^unknown language "kl"/) },
    ]);
  });

  it('rejects unknown keys and an empty user message through the schema', () => {
    expect(() => promptSetFrom({ template: {} }, 'p.yaml')).toThrow(/p\.yaml: unknown key\(s\) "template"; expected templates, languages, regions/);
    expect(() => promptSetFrom({ templates: { defonly: { usr: 'x' } } }, 'p.yaml')).toThrow(/templates\.defonly: unknown key\(s\) "usr"; expected system, user/);
    expect(() => promptSetFrom({ templates: { defonly: { user: ' ' } } }, 'p.yaml')).toThrow(/templates\.defonly\.user: the user message is empty/);
  });

  it('reads a YAML file, and names a missing or broken one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'xvalue-prompts-'));
    const good = join(dir, 'prompts.yaml');
    await writeFile(good, 'regions:\n  es: Mexico\n');
    expect((await loadPromptSet(good)).contexts.es.region).toBe('Mexico');
    expect(await loadPromptSet(undefined)).toBe(DEFAULT_PROMPT_SET);
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'templates: [unclosed\n');
    await expect(loadPromptSet(bad)).rejects.toThrow(/bad\.yaml: line 2, column 1: invalid YAML/);
    await expect(loadPromptSet(join(dir, 'absent.yaml'))).rejects.toThrow(/absent\.yaml: no such prompts file; check the path/);
  });

  it('accepts the example override file', async () => {
    const set = await loadPromptSet(join(import.meta.dirname, '../../../examples/xvalue/prompts-override.yaml'));
    expect(set.templates.defonly).not.toEqual(DEFAULT_TEMPLATES.defonly);
  });
});
