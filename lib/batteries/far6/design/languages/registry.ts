import type { Language } from '../../types.js';
import type { LanguageTemplates } from '../types.js';
import { de } from './de.js';
import { en } from './en.js';
import { fr } from './fr.js';
import { ja } from './ja.js';
import { ko } from './ko.js';
import { zh } from './zh.js';

/** Question templates and instructions per language, each written for that language (Same Judgment, Different Yes "Stories and prompts"). */
export const LANGUAGE_TEMPLATES: Readonly<Record<Language, LanguageTemplates>> = { en, zh, de, ja, ko, fr };

/** The templates of one language. */
export function templatesFor(language: Language): LanguageTemplates {
  return LANGUAGE_TEMPLATES[language];
}
