-- 1 when any guess reply was simulated.
SELECT MAX(CASE WHEN simulated THEN 1 ELSE 0 END) AS simulated
FROM {{guess_replies}}
