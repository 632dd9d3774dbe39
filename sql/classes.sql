-- anon_class_sizes(tbl, qids, k := 2): one row per equivalence class of a table or view:
-- the quasi-identifier columns, `size` (BIGINT) and `violates` (size < k).
-- Twin: polars_anon.classes.class_sizes
CREATE OR REPLACE TEMP MACRO anon_class_sizes(tbl, qids, k := 2) AS TABLE
  SELECT COLUMNS(lambda c: list_contains(qids, c)), count(*)::BIGINT AS size,
         CASE WHEN k < 1 THEN error('k must be >= 1, got ' || k) ELSE count(*) < k END AS violates
  FROM query_table(tbl::VARCHAR) AS t
  GROUP BY ALL
  ORDER BY ALL;

-- anon_k_summary(tbl, qids, k := 1): one row: k, min_class_size, n_classes, n_rows,
-- violating_rows, k_anonymous.
-- Twin: polars_anon.classes.k_summary
CREATE OR REPLACE TEMP MACRO anon_k_summary(tbl, qids, k := 1) AS TABLE
  WITH sizes AS (
    SELECT COLUMNS(lambda c: list_contains(qids, c)), count(*)::BIGINT AS size
    FROM query_table(tbl::VARCHAR) AS t
    GROUP BY ALL
  )
  SELECT CASE WHEN k < 1 THEN error('k must be >= 1, got ' || k) ELSE k END::BIGINT AS k,
         coalesce(min(s.size), 0)::BIGINT AS min_class_size,
         count(*)::BIGINT AS n_classes,
         coalesce(sum(s.size), 0)::BIGINT AS n_rows,
         coalesce(sum(s.size) FILTER (WHERE s.size < k), 0)::BIGINT AS violating_rows,
         coalesce(min(s.size), k) >= k AS k_anonymous
  FROM sizes AS s;
