-- What was run, per model x language: every stored attempt (nothing that cost money is dropped
-- from the cost), the items with an ok reply, and how many attempts came from the simulated
-- provider (the report labels simulated data as such).
SELECT
  model,
  language,
  CAST(COUNT(*) AS BIGINT) AS attempts,
  CAST(SUM(CASE WHEN status = 'ok' THEN 1 ELSE 0 END) AS BIGINT) AS ok_attempts,
  CAST(COUNT(DISTINCT CASE WHEN status = 'ok' THEN item_id END) AS BIGINT) AS items_ok,
  CAST(SUM(CASE WHEN simulated THEN 1 ELSE 0 END) AS BIGINT) AS simulated_attempts,
  SUM(cost_usd) AS cost_usd
FROM (
  SELECT
    CAST(model AS VARCHAR) AS model,
    CAST(language AS VARCHAR) AS language,
    item_id,
    status,
    simulated,
    cost_usd
  FROM {{replies}}
) r
GROUP BY model, language
ORDER BY model, language
