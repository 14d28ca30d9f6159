-- Whether any verify reply of the campaign came from a simulated model (the report is then
-- labelled SIMULATED everywhere). Source: {{verify_replies}}. Portable SQL; no terminator.
SELECT CAST(MAX(CASE WHEN simulated THEN 1 ELSE 0 END) AS INTEGER) AS simulated, CAST(COUNT(*) AS INTEGER) AS replies
FROM {{verify_replies}}
