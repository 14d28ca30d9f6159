export type { ConceptPair, ConceptTerm, Construction, ConstructionTemplates, LanguageParticles, LanguageTemplates, TermForms } from './types.js';
export { CONSTRUCTIONS } from './types.js';
export { Far6DesignError } from './errors.js';
export { conceptPairIssues, loadConceptPairs, parseConceptPairs } from './conceptPairs.js';
export {
  LETTERS,
  NO_READING,
  caseFold,
  letterReadingMap,
  letterSides,
  opposite,
  particleOrder,
  particleReadingMap,
  verdictReadingMap,
} from './readingMaps.js';
export type { ExpandFar6Args, Far6Design } from './expandFar6.js';
export { expandFar6, far6CellRuns, far6ItemsPerStory, far6OptionOrders, far6PromptsPerStory, far6RepeatKey } from './expandFar6.js';
export { LANGUAGE_TEMPLATES, templatesFor } from './languages/index.js';
export { loadStories, parseStories, scriptIssue } from './loadStories.js';
export { syntheticGroupSizes, syntheticStories } from './syntheticStories.js';
