-- What was run, per model x language x phase: every stored attempt (nothing that cost money is
-- left out of the cost), the items with an ok reply, and the attempts of the simulated provider
-- (results resting on them are labelled simulated). Portable SQL; no statement terminator.
SELECT
  model,
  language,
  phase,
  CAST(COUNT(*) AS BIGINT) AS attempts,
  CAST(SUM(CASE WHEN status = 'ok' THEN 1 ELSE 0 END) AS BIGINT) AS ok_attempts,
  CAST(COUNT(DISTINCT CASE WHEN status = 'ok' THEN item_id END) AS BIGINT) AS items_ok,
  CAST(SUM(CASE WHEN simulated THEN 1 ELSE 0 END) AS BIGINT) AS simulated_attempts,
  -- Summed as exact decimals (to 1e-12 USD): a sum of doubles depends on the order of the rows,
  -- which the parts' layout sets.
  CAST(SUM(CAST(cost_usd AS DECIMAL(38, 12))) AS DOUBLE) AS cost_usd
FROM (
  SELECT
    CAST(model AS VARCHAR) AS model,
    CAST(language AS VARCHAR) AS language,
    CAST(phase AS VARCHAR) AS phase,
    item_id,
    status,
    simulated,
    cost_usd
  FROM {{replies}}
) r
GROUP BY model, language, phase
ORDER BY model, language, phase
