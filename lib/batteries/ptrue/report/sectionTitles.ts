/**
 * The titles of the P(True) result sections, shared by summary.md (`## <title> (<source>)`) and
 * report.html (`<h2><title> …`), so each section of the summary has its place in the page.
 */
export const PTRUE_SECTION_TITLES = {
  overview: 'Overview',
  regimes: 'Matching regimes',
  spans: 'How far each language axis moves each metric',
  shares: 'Explained-variance shares',
  matching: 'Matching effects',
  ranks: 'Model rank changes along the language path',
  compliance: 'Replies in the requested language',
  scorers: 'Exact option match against the judge',
  qr: 'Question × response language',
  reliability: 'Reliability diagrams per setting',
} as const;

/** The paper the sections cite. */
export const PTRUE_PAPER = 'Disentangling Question, Response, and Verifier Languages';
