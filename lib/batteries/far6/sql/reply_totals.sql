-- What was run, per model x language: the attempts at items of the design as it stands (those the
-- analysis reads), the items with an ok reply, how many attempts came from the simulated provider
-- (the report labels simulated data as such), and their cost. Attempts at items the design no
-- longer has (an edit dropped them; their replies stay stored, nothing that cost money is thrown
-- away) are counted apart, with their cost, so that the totals match what the tables rest on.
WITH design AS (
  SELECT DISTINCT item_id FROM {{prompts}} p
)
SELECT
  model,
  language,
  CAST(SUM(CASE WHEN in_design = 1 THEN 1 ELSE 0 END) AS BIGINT) AS attempts,
  CAST(SUM(CASE WHEN in_design = 1 AND status = 'ok' THEN 1 ELSE 0 END) AS BIGINT) AS ok_attempts,
  CAST(COUNT(DISTINCT CASE WHEN in_design = 1 AND status = 'ok' THEN item_id END) AS BIGINT) AS items_ok,
  CAST(SUM(CASE WHEN in_design = 1 AND simulated THEN 1 ELSE 0 END) AS BIGINT) AS simulated_attempts,
  CAST(SUM(CASE WHEN in_design = 1 THEN cost_usd ELSE 0 END) AS DOUBLE) AS cost_usd,
  CAST(SUM(CASE WHEN in_design = 1 THEN 0 ELSE 1 END) AS BIGINT) AS attempts_outside_design,
  CAST(SUM(CASE WHEN in_design = 1 THEN 0 ELSE cost_usd END) AS DOUBLE) AS cost_outside_design_usd
FROM (
  SELECT
    CAST(r.model AS VARCHAR) AS model,
    CAST(r.language AS VARCHAR) AS language,
    r.item_id,
    r.status,
    r.simulated,
    -- Summed as exact decimals (to 1e-12 USD): a sum of doubles depends on the order of the rows,
    -- which the parts' layout sets, and its sixth decimal moved with it.
    CAST(r.cost_usd AS DECIMAL(38, 12)) AS cost_usd,
    CASE WHEN d.item_id IS NULL THEN 0 ELSE 1 END AS in_design
  FROM {{replies}} r
  LEFT JOIN design d ON d.item_id = r.item_id
) r
GROUP BY model, language
ORDER BY model, language
