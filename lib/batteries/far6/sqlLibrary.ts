import { CORE_SQL, SqlLibrary } from '../../api/battery.js';

/**
 * The FAR-6 queries (Same Judgment, Different Yes "Estimation steps"), in the order the analysis runs them; they
 * include the core's chosen_replies and one_reading.
 */
export const FAR6_SQL = new SqlLibrary(
  'far6',
  new URL('./sql/', import.meta.url),
  ['label_maps', 'item_shares', 'cell_summary', 'reply_totals', 'reading_agreement', 'same_replies_shares', 'prompt_items', 'judge_audit'],
  [CORE_SQL],
);
