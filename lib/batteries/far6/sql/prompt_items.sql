-- One row per generate-phase item with the design factors the FAR-6 estimators group by. DISTINCT
-- because a prompts part may be rewritten (judge prompts are, after a resumed run). Included as a
-- subquery by item_shares, same_replies_shares and reading_agreement. Portable SQL (DuckDB and
-- Athena; `constraint` is reserved in both, hence quoted); no statement terminator.
SELECT DISTINCT
  item_id,
  prompt_key,
  CAST(model AS VARCHAR) AS model,
  CAST(language AS VARCHAR) AS language,
  form,
  "constraint",
  story,
  story_group,
  concept_pair,
  construction,
  named,
  CAST(option_order AS INTEGER) AS option_order
FROM {{prompts}}
