import { CORE_SQL, SqlLibrary } from '../../api/battery.js';

/**
 * The P(True) queries: `ptrue_models`, the models to query one at a time, `ptrue_rows`, the
 * item-level rows of the estimators (analysis/types.ts), and `ptrue_simulated`, whether the
 * replies are simulated.
 * Query names are unique across batteries (a Lambda bundle puts every library's files in one folder).
 */
export const PTRUE_SQL = new SqlLibrary('ptrue', new URL('./sql/', import.meta.url), ['ptrue_models', 'ptrue_rows', 'ptrue_simulated'], [CORE_SQL]);

/** The sources ptrue_rows reads: each table of each phase. */
export const PTRUE_SOURCES = [
  ['generate_prompts', 'prompts', 'generate'],
  ['generate_replies', 'replies', 'generate'],
  ['generate_readings', 'readings', 'generate'],
  ['verify_prompts', 'prompts', 'verify'],
  ['verify_replies', 'replies', 'verify'],
  ['verify_readings', 'readings', 'verify'],
] as const;
