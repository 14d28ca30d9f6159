-- X-Value readings (README.md "Reading replies"): one row per reading of a chosen reply by the
-- `parse` reader, named by model x language x pair x phase x facet (defonly: overall; step1:
-- scope, nature, core_issue; step2: A-D; step3: the item's checkpoint E-H). Only items with an
-- ok reply enter (chosen_replies.sql: the lowest ok attempt); one reading per item, reader and
-- facet (one_reading.sql), so a reread reply counts once. Pairs without a reading of a facet
-- are absent here and read as "missing" by the TypeScript side, which also applies the one-vote
-- veto (analysis/buildRows.ts).
--
-- Rows come sorted, item_id last, so the TypeScript side keeps the same reading whatever the
-- engine's parallelism when a pair has two items of one phase (a template changed between runs).
-- Portable SQL (DuckDB and Athena/Trino); no statement terminator.
WITH items AS (
  SELECT DISTINCT
    item_id,
    CAST(model AS VARCHAR) AS model,
    CAST(language AS VARCHAR) AS language,
    qa_id,
    phase
  FROM {{prompts}}
),
chosen AS (
  SELECT item_id FROM {{query:chosen_replies}} c
),
parsed AS (
  SELECT item_id, facet, label FROM {{query:one_reading}} r
  WHERE reader = 'parse' AND facet IS NOT NULL
)
SELECT
  i.model,
  i.language,
  i.qa_id,
  i.phase,
  p.facet,
  p.label
FROM items i
JOIN chosen c ON c.item_id = i.item_id
JOIN parsed p ON p.item_id = i.item_id
ORDER BY i.model, i.language, i.qa_id, i.phase, p.facet, i.item_id
