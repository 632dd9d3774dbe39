-- Information-loss metrics: one macro anon_<name> per entry of polars_anon.metrics.METRICS.
--
-- Calling convention (every metric macro):
--   FROM anon_<name>(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL)
-- orig, anon  names of the tables/views holding the original and the anonymized rows
--             (e.g. views over read_parquet(...)); only the qids, the key and the
--             sensitive column are read.
-- qids        the quasi-identifier columns, a VARCHAR list; each hierarchy must be loaded
--             under its qid's name with polars_anon.duckdb.load_hierarchy (anon_nodes,
--             anon_closure, anon_levels).
-- key         a unique row id column in both tables. Original rows whose key is absent
--             from anon are the suppressed rows. Without a key the rows are lined up by
--             position (POSITIONAL JOIN): anon must then keep every row (suppressed rows
--             published as the roots).
-- sensitive   the sensitive (class) column: needed by anon_cm and anon_mi_loss.
-- k           the requested k (anon_k, anon_c_avg).
-- Result: rows (attribute VARCHAR, value DOUBLE or BIGINT); the row with a NULL attribute is
-- the whole-table value, the others the value per quasi-identifier, as the Polars twin.
-- Suppressed rows count as published at the roots in every cell-level metric; the
-- class-level metrics set them apart. Logarithms are natural.

-- anon_metric_pairs(orig, anon, qids, key := NULL, sensitive := NULL): one row per distinct
-- (original tuple, published tuple, sensitive value, suppressed): o and p (VARCHAR[] in qids
-- order; p is NULL for suppressed rows), s (VARCHAR), suppressed (BOOLEAN), size (BIGINT).
-- The one pass over the rows that every metric starts from.
-- Twin: polars_anon.metrics.data.prepare
CREATE OR REPLACE TEMP MACRO anon_metric_pairs(orig, anon, qids, key := NULL, sensitive := NULL) AS TABLE
  WITH
  o AS (
    SELECT COLUMNS(lambda c: c = coalesce(key, '__anon_nokey')) AS __anon_key,
           COLUMNS(lambda c: list_contains(qids, c)),
           COLUMNS(lambda c: c = coalesce(sensitive, '__anon_nos'))::VARCHAR AS __anon_s,
           true AS __anon_in
    FROM (SELECT *, NULL::BIGINT AS __anon_nokey, NULL::VARCHAR AS __anon_nos FROM query_table(orig::VARCHAR))),
  a AS (
    SELECT COLUMNS(lambda c: c = coalesce(key, '__anon_nokey')) AS __anon_key,
           COLUMNS('^(' || array_to_string(list_transform(qids, lambda x: regexp_escape(x)), '|') || ')$') AS '__anon_p_\1',
           true AS __anon_hit
    FROM (SELECT *, NULL::BIGINT AS __anon_nokey FROM query_table(anon::VARCHAR))),
  j AS (
    SELECT COLUMNS(lambda c: c <> '__anon_key') FROM o POSITIONAL JOIN a WHERE key IS NULL
    UNION ALL BY NAME
    SELECT COLUMNS(lambda c: c <> '__anon_key') FROM o LEFT JOIN a ON o.__anon_key = a.__anon_key WHERE key IS NOT NULL),
  g AS (
    SELECT COLUMNS(lambda c: list_contains(qids, c) OR starts_with(c, '__anon_p_')), __anon_s,
           __anon_in IS NULL AS __anon_no_orig, __anon_hit IS NULL AS __anon_suppressed, count(*) AS __anon_size
    FROM j GROUP BY ALL),
  m AS (
    SELECT struct_pack(*COLUMNS(lambda c: list_contains(qids, c)))::MAP(VARCHAR, VARCHAR) AS om,
           struct_pack(*COLUMNS(lambda c: starts_with(c, '__anon_p_')))::MAP(VARCHAR, VARCHAR) AS pm,
           __anon_s, __anon_no_orig, __anon_suppressed, __anon_size
    FROM g)
  SELECT
    CASE WHEN m.__anon_no_orig OR (key IS NULL AND m.__anon_suppressed)
         THEN error('the original and the anonymized table have different row counts; without a key they are '
                    || 'lined up by position, so suppressed rows must be kept (published as the roots); '
                    || 'pass key := ''<row id column>'' when rows were removed')
         ELSE list_transform(qids, lambda q: map_extract_value(m.om, q)) END AS o,
    CASE WHEN m.__anon_suppressed THEN NULL ELSE list_transform(qids, lambda q: map_extract_value(m.pm, '__anon_p_' || q)) END AS p,
    m.__anon_s AS s, m.__anon_suppressed AS suppressed, m.__anon_size AS size
  FROM m;

-- anon_metric_nodes(qids): the facts of every node of the qids' hierarchies: i (qid index),
-- attribute, node, label, leaves, level, is_root, parent_level, h (height), n_leaves, numeric
-- (every leaf label a plain decimal number), num_lo/num_hi/num_mean (leaf values under the
-- node, numeric hierarchies only), domain (num_hi - num_lo of the root), and R of the seven
-- edge metrics of paper 001 §4 (weight from the node up to the root; cell cost R[leaf] - R[v]).
-- Twin: polars_anon.metrics.data.node_stats
CREATE OR REPLACE TEMP MACRO anon_metric_nodes(qids) AS TABLE
  WITH
  q AS (SELECT unnest(qids) AS attribute, unnest(range(len(qids))) AS i),
  n AS (
    SELECT q.i, q.attribute,
           CASE WHEN t.node IS NULL THEN error('qid ''' || q.attribute || ''' has no hierarchy loaded; call '
                                               || 'polars_anon.duckdb.load_hierarchy(con, ''' || q.attribute || ''', h)')
                ELSE t.node END AS node,
           t.label, t.parent, t.leaves, t.level
    FROM q LEFT JOIN anon_nodes AS t ON t.hierarchy = q.attribute),
  v AS (
    SELECT lf.i, cl.ancestor AS node, min(TRY_CAST(lf.label AS DOUBLE)) AS lo, max(TRY_CAST(lf.label AS DOUBLE)) AS hi,
           avg(TRY_CAST(lf.label AS DOUBLE)) AS mean
    FROM n AS lf JOIN anon_closure AS cl ON cl.hierarchy = lf.attribute AND cl.leaf = lf.node
    WHERE lf.level = 0
    GROUP BY lf.i, cl.ancestor),
  hs AS (
    SELECT n.i, max(n.level) + 1 AS h, max(n.leaves) AS n_leaves,
           bool_and(regexp_full_match(n.label, '-?[0-9]+(\.[0-9]+)?')) FILTER (WHERE n.level = 0) AS numeric
    FROM n GROUP BY n.i),
  w AS (
    SELECT hs.*, max(hs.h) OVER () AS h_max,
           CASE WHEN len(qids) = 1 OR sum(pow(hs.h - 1, len(qids))) OVER () = 0 THEN 1.0
                ELSE 1.0 - pow(hs.h - 1, len(qids)) / sum(pow(hs.h - 1, len(qids))) OVER () END AS wid,
           coalesce(list_sum(list_transform(range(1, hs.h), lambda j: 1.0 / (hs.h - j))), 0.0) AS cum_top
    FROM hs),
  f AS (
    SELECT n.i, n.attribute, n.node, n.label, n.leaves, n.level, n.parent IS NULL AS is_root, pn.level AS parent_level,
           w.h, w.n_leaves, w.numeric, w.h_max, w.wid, w.cum_top,
           coalesce(list_sum(list_transform(range(1, n.level + 1), lambda j: 1.0 / (w.h - j))), 0.0) AS cum,
           CASE WHEN w.numeric THEN v.lo END AS num_lo, CASE WHEN w.numeric THEN v.hi END AS num_hi,
           CASE WHEN w.numeric THEN v.mean END AS num_mean
    FROM n JOIN w ON w.i = n.i
    LEFT JOIN n AS pn ON pn.i = n.i AND pn.node = n.parent
    LEFT JOIN v ON v.i = n.i AND v.node = n.node)
  SELECT f.i, f.attribute, f.node, f.label, f.leaves, f.level, f.is_root, f.parent_level, f.h, f.n_leaves, f.numeric,
         f.num_lo, f.num_hi, f.num_mean,
         max(f.num_hi) OVER (PARTITION BY f.i) - min(f.num_lo) OVER (PARTITION BY f.i) AS domain,
         CASE WHEN f.h > 1 THEN (f.cum_top - f.cum) / f.cum_top * f.wid ELSE 0.0 END AS r_distortion,
         (f.n_leaves - f.leaves) / f.n_leaves AS r_ncp,
         CASE WHEN f.h > 1 THEN (f.h - 1 - f.level) / (f.h - 1) ELSE 0.0 END AS r_total,
         (f.n_leaves - f.leaves) * f.h_max / f.h AS r_llm,
         (f.n_leaves - f.leaves) / f.n_leaves * f.h_max / f.h AS r_nllm,
         (f.n_leaves - f.leaves) * f.wid AS r_wllm,
         (f.n_leaves - f.leaves) / f.n_leaves * f.wid AS r_wnllm
  FROM f;

-- anon_metric_refuse(qids, side, i, label, node, level): true, or an error naming the column
-- when the i-th qid's label on side 'o' (original: must be a leaf) or 'p' (anonymized: must
-- be a node) found no node (node NULL) or is an inner node of an original value. Used as a
-- filter so that it runs whatever columns a metric reads.
-- Twin: polars_anon.metrics.data._check_pairs
CREATE OR REPLACE TEMP MACRO anon_metric_refuse(qids, side, i, label, node, level) AS
  CASE WHEN node IS NULL OR (side = 'o' AND level > 0)
       THEN error('column ''' || qids[i + 1] || ''' in the ' || CASE WHEN side = 'o' THEN 'original' ELSE 'anonymized' END
                  || ' table: value ' || coalesce('''' || label || '''', 'NULL') || ' is not a '
                  || CASE WHEN side = 'o' THEN 'leaf' ELSE 'node' END || ' of its hierarchy')
       ELSE true END;

-- anon_metric_pair_cells(orig, anon, qids, key := NULL, sensitive := NULL, per_pair := true):
-- the pairs unnested to one row per (pair, qid): pair, i, attribute, s, suppressed, size, the
-- leaf (node id and l_* facts) and the published node (pub, p_* facts; the root for
-- suppressed rows), and the hierarchy's h, n_leaves, numeric, domain. With per_pair := false,
-- summed per (qid, leaf, published value, suppressed) before the node lookups (pair and s
-- NULL): the cells of the cell-level metrics, far fewer rows. Refuses an original value that
-- is not a leaf and a published value that is not a node.
-- Twin: polars_anon.metrics.data.MetricData (its pairs, joined to node_stats)
CREATE OR REPLACE TEMP MACRO anon_metric_pair_cells(orig, anon, qids, key := NULL, sensitive := NULL, per_pair := true) AS TABLE
  WITH
  pr AS (SELECT row_number() OVER () AS pair, * FROM anon_metric_pairs(orig, anon, qids, key := key, sensitive := sensitive)),
  nd AS MATERIALIZED (FROM anon_metric_nodes(qids)),
  u AS (
    SELECT pr.pair, r.i, pr.o[r.i + 1] AS leaf_label, pr.p[r.i + 1] AS pub_label, pr.s, pr.suppressed, pr.size
    FROM pr CROSS JOIN range(len(qids)) AS r(i) WHERE per_pair
    UNION ALL
    SELECT NULL, r.i, pr.o[r.i + 1], pr.p[r.i + 1], NULL, pr.suppressed, sum(pr.size)
    FROM pr CROSS JOIN range(len(qids)) AS r(i) WHERE NOT per_pair
    GROUP BY ALL),
  c AS (
    SELECT u.pair, u.i, qids[u.i + 1] AS attribute, u.leaf_label,
           CASE WHEN u.suppressed THEN rt.label ELSE u.pub_label END AS pub_label, u.s, u.suppressed, u.size
    FROM u
    JOIN nd AS rt ON rt.i = u.i AND rt.is_root)
  SELECT c.pair, c.i, c.attribute, c.s, c.suppressed, c.size, l.node AS leaf, p.node AS pub,
         c.leaf_label, c.pub_label, p.h, p.n_leaves, p.numeric, p.domain,
         l.num_lo AS l_num_lo,
         l.r_distortion AS l_r_distortion, l.r_ncp AS l_r_ncp, l.r_total AS l_r_total, l.r_llm AS l_r_llm,
         l.r_nllm AS l_r_nllm, l.r_wllm AS l_r_wllm, l.r_wnllm AS l_r_wnllm,
         p.leaves AS p_leaves, p.level AS p_level, p.is_root AS p_is_root, p.parent_level AS p_parent_level,
         p.num_lo AS p_num_lo, p.num_hi AS p_num_hi, p.num_mean AS p_num_mean,
         p.r_distortion AS p_r_distortion, p.r_ncp AS p_r_ncp, p.r_total AS p_r_total, p.r_llm AS p_r_llm,
         p.r_nllm AS p_r_nllm, p.r_wllm AS p_r_wllm, p.r_wnllm AS p_r_wnllm
  FROM c
  LEFT JOIN nd AS l ON l.i = c.i AND l.label = c.leaf_label
  LEFT JOIN nd AS p ON p.i = c.i AND p.label = c.pub_label
  WHERE anon_metric_refuse(qids, 'o', c.i, c.leaf_label, l.node, l.level)
    AND anon_metric_refuse(qids, 'p', c.i, c.pub_label, p.node, p.level);

-- anon_metric_cells(orig, anon, qids, key := NULL, sensitive := NULL): one row per (attribute,
-- i, leaf, pub, suppressed) with its size and the node facts of anon_metric_pair_cells.
-- Twin: polars_anon.metrics.data.MetricData.cells
CREATE OR REPLACE TEMP MACRO anon_metric_cells(orig, anon, qids, key := NULL, sensitive := NULL) AS TABLE
  SELECT COLUMNS(lambda c: c NOT IN ('pair', 's', 'leaf_label', 'pub_label'))
  FROM anon_metric_pair_cells(orig, anon, qids, key := key, per_pair := false);

-- ---------------------------------------------------------------- paper 001: the cost model
-- anon_metric_edge_cost(orig, anon, qids, key := NULL, metric := 'ncp'): one of the seven
-- edge-weight metrics of paper 001 §4: sum over cells of size * (R[leaf] - R[v]), the whole
-- table and per qid (rows attribute, value DOUBLE). The seven anon_<metric> macros call it.
-- Twin: polars_anon.metrics.cost.edge_cost
CREATE OR REPLACE TEMP MACRO anon_metric_edge_cost(orig, anon, qids, key := NULL, metric := 'ncp') AS TABLE
  WITH w AS (
    SELECT attribute, i, size, COLUMNS(lambda c: c = 'l_r_' || metric) AS l_r, COLUMNS(lambda c: c = 'p_r_' || metric) AS p_r
    FROM anon_metric_cells(orig, anon, qids, key := key))
  SELECT w.attribute, sum(w.size * (w.l_r - w.p_r))::DOUBLE AS value
  FROM w GROUP BY GROUPING SETS ((w.attribute, w.i), ()) ORDER BY w.i NULLS FIRST;

-- anon_distortion(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): Distortion,
-- sum over cells of R[leaf] - R[v] with the Distortion edge weights (wid factors). DOUBLE.
-- Twin: polars_anon.metrics.cost.distortion
CREATE OR REPLACE TEMP MACRO anon_distortion(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric_edge_cost(orig, anon, qids, key := key, metric := 'distortion');

-- anon_ncp(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): NCP, sum over cells
-- of (nl(v) - 1) / nl(G). DOUBLE.
-- Twin: polars_anon.metrics.cost.ncp
CREATE OR REPLACE TEMP MACRO anon_ncp(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric_edge_cost(orig, anon, qids, key := key, metric := 'ncp');

-- anon_total(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): Total, sum over
-- cells of l_v / (h - 1). DOUBLE.
-- Twin: polars_anon.metrics.cost.total
CREATE OR REPLACE TEMP MACRO anon_total(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric_edge_cost(orig, anon, qids, key := key, metric := 'total');

-- anon_llm(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): LLM, sum over cells
-- of (nl(v) - 1) h_max / h. DOUBLE.
-- Twin: polars_anon.metrics.cost.llm
CREATE OR REPLACE TEMP MACRO anon_llm(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric_edge_cost(orig, anon, qids, key := key, metric := 'llm');

-- anon_nllm(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): NLLM, sum over cells
-- of (nl(v) - 1) / nl(G) h_max / h. DOUBLE.
-- Twin: polars_anon.metrics.cost.nllm
CREATE OR REPLACE TEMP MACRO anon_nllm(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric_edge_cost(orig, anon, qids, key := key, metric := 'nllm');

-- anon_wllm(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): WLLM, sum over cells
-- of (nl(v) - 1) wid(Q). DOUBLE.
-- Twin: polars_anon.metrics.cost.wllm
CREATE OR REPLACE TEMP MACRO anon_wllm(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric_edge_cost(orig, anon, qids, key := key, metric := 'wllm');

-- anon_wnllm(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): WNLLM, sum over
-- cells of (nl(v) - 1) / nl(G) wid(Q). DOUBLE.
-- Twin: polars_anon.metrics.cost.wnllm
CREATE OR REPLACE TEMP MACRO anon_wnllm(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric_edge_cost(orig, anon, qids, key := key, metric := 'wnllm');

-- anon_alteration(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): percentage of
-- alteration against T* (every cell at the root), averaged over the seven metrics; a metric
-- with m(T*) = 0 is left out (0 when all are). DOUBLE in [0, 100].
-- Twin: polars_anon.metrics.cost.alteration
CREATE OR REPLACE TEMP MACRO anon_alteration(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  SELECT c.attribute,
         coalesce(list_avg(list_filter([
    CASE WHEN sum(c.size * c.l_r_distortion) > 0 THEN 100.0 * sum(c.size * (c.l_r_distortion - c.p_r_distortion)) / sum(c.size * c.l_r_distortion) END,
    CASE WHEN sum(c.size * c.l_r_ncp) > 0 THEN 100.0 * sum(c.size * (c.l_r_ncp - c.p_r_ncp)) / sum(c.size * c.l_r_ncp) END,
    CASE WHEN sum(c.size * c.l_r_total) > 0 THEN 100.0 * sum(c.size * (c.l_r_total - c.p_r_total)) / sum(c.size * c.l_r_total) END,
    CASE WHEN sum(c.size * c.l_r_llm) > 0 THEN 100.0 * sum(c.size * (c.l_r_llm - c.p_r_llm)) / sum(c.size * c.l_r_llm) END,
    CASE WHEN sum(c.size * c.l_r_nllm) > 0 THEN 100.0 * sum(c.size * (c.l_r_nllm - c.p_r_nllm)) / sum(c.size * c.l_r_nllm) END,
    CASE WHEN sum(c.size * c.l_r_wllm) > 0 THEN 100.0 * sum(c.size * (c.l_r_wllm - c.p_r_wllm)) / sum(c.size * c.l_r_wllm) END,
    CASE WHEN sum(c.size * c.l_r_wnllm) > 0 THEN 100.0 * sum(c.size * (c.l_r_wnllm - c.p_r_wnllm)) / sum(c.size * c.l_r_wnllm) END
         ], lambda r: r IS NOT NULL)), 0.0)::DOUBLE AS value
  FROM anon_metric_cells(orig, anon, qids, key := key) AS c
  GROUP BY GROUPING SETS ((c.attribute, c.i), ()) ORDER BY c.i NULLS FIRST;

-- anon_modified(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): percentage of
-- cells published as anything but their original value. DOUBLE in [0, 100].
-- Twin: polars_anon.metrics.cost.modified
CREATE OR REPLACE TEMP MACRO anon_modified(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  SELECT c.attribute,
         CASE WHEN sum(c.size) > 0 THEN 100.0 * sum(CASE WHEN c.leaf <> c.pub THEN c.size ELSE 0 END) / sum(c.size) ELSE 0.0 END AS value
  FROM anon_metric_cells(orig, anon, qids, key := key) AS c
  GROUP BY GROUPING SETS ((c.attribute, c.i), ()) ORDER BY c.i NULLS FIRST;

-- anon_deleted(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): percentage of
-- cells generalized to the root of their hierarchy. DOUBLE in [0, 100].
-- Twin: polars_anon.metrics.cost.deleted
CREATE OR REPLACE TEMP MACRO anon_deleted(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  SELECT c.attribute,
         CASE WHEN sum(c.size) > 0
              THEN 100.0 * sum(CASE WHEN c.p_is_root AND c.leaf <> c.pub THEN c.size ELSE 0 END) / sum(c.size) ELSE 0.0 END AS value
  FROM anon_metric_cells(orig, anon, qids, key := key) AS c
  GROUP BY GROUPING SETS ((c.attribute, c.i), ()) ORDER BY c.i NULLS FIRST;

-- anon_deleted_of_modified(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL):
-- percentage of deleted cells among the modified ones (0 when none is modified). DOUBLE.
-- Twin: polars_anon.metrics.cost.deleted_of_modified
CREATE OR REPLACE TEMP MACRO anon_deleted_of_modified(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  SELECT c.attribute,
         CASE WHEN sum(CASE WHEN c.leaf <> c.pub THEN c.size ELSE 0 END) > 0
              THEN 100.0 * sum(CASE WHEN c.p_is_root AND c.leaf <> c.pub THEN c.size ELSE 0 END)
                         / sum(CASE WHEN c.leaf <> c.pub THEN c.size ELSE 0 END)
              ELSE 0.0 END AS value
  FROM anon_metric_cells(orig, anon, qids, key := key) AS c
  GROUP BY GROUPING SETS ((c.attribute, c.i), ()) ORDER BY c.i NULLS FIRST;

-- ---------------------------------------------------------------- papers 002 and 003: cells
-- anon_granularity(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): sum over
-- cells of (nl(v) - 1) / nl(G). DOUBLE.
-- Twin: polars_anon.metrics.cells.granularity
CREATE OR REPLACE TEMP MACRO anon_granularity(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  SELECT c.attribute, sum(c.size * (c.p_leaves - 1) / c.n_leaves)::DOUBLE AS value
  FROM anon_metric_cells(orig, anon, qids, key := key) AS c
  GROUP BY GROUPING SETS ((c.attribute, c.i), ()) ORDER BY c.i NULLS FIRST;

-- anon_iloss(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): ILoss, sum over
-- cells of (|v_g| - 1) / |D_A|: the same sum as anon_granularity. DOUBLE.
-- Twin: polars_anon.metrics.cells.iloss
CREATE OR REPLACE TEMP MACRO anon_iloss(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_granularity(orig, anon, qids, key := key);

-- anon_precision(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): Precision,
-- 1 - mean over cells of l_v / (h - 1). DOUBLE in [0, 1].
-- Twin: polars_anon.metrics.cells.precision
CREATE OR REPLACE TEMP MACRO anon_precision(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  SELECT c.attribute,
         1.0 - sum(c.size * CASE WHEN c.h > 1 THEN c.p_level / (c.h - 1) ELSE 0.0 END) / sum(c.size) AS value
  FROM anon_metric_cells(orig, anon, qids, key := key) AS c
  GROUP BY GROUPING SETS ((c.attribute, c.i), ()) ORDER BY c.i NULLS FIRST;

-- anon_information_loss(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): Byun's
-- information loss: per cell the node's leaf range over the domain range (numeric) or
-- l_v / (h - 1) (others), summed. DOUBLE.
-- Twin: polars_anon.metrics.cells.information_loss
CREATE OR REPLACE TEMP MACRO anon_information_loss(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  SELECT c.attribute,
         sum(c.size * CASE WHEN c.numeric THEN (CASE WHEN c.domain > 0 THEN (c.p_num_hi - c.p_num_lo) / c.domain ELSE 0.0 END)
                           WHEN c.h > 1 THEN c.p_level / (c.h - 1) ELSE 0.0 END)::DOUBLE AS value
  FROM anon_metric_cells(orig, anon, qids, key := key) AS c
  GROUP BY GROUPING SETS ((c.attribute, c.i), ()) ORDER BY c.i NULLS FIRST;

-- anon_metric_levels(orig, anon, qids, key := NULL): per qid i, attribute, h and its
-- full-domain level L (the highest published level of the kept rows), NULL when some kept
-- cell is not published at level L.
-- Twin: polars_anon.metrics.cells._levels
CREATE OR REPLACE TEMP MACRO anon_metric_levels(orig, anon, qids, key := NULL) AS TABLE
  WITH
  c AS MATERIALIZED (SELECT * FROM anon_metric_cells(orig, anon, qids, key := key) WHERE NOT suppressed),
  top AS (SELECT c.i, max(c.p_level) AS L FROM c GROUP BY c.i),
  ok AS (
    SELECT c.i, bool_and(c.p_level <= top.L AND (c.p_parent_level IS NULL OR c.p_parent_level > top.L)) AS ok
    FROM c JOIN top ON top.i = c.i GROUP BY c.i),
  nd AS (SELECT i, attribute, h FROM anon_metric_nodes(qids) WHERE is_root)
  SELECT nd.i, nd.attribute, nd.h, CASE WHEN coalesce(ok.ok, true) THEN coalesce(top.L, 0) END AS L
  FROM nd LEFT JOIN top ON top.i = nd.i LEFT JOIN ok ON ok.i = nd.i;

-- anon_absolute_distance(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): sum of
-- the full-domain levels (inferred as anon_metric_levels); NULL unless full-domain. BIGINT.
-- Twin: polars_anon.metrics.cells.absolute_distance
CREATE OR REPLACE TEMP MACRO anon_absolute_distance(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  SELECT l.attribute, (CASE WHEN count(*) = count(l.L) THEN sum(l.L) END)::BIGINT AS value
  FROM anon_metric_levels(orig, anon, qids, key := key) AS l
  GROUP BY GROUPING SETS ((l.attribute, l.i), ()) ORDER BY l.i NULLS FIRST;

-- anon_relative_distance(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): sum of
-- L / (h - 1) over the qids; NULL unless full-domain. DOUBLE.
-- Twin: polars_anon.metrics.cells.relative_distance
CREATE OR REPLACE TEMP MACRO anon_relative_distance(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  SELECT l.attribute,
         CASE WHEN count(*) = count(l.L) THEN sum(CASE WHEN l.h > 1 THEN l.L / (l.h - 1) ELSE 0.0 END) END::DOUBLE AS value
  FROM anon_metric_levels(orig, anon, qids, key := key) AS l
  GROUP BY GROUPING SETS ((l.attribute, l.i), ()) ORDER BY l.i NULLS FIRST;

-- anon_entropy(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): Gionis'
-- conditional entropy, sum over cells of H(original | published node), the shares counted
-- in the original table. DOUBLE.
-- Twin: polars_anon.metrics.cells.entropy
CREATE OR REPLACE TEMP MACRO anon_entropy(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  WITH
  c AS MATERIALIZED (FROM anon_metric_cells(orig, anon, qids, key := key)),
  counts AS (SELECT c.attribute, c.leaf, sum(c.size) AS n FROM c GROUP BY ALL),
  under AS (
    SELECT counts.attribute, cl.ancestor, counts.n,
           counts.n / sum(counts.n) OVER (PARTITION BY counts.attribute, cl.ancestor) AS share
    FROM counts JOIN anon_closure AS cl ON cl.hierarchy = counts.attribute AND cl.leaf = counts.leaf),
  hn AS (SELECT attribute, ancestor, sum(-share * ln(share)) AS H FROM under GROUP BY ALL)
  SELECT c.attribute, sum(c.size * coalesce(hn.H, 0.0))::DOUBLE AS value
  FROM c LEFT JOIN hn ON hn.attribute = c.attribute AND hn.ancestor = c.pub
  GROUP BY GROUPING SETS ((c.attribute, c.i), ()) ORDER BY c.i NULLS FIRST;

-- anon_ambiguity(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): mean over
-- records of the product of nl(v) over the qids; per qid the mean nl(v). DOUBLE.
-- Twin: polars_anon.metrics.cells.ambiguity
CREATE OR REPLACE TEMP MACRO anon_ambiguity(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  WITH
  pc AS MATERIALIZED (FROM anon_metric_pair_cells(orig, anon, qids, key := key)),
  rec AS (SELECT pc.pair, any_value(pc.size) AS size, product(pc.p_leaves::DOUBLE) AS amb FROM pc GROUP BY pc.pair)
  SELECT NULL::VARCHAR AS attribute, sum(rec.size * rec.amb) / sum(rec.size) AS value FROM rec
  UNION ALL
  SELECT attribute, value FROM (
    SELECT pc.i, pc.attribute, sum(pc.size * pc.p_leaves)::DOUBLE / sum(pc.size) AS value FROM pc GROUP BY pc.i, pc.attribute ORDER BY pc.i);

-- anon_squared_distance_error(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL):
-- sum over records of sqrt(sum over numeric qids of (a - mean leaf value of v)^2); per qid
-- sum of |a - mean(v)|; NULL without numeric qids. DOUBLE.
-- Twin: polars_anon.metrics.cells.squared_distance_error
CREATE OR REPLACE TEMP MACRO anon_squared_distance_error(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  WITH
  pc AS MATERIALIZED (FROM anon_metric_pair_cells(orig, anon, qids, key := key)),
  rec AS (
    SELECT pc.pair, any_value(pc.size) AS size, sqrt(sum((pc.l_num_lo - pc.p_num_mean) ** 2)) AS d
    FROM pc WHERE pc.numeric GROUP BY pc.pair)
  SELECT NULL::VARCHAR AS attribute, sum(rec.size * rec.d)::DOUBLE AS value FROM rec
  UNION ALL
  SELECT attribute, value FROM (
    SELECT pc.i, pc.attribute, CASE WHEN bool_and(pc.numeric) THEN sum(pc.size * abs(pc.l_num_lo - pc.p_num_mean)) END::DOUBLE AS value
    FROM pc GROUP BY pc.i, pc.attribute ORDER BY pc.i);

-- ---------------------------------------------------------------- the published partition
-- anon_metric_classes(orig, anon, qids, key := NULL, sensitive := NULL): the classes of the
-- kept rows, over all qids (i NULL) and over each qid alone (i = its index): i, cls
-- (VARCHAR[]), s, size; and the suppressed rows as one row with cls NULL per i. Refuses
-- labels outside the hierarchies as anon_metric_pair_cells does.
-- Twin: polars_anon.metrics.partition._classes
CREATE OR REPLACE TEMP MACRO anon_metric_classes(orig, anon, qids, key := NULL, sensitive := NULL) AS TABLE
  WITH
  pr AS MATERIALIZED (FROM anon_metric_pairs(orig, anon, qids, key := key, sensitive := sensitive)),
  nd AS (FROM anon_metric_nodes(qids)),
  seen AS (
    SELECT DISTINCT 'o' AS side, r.i, pr.o[r.i + 1] AS label FROM pr CROSS JOIN range(len(qids)) AS r(i)
    UNION
    SELECT DISTINCT 'p', r.i, pr.p[r.i + 1] FROM pr CROSS JOIN range(len(qids)) AS r(i) WHERE NOT pr.suppressed),
  checked AS (
    SELECT count(*) AS n FROM seen LEFT JOIN nd ON nd.i = seen.i AND nd.label = seen.label
    WHERE anon_metric_refuse(qids, seen.side, seen.i, seen.label, nd.node, nd.level)),
  ix AS (SELECT NULL::BIGINT AS i UNION ALL SELECT unnest(range(len(qids))))
  SELECT ix.i, CASE WHEN pr.suppressed THEN NULL WHEN ix.i IS NULL THEN pr.p ELSE [pr.p[ix.i + 1]] END AS cls,
         pr.s, (sum(pr.size) + 0 * any_value(checked.n))::BIGINT AS size  -- 0 * n: the check must run
  FROM pr CROSS JOIN ix CROSS JOIN checked
  GROUP BY ALL;

-- anon_discernibility(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): sum of
-- squared class sizes, plus |D| per suppressed row. BIGINT.
-- Twin: polars_anon.metrics.partition.discernibility
CREATE OR REPLACE TEMP MACRO anon_discernibility(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  WITH
  c AS (SELECT i, cls, sum(size) AS size FROM anon_metric_classes(orig, anon, qids, key := key) GROUP BY ALL),
  t AS (SELECT i, sum(size) FILTER (WHERE cls IS NOT NULL) AS kept, coalesce(sum(size) FILTER (WHERE cls IS NULL), 0) AS sup,
               sum(size) AS n, coalesce(sum(size * size) FILTER (WHERE cls IS NOT NULL), 0) AS dm FROM c GROUP BY i)
  SELECT CASE WHEN t.i IS NULL THEN NULL ELSE qids[t.i + 1] END AS attribute, (t.dm + t.sup * t.n)::BIGINT AS value
  FROM t ORDER BY t.i NULLS FIRST;

-- anon_c_avg(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): kept rows /
-- (k * classes); without k the smallest class size stands in. DOUBLE.
-- Twin: polars_anon.metrics.partition.c_avg
CREATE OR REPLACE TEMP MACRO anon_c_avg(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  WITH c AS (SELECT i, cls, sum(size) AS size FROM anon_metric_classes(orig, anon, qids, key := key) WHERE cls IS NOT NULL GROUP BY ALL)
  SELECT CASE WHEN c.i IS NULL THEN NULL ELSE qids[c.i + 1] END AS attribute,
         (sum(c.size) / (coalesce(k, min(c.size)) * count(*)))::DOUBLE AS value
  FROM c GROUP BY c.i ORDER BY c.i NULLS FIRST;

-- anon_cm(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): classification
-- metric, (rows outside their class's majority sensitive value + suppressed rows) / rows.
-- Needs sensitive. DOUBLE in [0, 1].
-- Twin: polars_anon.metrics.partition.cm
CREATE OR REPLACE TEMP MACRO anon_cm(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  WITH
  c AS (FROM anon_metric_classes(orig, anon, qids, key := key, sensitive := sensitive)),
  m AS (SELECT i, cls, sum(size) AS n, max(size) AS top FROM c GROUP BY i, cls),
  t AS (SELECT i, sum(n - top) FILTER (WHERE cls IS NOT NULL) AS minority, sum(n) FILTER (WHERE cls IS NULL) AS sup,
               sum(n) AS rows FROM m GROUP BY i)
  SELECT CASE WHEN t.i IS NULL THEN NULL ELSE qids[t.i + 1] END AS attribute,
         CASE WHEN sensitive IS NULL THEN error('anon_cm needs the sensitive attribute: sensitive := ''<column>''')
              ELSE (coalesce(t.minority, 0) + coalesce(t.sup, 0)) / t.rows END::DOUBLE AS value
  FROM t ORDER BY t.i NULLS FIRST;

-- anon_min_class_size(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): the
-- smallest class (effective k); 0 when no row is kept. BIGINT.
-- Twin: polars_anon.metrics.partition.min_class_size
CREATE OR REPLACE TEMP MACRO anon_min_class_size(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  WITH c AS (SELECT i, cls, sum(size) AS size FROM anon_metric_classes(orig, anon, qids, key := key) GROUP BY ALL)
  SELECT CASE WHEN c.i IS NULL THEN NULL ELSE qids[c.i + 1] END AS attribute,
         coalesce(min(c.size) FILTER (WHERE c.cls IS NOT NULL), 0)::BIGINT AS value
  FROM c GROUP BY c.i ORDER BY c.i NULLS FIRST;

-- anon_n_classes(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): number of
-- classes of the kept rows. BIGINT.
-- Twin: polars_anon.metrics.partition.n_classes
CREATE OR REPLACE TEMP MACRO anon_n_classes(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  WITH c AS (SELECT DISTINCT i, cls FROM anon_metric_classes(orig, anon, qids, key := key))
  SELECT CASE WHEN c.i IS NULL THEN NULL ELSE qids[c.i + 1] END AS attribute, count(c.cls)::BIGINT AS value
  FROM c GROUP BY c.i ORDER BY c.i NULLS FIRST;

-- anon_suppressed(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): original rows
-- absent from anon (the same on every row). BIGINT.
-- Twin: polars_anon.metrics.partition.suppressed
CREATE OR REPLACE TEMP MACRO anon_suppressed(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  WITH
  s AS (SELECT coalesce(sum(size) FILTER (WHERE cls IS NULL), 0)::BIGINT AS n FROM anon_metric_classes(orig, anon, qids, key := key) WHERE i IS NULL),
  ix AS (SELECT NULL::BIGINT AS i UNION ALL SELECT unnest(range(len(qids))))
  SELECT CASE WHEN ix.i IS NULL THEN NULL ELSE qids[ix.i + 1] END AS attribute, s.n AS value
  FROM ix CROSS JOIN s ORDER BY ix.i NULLS FIRST;

-- anon_k(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): the requested k as
-- given (NULL if not), on every row. BIGINT.
-- Twin: polars_anon.metrics.partition.k
CREATE OR REPLACE TEMP MACRO anon_k(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  WITH ix AS (SELECT NULL::BIGINT AS i UNION ALL SELECT unnest(range(len(qids))))
  SELECT CASE WHEN ix.i IS NULL THEN NULL ELSE qids[ix.i + 1] END AS attribute,
         CASE WHEN k < 1 THEN error('k must be >= 1, got ' || k) ELSE k END::BIGINT AS value
  FROM ix ORDER BY ix.i NULLS FIRST;

-- anon_diameter(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): the largest
-- Hamming distance between two distinct published tuples of the kept rows, by counting the
-- pairs that agree on each subset of qids and inverting over supersets (NULL above 12
-- qids); per qid 1 when it has two published values. BIGINT.
-- Twin: polars_anon.metrics.partition.diameter
CREATE OR REPLACE TEMP MACRO anon_diameter(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  WITH
  t AS MATERIALIZED (SELECT DISTINCT cls AS p FROM anon_metric_classes(orig, anon, qids, key := key) WHERE i IS NULL AND cls IS NOT NULL),
  masks AS (SELECT unnest(range(CASE WHEN len(qids) <= 12 THEN 1::BIGINT << len(qids) ELSE 0 END)) AS mask),
  g AS (
    SELECT masks.mask, list_select(t.p, list_filter(range(1, len(qids) + 1), lambda j: (masks.mask >> (j - 1)) & 1 = 1)) AS key,
           count(*) AS c
    FROM t CROSS JOIN masks GROUP BY ALL),
  agree AS (SELECT mask, sum(c * c)::HUGEINT AS n FROM g GROUP BY mask),
  exact AS (
    SELECT s.mask, sum(CASE WHEN (bit_count(tt.mask) - bit_count(s.mask)) % 2 = 0 THEN tt.n ELSE -tt.n END) AS e
    FROM agree AS s JOIN agree AS tt ON (s.mask & tt.mask) = s.mask GROUP BY s.mask)
  SELECT NULL::VARCHAR AS attribute,
         CASE WHEN len(qids) > 12 THEN NULL
              ELSE coalesce(len(qids) - min(bit_count(e.mask)) FILTER (WHERE e.e > 0 AND e.mask <> (1::BIGINT << len(qids)) - 1), 0)
         END::BIGINT AS value
  FROM exact AS e
  UNION ALL
  SELECT attribute, value FROM (
    SELECT r.i, qids[r.i + 1] AS attribute, (count(DISTINCT t.p[r.i + 1]) >= 2)::BIGINT AS value
    FROM range(len(qids)) AS r(i) LEFT JOIN t ON true GROUP BY r.i ORDER BY r.i);

-- ---------------------------------------------------------------- distributions
-- anon_hellinger(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): per qid the
-- Hellinger distance between the leaf distribution in orig and that of anon read back onto
-- the leaves (a node spreads its rows evenly over its leaves); the median over qids. DOUBLE.
-- Twin: polars_anon.metrics.distribution.hellinger
CREATE OR REPLACE TEMP MACRO anon_hellinger(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  WITH
  c AS MATERIALIZED (FROM anon_metric_cells(orig, anon, qids, key := key)),
  n AS (SELECT sum(size) / len(qids) AS n FROM c),
  p AS (SELECT c.i, c.leaf, sum(c.size) / any_value(n.n) AS P FROM c, n GROUP BY ALL),
  q AS (
    SELECT c.i, cl.leaf, sum(c.size / c.p_leaves) / any_value(n.n) AS Q
    FROM c CROSS JOIN n JOIN anon_closure AS cl ON cl.hierarchy = c.attribute AND cl.ancestor = c.pub
    GROUP BY ALL),
  d AS (
    SELECT coalesce(p.i, q.i) AS i, sqrt(sum((sqrt(coalesce(p.P, 0.0)) - sqrt(coalesce(q.Q, 0.0))) ** 2)) / sqrt(2.0) AS value
    FROM p FULL JOIN q ON p.i = q.i AND p.leaf = q.leaf GROUP BY ALL)
  SELECT NULL::VARCHAR AS attribute, median(d.value)::DOUBLE AS value FROM d
  UNION ALL
  SELECT attribute, value FROM (SELECT d.i, qids[d.i + 1] AS attribute, d.value FROM d ORDER BY d.i);

-- anon_metric_pairwise(orig, anon, qids, key := NULL, sensitive := NULL): for every unordered
-- pair of attributes x < y (the qids, then the sensitive one when given, index len(qids)),
-- Cramér's V and the mutual information in orig (v_o, mi_o) and in anon (v_p, mi_p). The
-- contingency tables are read off the pairs' value lists, no row join; the labels met are
-- checked against the hierarchies as anon_metric_pair_cells does.
-- Twin: polars_anon.metrics.distribution._pairwise
CREATE OR REPLACE TEMP MACRO anon_metric_pairwise(orig, anon, qids, key := NULL, sensitive := NULL) AS TABLE
  WITH
  nd AS MATERIALIZED (FROM anon_metric_nodes(qids)),
  roots AS (SELECT list(label ORDER BY i) AS labels FROM nd WHERE is_root),
  pr AS MATERIALIZED (
    SELECT CASE WHEN sensitive IS NULL THEN pr.o ELSE list_append(pr.o, pr.s) END AS o,
           CASE WHEN sensitive IS NULL THEN pq.p ELSE list_append(pq.p, pr.s) END AS p, pr.size
    FROM anon_metric_pairs(orig, anon, qids, key := key, sensitive := sensitive) AS pr
    CROSS JOIN roots
    CROSS JOIN LATERAL (SELECT CASE WHEN pr.suppressed THEN roots.labels ELSE pr.p END AS p) AS pq),
  m AS (SELECT len(qids) + CASE WHEN sensitive IS NULL THEN 0 ELSE 1 END AS m),
  ix AS (SELECT a.x, b.y FROM m, range(m.m) AS a(x), range(m.m) AS b(y) WHERE a.x < b.y),
  joint AS MATERIALIZED (
    SELECT ix.x, ix.y, 'o' AS side, pr.o[ix.x + 1] AS va, pr.o[ix.y + 1] AS vb, sum(pr.size) AS nab FROM pr CROSS JOIN ix GROUP BY ALL
    UNION ALL
    SELECT ix.x, ix.y, 'p', pr.p[ix.x + 1], pr.p[ix.y + 1], sum(pr.size) FROM pr CROSS JOIN ix GROUP BY ALL),
  seen AS (
    SELECT DISTINCT side, x AS i, va AS label FROM joint UNION SELECT DISTINCT side, y, vb FROM joint),
  checked AS (
    SELECT count(*) AS n FROM seen LEFT JOIN nd ON nd.i = seen.i AND nd.label = seen.label
    WHERE seen.i < len(qids) AND anon_metric_refuse(qids, seen.side, seen.i, seen.label, nd.node, nd.level)),
  n AS (SELECT sum(size) AS n FROM pr),
  mg AS (
    SELECT *, sum(nab) OVER (PARTITION BY x, y, side, va) AS na, sum(nab) OVER (PARTITION BY x, y, side, vb) AS nb FROM joint),
  st AS (
    SELECT x, y, side,
           sum(nab * nab / (na * nb)) - 1.0 AS phi2,
           least(count(DISTINCT va), count(DISTINCT vb)) - 1 AS dof,
           sum(nab / n.n * ln(n.n * nab / (na * nb))) AS mi
    FROM mg CROSS JOIN n GROUP BY x, y, side),
  v AS (SELECT x, y, side, CASE WHEN dof > 0 THEN sqrt(greatest(phi2, 0.0) / dof) ELSE 0.0 END AS v, mi FROM st)
  SELECT o.x, o.y, o.v AS v_o, p.v + 0 * checked.n AS v_p, o.mi AS mi_o, p.mi AS mi_p  -- 0 * n: the check must run
  FROM v AS o JOIN v AS p ON o.x = p.x AND o.y = p.y AND o.side = 'o' AND p.side = 'p' CROSS JOIN checked;

-- anon_cramers_v(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): median over qid
-- pairs of |V in orig - V in anon| (Cramér's V); per qid over the pairs that include it;
-- NULL with one qid. DOUBLE.
-- Twin: polars_anon.metrics.distribution.cramers_v
CREATE OR REPLACE TEMP MACRO anon_cramers_v(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  WITH
  d AS MATERIALIZED (SELECT x, y, abs(v_o - v_p) AS change FROM anon_metric_pairwise(orig, anon, qids, key := key)),
  ix AS (SELECT unnest(range(len(qids))) AS i)
  SELECT NULL::VARCHAR AS attribute, median(d.change)::DOUBLE AS value FROM d
  UNION ALL
  SELECT attribute, value FROM (
    SELECT ix.i, qids[ix.i + 1] AS attribute, median(d.change)::DOUBLE AS value
    FROM ix LEFT JOIN d ON d.x = ix.i OR d.y = ix.i GROUP BY ix.i ORDER BY ix.i);

-- anon_mi_loss(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): mean over pairs of
-- the qids and the sensitive attribute of MI(orig) - MI(anon); per qid over the pairs that
-- include it. Needs sensitive. DOUBLE.
-- Twin: polars_anon.metrics.distribution.mi_loss
CREATE OR REPLACE TEMP MACRO anon_mi_loss(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  WITH
  d AS MATERIALIZED (
    SELECT x, y,
           CASE WHEN sensitive IS NULL THEN error('anon_mi_loss needs the sensitive attribute: sensitive := ''<column>''')
                ELSE mi_o - mi_p END AS delta
    FROM anon_metric_pairwise(orig, anon, qids, key := key, sensitive := sensitive)),
  ix AS (SELECT unnest(range(len(qids))) AS i)
  SELECT NULL::VARCHAR AS attribute, avg(d.delta)::DOUBLE AS value FROM d
  UNION ALL
  SELECT attribute, value FROM (
    SELECT ix.i, qids[ix.i + 1] AS attribute, avg(d.delta)::DOUBLE AS value
    FROM ix LEFT JOIN d ON d.x = ix.i OR d.y = ix.i GROUP BY ix.i ORDER BY ix.i);
