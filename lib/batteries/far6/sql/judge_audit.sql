-- The judge audit (Same Judgment, Different Yes "Sentence judging"): every audit reading beside the primary judge's
-- reading of the same reply, with the stratum it was drawn from (model × language × answer
-- constraint) and the question form.
--
-- {{readings}} holds the generate-phase readings and the audit readings together; the `phase`
-- column tells them apart (audit phases are named `audit-<comparison>`, e.g. audit-second,
-- audit-retest). Only sentence-judge readers (`judge:<id>`) take part. A reader that read one item
-- more than once within a phase counts once: the first by judge_item_id, then label, as in
-- one_reading.sql, but per phase, because the retest's reader is the primary judge itself.
--
-- One row per audit reading and primary judge reader of its item; primary_reader and
-- primary_label are null when the item has no primary judge reading. The TypeScript side picks
-- the primary reader and pools the rows into strata. Portable SQL (DuckDB and Athena); no
-- statement terminator.
WITH judged AS (
  SELECT phase, item_id, reader, label
  FROM (
    SELECT
      COALESCE(CAST(phase AS VARCHAR), '') AS phase,
      item_id,
      reader,
      label,
      ROW_NUMBER() OVER (
        PARTITION BY COALESCE(CAST(phase AS VARCHAR), ''), item_id, reader
        ORDER BY judge_item_id, label
      ) AS pick
    FROM {{readings}}
    WHERE reader LIKE 'judge:%'
  ) ranked
  WHERE pick = 1
),
audit AS (
  SELECT phase, item_id, reader, label FROM judged WHERE phase LIKE 'audit-%'
),
main_judge AS (
  SELECT item_id, reader, label FROM judged WHERE phase NOT LIKE 'audit-%'
)
SELECT
  a.phase,
  a.item_id,
  p.model,
  p.language,
  p."constraint",
  p.form,
  a.reader AS audit_reader,
  a.label AS audit_label,
  m.reader AS primary_reader,
  m.label AS primary_label
FROM audit a
JOIN {{query:prompt_items}} p ON p.item_id = a.item_id
LEFT JOIN main_judge m ON m.item_id = a.item_id
ORDER BY a.phase, p.model, p.language, p."constraint", a.item_id, m.reader
