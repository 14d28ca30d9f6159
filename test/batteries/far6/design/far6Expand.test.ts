import { describe, expect, it } from 'vitest';
import { stableId } from '../../../../lib/core/hash.js';
import {
  Far6DesignError,
  expandFar6,
  far6ItemsPerStory,
  far6PromptsPerStory,
  loadConceptPairs,
  templatesFor,
} from '../../../../lib/batteries/far6/design/index.js';
import type { ConceptPair, ExpandFar6Args, Far6Design } from '../../../../lib/batteries/far6/design/index.js';
import type { GenerationSettings } from '../../../../lib/core/types.js';
import { ANSWER_CONSTRAINTS, LANGUAGES, QUESTION_FORMS } from '../../../../lib/batteries/far6/types.js';
import type { Far6Item, Far6Story, Language } from '../../../../lib/batteries/far6/types.js';

const PAIRS = loadConceptPairs('examples/far6/concept-pairs.yaml', [...LANGUAGES]);

// Two small stories: one rendered in every language, one without Korean and French (Same Judgment, Different Yes:
// Korean and French cover fewer stories).
const STORIES: Far6Story[] = [
  {
    id: 'tip-jar',
    group: 'violation',
    renderings: {
      en: { text: 'Finn took money from the tip jar at the café where he works.', agent: 'Finn' },
      zh: { text: '芬恩从他工作的咖啡馆的小费罐里拿了钱。', agent: '芬恩' },
      de: { text: 'Finn hat Geld aus der Trinkgeldkasse des Cafés genommen, in dem er arbeitet.', agent: 'Finn' },
      ja: { text: 'フィンは働いているカフェのチップ入れからお金を取った。', agent: 'フィン' },
      ko: { text: '핀은 자신이 일하는 카페의 팁 통에서 돈을 꺼내 갔다.', agent: '핀' },
      fr: { text: 'Elsa a pris de l’argent dans le pot à pourboires du café où elle travaille.', agent: 'Elsa' },
    },
  },
  {
    id: 'late-return',
    group: 'acceptable',
    renderings: {
      en: { text: 'Mara returned a library book one day late because she was ill.', agent: 'Mara' },
      zh: { text: '玛拉因为生病，晚了一天才还图书馆的书。', agent: '玛拉' },
      de: { text: 'Mara hat ein Buch einen Tag zu spät in die Bibliothek zurückgebracht, weil sie krank war.', agent: 'Mara' },
      ja: { text: 'マラは病気のため、図書館の本を一日遅れて返した。', agent: 'マラ' },
    },
  },
];

const FULL: Far6Design = {
  languages: [...LANGUAGES],
  forms: [...QUESTION_FORMS],
  constraints: [...ANSWER_CONSTRAINTS],
  repeats: { count: 1, fraction: 0 },
};

const SETTINGS: GenerationSettings = { temperature: 1, max_tokens: 200 };

function args(over: Partial<ExpandFar6Args> = {}): ExpandFar6Args {
  return {
    campaign: 'far6-test',
    seed: 20261028,
    phase: 'generate',
    model: { id: 'alpha', settings: SETTINGS },
    design: FULL,
    stories: STORIES,
    pairs: PAIRS,
    ...over,
  };
}

const expand = (over: Partial<ExpandFar6Args> = {}): Far6Item[] => [...expandFar6(args(over))];

/** The model-independent definition of a prompt: its language and factors without the repeat. */
function definition(item: Far6Item): string {
  const { repeat: _repeat, ...rest } = item.factors;
  return JSON.stringify([item.language, rest]);
}

/** The question line of an item: after the story, before the instruction and options. */
const question = (item: Far6Item): string => item.messages[0]!.content.split('\n\n')[1]!.split('\n')[0]!;

describe('expandFar6 — the factorial', () => {
  const items = expand();

  it('yields one item per language × rendered story × pair × runnable cell × keying × order', () => {
    // prepare: 6 rendered (language, story) for tip-jar, 4 for late-return, 2 pairs per language
    const pairsPerLanguage = 2;
    const renderedStories = 6 + 4;
    // assess: per story and pair, 4 forms × 4 constraints minus alternative × yesno, with
    // 2 keyings and 2 orders for yesno and label: (3 × (1 + 1 + 2 + 2) + (1 + 1 + 2)) × 2 = 44
    expect(far6PromptsPerStory(FULL, 1)).toBe(44);
    expect(items).toHaveLength(renderedStories * far6PromptsPerStory(FULL, pairsPerLanguage));
    expect(items).toHaveLength(renderedStories * 88);
    expect(far6ItemsPerStory(FULL, pairsPerLanguage)).toBe(88);
  });

  it('skips alternative × yesno and runs every other cell', () => {
    const cells = new Set(items.map((i) => `${i.factors.form}×${i.factors.constraint}`));
    expect(cells.has('alternative×yesno')).toBe(false);
    expect(cells.size).toBe(15);
  });

  it('crosses both keyings with both option orders where the constraint has two', () => {
    const groups = new Map<string, Set<string>>();
    for (const i of items) {
      const f = i.factors;
      const key = `${i.language}|${f.story}|${f.concept_pair}|${f.form}|${f.constraint}`;
      if (!groups.has(key)) groups.set(key, new Set());
      groups.get(key)!.add(`${f.named}/${f.option_order}`);
    }
    for (const [key, seen] of groups) {
      const constraint = key.split('|')[4];
      const expected = constraint === 'yesno' || constraint === 'label' ? ['P/0', 'P/1', 'notP/0', 'notP/1'] : ['P/0', 'notP/0'];
      expect([...seen].sort(), key).toEqual(expected.sort());
    }
  });

  it('skips a story in a language it has no rendering in', () => {
    const ko = items.filter((i) => i.language === 'ko');
    expect(new Set(ko.map((i) => i.factors.story))).toEqual(new Set(['tip-jar']));
    expect(items.filter((i) => i.factors.story === 'late-return').map((i) => i.language)).not.toContain('fr');
  });

  it('carries the pair construction, story group and one user message per item', () => {
    for (const i of items) {
      const pair = PAIRS.find((p) => p.id === i.factors.concept_pair)!;
      expect(pair.language).toBe(i.language);
      expect(i.factors.construction).toBe(pair.construction);
      expect(i.factors.story_group).toBe(STORIES.find((s) => s.id === i.factors.story)!.group);
      expect(i.messages).toHaveLength(1);
      expect(i.messages[0]!.role).toBe('user');
      expect(i.messages[0]!.content.startsWith(STORIES.find((s) => s.id === i.factors.story)!.renderings[i.language as Language]!.text)).toBe(true);
      expect(i.settings).toEqual(SETTINGS);
      expect(i.battery).toBe('far6');
      expect(i.model).toBe('alpha');
    }
  });

  it('expands only the design languages, forms and constraints', () => {
    const small = expand({ design: { ...FULL, languages: ['de'], forms: ['negint'], constraints: ['yesno'] } });
    expect(small).toHaveLength(2 * 2 * 2 * 2); // stories × pairs × keyings × orders
    expect(new Set(small.map((i) => `${i.language}${i.factors.form}${i.factors.constraint}`))).toEqual(new Set(['denegintyesno']));
  });
});

describe('expandFar6 — wordings', () => {
  const items = expand();
  const find = (language: Language, pair: string, form: string, named: string, constraint = 'free', order = 0) =>
    items.find(
      (i) =>
        i.language === language &&
        i.factors.story === 'tip-jar' &&
        i.factors.concept_pair === pair &&
        i.factors.form === form &&
        i.factors.named === named &&
        i.factors.constraint === constraint &&
        i.factors.option_order === order,
    )!;

  it('asks the seed’s wordings and states full propositions', () => {
    expect(question(find('en', 'en.wrong-right', 'plain', 'P'))).toBe('Was what Finn did wrong?');
    expect(question(find('en', 'en.wrong-right', 'negint', 'P'))).toBe("Wasn't what Finn did wrong?");
    expect(question(find('en', 'en.wrong-right', 'alternative', 'P'))).toBe('Was what Finn did wrong or right?');
    expect(question(find('en', 'en.wrong-right', 'alternative', 'notP'))).toBe('Was what Finn did right or wrong?');
    expect(question(find('en', 'en.wrong-right', 'ornot', 'notP'))).toBe('Was what Finn did right, or not?');
    expect(question(find('en', 'en.oppose-support', 'negint', 'P'))).toBe('Do you not oppose what Finn did?');
    expect(question(find('ja', 'ja.oppose-support', 'negint', 'P'))).toBe('フィンがしたことに反対しないんですか？');
    expect(question(find('de', 'de.reject-endorse', 'negint', 'P'))).toBe('Lehnst du nicht ab, was Finn getan hat?');
    expect(question(find('fr', 'fr.disapprove-approve', 'negint', 'notP'))).toBe("N'approuvez-vous pas ce qu'Elsa a fait ?");
    expect(find('en', 'en.wrong-right', 'plain', 'P').extras.propositions).toEqual({ P: 'What Finn did was wrong.', notP: 'What Finn did was right.' });
    expect(find('en', 'en.oppose-support', 'plain', 'P').extras.propositions).toEqual({ P: 'I oppose what Finn did.', notP: 'I support what Finn did.' });
  });

  it('names a different term under each keying, in every language and form', () => {
    for (const pair of PAIRS) {
      for (const form of QUESTION_FORMS) {
        const p = question(find(pair.language, pair.id, form, 'P'));
        const np = question(find(pair.language, pair.id, form, 'notP'));
        expect(p, `${pair.id} ${form}`).not.toBe(np);
      }
      const props = find(pair.language, pair.id, 'plain', 'P').extras.propositions;
      expect(props.P).not.toBe(props.notP);
    }
  });

  it('writes each language in its own script', () => {
    const han = /\p{Script=Han}/u;
    const kana = /[\p{Script=Hiragana}\p{Script=Katakana}]/u;
    const hangul = /\p{Script=Hangul}/u;
    const latin = /\p{Script=Latin}/u;
    for (const i of items) {
      // the templated part: everything after the story
      const own = i.messages[0]!.content.split('\n\n').slice(1).join('\n');
      const label = `${i.language} ${i.factors.concept_pair} ${i.factors.form} ${i.factors.constraint}`;
      if (i.language === 'zh') {
        expect(han.test(own), label).toBe(true);
        expect(kana.test(own) || hangul.test(own), label).toBe(false);
      } else if (i.language === 'ja') {
        expect(kana.test(own), label).toBe(true);
        expect(hangul.test(own), label).toBe(false);
      } else if (i.language === 'ko') {
        expect(hangul.test(own), label).toBe(true);
        expect(han.test(own) || kana.test(own), label).toBe(false);
      } else {
        expect(latin.test(own), label).toBe(true);
        expect(han.test(own) || kana.test(own) || hangul.test(own), label).toBe(false);
      }
    }
  });

  it('lists the particles in the order the reading map records', () => {
    for (const i of items.filter((x) => x.factors.constraint === 'yesno')) {
      const order = i.extras.reading_map.particles!.order;
      const text = i.messages[0]!.content;
      const positions = order.map((p) => text.lastIndexOf(p));
      expect(positions.every((p) => p > 0)).toBe(true);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
      const { yes, no } = templatesFor(i.language as Language).particles;
      expect(order.slice(0, 2)).toEqual(i.factors.option_order === 0 ? [yes, no] : [no, yes]);
    }
    const de = items.find((i) => i.language === 'de' && i.factors.constraint === 'yesno')!;
    expect(de.extras.reading_map.particles!.reverse).toBe('doch');
    const fr = items.find((i) => i.language === 'fr' && i.factors.constraint === 'yesno')!;
    expect(fr.extras.reading_map.particles!.reverse).toBe('si');
  });
});

describe('expandFar6 — reading maps', () => {
  const items = expand();

  it('reads yes (and doch/si) as the named term and no as its opposite, also after a negative question', () => {
    const particles = items.filter((i) => i.factors.constraint === 'yesno');
    expect(particles.some((i) => i.factors.form === 'negint')).toBe(true);
    for (const i of particles) {
      const m = i.extras.reading_map;
      const other = i.factors.named === 'P' ? 'notP' : 'P';
      expect(m.kind).toBe('particle');
      expect(m.tokens[m.particles!.yes.toLowerCase()]).toBe(i.factors.named);
      expect(m.tokens[m.particles!.no.toLowerCase()]).toBe(other);
      if (m.particles!.reverse) expect(m.tokens[m.particles!.reverse]).toBe(i.factors.named);
      for (const v of templatesFor(i.language as Language).particles.yesVariants) expect(m.tokens[v]).toBe(i.factors.named);
      for (const v of templatesFor(i.language as Language).particles.noVariants) expect(m.tokens[v]).toBe(other);
    }
    const zh = particles.find((i) => i.language === 'zh' && i.factors.named === 'P')!;
    expect(zh.extras.reading_map.tokens).toMatchObject({ 是: 'P', 是的: 'P', 不: 'notP', 不是: 'notP' });
  });

  it('maps each letter to the proposition printed beside it', () => {
    for (const i of items.filter((x) => x.factors.constraint === 'label')) {
      const m = i.extras.reading_map;
      expect(m.kind).toBe('letter');
      const lines = i.messages[0]!.content.split('\n');
      const tpl = templatesFor(i.language as Language);
      const [first, second] = m.letters!.map(({ letter, proposition }) => {
        expect(m.tokens[letter.toLowerCase()]).toBe(proposition);
        return lines.indexOf(tpl.optionLine(letter, i.extras.propositions[proposition]));
      });
      // the letters appear on consecutive lines, in the recorded order
      expect(first).toBeGreaterThan(0);
      expect(second).toBe(first! + 1);
      expect(m.letters!.map((l) => l.proposition)).toEqual(i.factors.option_order === 0 ? ['P', 'notP'] : ['notP', 'P']);
    }
  });

  it('reads verdict words as their side and leaves free sentences to the judge', () => {
    for (const i of items) {
      const m = i.extras.reading_map;
      if (i.factors.constraint === 'verdict') {
        const pair = PAIRS.find((p) => p.id === i.factors.concept_pair)!;
        expect(m.kind).toBe('verdict');
        expect(m.verdicts).toEqual({ P: pair.reference.verdict, notP: pair.counterpart.verdict });
        expect(m.tokens[pair.reference.verdict.toLowerCase()]).toBe('P');
        expect(m.tokens[pair.counterpart.verdict.toLowerCase()]).toBe('notP');
        for (const f of pair.reference.verdict_forms) expect(m.tokens[f.toLowerCase()]).toBe('P');
      } else if (i.factors.constraint === 'free') {
        expect(m).toEqual({ kind: 'none', tokens: {} });
      }
    }
    const fr = items.find((i) => i.factors.concept_pair === 'fr.disapprove-approve' && i.factors.constraint === 'verdict')!;
    expect(fr.extras.reading_map.tokens["j'approuve"]).toBe('notP');
    expect(fr.extras.reading_map.tokens['j’approuve']).toBe('notP');
  });
});

describe('expandFar6 — identity', () => {
  it('gives item_id = stableId of the request and prompt_key = the same without the repeat', () => {
    const items = expand({ design: { ...FULL, repeats: { count: 2, fraction: 0.5 } } });
    for (const i of items) {
      const identity = {
        campaign: i.campaign,
        phase: i.phase,
        battery: 'far6',
        model: i.model,
        language: i.language,
        factors: i.factors,
        messages: i.messages,
        settings: i.settings,
      };
      expect(i.item_id).toBe(stableId(identity));
      const { repeat: _repeat, ...withoutRepeat } = i.factors;
      expect(i.prompt_key).toBe(stableId({ ...identity, factors: withoutRepeat }));
    }
    expect(new Set(items.map((i) => i.item_id)).size).toBe(items.length);
  });

  it('is identical byte for byte on the same input', () => {
    expect(JSON.stringify(expand())).toBe(JSON.stringify(expand()));
  });

  it('gives the same items with ids hashed on first read (the plan: lazyIds)', () => {
    const design = { ...FULL, repeats: { count: 3, fraction: 0.5 } };
    const eager = expand({ design });
    const lazy = expand({ design, lazyIds: true });
    expect(lazy).toHaveLength(eager.length);
    // Read in another order than expansion: the last repeat's prompt key before the first's id.
    for (let i = lazy.length - 1; i >= 0; i--) expect(lazy[i]!.prompt_key).toBe(eager[i]!.prompt_key);
    const read = (i: Far6Item) => ({ ...i, item_id: i.item_id, prompt_key: i.prompt_key });
    expect(lazy.map(read)).toEqual(eager.map(read));
    expect(new Set(lazy.map((i) => i.item_id)).size).toBe(eager.length);
  });

  it('changes every id when a setting, the model or the campaign changes', () => {
    const base = expand({ design: { ...FULL, languages: ['en'] } });
    for (const over of [
      { model: { id: 'alpha', settings: { ...SETTINGS, temperature: 0.7 } } },
      { model: { id: 'beta', settings: SETTINGS } },
      { campaign: 'other' },
      { phase: 'generate-2' },
    ]) {
      const changed = expand({ ...over, design: { ...FULL, languages: ['en'] } });
      expect(changed).toHaveLength(base.length);
      changed.forEach((c, k) => {
        expect(c.item_id).not.toBe(base[k]!.item_id);
        expect(c.prompt_key).not.toBe(base[k]!.prompt_key);
      });
    }
  });
});

describe('expandFar6 — repeats', () => {
  const design: Far6Design = { ...FULL, repeats: { count: 3, fraction: 0.25 } };
  const repeated = (items: Far6Item[]) => new Set(items.filter((i) => i.factors.repeat > 0).map(definition));

  it('gives a seeded subset of prompts count generations sharing one prompt_key', () => {
    const items = expand({ design });
    const prompts = new Map<string, Far6Item[]>();
    for (const i of items) prompts.set(i.prompt_key, [...(prompts.get(i.prompt_key) ?? []), i]);
    const sizes = [...prompts.values()].map((g) => g.length);
    expect(new Set(sizes)).toEqual(new Set([1, 3]));
    for (const group of prompts.values()) {
      expect(group.map((g) => g.factors.repeat)).toEqual([...Array(group.length).keys()]);
      expect(new Set(group.map((g) => g.messages[0]!.content)).size).toBe(1);
    }
    const share = sizes.filter((s) => s === 3).length / prompts.size;
    expect(share).toBeGreaterThan(0.15);
    expect(share).toBeLessThan(0.35);
  });

  it('draws the same subset for every model and another one for another seed', () => {
    const alpha = repeated(expand({ design }));
    const beta = repeated(expand({ design, model: { id: 'beta', settings: { temperature: 0 } } }));
    expect(beta).toEqual(alpha);
    const reseeded = repeated(expand({ design, seed: 7 }));
    expect(reseeded).not.toEqual(alpha);
  });

  it('repeats nothing at fraction 0 and everything at fraction 1, as the estimate says', () => {
    expect(expand({ design: { ...design, repeats: { count: 3, fraction: 0 } } })).toHaveLength(10 * 88);
    expect(expand({ design: { ...design, repeats: { count: 3, fraction: 1 } } })).toHaveLength(10 * 88 * 3);
    expect(far6ItemsPerStory({ ...design, repeats: { count: 3, fraction: 1 } }, 2)).toBe(88 * 3);
    expect(far6ItemsPerStory(design, 2)).toBeCloseTo(88 * 1.5);
  });
});

describe('expandFar6 — inconsistent designs', () => {
  it('refuses a design language without a concept pair', () => {
    const pairs = PAIRS.filter((p) => p.language !== 'ko');
    expect(() => expand({ pairs })).toThrow(Far6DesignError);
    expect(() => expand({ pairs })).toThrow(/no concept pair for language "ko"/);
  });

  it('refuses a pair without the forms its templates need', () => {
    const ja = PAIRS.find((p) => p.id === 'ja.oppose-support')!;
    const broken: ConceptPair = { ...ja, reference: { ...ja.reference, forms: { masu: '反対します' } } };
    expect(() => expand({ pairs: [...PAIRS.filter((p) => p !== ja), broken] })).toThrow(/reference\.forms\.nai/);
  });

  it('refuses a repeated factor level or story id, which would repeat item ids', () => {
    expect(() => expand({ design: { ...FULL, forms: ['plain', 'plain'] } })).toThrow(/design forms: "plain" appears twice/);
    expect(() => expand({ stories: [STORIES[0]!, STORIES[0]!] })).toThrow(/design story ids: "tip-jar" appears twice/);
  });

  it('refuses impossible repeat settings', () => {
    expect(() => expand({ design: { ...FULL, repeats: { count: 0, fraction: 0.1 } } })).toThrow(/repeats\.count/);
    expect(() => expand({ design: { ...FULL, repeats: { count: 3, fraction: 1.5 } } })).toThrow(/repeats\.fraction/);
  });
});
