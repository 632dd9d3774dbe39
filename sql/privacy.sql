-- Privacy models per equivalence class, and re-identification risk: the twins of
-- polars_anon.privacy.evaluate.class_measures (one model at a time, the table itself as the
-- reference distribution) and polars_anon.privacy.risk. A class is a struct of the qid
-- columns (`class`); every macro refuses an empty qids, a qid or sensitive attribute that is
-- not a column (the messages of polars_anon/messages.py), and a variant or distance outside
-- its choices. Hierarchical t-closeness has no SQL twin (it needs the sensitive attribute's
-- hierarchy; use polars_anon.privacy).

-- anon_sensitive_counts(tbl, qids, sensitive): rows per (class, sensitive value): class, value, n.
-- Twin: polars_anon.privacy.counts.sensitive_counts
CREATE OR REPLACE TEMP MACRO anon_sensitive_counts(tbl, qids, sensitive) AS TABLE
  WITH __anon_ok AS MATERIALIZED (
    SELECT CASE WHEN anon_check_qids(tbl, qids) THEN anon_check_columns(tbl, [sensitive], 'sensitive') END AS ok)
  SELECT class, vs[1] AS value, count(*)::BIGINT AS n FROM (
    SELECT struct_pack(*COLUMNS(lambda c: list_contains(qids, c) OR c = '__anon_none')) AS class,
           list_value(*COLUMNS(lambda c: c = sensitive OR c = '__anon_none')) AS vs
    FROM (SELECT *, NULL AS __anon_none FROM query_table(tbl::VARCHAR)) AS t
    WHERE (SELECT ok.ok FROM __anon_ok AS ok))
  GROUP BY ALL;

-- anon_class_shares(tbl, qids, sensitive): every (class, value of the table) with the class's
-- share p and the table's share q of the value (0 where the class lacks it), its class size,
-- the value's rank in sort order (nulls last) and the table's number of distinct values m.
-- Twin: polars_anon.privacy.constraints.Constraints.view
CREATE OR REPLACE TEMP MACRO anon_class_shares(tbl, qids, sensitive) AS TABLE
  WITH __anon_counts AS (FROM anon_sensitive_counts(tbl, qids, sensitive)),
  __anon_values AS (
    SELECT value, sum(n) / (SELECT sum(n) FROM __anon_counts) AS q,
           row_number() OVER (ORDER BY value NULLS LAST) AS rank, count(*) OVER () AS m
    FROM __anon_counts GROUP BY value),
  __anon_classes AS (SELECT class, sum(n) AS size FROM __anon_counts GROUP BY class)
  SELECT c.class, c.size, v.value, v.rank, v.m, v.q, coalesce(x.n, 0) / c.size AS p, coalesce(x.n, 0) AS n
  FROM __anon_classes AS c CROSS JOIN __anon_values AS v
  LEFT JOIN __anon_counts AS x ON x.class IS NOT DISTINCT FROM c.class AND x.value IS NOT DISTINCT FROM v.value;

-- anon_l_diversity(tbl, qids, sensitive, l := 2, variant := 'distinct', c := NULL): per class:
-- class, size, measure (distinct: its distinct values; entropy: exp of its entropy; recursive:
-- r_1 / (r_l + ... + r_m), infinite with fewer than l values) and satisfied.
-- Twin: polars_anon.privacy.evaluate.class_measures with polars_anon.privacy.LDiversity
CREATE OR REPLACE TEMP MACRO anon_l_diversity(tbl, qids, sensitive, l := 2, variant := 'distinct', c := NULL) AS TABLE
  WITH __anon_ranked AS (
    SELECT class, size, n, row_number() OVER (PARTITION BY class ORDER BY n DESC) AS r
    FROM anon_class_shares(tbl, qids, sensitive) WHERE n > 0),
  __anon_measures AS (
    SELECT class, any_value(size)::BIGINT AS size,
           CASE anon_check_choice('variant', variant, ['distinct', 'entropy', 'recursive'])
             WHEN 'distinct' THEN count(*)::DOUBLE
             WHEN 'entropy' THEN exp(-sum(n / size * ln(n / size)))
             ELSE CASE WHEN coalesce(sum(n) FILTER (WHERE r >= l), 0) > 0
                       THEN max(n) / sum(n) FILTER (WHERE r >= l) ELSE 'inf'::DOUBLE END END AS measure
    FROM __anon_ranked GROUP BY class)
  SELECT class, size, measure,
         CASE variant WHEN 'distinct' THEN measure >= l
                      WHEN 'entropy' THEN measure >= l * (1 - 1e-12)
                      ELSE measure < c END AS satisfied
  FROM __anon_measures ORDER BY class;

-- anon_t_closeness(tbl, qids, sensitive, t := 0.2, distance := 'equal'): per class: class,
-- size, measure (the Earth Mover's distance to the table's distribution: equal ground distance,
-- or ordered over the values in sort order) and satisfied (measure <= t).
-- Twin: polars_anon.privacy.evaluate.class_measures with polars_anon.privacy.TCloseness
CREATE OR REPLACE TEMP MACRO anon_t_closeness(tbl, qids, sensitive, t := 0.2, distance := 'equal') AS TABLE
  WITH __anon_cum AS (
    SELECT class, size, m, p, q,
           sum(p - q) OVER (PARTITION BY class ORDER BY rank ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS cum
    FROM anon_class_shares(tbl, qids, sensitive)),
  __anon_measures AS (
    SELECT class, any_value(size)::BIGINT AS size,
           CASE anon_check_choice('distance', distance, ['equal', 'ordered'])
             WHEN 'equal' THEN sum(abs(p - q)) / 2
             ELSE CASE WHEN any_value(m) > 1 THEN sum(abs(cum)) / (any_value(m) - 1) ELSE 0 END END AS measure
    FROM __anon_cum GROUP BY class)
  SELECT class, size, measure, measure <= t + 1e-12 AS satisfied FROM __anon_measures ORDER BY class;

-- anon_delta_disclosure(tbl, qids, sensitive, delta := 1.0): per class: class, size, measure
-- (the largest |ln(p / q)| over the values the class holds) and satisfied (measure < delta).
-- Twin: polars_anon.privacy.evaluate.class_measures with polars_anon.privacy.DeltaDisclosure
CREATE OR REPLACE TEMP MACRO anon_delta_disclosure(tbl, qids, sensitive, delta := 1.0) AS TABLE
  SELECT class, any_value(size)::BIGINT AS size, max(abs(ln(p / q))) AS measure, max(abs(ln(p / q))) < delta AS satisfied
  FROM anon_class_shares(tbl, qids, sensitive) WHERE n > 0 GROUP BY class ORDER BY class;

-- anon_beta_likeness(tbl, qids, sensitive, beta := 1.0, variant := 'basic'): per class: class,
-- size, measure (the largest relative gain (p - q) / q over the values the class holds;
-- enhanced: infinite when a gain exceeds -ln q) and satisfied (measure <= beta).
-- Twin: polars_anon.privacy.evaluate.class_measures with polars_anon.privacy.BetaLikeness
CREATE OR REPLACE TEMP MACRO anon_beta_likeness(tbl, qids, sensitive, beta := 1.0, variant := 'basic') AS TABLE
  WITH __anon_measures AS (
    SELECT class, any_value(size)::BIGINT AS size,
           CASE WHEN anon_check_choice('variant', variant, ['basic', 'enhanced']) = 'enhanced'
                     AND bool_or((p - q) / q > -ln(q) * (1 + 1e-12)) THEN 'inf'::DOUBLE
                ELSE greatest(max((p - q) / q), 0) END AS measure
    FROM anon_class_shares(tbl, qids, sensitive) WHERE n > 0 GROUP BY class)
  SELECT class, size, measure, measure <= beta * (1 + 1e-12) AS satisfied FROM __anon_measures ORDER BY class;

-- anon_risk(tbl, qids, threshold := 0.2): one row of prosecutor risk: n_rows, n_classes,
-- highest, lowest, average (classes / rows), records_at_risk (share of rows whose risk
-- 1 / size is above threshold) and sample_uniques (share of rows alone in their class).
-- Twin: polars_anon.privacy.risk.risk
CREATE OR REPLACE TEMP MACRO anon_risk(tbl, qids, threshold := 0.2) AS TABLE
  WITH __anon_sizes AS (SELECT size FROM anon_class_sizes(tbl, qids, 1))
  SELECT sum(size)::BIGINT AS n_rows, count(*)::BIGINT AS n_classes,
         1 / min(size) AS highest, 1 / max(size) AS lowest, count(*) / sum(size) AS average,
         coalesce(sum(size) FILTER (WHERE 1 / size > threshold), 0) / sum(size) AS records_at_risk,
         coalesce(sum(size) FILTER (WHERE size = 1), 0) / sum(size) AS sample_uniques
  FROM __anon_sizes;
