-- One reply per generate-phase item (DESIGN.md "Data contracts": every attempt that produced text
-- or an error is stored; the analysis takes one reply per item_id by a documented rule).
--
-- Rule: the lowest `attempt` whose status is 'ok'; ties (the same attempt adopted twice) are broken
-- by the earliest created_at. Error attempts never count, so an item whose first attempt failed is
-- analysed through its first successful retry, and a duplicate ok attempt is counted once.
--
-- Portable SQL: runs unchanged on DuckDB and on Athena (Trino). Table names are placeholders that
-- renderSql substitutes. No statement terminator: this file is also included as a subquery.
SELECT item_id, model, language, attempt, created_at, simulated, cost_usd
FROM (
  SELECT
    item_id,
    CAST(model AS VARCHAR) AS model,
    CAST(language AS VARCHAR) AS language,
    attempt,
    created_at,
    simulated,
    cost_usd,
    ROW_NUMBER() OVER (PARTITION BY item_id ORDER BY attempt, created_at) AS pick
  FROM {{replies}}
  WHERE status = 'ok'
) ranked
WHERE pick = 1
