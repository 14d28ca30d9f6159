-- Test copy of the core's coming one_reading.sql (one reading per item, reader and facet, with
-- the facet, value and raw columns), until lib/query/sql/one_reading.sql returns `facet`; then
-- the X-Value SQL test uses XVALUE_SQL and this folder goes.
SELECT item_id, reader, facet, label, value, raw
FROM (
  SELECT
    item_id,
    reader,
    facet,
    label,
    value,
    raw,
    ROW_NUMBER() OVER (PARTITION BY item_id, reader, facet ORDER BY judge_item_id, label) AS pick
  FROM {{readings}}
) ranked
WHERE pick = 1
