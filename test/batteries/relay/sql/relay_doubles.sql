-- Each double item joined with the guess reading it was built from: how many doubles were read,
-- and how many equal twice the number guessed.
WITH guessed AS (
  SELECT item_id, model, language, value
  FROM {{guess_readings}}
  WHERE reader = 'number' AND label = 'ok'
),
doubled AS (
  SELECT p.source_item_id, g.model, g.language, g.value
  FROM {{double_prompts}} p
  JOIN {{double_readings}} g ON g.item_id = p.item_id AND g.model = p.model AND g.language = p.language
  WHERE g.reader = 'number' AND g.label = 'ok'
)
SELECT d.model AS model, d.language AS language, COUNT(*) AS doubled,
       SUM(CASE WHEN d.value = 2 * s.value THEN 1 ELSE 0 END) AS correct
FROM doubled d
JOIN guessed s ON s.item_id = d.source_item_id AND s.model = d.model AND s.language = d.language
GROUP BY d.model, d.language
ORDER BY d.model, d.language
