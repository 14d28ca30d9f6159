-- The same replies read twice (Same Judgment, Different Yes §4 Figure 2b, §7): per prompt cell of the design and pair
-- of readers, the replies on which both readers are decisive (P or notP) and those on which they
-- agree. After a negative interrogative the token rule reads yes as the named side, which is the
-- polarity mapping, so agreement with the judged sentence there is the polarity share of §7.
--
-- One reply per item (chosen_replies.sql) and one reading per item and reader (the first by
-- judge_item_id, then label), as in item_shares.sql. Reader pairs are ordered (reader_a < reader_b)
-- so each pair appears once. Portable SQL (DuckDB and Athena); no statement terminator.
--
-- The inputs are named as in same_replies_shares.sql (decisive readings, used twice); a query of
-- their own would be one more Athena named query for three aliases.
WITH prompt_items AS (
  SELECT * FROM {{query:prompt_items}} pi
),
chosen AS (
  SELECT item_id FROM {{query:chosen_replies}} c
),
one_reading AS (
  SELECT item_id, reader, label FROM {{query:one_reading}} r
  WHERE label IN ('P', 'notP')
)
SELECT
  p.model,
  p.language,
  p.form,
  p."constraint",
  p.concept_pair,
  p.construction,
  p.named,
  a.reader AS reader_a,
  b.reader AS reader_b,
  CAST(COUNT(*) AS INTEGER) AS n_both_decisive,
  CAST(SUM(CASE WHEN a.label = b.label THEN 1 ELSE 0 END) AS INTEGER) AS n_agree
FROM prompt_items p
JOIN chosen c ON c.item_id = p.item_id
JOIN one_reading a ON a.item_id = p.item_id
JOIN one_reading b ON b.item_id = p.item_id AND a.reader < b.reader
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
