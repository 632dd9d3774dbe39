-- Privacy models per equivalence class, and re-identification risk: the twins of
-- polars_anon.privacy.evaluate.class_measures (one model at a time, the table itself as the
-- reference distribution) and polars_anon.privacy.risk. A class is a struct of the qid
-- columns alone (`class`, e.g. {'q': 'a', 'r': NULL}: a null qid value is a NULL field).
-- Every macro refuses an empty qids, a qid or sensitive attribute that is not a column, one named
-- 'count', 'size' or '__anon_*' (the messages of polars_anon/messages.py), and a variant or distance
-- outside its choices. Hierarchical t-closeness reads the sensitive attribute's hierarchy from the
-- tables of sql/hierarchy.sql (polars_anon.duckdb.load_hierarchies).

-- anon_check_model_table(tbl, qids, sensitive, model): true, or the error of what pa.check refuses
-- once the model is built, in its order: qids (empty, twice, not columns), the attribute not a
-- column, the attribute a qid, a qid or the attribute named 'count', 'size' or '__anon_*', a table
-- without rows (pa.check's words; the macros returned no row, which read as "no class violates").
-- Twin: polars_anon.privacy.evaluate.check (its checks)
CREATE OR REPLACE TEMP MACRO anon_check_model_table(tbl, qids, sensitive, model) AS
  CASE WHEN CASE WHEN anon_check_qids(tbl, qids) THEN anon_check_sensitive_arg(tbl, sensitive) END
       THEN CASE WHEN anon_check_attribute(model || ' on ' || anon_msg_repr(sensitive), anon_names(qids), anon_name(sensitive))
                 THEN CASE WHEN anon_check_reserved(anon_names(qids))
                           THEN CASE WHEN anon_check_reserved([anon_name(sensitive)], 'sensitive column') THEN anon_check_rows(tbl) END
                      END
            END END;

-- anon_check_sensitive_arg(tbl, sensitive): true, or the error of a sensitive argument that is not a column name
-- (3, ['s']) or not a column of tbl. The macros read it as anon_name(sensitive), which binds from any type. After
-- anon_check_qids(tbl, ...), its anon_check_columns still has work: a qid named '__anon_*' is refused here, as a
-- helper column, before the qids' roles are.
-- Twin: polars_anon.privacy.evaluate.check (its column check)
CREATE OR REPLACE TEMP MACRO anon_check_sensitive_arg(tbl, sensitive) AS
  CASE WHEN anon_check_names_arg('sensitive', sensitive, false)
       THEN anon_check_columns(tbl, [anon_name(sensitive)], 'privacy model attributes') END;

-- anon_sensitive_counts_of(tbl, qids, sensitive, args_ok): anon_sensitive_counts, the rows read once args_ok holds
-- (the caller's checks of the arguments, an uncorrelated scalar subquery: run once). The model macros check the
-- table once (anon_check_model_table checks what anon_sensitive_counts checks, and more): checking it again here
-- made binding their query a third dearer.
-- Twin: polars_anon.privacy.counts.sensitive_counts
CREATE OR REPLACE TEMP MACRO anon_sensitive_counts_of(tbl, qids, sensitive, args_ok) AS TABLE
  SELECT class, vs[1] AS value, count(*)::BIGINT AS n FROM (
    SELECT struct_pack(*COLUMNS(* EXCLUDE (__anon_none, __anon_vs))) AS class, __anon_vs AS vs
    FROM (SELECT COLUMNS(lambda c: list_contains(anon_names(qids), c) OR c = '__anon_none'),
                 list_value(*COLUMNS(lambda c: c = anon_name(sensitive) OR c = '__anon_none')) AS __anon_vs
          FROM (SELECT *, NULL AS __anon_none FROM query_table(anon_table(tbl))) AS t
          WHERE args_ok))
  GROUP BY ALL;

-- anon_sensitive_counts(tbl, qids, sensitive): rows per (class, sensitive value): class, value, n.
-- The class struct holds the qid columns alone: the helper __anon_none, which keeps COLUMNS(...) from
-- matching nothing while DuckDB binds the query (before the checks run), is selected beside them and
-- left out of it (it showed as a field '__anon_none': NULL; a qid's null is a NULL field, as pa.check's
-- class is a null value).
-- Twin: polars_anon.privacy.counts.sensitive_counts
CREATE OR REPLACE TEMP MACRO anon_sensitive_counts(tbl, qids, sensitive) AS TABLE
  WITH __anon_ok AS MATERIALIZED (
    SELECT CASE WHEN anon_check_qids(tbl, qids) THEN anon_check_sensitive_arg(tbl, sensitive) END AS ok)
  FROM anon_sensitive_counts_of(tbl, qids, sensitive, (SELECT ok.ok FROM __anon_ok AS ok));

-- anon_class_shares_of(tbl, qids, sensitive, sensitive_null, model, args_ok): anon_class_shares, the rows read once
-- args_ok holds (see anon_sensitive_counts_of): the model macros pass their own checks of the table.
-- Twin: polars_anon.privacy.constraints.Constraints.view with polars_anon.privacy.base.Values
CREATE OR REPLACE TEMP MACRO anon_class_shares_of(tbl, qids, sensitive, sensitive_null, model, args_ok) AS TABLE
  WITH __anon_counts AS (FROM anon_sensitive_counts_of(tbl, qids, sensitive, args_ok)),
  __anon_nulls AS MATERIALIZED (
    SELECT CASE WHEN anon_check_choice(coalesce(model, 'privacy model') || ' on ' || anon_msg_repr(sensitive)
                                       || ': sensitive_null', sensitive_null, ['error', 'value', 'ignore']) = 'error'
                     AND coalesce(sum(n) FILTER (WHERE value IS NULL), 0) > 0
                THEN error(anon_msg_sensitive_null(coalesce(model, 'privacy model') || ' on ' || anon_msg_repr(sensitive),
                                                   anon_name(sensitive), sum(n) FILTER (WHERE value IS NULL),
                                                   anon_msg_sql_setting('sensitive_null', 'ignore'),
                                                   anon_msg_sql_setting('sensitive_null', 'value')))
                ELSE true END AS ok
    FROM __anon_counts),
  __anon_read AS (
    SELECT * FROM __anon_counts
    WHERE (anon_name(sensitive_null) <> 'ignore' OR value IS NOT NULL) AND (SELECT o.ok FROM __anon_nulls AS o)),
  __anon_values AS (
    SELECT value, sum(n)::DOUBLE / (SELECT sum(n) FROM __anon_read) AS q,
           row_number() OVER (ORDER BY value ASC NULLS LAST) AS rank, count(*) OVER () AS m
    FROM __anon_read GROUP BY value),
  __anon_classes AS (
    SELECT class, sum(n) AS size, coalesce(sum(n) FILTER (WHERE anon_name(sensitive_null) <> 'ignore' OR value IS NOT NULL), 0) AS nn
    FROM __anon_counts WHERE (SELECT o.ok FROM __anon_nulls AS o) GROUP BY class)
  SELECT c.class, c.size, v.value, v.rank, v.m, v.q,
         CASE WHEN c.nn > 0 THEN coalesce(x.n, 0)::DOUBLE / c.nn END AS p, coalesce(x.n, 0) AS n, c.nn
  FROM __anon_classes AS c LEFT JOIN __anon_values AS v ON true
  LEFT JOIN __anon_read AS x ON x.class IS NOT DISTINCT FROM c.class AND x.value IS NOT DISTINCT FROM v.value;

-- anon_class_shares(tbl, qids, sensitive, sensitive_null := 'value', model := NULL): every (class,
-- value of the table) with the class's share p and the table's share q of the value (0 where the class
-- lacks it), its class size, the value's rank in sort order (nulls last), the table's number of
-- distinct values m, and nn: the class's rows whose value is read. sensitive_null: 'value' (null is a
-- value), 'ignore' (null rows are left out of the values, of q and of nn; a class without a value read
-- has p NULL) or 'error' (a null is refused, naming `model` on the attribute and the null rows).
-- Twin: polars_anon.privacy.constraints.Constraints.view with polars_anon.privacy.base.Values
CREATE OR REPLACE TEMP MACRO anon_class_shares(tbl, qids, sensitive, sensitive_null := 'value', model := NULL) AS TABLE
  WITH __anon_ok AS MATERIALIZED (
    SELECT CASE WHEN anon_check_qids(tbl, qids) THEN anon_check_sensitive_arg(tbl, sensitive) END AS ok)
  FROM anon_class_shares_of(tbl, qids, sensitive, sensitive_null, model, (SELECT ok.ok FROM __anon_ok AS ok));

-- anon_l_diversity(tbl, qids, sensitive, l := 2, variant := 'distinct', c := NULL): per class:
-- class, size, measure (distinct: its distinct values; entropy: exp of its entropy; recursive:
-- r_1 / (r_l + ... + r_m), infinite with fewer than l values) and satisfied; sensitive_null as
-- anon_class_shares (a class without a value read: measure 0, or infinite for recursive).
-- Twin: polars_anon.privacy.evaluate.class_measures with polars_anon.privacy.LDiversity
CREATE OR REPLACE TEMP MACRO anon_l_diversity(tbl, qids, sensitive, l := 2, variant := 'distinct', c := NULL,
                                              sensitive_null := 'error') AS TABLE
  WITH __anon_ok AS MATERIALIZED (  -- the model's parameters, then the table (Python builds the model first)
    SELECT CASE WHEN anon_check_choice('l-diversity on ' || anon_msg_repr(sensitive) || ': variant', variant,
                                       ['distinct', 'entropy', 'recursive']) IS NOT NULL
                 AND anon_check_positive('l-diversity on ' || anon_msg_repr(sensitive), 'l', l, 1, false,
                                         anon_name(variant) <> 'entropy') IS NOT NULL
                THEN CASE WHEN CASE WHEN anon_name(variant) = 'recursive'
                                    THEN anon_check_positive('l-diversity on ' || anon_msg_repr(sensitive), 'c', c) IS NOT NULL
                                    WHEN c IS NOT NULL
                                    THEN error(anon_msg_variant_parameter('l-diversity on ' || anon_msg_repr(sensitive), 'c',
                                                                          'recursive', c, anon_name(variant)))
                                    ELSE true END  -- c, then the table: the table's checks bound once
                          THEN anon_check_model_table(tbl, qids, sensitive, 'l-diversity') END END AS ok),
  __anon_ranked AS (
    SELECT class, size, nn, n, row_number() OVER (PARTITION BY class ORDER BY n DESC NULLS LAST) AS r
    FROM anon_class_shares_of(tbl, qids, sensitive, sensitive_null, 'l-diversity', (SELECT o.ok FROM __anon_ok AS o)) WHERE (SELECT o.ok FROM __anon_ok AS o)),
  __anon_measures AS (
    SELECT class, any_value(size)::BIGINT AS size,
           CASE anon_name(variant)
             WHEN 'distinct' THEN count(*) FILTER (WHERE n > 0)::DOUBLE
             WHEN 'entropy' THEN CASE WHEN any_value(nn) > 0
                                      THEN exp(-sum(n::DOUBLE / nn * ln(CASE WHEN n > 0 THEN n::DOUBLE / nn END)) FILTER (WHERE n > 0)) ELSE 0 END
             ELSE CASE WHEN coalesce(sum(n) FILTER (WHERE r >= TRY_CAST(l AS DOUBLE)), 0) > 0
                       THEN max(n)::DOUBLE / sum(n) FILTER (WHERE r >= TRY_CAST(l AS DOUBLE)) ELSE 'inf'::DOUBLE END END AS measure
    FROM __anon_ranked GROUP BY class)
  SELECT class, size, measure,
         CASE anon_name(variant) WHEN 'distinct' THEN measure >= TRY_CAST(l AS DOUBLE)  -- l read as checked (l := 'x': a Binder Error)
                      WHEN 'entropy' THEN measure >= TRY_CAST(l AS DOUBLE) * (1 - 1e-12)
                      ELSE measure < c END AS satisfied
  FROM __anon_measures ORDER BY class ASC NULLS LAST;

-- anon_check_closeness(sensitive, distance, hierarchy): true, or an error when distance is
-- not 'equal', 'ordered' or 'hierarchical', a hierarchy is named with another distance, or no
-- hierarchy is loaded as `hierarchy` (default: the sensitive attribute's name) for 'hierarchical'.
-- Twin: polars_anon.privacy.TCloseness (its checks)
CREATE OR REPLACE TEMP MACRO anon_check_closeness(sensitive, distance, hierarchy) AS
  CASE CASE WHEN anon_check_names_arg('hierarchy', hierarchy, false)
            THEN anon_check_choice('t-closeness on ' || anon_msg_repr(sensitive) || ': distance', distance,
                                   ['equal', 'ordered', 'hierarchical']) END
    WHEN 'hierarchical' THEN
      CASE WHEN NOT EXISTS (SELECT 1 FROM anon_nodes AS __anon_n WHERE __anon_n.hierarchy = coalesce(anon_name(hierarchy), anon_name(sensitive)))
           THEN error(anon_msg_hierarchy_not_loaded('t-closeness on ' || anon_msg_repr(sensitive) || ': ', coalesce(anon_name(hierarchy), anon_name(sensitive))))
           ELSE true END
    ELSE
      CASE WHEN anon_name(hierarchy) IS NOT NULL
           THEN error(anon_msg_distance_parameter('t-closeness on ' || anon_msg_repr(sensitive) || ': ', 'hierarchy', 'hierarchical', anon_name(distance)))
           ELSE true END END;

-- anon_t_closeness(tbl, qids, sensitive, t := 0.2, distance := 'equal', hierarchy := NULL): per
-- class: class, size, measure (the Earth Mover's distance to the table's distribution: equal
-- ground distance; ordered over the values in sort order; or hierarchical, over the loaded
-- hierarchy named `hierarchy`, by default the sensitive attribute's name, as the flow over its
-- edges: sum over nodes N below the root of (level(parent) - level(N)) / (2 level(root)) times
-- |sum of p - q over N's leaves|) and satisfied (measure <= t). 'hierarchical' refuses a value
-- (matched as text) that is not a leaf of the hierarchy, naming the first in text order.
-- sensitive_null as anon_class_shares (a class without a value read: measure infinite).
-- Twin: polars_anon.privacy.evaluate.class_measures with polars_anon.privacy.TCloseness
CREATE OR REPLACE TEMP MACRO anon_t_closeness(tbl, qids, sensitive, t := 0.2, distance := 'equal', hierarchy := NULL,
                                              sensitive_null := 'error') AS TABLE
  WITH __anon_ok AS MATERIALIZED (
    SELECT CASE WHEN anon_check_closeness(sensitive, distance, hierarchy)
                 AND anon_check_fraction('t-closeness on ' || anon_msg_repr(sensitive), 't', t) IS NOT NULL
                THEN anon_check_model_table(tbl, qids, sensitive, 't-closeness') END AS ok),
  __anon_shares AS (
    FROM anon_class_shares_of(tbl, qids, sensitive, sensitive_null, 't-closeness', (SELECT o.ok FROM __anon_ok AS o)) WHERE (SELECT o.ok FROM __anon_ok AS o)),
  __anon_cum AS (
    SELECT class, size, nn, m, p, q,
           sum(p - q) OVER (PARTITION BY class ORDER BY rank ASC NULLS LAST ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS cum
    FROM __anon_shares),
  __anon_measures AS (
    SELECT class, any_value(size)::BIGINT AS size, any_value(nn) AS nn,
           CASE anon_name(distance)
             WHEN 'equal' THEN sum(abs(p - q)) / 2
             WHEN 'ordered' THEN CASE WHEN any_value(m) > 1 THEN sum(abs(cum)) / (any_value(m) - 1) ELSE 0 END END AS measure
    FROM __anon_cum GROUP BY class),
  __anon_leaves AS MATERIALIZED (  -- each value of the table and its leaf node (NULL: not a leaf)
    SELECT v.value, n.node
    FROM (SELECT DISTINCT value FROM __anon_shares WHERE anon_name(distance) = 'hierarchical' AND m IS NOT NULL) AS v
    LEFT JOIN anon_nodes AS n ON n.hierarchy = coalesce(anon_name(hierarchy), anon_name(sensitive)) AND n.level = 0 AND n.label = v.value::VARCHAR),
  __anon_leaves_ok AS MATERIALIZED (
    SELECT CASE WHEN bool_or(node IS NULL)
                THEN error(anon_msg_not_a_leaf(anon_name(sensitive), min(value::VARCHAR) FILTER (WHERE node IS NULL))) ELSE true END AS ok
    FROM __anon_leaves),
  __anon_edges AS (  -- each leaf, each of its ancestors below the root, and that ancestor's edge weight
    SELECT c.leaf, c.ancestor, (p.level - a.level)::DOUBLE / (2 * r.level) AS w
    FROM anon_closure AS c
    JOIN anon_nodes AS a ON a.hierarchy = c.hierarchy AND a.node = c.ancestor
    JOIN anon_nodes AS p ON p.hierarchy = c.hierarchy AND p.node = a.parent
    JOIN anon_nodes AS r ON r.hierarchy = c.hierarchy AND r.parent IS NULL
    WHERE c.hierarchy = coalesce(anon_name(hierarchy), anon_name(sensitive))),
  __anon_flows AS (
    SELECT s.class, e.ancestor, any_value(e.w) AS w, sum(s.p - s.q) AS extra
    FROM __anon_shares AS s
    JOIN __anon_leaves AS l ON l.value IS NOT DISTINCT FROM s.value
    JOIN __anon_edges AS e ON e.leaf = l.node
    WHERE (SELECT o.ok FROM __anon_leaves_ok AS o)
    GROUP BY s.class, e.ancestor),
  __anon_hierarchical AS (SELECT class, sum(w * abs(extra)) AS measure FROM __anon_flows GROUP BY class),
  __anon_all AS (
    SELECT m.class, m.size,
           CASE WHEN m.nn = 0 THEN 'inf'::DOUBLE
                WHEN anon_name(distance) = 'hierarchical' THEN coalesce(h.measure, 0) ELSE m.measure END AS measure
    FROM __anon_measures AS m LEFT JOIN __anon_hierarchical AS h ON h.class IS NOT DISTINCT FROM m.class)
  SELECT class, size, measure, measure <= TRY_CAST(t AS DOUBLE) + 1e-12 AS satisfied FROM __anon_all ORDER BY class ASC NULLS LAST;

-- anon_delta_disclosure(tbl, qids, sensitive, delta := 1.0): per class: class, size, measure
-- (the largest |ln(p / q)| over the values the class holds) and satisfied (measure < delta);
-- sensitive_null as anon_class_shares (a class without a value read: measure infinite).
-- Twin: polars_anon.privacy.evaluate.class_measures with polars_anon.privacy.DeltaDisclosure
CREATE OR REPLACE TEMP MACRO anon_delta_disclosure(tbl, qids, sensitive, delta := 1.0, sensitive_null := 'error') AS TABLE
  WITH __anon_ok AS MATERIALIZED (
    SELECT CASE WHEN anon_check_positive('delta-disclosure on ' || anon_msg_repr(sensitive), 'delta', delta) IS NOT NULL
                THEN anon_check_model_table(tbl, qids, sensitive, 'delta-disclosure') END AS ok)
  , __anon_measures AS (
    SELECT class, any_value(size)::BIGINT AS size,
           CASE WHEN any_value(nn) > 0 THEN max(abs(ln(CASE WHEN n > 0 THEN p / q END))) FILTER (WHERE n > 0) ELSE 'inf'::DOUBLE END AS measure
    FROM anon_class_shares_of(tbl, qids, sensitive, sensitive_null, 'delta-disclosure', (SELECT o.ok FROM __anon_ok AS o))
    WHERE (SELECT o.ok FROM __anon_ok AS o) GROUP BY class)
  SELECT class, size, measure, measure < TRY_CAST(delta AS DOUBLE) AS satisfied FROM __anon_measures ORDER BY class ASC NULLS LAST;

-- anon_beta_likeness(tbl, qids, sensitive, beta := 1.0, variant := 'basic'): per class: class,
-- size, measure (the largest relative gain (p - q) / q over the values the class holds;
-- enhanced: infinite when a gain exceeds -ln q) and satisfied (measure <= beta); sensitive_null as
-- anon_class_shares (a class without a value read: measure infinite).
-- Twin: polars_anon.privacy.evaluate.class_measures with polars_anon.privacy.BetaLikeness
CREATE OR REPLACE TEMP MACRO anon_beta_likeness(tbl, qids, sensitive, beta := 1.0, variant := 'basic',
                                                sensitive_null := 'error') AS TABLE
  WITH __anon_ok AS MATERIALIZED (
    SELECT CASE WHEN anon_check_choice('beta-likeness on ' || anon_msg_repr(sensitive) || ': variant', variant,
                                       ['basic', 'enhanced']) IS NOT NULL
                 AND anon_check_positive('beta-likeness on ' || anon_msg_repr(sensitive), 'beta', beta) IS NOT NULL
                THEN anon_check_model_table(tbl, qids, sensitive, 'beta-likeness') END AS ok),
  __anon_measures AS (
    SELECT class, any_value(size)::BIGINT AS size,
           CASE WHEN any_value(nn) = 0 THEN 'inf'::DOUBLE
                WHEN anon_name(variant) = 'enhanced'
                     AND bool_or((p - q) / q > -ln(q) * (1 + 1e-12)) FILTER (WHERE n > 0) THEN 'inf'::DOUBLE
                ELSE greatest(max((p - q) / q) FILTER (WHERE n > 0), 0) END AS measure
    FROM anon_class_shares_of(tbl, qids, sensitive, sensitive_null, 'beta-likeness', (SELECT o.ok FROM __anon_ok AS o))
    WHERE (SELECT o.ok FROM __anon_ok AS o) GROUP BY class)
  SELECT class, size, measure, measure <= TRY_CAST(beta AS DOUBLE) * (1 + 1e-12) AS satisfied FROM __anon_measures ORDER BY class ASC NULLS LAST;

-- anon_risk(tbl, qids, threshold := 0.2): one row of prosecutor risk: n_rows, n_classes,
-- highest, lowest, average (classes / rows), records_at_risk (share of rows whose risk
-- 1 / size is above threshold) and sample_uniques (share of rows alone in their class).
-- Refuses a qid named 'count', 'size' or '__anon_*', a threshold outside [0, 1] and an empty
-- table, as Python does; DuckDB's names ignore case, so 'Size' or 'COUNT' is refused too (Python takes them).
-- Twin: polars_anon.privacy.risk.risk
CREATE OR REPLACE TEMP MACRO anon_risk(tbl, qids, threshold := 0.2) AS TABLE
  WITH __anon_ok AS MATERIALIZED (  -- qids, then their names, then threshold, then an empty table: Python's order
    SELECT CASE WHEN anon_check_qids(tbl, qids) THEN CASE WHEN anon_check_reserved(anon_names(qids))
                THEN anon_check_fraction('risk', 'threshold', threshold) END END AS ok),
  __anon_sizes AS (
    SELECT COLUMNS(lambda c: list_contains(anon_names(qids), c) OR c = '__anon_none'), count(*)::BIGINT AS size
    FROM (SELECT *, NULL AS __anon_none FROM query_table(anon_table(tbl))) AS t
    WHERE (SELECT o.ok IS NOT NULL FROM __anon_ok AS o)
    GROUP BY ALL)
  SELECT CASE WHEN count(*) = 0
              THEN error(anon_msg_no_rows('risk', 'an empty table has no risk to measure (nor is it a release)'))
              ELSE sum(size)::BIGINT END AS n_rows, count(*)::BIGINT AS n_classes,
         1::DOUBLE / min(size) AS highest, 1::DOUBLE / max(size) AS lowest, count(*)::DOUBLE / sum(size) AS average,
         coalesce(sum(size) FILTER (WHERE 1::DOUBLE / size > TRY_CAST(threshold AS DOUBLE)), 0)::DOUBLE / sum(size) AS records_at_risk,
         coalesce(sum(size) FILTER (WHERE size = 1), 0)::DOUBLE / sum(size) AS sample_uniques
  FROM __anon_sizes;
