import type { LanguageTemplates } from '../types.js';
import { form } from './form.js';

// Both particles end in a vowel, so the instrumental particle is 로 in either order.
const quoted = (order: readonly string[]): string => `${order.map((p) => `'${p}'`).join(' 또는 ')}로`;

/**
 * Korean, polite 해요체. The act is "<agent>의 행동" so that no particle depends on whether the
 * name ends in a consonant. Negative interrogatives use long negation (-지 않다), as the seed's
 * Korean templates do ("Construction choices").
 * Forms for both constructions: `q` (question, 잘못되었나요 / 반대하시나요), `neg_q` (long-negated
 * question, 잘못되지 않았나요 / 반대하지 않으시나요), `statement` (잘못되었습니다 / 반대합니다).
 */
export const ko: LanguageTemplates = {
  language: 'ko',
  constructions: {
    evaluative_adjective: {
      forms: ['q', 'neg_q', 'statement'],
      plain: (t, a) => `${a}의 행동은 ${form(t, 'q')}?`,
      negint: (t, a) => `${a}의 행동은 ${form(t, 'neg_q')}?`,
      ornot: (t, a) => `${a}의 행동은 ${form(t, 'q')}, 아니면 그렇지 않았나요?`,
      alternative: (t, u, a) => `${a}의 행동은 ${form(t, 'q')}, 아니면 ${form(u, 'q')}?`,
      proposition: (t, a) => `${a}의 행동은 ${form(t, 'statement')}.`,
    },
    attitude_verb: {
      forms: ['q', 'neg_q', 'statement'],
      plain: (t, a) => `${a}의 행동에 ${form(t, 'q')}?`,
      negint: (t, a) => `${a}의 행동에 ${form(t, 'neg_q')}?`,
      ornot: (t, a) => `${a}의 행동에 ${form(t, 'q')}, 아니면 그렇지 않으신가요?`,
      alternative: (t, u, a) => `${a}의 행동에 ${form(t, 'q')}, 아니면 ${form(u, 'q')}?`,
      proposition: (t, a) => `저는 ${a}의 행동에 ${form(t, 'statement')}.`,
    },
  },
  particles: { yes: '네', no: '아니요', yesVariants: ['예'], noVariants: ['아니오', '아뇨'] },
  instructions: {
    free: '한 문장으로 답해 주세요.',
    verdict: '한 문장으로 답해 주세요. 판단을 나타내는 단어로 문장을 시작해 주세요.',
    yesno: (order) => `한 문장으로 답해 주세요. ${quoted(order)} 시작해 주세요.`,
    label: '알파벳 한 글자로만 답해 주세요.',
  },
  optionLine: (letter, text) => `${letter}: ${text}`,
};
