-- X-Value (Towards Cross-lingual Values Judgment §6.1): every pair asked of a model under each strategy, with its gold
-- annotation (§5.2) as the prompts table carries it on every item. One row per model x language x
-- pair x strategy: the definition-only strategy asks a pair in phase defonly, the rubric in
-- phases step1 and step3 (step 2 follows step 1, so it adds no pair of its own). DISTINCT
-- because every item of a pair repeats its gold, and a prompts part may be rewritten.
--
-- Portable SQL (DuckDB and Athena/Trino): lower-case column names, explicit CASTs of the
-- partition columns, no statement terminator (the file may be included as a subquery).
SELECT DISTINCT
  CAST(model AS VARCHAR) AS model,
  CAST(language AS VARCHAR) AS language,
  qa_id,
  category,
  CASE WHEN phase = 'defonly' THEN 'defonly' ELSE 'rubric' END AS strategy,
  gold_overall,
  gold_scope,
  gold_nature,
  gold_a,
  gold_b,
  gold_c,
  gold_d,
  gold_e,
  gold_f,
  gold_g,
  gold_h
FROM {{prompts}}
WHERE phase IN ('defonly', 'step1', 'step3')
ORDER BY 1, 2, 3, 5
