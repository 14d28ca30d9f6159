export { en } from './en.js';
export { de } from './de.js';
export { fr } from './fr.js';
export { ja } from './ja.js';
export { ko } from './ko.js';
export { zh } from './zh.js';
export { LANGUAGE_TEMPLATES, templatesFor } from './registry.js';
