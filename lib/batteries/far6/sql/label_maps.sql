-- Reading maps of proposition-label prompts, one row per prompt item: the analysis needs which
-- proposition is listed second (Same Judgment, Different Yes §6, second-listed preference). The JSON is parsed in
-- TypeScript because DuckDB and Trino share no JSON path function with the same result type.
SELECT DISTINCT
  CAST(model AS VARCHAR) AS model,
  CAST(language AS VARCHAR) AS language,
  prompt_key,
  reading_map_json
FROM {{prompts}}
WHERE "constraint" = 'label'
