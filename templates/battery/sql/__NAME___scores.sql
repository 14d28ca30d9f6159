-- Accuracy per model and language: replies read, correct, unreadable.
SELECT model, language,
       COUNT(*) AS replies,
       SUM(CASE WHEN label = 'correct' THEN 1 ELSE 0 END) AS correct,
       SUM(CASE WHEN label = 'unreadable' THEN 1 ELSE 0 END) AS unreadable
FROM {{readings}}
WHERE reader = 'rule'
GROUP BY model, language
ORDER BY model, language
