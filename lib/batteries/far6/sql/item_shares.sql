-- FAR-6 item shares (Same Judgment, Different Yes §3 and "Estimation steps"): label counts per prompt item and reader.
--
-- One row per (model, language, reader, form, constraint, story, story_group, concept_pair,
-- construction, named, option_order, prompt_key). A prompt_key is one exact item; its repeats are
-- separate item_ids that share it, so the counts here are over the item's repeats. Only the reply
-- chosen by chosen_replies.sql enters (lowest ok attempt, ties by created_at); readings are joined
-- to that item through item_id (a reading names the generate-phase item it read).
--
-- A reader that read one item more than once (a rerun read phase, a duplicated judge row) counts
-- once: the first reading by judge_item_id, then label, so the choice does not depend on file order.
--
-- n_replies = read replies = n_p + n_notp + n_both + n_none + n_invalid. Column names are lower
-- case because Athena folds identifiers. `constraint` is a reserved word in both engines: quoted.
WITH prompt_items AS (
  SELECT * FROM {{query:prompt_items}} pi
),
chosen AS (
  SELECT item_id FROM {{query:chosen_replies}} c
),
one_reading AS (
  SELECT item_id, reader, label FROM {{query:one_reading}} r
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
  CAST(SUM(CASE WHEN r.label = 'both' THEN 1 ELSE 0 END) AS INTEGER) AS n_both,
  CAST(SUM(CASE WHEN r.label = 'none' THEN 1 ELSE 0 END) AS INTEGER) AS n_none,
  CAST(SUM(CASE WHEN r.label = 'invalid' THEN 1 ELSE 0 END) AS INTEGER) AS n_invalid
FROM prompt_items p
JOIN chosen c ON c.item_id = p.item_id
JOIN one_reading r ON r.item_id = p.item_id
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
-- Rows in a fixed order: the estimators add floating-point shares in row order, and DuckDB's
-- parallel GROUP BY returns groups in any order, which moved results in the last digits from run to run.
ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
