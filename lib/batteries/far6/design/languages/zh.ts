import type { LanguageTemplates } from '../types.js';
import { form } from './form.js';

const quoted = (order: readonly string[]): string => order.map((p) => `“${p}”`).join('或');

/**
 * Mandarin (simplified). The act is "<agent>这样做" (Finn doing this). The or-not form uses the
 * A-not-A frame (是不是 / 反不反对) that Lü (1985) describes, the natural Mandarin "…, or not?"
 * ("Construction choices"). Particles 是/不, with 是的/不是 read the same way.
 * evaluative_adjective forms: `adj` (错误). attitude_verb forms: `verb` (反对), `anota` (反不反对).
 */
export const zh: LanguageTemplates = {
  language: 'zh',
  constructions: {
    evaluative_adjective: {
      forms: ['adj'],
      plain: (t, a) => `${a}这样做是${form(t, 'adj')}的吗？`,
      negint: (t, a) => `${a}这样做不是${form(t, 'adj')}的吗？`,
      ornot: (t, a) => `${a}这样做是不是${form(t, 'adj')}的？`,
      alternative: (t, u, a) => `${a}这样做是${form(t, 'adj')}的还是${form(u, 'adj')}的？`,
      proposition: (t, a) => `${a}这样做是${form(t, 'adj')}的。`,
    },
    attitude_verb: {
      forms: ['verb', 'anota'],
      plain: (t, a) => `你${form(t, 'verb')}${a}这样做吗？`,
      negint: (t, a) => `你不${form(t, 'verb')}${a}这样做吗？`,
      ornot: (t, a) => `你${form(t, 'anota')}${a}这样做？`,
      alternative: (t, u, a) => `你${form(t, 'verb')}还是${form(u, 'verb')}${a}这样做？`,
      proposition: (t, a) => `我${form(t, 'verb')}${a}这样做。`,
    },
  },
  particles: { yes: '是', no: '不', yesVariants: ['是的'], noVariants: ['不是'] },
  instructions: {
    free: '请用一句话回答。',
    verdict: '请用一句话回答，并以一个表明你判断的词开头。',
    yesno: (order) => `请用一句话回答，并以${quoted(order)}开头。`,
    label: '请只用一个字母回答。',
  },
  optionLine: (letter, text) => `${letter}：${text}`,
};
