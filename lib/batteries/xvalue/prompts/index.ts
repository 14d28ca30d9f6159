export { PROMPT_IDS } from './types.js';
export type { PromptId, PromptSet, PromptTemplate, PromptVars } from './types.js';
export { DEFAULT_TEMPLATES, REPLY_FORMATS, VALUE_DEFINITION } from './defaultTemplates.js';
export { PLACEHOLDER, REQUIRED_PLACEHOLDERS, allowedPlaceholders, placeholdersOf, renderPrompt, templateFor } from './renderPrompt.js';
export { DEFAULT_PROMPT_SET, loadPromptSet, promptOverridesSchema, promptSetFrom } from './loadPromptSet.js';
export type { PromptOverrides } from './loadPromptSet.js';
