-- anon_class_sizes(tbl, qids, k := 2): one row per equivalence class of a table or view:
-- the quasi-identifier columns, `size` (BIGINT) and `violates` (size < k). Refuses an empty
-- qids, a qid that is not a column of tbl, a qid named like a column it builds ('size',
-- 'violates', the reserved 'count' or a name starting with '__anon_'), and k that is not an integer >= 1.
-- Twin: polars_anon.classes.class_sizes
CREATE OR REPLACE TEMP MACRO anon_class_sizes(tbl, qids, k := 2) AS TABLE
  WITH __anon_ok AS MATERIALIZED (  -- qids first, as Python
    SELECT CASE WHEN anon_check_qids(tbl, qids) THEN CASE WHEN anon_check_reserved(anon_names(qids), extra := ['violates'])
                                                          THEN anon_check_k(k) END END AS k)
  SELECT * EXCLUDE (__anon_none) FROM (
    -- __anon_none keeps COLUMNS(...) from matching nothing, which DuckDB refuses before the checks run
    SELECT COLUMNS(lambda c: list_contains(anon_names(qids), c) OR c = '__anon_none'), count(*)::BIGINT AS size,
           count(*) < (SELECT ok.k FROM __anon_ok AS ok) AS violates
    FROM (SELECT *, NULL AS __anon_none FROM query_table(anon_table(tbl))) AS t
    WHERE (SELECT ok.k IS NOT NULL FROM __anon_ok AS ok)
    GROUP BY ALL)
  ORDER BY ALL ASC NULLS LAST;

-- anon_k_summary(tbl, qids, k := 1): one row: k, min_class_size, n_classes, n_rows,
-- violating_rows, k_anonymous (false for an empty table: there is no class to vouch for).
-- Refuses what anon_class_sizes refuses but 'violates' (a qid named 'size' or 'count' as pa.risk does).
-- Twin: polars_anon.classes.k_summary
CREATE OR REPLACE TEMP MACRO anon_k_summary(tbl, qids, k := 1) AS TABLE
  WITH __anon_ok AS MATERIALIZED (  -- qids first, as Python
    SELECT CASE WHEN anon_check_qids(tbl, qids) THEN CASE WHEN anon_check_reserved(anon_names(qids)) THEN anon_check_k(k) END END AS k),
  __anon_sizes AS (  -- CTE and count names that hide no user table or column (a qid 'size' is refused, not bound)
    SELECT COLUMNS(lambda c: list_contains(anon_names(qids), c) OR c = '__anon_none'), count(*)::BIGINT AS __anon_size
    FROM (SELECT *, NULL AS __anon_none FROM query_table(anon_table(tbl))) AS t
    WHERE (SELECT ok.k IS NOT NULL FROM __anon_ok AS ok)
    GROUP BY ALL)
  SELECT ok.k AS k,
         coalesce(min(s.__anon_size), 0)::BIGINT AS min_class_size,
         count(s.__anon_size)::BIGINT AS n_classes,
         coalesce(sum(s.__anon_size), 0)::BIGINT AS n_rows,
         coalesce(sum(s.__anon_size) FILTER (WHERE s.__anon_size < ok.k), 0)::BIGINT AS violating_rows,
         coalesce(min(s.__anon_size) >= ok.k, false) AS k_anonymous
  FROM __anon_ok AS ok LEFT JOIN __anon_sizes AS s ON ok.k IS NOT NULL
  GROUP BY ok.k;
