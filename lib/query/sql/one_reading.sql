-- One reading per item and reader: a reader that read an item more than once (a rerun read phase,
-- a duplicated judge row) counts once, the first by judge_item_id, then label, so the choice does
-- not depend on file order. Included as a subquery by item_shares, same_replies_shares and
-- reading_agreement. Portable SQL (DuckDB and Athena); no statement terminator.
SELECT item_id, reader, label
FROM (
  SELECT
    item_id,
    reader,
    label,
    ROW_NUMBER() OVER (PARTITION BY item_id, reader ORDER BY judge_item_id, label) AS pick
  FROM {{readings}}
) ranked
WHERE pick = 1
