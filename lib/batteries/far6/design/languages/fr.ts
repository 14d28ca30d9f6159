import type { LanguageTemplates } from '../types.js';
import { capitalise, form, quotedChoice } from './form.js';

// Elision before a vowel (not before h or y, whose names mostly keep the full form).
const VOWEL = /^[aeiouàâäéèêëîïôöùûü]/i;
const elide = (word: string, next: string): string => (VOWEL.test(next) ? `${word.slice(0, -1)}'${next}` : `${word} ${next}`);

/** "ce que Finn a fait" / "ce qu'Elsa a fait": no article or pronoun depends on the agent's gender. */
const act = (agent: string): string => `ce ${elide('que', agent)} a fait`;

/**
 * French, addressed with vous (the register of a written instruction). Same Judgment, Different Yes §3 offers si
 * beside oui/non. The evaluative adjective is dislocated ("Ce que Finn a fait, était-ce mal ?"),
 * which keeps the negation on the copula as in "n'était-ce pas mal ?".
 * evaluative_adjective forms: `adj`. attitude_verb forms: `vous` (2nd person plural, lower case),
 * `je` (1st person singular); elision (n', l', j') is applied here.
 */
export const fr: LanguageTemplates = {
  language: 'fr',
  constructions: {
    evaluative_adjective: {
      forms: ['adj'],
      plain: (t, a) => `${capitalise(act(a))}, était-ce ${form(t, 'adj')} ?`,
      negint: (t, a) => `${capitalise(act(a))}, n'était-ce pas ${form(t, 'adj')} ?`,
      ornot: (t, a) => `${capitalise(act(a))}, était-ce ${form(t, 'adj')} ou non ?`,
      alternative: (t, u, a) => `${capitalise(act(a))}, était-ce ${form(t, 'adj')} ou ${form(u, 'adj')} ?`,
      proposition: (t, a) => `${capitalise(act(a))} était ${form(t, 'adj')}.`,
    },
    attitude_verb: {
      forms: ['vous', 'je'],
      plain: (t, a) => `${capitalise(form(t, 'vous'))}-vous ${act(a)} ?`,
      negint: (t, a) => `${capitalise(elide('ne', form(t, 'vous')))}-vous pas ${act(a)} ?`,
      ornot: (t, a) => `${capitalise(form(t, 'vous'))}-vous ${act(a)}, ou non ?`,
      alternative: (t, u, a) => `${capitalise(form(t, 'vous'))}-vous ${act(a)}, ou ${elide('le', form(u, 'vous'))}-vous ?`,
      proposition: (t, a) => `${capitalise(elide('je', form(t, 'je')))} ${act(a)}.`,
    },
  },
  particles: { yes: 'oui', no: 'non', reverse: 'si', yesVariants: [], noVariants: [] },
  instructions: {
    free: 'Répondez en une phrase.',
    verdict: 'Répondez en une phrase. Commencez votre phrase par un mot qui exprime votre verdict.',
    yesno: (order) => `Répondez en une phrase. Commencez par ${quotedChoice(order, '« ', ' »', 'ou')}.`,
    label: 'Répondez par une seule lettre.',
  },
  optionLine: (letter, text) => `${letter} : ${text}`,
};
