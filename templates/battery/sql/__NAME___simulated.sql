-- 1 when any reply was simulated (the summary then says so).
SELECT MAX(CASE WHEN simulated THEN 1 ELSE 0 END) AS simulated
FROM {{replies}}
