-- The models under test whose verify prompts are stored, in the order ptrue_rows sorts them (its
-- ORDER BY 1): the analysis runs ptrue_rows once per model, over that model's partition of every
-- source, and appends the results in this order, so that the rows come in the order one query over
-- every model would give. Source: {{verify_prompts}}. Portable SQL (see ptrue_rows.sql); no terminator.
SELECT DISTINCT CAST(model AS VARCHAR) AS model
FROM {{verify_prompts}}
ORDER BY 1
