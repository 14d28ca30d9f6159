import { stableId } from '../../../../lib/core/hash.js';
import { PLAIN_YESNO_CELL } from '../../../fixtures/far6/plainYesNoCell.js';
import type { Far6Extras, Far6Factors, Far6Item, Language, Proposition, ReadingMap } from '../../../../lib/batteries/far6/types.js';

const other = (p: Proposition): Proposition => (p === 'P' ? 'notP' : 'P');

/** Particles as the FAR-6 language files list them (lib/design/far6/languages/*.ts). */
export const PARTICLES: Record<Language, { yes: string[]; no: string[] }> = {
  en: { yes: ['yes'], no: ['no'] },
  de: { yes: ['ja', 'doch'], no: ['nein'] },
  fr: { yes: ['oui', 'si'], no: ['non'] },
  ja: { yes: ['はい'], no: ['いいえ'] },
  ko: { yes: ['네'], no: ['아니요'] },
  zh: { yes: ['是'], no: ['不', '不是'] },
};

/** A hand-built particle map: yes (and doch/si) affirm the named term, no its opposite. */
export function particleMap(language: Language, named: Proposition): ReadingMap {
  const { yes, no } = PARTICLES[language];
  const tokens: Record<string, Proposition> = {};
  for (const y of yes) tokens[y] = named;
  for (const n of no) tokens[n] = other(named);
  return {
    kind: 'particle',
    tokens,
    particles: {
      yes: yes[0] ?? '',
      no: no[0] ?? '',
      ...(yes[1] && language !== 'zh' ? { reverse: yes[1] } : {}),
      order: [yes[0] ?? '', no[0] ?? ''],
    },
  };
}

export function letterMap(first: string, second: string, firstSide: Proposition = 'P'): ReadingMap {
  return {
    kind: 'letter',
    tokens: { [first.toLowerCase()]: firstSide, [second.toLowerCase()]: other(firstSide) },
    letters: [
      { letter: first, proposition: firstSide },
      { letter: second, proposition: other(firstSide) },
    ],
  };
}

export function verdictMap(P: readonly string[], notP: readonly string[]): ReadingMap {
  const tokens: Record<string, Proposition> = {};
  for (const t of P) tokens[t] = 'P';
  for (const t of notP) tokens[t] = 'notP';
  return { kind: 'verdict', tokens, verdicts: { P: P[0] ?? '', notP: notP[0] ?? '' } };
}

/** Verdict maps built like examples/far6/concept-pairs.yaml (verdict + verdict_forms). */
export const VERDICT_MAPS = {
  en: verdictMap(['wrong'], ['right']),
  enVerb: verdictMap(['oppose', 'i oppose', 'opposed', 'opposing'], ['support', 'i support', 'supported', 'supporting']),
  de: verdictMap(['falsch'], ['richtig']),
  deVerb: verdictMap(
    ['ablehnen', 'ablehnung', 'ablehnend', 'abgelehnt', 'ich lehne'],
    ['befürworten', 'befürwortung', 'befürwortend', 'befürwortet', 'ich befürworte'],
  ),
  fr: verdictMap(['mal'], ['bien']),
  frVerb: verdictMap(
    ['désapprouve', 'je désapprouve', 'désapprouver', 'désapprobation'],
    ['approuve', "j'approuve", 'approuver', 'approbation'],
  ),
  zh: verdictMap(['错误', '错的', '错'], ['正确', '正确的']),
  zhVerb: verdictMap(['反对', '我反对'], ['支持', '我支持']),
  ja: verdictMap(['悪い', '悪かった', '悪いです'], ['良い', '良かった', 'よい', 'よかった', '良いです']),
  jaVerb: verdictMap(['反対', '反対です', '反対します'], ['賛成', '賛成です', '賛成します']),
  ko: verdictMap(['잘못', '잘못되었습니다', '잘못됐습니다', '잘못되었다', '잘못됐다'], ['옳다', '옳았습니다', '옳습니다', '옳았다', '옳은']),
  koVerb: verdictMap(['반대', '반대합니다', '저는 반대합니다'], ['찬성', '찬성합니다', '저는 찬성합니다']),
} as const;

const FACTORS: Far6Factors = {
  story: 'finn-lie',
  story_group: 'violation',
  concept_pair: 'en.wrong-right',
  ...PLAIN_YESNO_CELL,
};

/** A generate-phase item; `prompt_key` and `item_id` derive from the overrides like the real ones. */
export function makeItem(
  over: Partial<Omit<Far6Item, 'factors' | 'extras'>> & { factors?: Partial<Far6Factors>; reading_map?: ReadingMap; propositions?: Far6Extras['propositions'] } = {},
): Far6Item {
  const { reading_map, propositions, ...given } = over;
  const factors = { ...FACTORS, ...over.factors };
  const messages = over.messages ?? [
    {
      role: 'user' as const,
      content:
        'Finn promised to return his friend’s bike but sold it instead.\n\nWas what Finn did wrong? Answer in one sentence. Start with yes or no.',
    },
  ];
  const { repeat, ...rest } = factors;
  const prompt_key = over.prompt_key ?? stableId({ model: over.model ?? 'alpha', factors: rest, messages });
  return {
    campaign: 'test',
    phase: 'generate',
    battery: 'far6',
    model: 'alpha',
    language: 'en',
    settings: { temperature: 0 },
    extras: {
      reading_map: reading_map ?? particleMap('en', factors.named),
      propositions: propositions ?? { P: 'What Finn did was wrong.', notP: 'What Finn did was right.' },
    },
    ...given,
    factors,
    messages,
    prompt_key,
    item_id: over.item_id ?? stableId({ prompt_key, repeat }),
  };
}
