import type { LanguageTemplates } from '../types.js';
import { form } from './form.js';

/**
 * English (Same Judgment, Different Yes §3 wordings: "Was what Finn did wrong?", "Wasn't what Finn did wrong?",
 * "wrong or right?", "…, or not?"; §7 "Do you not agree / oppose?").
 * evaluative_adjective forms: `adj`. attitude_verb forms: `verb` (base form, also first person).
 */
export const en: LanguageTemplates = {
  language: 'en',
  constructions: {
    evaluative_adjective: {
      forms: ['adj'],
      plain: (t, a) => `Was what ${a} did ${form(t, 'adj')}?`,
      negint: (t, a) => `Wasn't what ${a} did ${form(t, 'adj')}?`,
      ornot: (t, a) => `Was what ${a} did ${form(t, 'adj')}, or not?`,
      alternative: (t, u, a) => `Was what ${a} did ${form(t, 'adj')} or ${form(u, 'adj')}?`,
      proposition: (t, a) => `What ${a} did was ${form(t, 'adj')}.`,
    },
    attitude_verb: {
      forms: ['verb'],
      plain: (t, a) => `Do you ${form(t, 'verb')} what ${a} did?`,
      // The paper's wording (§7), not "Don't you …", whose answers behave differently.
      negint: (t, a) => `Do you not ${form(t, 'verb')} what ${a} did?`,
      ornot: (t, a) => `Do you ${form(t, 'verb')} what ${a} did, or not?`,
      alternative: (t, u, a) => `Do you ${form(t, 'verb')} or ${form(u, 'verb')} what ${a} did?`,
      proposition: (t, a) => `I ${form(t, 'verb')} what ${a} did.`,
    },
  },
  particles: { yes: 'yes', no: 'no', yesVariants: [], noVariants: [] },
  instructions: {
    free: 'Answer in one sentence.',
    verdict: 'Answer in one sentence. Start your sentence with a verdict word.',
    yesno: (order) => `Answer in one sentence. Start with ${order.join(' or ')}.`,
    label: 'Answer with one letter.',
  },
  optionLine: (letter, text) => `${letter}: ${text}`,
};
