-- P(True) item-level rows (Disentangling Question, Response, and Verifier Languages §5; lib/batteries/ptrue/analysis/types.ts PtrueRow): one row
-- per verify item with a chosen reply whose generate item has a chosen reply and a correctness,
-- i.e. per model × base item × question language q × response language r × verifier language v.
--
-- Sources: {{generate_prompts}}, {{generate_replies}}, {{generate_readings}} (option, language and
-- judge:<id> readings all name the generate item), {{verify_prompts}}, {{verify_replies}},
-- {{verify_readings}} (the ptrue reading).
--
-- Correctness (§4.1–4.2): multiple choice from the `option` reading; otherwise from the judge, the
-- first judge reader by name when several judged. 'correct' → 1; 'incorrect', and the flagged
-- 'unextractable' / 'malformed' → 0 (flagged = 1). A generate item with no such reading (a short
-- answer in a campaign without a judge) has no correctness: its rows are left out.
-- One reading per item and reader: a reader that read an item more than once counts once, the
-- first by judge_item_id, then label (as the core's one_reading.sql).
-- P(True): the ptrue reading's value; NULL when its label is 'invalid'. `exact` is the verify
-- reply's logprobs_exact. `correct_alt`: the judge's verdict on a multiple-choice reply (§6.2).
--
-- Portable SQL (DuckDB and Athena/Trino): no `::`, no QUALIFY, no JSON functions; the partition
-- column `model` is cast to VARCHAR; lower-case names (Athena folds identifiers).
WITH gp AS (
  SELECT item_id, kind FROM {{generate_prompts}}
),
vp AS (
  SELECT
    item_id,
    CAST(model AS VARCHAR) AS model,
    source_item_id,
    benchmark,
    base_item,
    stratum,
    content_language,
    question_language,
    response_language,
    verifier_language
  FROM {{verify_prompts}}
),
g_chosen AS (
  SELECT item_id FROM (
    SELECT item_id, ROW_NUMBER() OVER (PARTITION BY item_id ORDER BY attempt, created_at) AS pick
    FROM {{generate_replies}}
    WHERE status = 'ok'
  ) ranked
  WHERE pick = 1
),
v_chosen AS (
  SELECT item_id, logprobs_exact FROM (
    SELECT item_id, logprobs_exact, ROW_NUMBER() OVER (PARTITION BY item_id ORDER BY attempt, created_at) AS pick
    FROM {{verify_replies}}
    WHERE status = 'ok'
  ) ranked
  WHERE pick = 1
),
g_read AS (
  SELECT item_id, reader, label FROM (
    SELECT item_id, reader, label, ROW_NUMBER() OVER (PARTITION BY item_id, reader ORDER BY judge_item_id, label) AS pick
    FROM {{generate_readings}}
  ) ranked
  WHERE pick = 1
),
judged AS (
  SELECT item_id, label FROM (
    SELECT item_id, label, ROW_NUMBER() OVER (PARTITION BY item_id ORDER BY reader) AS pick
    FROM g_read
    WHERE reader LIKE 'judge:%'
  ) ranked
  WHERE pick = 1
),
v_read AS (
  SELECT item_id, label, value FROM (
    SELECT item_id, label, value, ROW_NUMBER() OVER (PARTITION BY item_id ORDER BY judge_item_id, label) AS pick
    FROM {{verify_readings}}
    WHERE reader = 'ptrue'
  ) ranked
  WHERE pick = 1
),
correctness AS (
  SELECT
    gp.item_id,
    CASE WHEN gp.kind = 'multiple_choice' THEN o.label ELSE j.label END AS label,
    CASE WHEN gp.kind = 'multiple_choice' THEN j.label ELSE NULL END AS alt_label
  FROM gp
  JOIN g_chosen gc ON gc.item_id = gp.item_id
  LEFT JOIN g_read o ON o.item_id = gp.item_id AND o.reader = 'option'
  LEFT JOIN judged j ON j.item_id = gp.item_id
)
SELECT
  vp.model,
  vp.benchmark,
  vp.base_item,
  vp.stratum,
  vp.content_language,
  vp.question_language AS q,
  vp.response_language AS r,
  vp.verifier_language AS v,
  CASE WHEN c.label = 'correct' THEN 1 ELSE 0 END AS correct,
  CASE WHEN c.label IN ('unextractable', 'malformed') THEN 1 ELSE 0 END AS flagged,
  CASE WHEN pt.label = 'invalid' THEN NULL ELSE pt.value END AS p_true,
  vc.logprobs_exact AS exact,
  lang.label AS realised,
  CASE WHEN c.alt_label IS NULL THEN NULL WHEN c.alt_label = 'correct' THEN 1 ELSE 0 END AS correct_alt
FROM vp
JOIN v_chosen vc ON vc.item_id = vp.item_id
JOIN correctness c ON c.item_id = vp.source_item_id
LEFT JOIN v_read pt ON pt.item_id = vp.item_id
LEFT JOIN g_read lang ON lang.item_id = vp.source_item_id AND lang.reader = 'language'
WHERE c.label IS NOT NULL
-- A fixed order: the estimators add floating-point values in row order.
ORDER BY 1, 2, 3, 6, 7, 8
