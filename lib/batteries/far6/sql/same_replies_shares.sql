-- The same replies read twice, with identical weights (Same Judgment, Different Yes §3 last paragraph, §4 Figure 2a):
-- item shares as item_shares.sql computes them, but only over the replies that a token or verdict
-- rule (a reader not named judge:…) and a sentence judge (judge:…) both read decisively, and once
-- per such pair of readers. Both readings then rest on exactly the same replies, so a difference
-- between their profiles lies in the reading, not in the replies.
--
-- The reader column names the pair: `rule [with judge:j]` is the rule's reading and
-- `judge:j [with rule]` the judge's, of the same replies. n_both, n_none and n_invalid are 0 by
-- construction. Portable SQL (DuckDB and Athena); no statement terminator.
--
-- The columns and counts repeat item_shares.sql's on purpose: a query the library includes reads its
-- includer's sources and cannot be handed these paired readings instead, and one query for both
-- would pair every rule with every judge on each item_shares run.
WITH prompt_items AS (
  SELECT * FROM {{query:prompt_items}} pi
),
chosen AS (
  SELECT item_id FROM {{query:chosen_replies}} c
),
one_reading AS (
  SELECT item_id, reader, label FROM {{query:one_reading}} r
  WHERE label IN ('P', 'notP')
),
both_decisive AS (
  SELECT t.item_id, t.reader AS token_reader, j.reader AS judge_reader, t.label AS token_label, j.label AS judge_label
  FROM one_reading t
  JOIN one_reading j ON j.item_id = t.item_id
  WHERE t.reader NOT LIKE 'judge:%' AND j.reader LIKE 'judge:%'
),
both_read AS (
  SELECT item_id, token_reader || ' [with ' || judge_reader || ']' AS reader, token_label AS label FROM both_decisive
  UNION ALL
  SELECT item_id, judge_reader || ' [with ' || token_reader || ']' AS reader, judge_label AS label FROM both_decisive
)
SELECT
  p.model,
  p.language,
  r.reader,
  p.form,
  p."constraint",
  p.story,
  p.story_group,
  p.concept_pair,
  p.construction,
  p.named,
  p.option_order,
  p.prompt_key,
  CAST(COUNT(*) AS INTEGER) AS n_replies,
  CAST(SUM(CASE WHEN r.label = 'P' THEN 1 ELSE 0 END) AS INTEGER) AS n_p,
  CAST(SUM(CASE WHEN r.label = 'notP' THEN 1 ELSE 0 END) AS INTEGER) AS n_notp,
  CAST(0 AS INTEGER) AS n_both,
  CAST(0 AS INTEGER) AS n_none,
  CAST(0 AS INTEGER) AS n_invalid
FROM prompt_items p
JOIN chosen c ON c.item_id = p.item_id
JOIN both_read r ON r.item_id = p.item_id
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
-- Rows in a fixed order: the estimators add floating-point shares in row order, and DuckDB's
-- parallel GROUP BY returns groups in any order, which moved results in the last digits from run to run.
ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
