import type { AnswerConstraint, Far6Item, Language, Proposition, QuestionForm, ReadingMap, StoryGroup } from '../../../../lib/batteries/far6/types.js';

/** Hand-built surface forms per language, shaped like the FAR-6 battery's (Same Judgment, Different Yes "Answer instructions"). */
export const SURFACES: Record<
  Language,
  {
    P: string;
    notP: string;
    yes: string;
    no: string;
    reverse?: string;
    verdicts: { P: string; notP: string };
    letters: [string, string];
  }
> = {
  en: { P: 'What Finn did was wrong.', notP: 'What Finn did was not wrong.', yes: 'yes', no: 'no', verdicts: { P: 'wrong', notP: 'acceptable' }, letters: ['A', 'B'] },
  de: { P: 'Was Finn getan hat, war falsch.', notP: 'Was Finn getan hat, war nicht falsch.', yes: 'ja', no: 'nein', reverse: 'doch', verdicts: { P: 'falsch', notP: 'vertretbar' }, letters: ['Z', 'W'] },
  fr: { P: "Ce que Finn a fait était mal.", notP: "Ce que Finn a fait n'était pas mal.", yes: 'oui', no: 'non', reverse: 'si', verdicts: { P: 'mal', notP: 'acceptable' }, letters: ['A', 'B'] },
  zh: { P: '芬恩的做法是错的。', notP: '芬恩的做法没有错。', yes: '是', no: '不是', verdicts: { P: '错', notP: '没错' }, letters: ['A', 'B'] },
  ja: { P: 'フィンのしたことは間違っている。', notP: 'フィンのしたことは間違っていない。', yes: 'はい', no: 'いいえ', verdicts: { P: '間違い', notP: '問題ない' }, letters: ['X', 'Y'] },
  ko: { P: '핀이 한 일은 잘못이다.', notP: '핀이 한 일은 잘못이 아니다.', yes: '네', no: '아니요', verdicts: { P: '잘못', notP: '괜찮음' }, letters: ['A', 'B'] },
};

export interface ItemSpec {
  language?: Language;
  form?: QuestionForm;
  constraint?: AnswerConstraint;
  named?: Proposition;
  option_order?: number;
  story?: string;
  story_group?: StoryGroup;
  repeat?: number;
  model?: string;
}

function other(p: Proposition): Proposition {
  return p === 'P' ? 'notP' : 'P';
}

function readingMap(language: Language, constraint: AnswerConstraint, named: Proposition, order: number): ReadingMap {
  const s = SURFACES[language];
  switch (constraint) {
    case 'yesno': {
      const tokens: Record<string, Proposition> = { [s.yes]: named, [s.no]: other(named) };
      if (s.reverse) tokens[s.reverse] = named;
      const base = [s.yes, s.no, ...(s.reverse ? [s.reverse] : [])];
      return {
        kind: 'particle',
        tokens,
        particles: { yes: s.yes, no: s.no, ...(s.reverse ? { reverse: s.reverse } : {}), order: order === 0 ? base : [...base].reverse() },
      };
    }
    case 'verdict':
      return { kind: 'verdict', tokens: { [s.verdicts.P.toLowerCase()]: 'P', [s.verdicts.notP.toLowerCase()]: 'notP' }, verdicts: s.verdicts };
    case 'label': {
      const props: Proposition[] = order === 0 ? ['P', 'notP'] : ['notP', 'P'];
      const letters = props.map((proposition, i) => ({ letter: s.letters[i] as string, proposition }));
      return { kind: 'letter', tokens: Object.fromEntries(letters.map((l) => [l.letter.toLowerCase(), l.proposition])), letters };
    }
    default:
      return { kind: 'none', tokens: {} };
  }
}

/** A Far6Item built by hand; item_id encodes every factor, so distinct specs give distinct ids. */
export function makeItem(spec: ItemSpec = {}): Far6Item {
  const language = spec.language ?? 'en';
  const form = spec.form ?? 'plain';
  const constraint = spec.constraint ?? 'free';
  const named = spec.named ?? 'P';
  const order = spec.option_order ?? 0;
  const story = spec.story ?? 's01';
  const group = spec.story_group ?? 'contested';
  const repeat = spec.repeat ?? 0;
  const model = spec.model ?? 'alpha';
  const s = SURFACES[language];
  const key = [model, language, form, constraint, named, order, story, group].join('|');
  return {
    item_id: `${key}|${repeat}`,
    prompt_key: key,
    campaign: 'test',
    phase: 'generate',
    battery: 'far6',
    model,
    language,
    factors: { story, story_group: group, concept_pair: 'wrong_right', form, constraint, named, option_order: order, repeat, construction: 'evaluative_adjective' },
    messages: [
      { role: 'system', content: 'Answer the question about the story.' },
      { role: 'user', content: `Story ${story}. Question in ${language} (${form}, ${constraint}).` },
    ],
    settings: { temperature: 1, max_tokens: 200 },
    extras: { reading_map: readingMap(language, constraint, named, order), propositions: { P: s.P, notP: s.notP } },
  };
}

/** Which proposition a simulated reply states: its sentences are the item's, verbatim. */
export function statedSide(item: Far6Item, text: string): Proposition | 'both' | 'none' {
  const strip = (t: string) => t.replace(/[.。]$/u, '');
  const hasP = text.includes(strip(item.extras.propositions.P));
  const hasNotP = text.includes(strip(item.extras.propositions.notP));
  return hasP && hasNotP ? 'both' : hasP ? 'P' : hasNotP ? 'notP' : 'none';
}
