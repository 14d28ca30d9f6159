export { GENERATE_TEMPLATES, VERIFY_TEMPLATES, JUDGE_TEMPLATE, PLACEHOLDERS } from './templates.js';
export { renderTemplate, placeholdersOf } from './render.js';
export { resolveTemplates } from './resolveTemplates.js';
export type { PromptTemplates, TemplateOverrides } from './resolveTemplates.js';
export { generateMessages, verifyMessages, judgeMessages, optionsBlock, questionAsShown, referenceFor } from './messages.js';
export { LANGUAGE_NAMES, languageName } from './languageNames.js';
