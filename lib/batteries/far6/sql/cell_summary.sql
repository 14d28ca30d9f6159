-- Printed overview per model x language x form x constraint x reader (Same Judgment, Different Yes §3: only P and notP
-- readings are decisive and enter the shares): read replies, decisive share, P share among decisive.
SELECT
  model,
  language,
  form,
  "constraint",
  reader,
  CAST(SUM(n_replies) AS BIGINT) AS replies,
  CAST(SUM(n_p + n_notp) AS BIGINT) AS decisive,
  CAST(SUM(n_p) AS BIGINT) AS n_p,
  CAST(SUM(n_p + n_notp) AS DOUBLE) / CAST(SUM(n_replies) AS DOUBLE) AS decisive_share,
  CASE
    WHEN SUM(n_p + n_notp) > 0 THEN CAST(SUM(n_p) AS DOUBLE) / CAST(SUM(n_p + n_notp) AS DOUBLE)
  END AS p_share
FROM {{query:item_shares}} s
GROUP BY model, language, form, "constraint", reader
ORDER BY model, language, form, "constraint", reader
