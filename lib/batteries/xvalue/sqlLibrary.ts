import { CORE_SQL, SqlLibrary } from '../../api/battery.js';

/** The folder of the X-Value queries. */
export const XVALUE_SQL_DIR = new URL('./sql/', import.meta.url);

/** The X-Value queries, in the order the analysis runs them (names unique across batteries). */
export const XVALUE_QUERIES = ['xvalue_pairs', 'xvalue_facets', 'xvalue_reply_totals'] as const;

/**
 * The X-Value SQL stage (README.md "SQL"): pairs with gold, readings by facet, reply totals. They
 * include the core's chosen_replies and one_reading (one reading per item, reader and facet).
 */
export const XVALUE_SQL = new SqlLibrary('xvalue', XVALUE_SQL_DIR, XVALUE_QUERIES, [CORE_SQL]);
