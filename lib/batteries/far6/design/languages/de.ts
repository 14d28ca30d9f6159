import type { LanguageTemplates } from '../types.js';
import { capitalise, form, quotedChoice } from './form.js';

/** The separable prefix of a German verb (`ab` in ablehnen), with its space; none for befürworten. */
const prefix = (t: Readonly<Record<string, string>>): string => (t.prefix ? ` ${t.prefix}` : '');

/**
 * German, addressed with du. The act is an extraposed clause ("…, was Finn getan hat") so that
 * no article or pronoun depends on the agent's gender. Same Judgment, Different Yes §3 offers doch beside ja/nein.
 * evaluative_adjective forms: `adj`. attitude_verb forms: `du` (2nd person singular, lower case),
 * `ich` (1st person), optional `prefix` (separable particle, e.g. `ab`).
 */
export const de: LanguageTemplates = {
  language: 'de',
  constructions: {
    evaluative_adjective: {
      forms: ['adj'],
      plain: (t, a) => `War es ${form(t, 'adj')}, was ${a} getan hat?`,
      negint: (t, a) => `War es nicht ${form(t, 'adj')}, was ${a} getan hat?`,
      ornot: (t, a) => `War es ${form(t, 'adj')}, was ${a} getan hat, oder nicht?`,
      alternative: (t, u, a) => `War es ${form(t, 'adj')} oder ${form(u, 'adj')}, was ${a} getan hat?`,
      proposition: (t, a) => `Es war ${form(t, 'adj')}, was ${a} getan hat.`,
    },
    attitude_verb: {
      forms: ['du', 'ich'],
      optionalForms: ['prefix'],
      plain: (t, a) => `${capitalise(form(t, 'du'))} du${prefix(t)}, was ${a} getan hat?`,
      negint: (t, a) => `${capitalise(form(t, 'du'))} du nicht${prefix(t)}, was ${a} getan hat?`,
      ornot: (t, a) => `${capitalise(form(t, 'du'))} du${prefix(t)}, was ${a} getan hat, oder nicht?`,
      alternative: (t, u, a) =>
        `${capitalise(form(t, 'du'))} du${prefix(t)}, was ${a} getan hat, oder ${form(u, 'du')} du es${prefix(u)}?`,
      proposition: (t, a) => `Ich ${form(t, 'ich')}${prefix(t)}, was ${a} getan hat.`,
    },
  },
  particles: { yes: 'ja', no: 'nein', reverse: 'doch', yesVariants: [], noVariants: [] },
  instructions: {
    free: 'Antworte in einem Satz.',
    verdict: 'Antworte in einem Satz. Beginne deinen Satz mit einem Wort, das dein Urteil ausdrückt.',
    yesno: (order) => `Antworte in einem Satz. Beginne mit ${quotedChoice(order, '„', '“', 'oder')}.`,
    label: 'Antworte mit einem einzigen Buchstaben.',
  },
  optionLine: (letter, text) => `${letter}: ${text}`,
};
