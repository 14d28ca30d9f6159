-- One reading per item, reader and facet: a reader that read an item more than once (a rerun read
-- phase, a duplicated judge row) counts once, the first by judge_item_id, then label, so the choice
-- does not depend on file order. `facet` is NULL for readers that read one thing per reply (FAR-6),
-- which groups them as one. Included as a subquery by the batteries' queries and by the run, which
-- hands the readings of earlier phases to dependent ones. Portable SQL (DuckDB and Athena); no
-- statement terminator.
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
