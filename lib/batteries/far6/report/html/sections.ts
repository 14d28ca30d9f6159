/**
 * The sections of report.html, one per view of the paper (Same Judgment, Different Yes §4–§7), each
 * in its own file: readout convergence and reply-level disagreement (Figure 2a/2b), between-cell
 * heat maps (Figure 3c–f), model identity (Table 6, Figure 3a/3b), answer habits (§6, Figure 4)
 * and the polarity of the negative-interrogative token (§7, Figure 5b/5c), with "Replies read" and
 * the header facts. Each returns the HTML of one <section>; a section whose analysis is absent or
 * empty says so instead of drawing an empty chart. The judge audit is judgeAuditSection.ts.
 */
export { FAR6_PAPER, section } from './section.js';
export type { Section } from './section.js';
export { runFacts } from './runFacts.js';
export { repliesReadSection } from './repliesReadSection.js';
export { convergenceSection } from './convergenceSection.js';
export { disagreementSection } from './disagreementSection.js';
export { heatmapSection } from './heatmapSection.js';
export { identitySection } from './identitySection.js';
export { habitsSection } from './habitsSection.js';
export { polaritySection } from './polaritySection.js';
