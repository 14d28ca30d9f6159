import type { LanguageTemplates } from '../types.js';
import { form } from './form.js';

const quoted = (order: readonly string[]): string => order.map((p) => `「${p}」`).join('か');

/**
 * Japanese, polite register. The negative interrogative of the attitude verb is the paper's
 * 反対しないんですか (§7), a neutral negative question in Kuno's sense ("Construction choices").
 * evaluative_adjective forms: `past` (悪かった), `neg_past` (悪くなかった).
 * attitude_verb forms (a する-verb taking に): `masu` (反対します), `masen` (反対しません),
 * `nai` (反対しない), `desu` (反対です).
 */
export const ja: LanguageTemplates = {
  language: 'ja',
  constructions: {
    evaluative_adjective: {
      forms: ['past', 'neg_past'],
      plain: (t, a) => `${a}がしたことは${form(t, 'past')}ですか？`,
      negint: (t, a) => `${a}がしたことは${form(t, 'neg_past')}ですか？`,
      ornot: (t, a) => `${a}がしたことは${form(t, 'past')}ですか、${form(t, 'neg_past')}ですか？`,
      alternative: (t, u, a) => `${a}がしたことは${form(t, 'past')}ですか、それとも${form(u, 'past')}ですか？`,
      proposition: (t, a) => `${a}がしたことは${form(t, 'past')}です。`,
    },
    attitude_verb: {
      forms: ['masu', 'masen', 'nai', 'desu'],
      plain: (t, a) => `${a}がしたことに${form(t, 'masu')}か？`,
      negint: (t, a) => `${a}がしたことに${form(t, 'nai')}んですか？`,
      ornot: (t, a) => `${a}がしたことに${form(t, 'masu')}か、${form(t, 'masen')}か？`,
      alternative: (t, u, a) => `${a}がしたことに${form(t, 'masu')}か、それとも${form(u, 'masu')}か？`,
      proposition: (t, a) => `私は${a}がしたことに${form(t, 'desu')}。`,
    },
  },
  particles: { yes: 'はい', no: 'いいえ', yesVariants: ['ええ'], noVariants: ['いえ'] },
  instructions: {
    free: '一文で答えてください。',
    verdict: '一文で答えてください。文の最初に、あなたの判断を表す言葉を置いてください。',
    yesno: (order) => `一文で答えてください。文は${quoted(order)}で始めてください。`,
    label: 'アルファベット1文字だけで答えてください。',
  },
  optionLine: (letter, text) => `${letter}：${text}`,
};
