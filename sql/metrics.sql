-- Information-loss metrics: one macro anon_<name> per entry of polars_anon.metrics.METRICS,
-- in two forms that give the same rows.
--
-- 1. Over a pairs table (fast: the rows are read once, every metric aggregates the pairs):
--      FROM anon_<name>_of(pairs, qids, k := NULL)
--    pairs   the name of a pairs table made once per (original, anonymized) couple, with its
--            companions <pairs>_cells, <pairs>_classes and <pairs>_joint. From Python:
--              polars_anon.duckdb.metric_pairs(con, 'o', 'a', qids, key=..., sensitive=...)
--            (one pass over the rows with dictionary codes: seconds for 15 million rows); in
--            SQL alone:
--              CREATE TEMP TABLE pr AS FROM anon_metric_pairs('o', 'a', qids, key := ..., sensitive := ...);
--              CREATE TEMP TABLE pr_cells AS FROM anon_metric_cells_of('pr', qids);
--              CREATE TEMP TABLE pr_classes AS FROM anon_metric_classes_of('pr', qids);
--              CREATE TEMP TABLE pr_joint AS FROM anon_metric_joint_of('pr', qids);
--    qids    the same VARCHAR list the pairs were made with.
--    k       the requested k (anon_k_of, anon_c_avg_of).
--    cm and mi_loss need pairs made with the sensitive attribute.
-- 2. Over the two tables directly (the original calling convention; makes the pairs in the
--    query, so every call reads the rows again):
--      FROM anon_<name>(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL)
--    orig, anon  names of the tables/views holding the original and the anonymized rows
--                (e.g. views over read_parquet(...)); only the qids, the key and the
--                sensitive column are read.
--    qids        the quasi-identifier columns, a VARCHAR list; each hierarchy must be loaded
--                under its qid's name with polars_anon.duckdb.load_hierarchy (anon_nodes,
--                anon_closure, anon_levels).
--    key         a unique row id column in both tables. Original rows whose key is absent
--                from anon are the suppressed rows. Without a key the rows are lined up by
--                position (POSITIONAL JOIN): anon must then keep every row (suppressed rows
--                published as the roots).
--    sensitive   the sensitive (class) column: needed by anon_cm and anon_mi_loss.
-- Result: rows (attribute VARCHAR, value DOUBLE or BIGINT); the row with a NULL attribute is
-- the whole-table value, the others the value per quasi-identifier, as the Polars twin.
-- Suppressed rows count as published at the roots in every cell-level metric; the
-- class-level metrics set them apart. Logarithms are natural.

-- anon_metric_check(pairs, qids, k): true, or the error of the first argument of an anon_<metric>_of macro that is
-- wrong: pairs not text (3, NULL, ['pr']: DuckDB's Catalog or Binder Error, 'Table with name 3_cells does not
-- exist!'), qids not a list of text, empty, holding a NULL or a name twice, or not as many as the pairs were made
-- with (anon_ncp_of('pr', 'sex') and ['a', 'b', 'c'] over two qids gave a value), then k not an integer >= 1
-- (pa.metrics.compute checks k whatever the metric). One subquery reads the length of a pair's node list and makes
-- the message; the error is raised outside it, by a lambda, when the query runs: a refusal raised while DuckDB binds
-- a table macro arrives with DuckDB's 'LINE 1: ...' pointer after it (k was checked so: two lines where every
-- other refusal is one). Each anon_<metric>_of reads it once, through anon_metric_read.
-- Twin: polars_anon.metrics.data.prepare (its check_qids and check_k)
CREATE OR REPLACE TEMP MACRO anon_metric_check(pairs, qids, k) AS
  list_transform(
    [(SELECT CASE WHEN x.pairs IS NULL OR typeof(x.pairs) <> 'VARCHAR'
                  THEN anon_msg_not_names('pairs', 'the name of a pairs table', x.pairs)
                  WHEN x.qids IS NULL OR typeof(x.qids) NOT IN ('VARCHAR[]', '"NULL"[]')
                       OR list_contains(list_transform(x.q, lambda n: n IS NULL), true)
                  THEN anon_msg_not_names('qids', 'a list of column names', x.qids)
                  WHEN len(x.q) = 0 THEN anon_msg_qids_empty()
                  WHEN len(x.twice) > 0 THEN anon_msg_names_twice('qids', x.twice, 'quasi-identifier')
                  WHEN x.made <> len(x.q) THEN anon_msg_pairs_qids(x.pairs::VARCHAR, x.made, x.q, len(x.q))
                  WHEN x.k IS NOT NULL AND NOT (anon_is_integer(x.k) AND coalesce(TRY_CAST(x.k AS BIGINT) >= 1, false))
                  THEN anon_msg_k_not_integer(x.k)
             END
      FROM (SELECT y.*, anon_duplicates(y.q) AS twice
            FROM (SELECT pairs AS pairs, qids AS qids, k AS k, anon_names(qids) AS q,
                         (SELECT len(o) FROM query_table(anon_metric_part(pairs, '')) LIMIT 1) AS made) AS y) AS x)],
    lambda msg: CASE WHEN msg IS NULL THEN true ELSE error(msg) END)[1];

-- anon_metric_checked(pairs, qids, k): the qids' names once anon_metric_check has passed the arguments. A macro that
-- also reads the qids' hierarchy nodes (anon_metric_nodes) reads them through it: read apart from the checked rows,
-- the nodes' own refusal (a qid with no hierarchy loaded) raced the check's, and a wrong call's message changed from
-- run to run.
-- Twin: polars_anon.metrics.data.prepare (its argument checks, all made before any hierarchy or row is read)
CREATE OR REPLACE TEMP MACRO anon_metric_checked(pairs, qids, k) AS
  CASE WHEN anon_metric_check(pairs, qids, k) THEN anon_names(qids) END;

-- anon_metric_k(k): a k anon_metric_check has let through as BIGINT (NULL when not given).
-- Twin: polars_anon.metrics.data.prepare (its k)
CREATE OR REPLACE TEMP MACRO anon_metric_k(k) AS
  CASE WHEN anon_is_integer(k) THEN TRY_CAST(k AS BIGINT) END;

-- anon_metric_part(pairs, part): the name of the pairs table (part '') or of its companion <pairs><part> ('_cells',
-- '_classes', '_joint') that a macro reads through query_table; for pairs that is not text, the empty
-- anon_no_pairs<part> of the same columns, so that the query binds and anon_metric_check refuses pairs by name.
-- Twin: polars_anon.engines.duckdb.DuckDBEngine.table (its check of the argument's type)
CREATE OR REPLACE TEMP MACRO anon_metric_part(pairs, part) AS
  CASE WHEN pairs IS NOT NULL AND typeof(pairs) = 'VARCHAR' THEN pairs::VARCHAR ELSE 'anon_no_pairs' END || part;

-- anon_metric_read(pairs, qids, part, k): the rows of <pairs><part>, once anon_metric_check has passed the arguments.
-- Every anon_<metric>_of reads one companion through it (any other through query_table(anon_metric_part(...))), so
-- the arguments are checked once per query, whatever the metric; the direct forms (anon_metric) pass theirs on.
-- Twin: polars_anon.metrics.data.prepare
CREATE OR REPLACE TEMP MACRO anon_metric_read(pairs, qids, part, k) AS TABLE
  SELECT * FROM query_table(anon_metric_part(pairs, part)) WHERE anon_metric_check(pairs, qids, k);

-- anon_metric_pairs(orig, anon, qids, key := NULL, sensitive := NULL): the pairs table, one
-- row per distinct (original tuple, published tuple, sensitive value, suppressed): o and p
-- (BIGINT[] of hierarchy node ids in qids order; p holds the roots (node 0) for suppressed
-- rows), s (BIGINT code of the sensitive value, its own code for NULL; NULL on every row
-- without sensitive), suppressed (BOOLEAN), size (BIGINT). Refuses an empty qids or qids that
-- are not columns of both tables, a qid, key or sensitive column named '__anon_*' (the names of
-- its own columns), a key or sensitive column that is not a column (named as
-- polars_anon.duckdb.metric_pairs names it), a key repeated in anon, an original value that is not a leaf and a
-- published value that is not a node. The generic SQL way; faster from
-- Python: polars_anon.duckdb.metric_pairs (dictionary codes, one packed integer per row).
-- A qid with no hierarchy loaded (published as ranges, sets or means: Mondrian, MDAV) gets one
-- leaf per label of either table under a root, which only the classes metrics may read (they
-- see which published cells are equal); every other metric refuses it (anon_metric_nodes,
-- anon_metric_joint_of), as polars_anon.metrics.compute does.
-- Twin: polars_anon.metrics.data.prepare
CREATE OR REPLACE TEMP MACRO anon_metric_pairs(orig, anon, qids, key := NULL, sensitive := NULL) AS TABLE
  WITH
  __anon_chk AS (  -- the first CTE: no CTE name hides a user table from its query_table; orig first
    -- qids (once), each table (anon_check_columns), then the key and sensitive columns in the tables those checked
    SELECT CASE WHEN anon_check_qids(orig, qids, 'orig') THEN CASE WHEN anon_check_columns(anon, anon_names(qids), 'qids', 'anon') THEN
             CASE WHEN anon_check_built_names(anon_names(qids), [], 'qid column', 'the anonymizer reserves for its own columns')
                  THEN CASE WHEN anon_check_column_arg(orig, 'key', key) THEN CASE WHEN anon_name(key) IS NULL OR anon_check_present(anon, [anon_name(key)], 'key')
                            THEN anon_check_column_arg(orig, 'sensitive', sensitive) END END
             END END END AS ok),  -- a key or sensitive column named '__anon_*': refused by anon_check_columns
  o AS (  -- __anon_none keeps the qid COLUMNS from matching nothing (refused by DuckDB before the checks run);
          -- the qids renamed __anon_o_<qid> (anon's __anon_p_<qid>): no qid's name meets a built column's when bound;
          -- as text, a float's -0.0 and -nan as 0.0 and nan (one value to a group-by, one label: polars_anon.labels)
    SELECT __anon_ks[1] AS __anon_key,
           CASE WHEN typeof(COLUMNS('^(' || array_to_string(list_transform(anon_names(qids) || ['__anon_none'], lambda x: regexp_escape(x)), '|') || ')$')) IN ('FLOAT', 'DOUBLE')
                     AND COLUMNS('^(' || array_to_string(list_transform(anon_names(qids) || ['__anon_none'], lambda x: regexp_escape(x)), '|') || ')$')::VARCHAR IN ('-0.0', '-nan')
                THEN substr(COLUMNS('^(' || array_to_string(list_transform(anon_names(qids) || ['__anon_none'], lambda x: regexp_escape(x)), '|') || ')$')::VARCHAR, 2)
                ELSE COLUMNS('^(' || array_to_string(list_transform(anon_names(qids) || ['__anon_none'], lambda x: regexp_escape(x)), '|') || ')$')::VARCHAR END AS '__anon_o_\1',
           __anon_ss[1]::VARCHAR AS __anon_s, typeof(__anon_ss[1]) IN ('FLOAT', 'DOUBLE') AS __anon_s_float,
           true AS __anon_in
    -- the key and the sensitive column as one-element lists: they bind when no column has that name (the checks then
    -- refuse it by name; COLUMNS(lambda c: c = key) matching nothing was DuckDB's Binder Error quoting the lambda)
    FROM (SELECT *, list_value(*COLUMNS(lambda c: c = anon_name(key) OR c = '__anon_nokey')) AS __anon_ks,
                 list_value(*COLUMNS(lambda c: c = anon_name(sensitive) OR c = '__anon_nos')) AS __anon_ss
          FROM (SELECT *, NULL AS __anon_nokey, NULL AS __anon_nos, NULL AS __anon_none FROM query_table(anon_table(orig))))),
  a AS (
    SELECT __anon_ks[1] AS __anon_key,
           CASE WHEN typeof(COLUMNS('^(' || array_to_string(list_transform(anon_names(qids) || ['__anon_none'], lambda x: regexp_escape(x)), '|') || ')$')) IN ('FLOAT', 'DOUBLE')
                     AND COLUMNS('^(' || array_to_string(list_transform(anon_names(qids) || ['__anon_none'], lambda x: regexp_escape(x)), '|') || ')$')::VARCHAR IN ('-0.0', '-nan')
                THEN substr(COLUMNS('^(' || array_to_string(list_transform(anon_names(qids) || ['__anon_none'], lambda x: regexp_escape(x)), '|') || ')$')::VARCHAR, 2)
                ELSE COLUMNS('^(' || array_to_string(list_transform(anon_names(qids) || ['__anon_none'], lambda x: regexp_escape(x)), '|') || ')$')::VARCHAR END AS '__anon_p_\1',
           true AS __anon_hit
    FROM (SELECT *, list_value(*COLUMNS(lambda c: c = anon_name(key) OR c = '__anon_nokey')) AS __anon_ks
          FROM (SELECT *, NULL AS __anon_nokey, NULL AS __anon_none FROM query_table(anon_table(anon))))),
  j AS (
    SELECT COLUMNS(lambda c: c <> '__anon_key') FROM o POSITIONAL JOIN a WHERE anon_name(key) IS NULL
    UNION ALL BY NAME
    SELECT COLUMNS(lambda c: c <> '__anon_key') FROM o LEFT JOIN a ON o.__anon_key = a.__anon_key WHERE anon_name(key) IS NOT NULL),
  g AS MATERIALIZED (
    SELECT COLUMNS(lambda c: starts_with(c, '__anon_o_') OR starts_with(c, '__anon_p_')),
           -- a float's -0.0 and 0.0 (-nan and nan) one value, as a Polars group-by holds them (not anon_label:
           -- a macro inside this one made each call plan several times slower)
           CASE WHEN __anon_s_float AND __anon_s IN ('-0.0', '-nan') THEN substr(__anon_s, 2) ELSE __anon_s END
             AS __anon_s,
           __anon_in IS NULL AS __anon_no_orig, __anon_hit IS NULL AS __anon_suppressed, count(*) AS __anon_size
    FROM j WHERE (SELECT ok FROM __anon_chk) GROUP BY ALL),  -- checked once, whatever the rows
  __anon_unique AS MATERIALIZED (  -- a key repeated in anon: the join gives more rows than orig has; then a key
                                   -- repeated or null in orig, or an anon key orig lacks
    SELECT CASE WHEN anon_name(key) IS NOT NULL AND t.total <> n.n_orig THEN error(anon_msg_key_not_unique(anon_name(key), t.total, n.n_orig))
                WHEN anon_name(key) IS NOT NULL AND d.shared > 0 THEN error(anon_msg_key_shared(anon_name(key), d.shared))
                WHEN anon_name(key) IS NOT NULL AND n.nulls > 0 THEN error(anon_msg_key_null(anon_name(key), n.nulls))
                WHEN anon_name(key) IS NOT NULL AND s.strays > 0 THEN error(anon_msg_key_stray(s.strays, anon_name(key)))
                ELSE true END AS ok
    FROM (SELECT coalesce(sum(__anon_size), 0)::BIGINT AS total FROM g) AS t,
         (SELECT count(*) AS n_orig, count(*) - count(__anon_key) AS nulls FROM o WHERE anon_name(key) IS NOT NULL) AS n,
         (SELECT coalesce(sum(c), 0)::BIGINT AS shared
          FROM (SELECT count(*) AS c FROM o WHERE anon_name(key) IS NOT NULL GROUP BY __anon_key HAVING count(*) > 1)) AS d,
         (SELECT count(*) AS strays FROM a ANTI JOIN o ON a.__anon_key = o.__anon_key WHERE anon_name(key) IS NOT NULL) AS s),
  m AS MATERIALIZED (
    SELECT row_number() OVER () AS pid,
           struct_pack(*COLUMNS(lambda c: starts_with(c, '__anon_o_')))::MAP(VARCHAR, VARCHAR) AS om,
           struct_pack(*COLUMNS(lambda c: starts_with(c, '__anon_p_')))::MAP(VARCHAR, VARCHAR) AS pm,
           __anon_s, __anon_no_orig, __anon_suppressed, __anon_size
    FROM g WHERE (SELECT ok FROM __anon_unique)),
  u AS (
    SELECT m.pid, r.i, m.__anon_suppressed AS sup, map_extract_value(m.om, '__anon_o_' || anon_names(qids)[r.i + 1]) AS ol,
           map_extract_value(m.pm, '__anon_p_' || anon_names(qids)[r.i + 1]) AS pl
    FROM m CROSS JOIN range(len(anon_names(qids))) AS r(i)),
  built AS (
    SELECT q.i, t.node, t.label, t.level
    FROM (SELECT unnest(anon_names(qids)) AS attribute, unnest(range(len(anon_names(qids)))) AS i) AS q
    JOIN anon_nodes AS t ON t.hierarchy = q.attribute),
  nd AS MATERIALIZED (  -- a qid without a hierarchy: its labels in both tables as leaves 1.. under the root 0
                        -- (twin: polars_anon.metrics.data.label_hierarchies; NULL no leaf, refused below)
    SELECT i, node, label, level FROM built
    UNION ALL
    SELECT v.i, dense_rank() OVER (PARTITION BY v.i ORDER BY v.label ASC)::BIGINT AS node, v.label, 0 AS level
    FROM (SELECT i, ol AS label FROM u UNION SELECT i, pl FROM u) AS v
    WHERE v.label IS NOT NULL AND v.i NOT IN (SELECT DISTINCT i FROM built)),
  ids AS (
    SELECT u.pid, list(lo.node ORDER BY u.i ASC NULLS LAST) AS o, list(CASE WHEN u.sup THEN 0 ELSE po.node END ORDER BY u.i ASC NULLS LAST) AS p
    FROM u
    LEFT JOIN nd AS lo ON lo.i = u.i AND lo.label = u.ol
    LEFT JOIN nd AS po ON po.i = u.i AND po.label = u.pl
    WHERE anon_metric_refuse(anon_names(qids), 'o', u.i, u.ol, lo.node, lo.level)
      AND (u.sup OR anon_metric_refuse(anon_names(qids), 'p', u.i, u.pl, po.node, po.level))
    GROUP BY u.pid)
  SELECT
    CASE WHEN m.__anon_no_orig OR (anon_name(key) IS NULL AND m.__anon_suppressed)
         THEN error('the original and the anonymized table have different row counts; without a key they are '
                    || 'lined up by position, so suppressed rows must be kept (published as the roots); '
                    || 'pass key := ''<row id column>'' when rows were removed')
         ELSE ids.o END AS o,
    ids.p,
    CASE WHEN anon_name(sensitive) IS NULL THEN NULL ELSE dense_rank() OVER (ORDER BY m.__anon_s ASC NULLS LAST) END::BIGINT AS s,
    m.__anon_suppressed AS suppressed, m.__anon_size::BIGINT AS size
  FROM m JOIN ids ON ids.pid = m.pid;

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
           CASE WHEN t.node IS NULL THEN error(anon_msg_no_hierarchy_metric(q.attribute)) ELSE t.node END AS node,
           t.label, t.parent, t.leaves, t.level
    FROM q LEFT JOIN anon_nodes AS t ON t.hierarchy = q.attribute
    WHERE q.attribute IS NOT NULL),  -- a NULL among the qids names no column: its callers refuse it (anon_metric_check)
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
         (f.n_leaves - f.leaves)::DOUBLE / f.n_leaves AS r_ncp,
         CASE WHEN f.h > 1 THEN (f.h - 1 - f.level)::DOUBLE / (f.h - 1) ELSE 0.0 END AS r_total,
         (f.n_leaves - f.leaves)::DOUBLE * f.h_max / f.h AS r_llm,
         (f.n_leaves - f.leaves)::DOUBLE / f.n_leaves * f.h_max / f.h AS r_nllm,
         (f.n_leaves - f.leaves) * f.wid AS r_wllm,
         (f.n_leaves - f.leaves)::DOUBLE / f.n_leaves * f.wid AS r_wnllm
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

-- anon_metric_cells_of(pairs, qids): the cells of a pairs table, one row per (qid, original
-- leaf, published node, suppressed) with its size: attribute, i, suppressed, size, leaf, pub,
-- the hierarchy's h, n_leaves, numeric, domain, the leaf's facts (l_*: level, num_lo, R of
-- the seven edge metrics) and the published node's (p_*: leaves, level, is_root,
-- parent_level, num_lo/num_hi/num_mean, R). l_level or p_level is NULL where a code is not a
-- node (polars_anon.duckdb.metric_pairs refuses such tables). Materialize it as <pairs>_cells.
-- Twin: polars_anon.metrics.data.MetricData.cells
CREATE OR REPLACE TEMP MACRO anon_metric_cells_of(pairs, qids) AS TABLE
  WITH
  nd AS MATERIALIZED (FROM anon_metric_nodes(qids)),
  u AS (
    SELECT r.i, pr.o[r.i + 1] AS leaf, pr.p[r.i + 1] AS pub, pr.suppressed, sum(pr.size)::BIGINT AS size
    FROM query_table(anon_table(pairs)) AS pr CROSS JOIN range(len(qids)) AS r(i)
    GROUP BY ALL),
  rt AS (SELECT * FROM nd WHERE is_root)
  SELECT qids[u.i + 1] AS attribute, u.i, u.suppressed, u.size, u.leaf, u.pub,
         rt.h, rt.n_leaves, rt.numeric, rt.domain,
         l.level AS l_level, l.num_lo AS l_num_lo,
         l.r_distortion AS l_r_distortion, l.r_ncp AS l_r_ncp, l.r_total AS l_r_total, l.r_llm AS l_r_llm,
         l.r_nllm AS l_r_nllm, l.r_wllm AS l_r_wllm, l.r_wnllm AS l_r_wnllm,
         p.leaves AS p_leaves, p.level AS p_level, p.is_root AS p_is_root, p.parent_level AS p_parent_level,
         p.num_lo AS p_num_lo, p.num_hi AS p_num_hi, p.num_mean AS p_num_mean,
         p.r_distortion AS p_r_distortion, p.r_ncp AS p_r_ncp, p.r_total AS p_r_total, p.r_llm AS p_r_llm,
         p.r_nllm AS p_r_nllm, p.r_wllm AS p_r_wllm, p.r_wnllm AS p_r_wnllm
  FROM u
  JOIN rt ON rt.i = u.i
  LEFT JOIN nd AS l ON l.i = u.i AND l.node = u.leaf
  LEFT JOIN nd AS p ON p.i = u.i AND p.node = u.pub;

-- anon_metric_classes_of(pairs, qids): the classes of the kept rows, over all qids (i NULL)
-- and over each qid alone (i = its index): i, cls (BIGINT[] of node ids), s, size; the
-- suppressed rows as one row with cls NULL per i (and s). Materialize it as <pairs>_classes.
-- Twin: polars_anon.metrics.partition._classes
CREATE OR REPLACE TEMP MACRO anon_metric_classes_of(pairs, qids) AS TABLE
  WITH
  g AS (SELECT pr.p, pr.s, pr.suppressed, sum(pr.size) AS size FROM query_table(anon_table(pairs)) AS pr GROUP BY ALL),
  ix AS (SELECT NULL::BIGINT AS i UNION ALL SELECT unnest(range(len(qids))))
  SELECT ix.i, CASE WHEN g.suppressed THEN NULL WHEN ix.i IS NULL THEN g.p ELSE [g.p[ix.i + 1]] END AS cls,
         g.s, sum(g.size)::BIGINT AS size
  FROM g CROSS JOIN ix
  GROUP BY ALL;

-- ---------------------------------------------------------------- paper 001: the cost model
-- anon_metric_edge_cost_of(pairs, qids, metric := 'ncp', k := NULL): one of the seven edge-weight metrics
-- of paper 001 §4: sum over cells of size * (R[leaf] - R[v]), the whole table and per qid
-- (rows attribute, value DOUBLE). The seven anon_<metric>_of macros call it.
-- Twin: polars_anon.metrics.cost.edge_cost
CREATE OR REPLACE TEMP MACRO anon_metric_edge_cost_of(pairs, qids, metric := 'ncp', k := NULL) AS TABLE
  WITH w AS (
    SELECT attribute, i, size, COLUMNS(lambda c: c = 'l_r_' || metric) AS l_r, COLUMNS(lambda c: c = 'p_r_' || metric) AS p_r
    FROM anon_metric_read(pairs, qids, '_cells', k))
  SELECT w.attribute, sum(w.size * (w.l_r - w.p_r))::DOUBLE AS value
  FROM w GROUP BY GROUPING SETS ((w.attribute, w.i), ()) ORDER BY w.i ASC NULLS FIRST;

-- anon_distortion_of(pairs, qids, k := NULL): Distortion, sum over cells of R[leaf] - R[v]
-- with the Distortion edge weights (wid factors). DOUBLE.
-- Twin: polars_anon.metrics.cost.distortion
CREATE OR REPLACE TEMP MACRO anon_distortion_of(pairs, qids, k := NULL) AS TABLE
  FROM anon_metric_edge_cost_of(pairs, qids, metric := 'distortion', k := k);

-- anon_ncp_of(pairs, qids, k := NULL): NCP, sum over cells of (nl(v) - 1) / nl(G). DOUBLE.
-- Twin: polars_anon.metrics.cost.ncp
CREATE OR REPLACE TEMP MACRO anon_ncp_of(pairs, qids, k := NULL) AS TABLE
  FROM anon_metric_edge_cost_of(pairs, qids, metric := 'ncp', k := k);

-- anon_total_of(pairs, qids, k := NULL): Total, sum over cells of l_v / (h - 1). DOUBLE.
-- Twin: polars_anon.metrics.cost.total
CREATE OR REPLACE TEMP MACRO anon_total_of(pairs, qids, k := NULL) AS TABLE
  FROM anon_metric_edge_cost_of(pairs, qids, metric := 'total', k := k);

-- anon_llm_of(pairs, qids, k := NULL): LLM, sum over cells of (nl(v) - 1) h_max / h. DOUBLE.
-- Twin: polars_anon.metrics.cost.llm
CREATE OR REPLACE TEMP MACRO anon_llm_of(pairs, qids, k := NULL) AS TABLE
  FROM anon_metric_edge_cost_of(pairs, qids, metric := 'llm', k := k);

-- anon_nllm_of(pairs, qids, k := NULL): NLLM, sum over cells of (nl(v) - 1) / nl(G) h_max / h.
-- DOUBLE.
-- Twin: polars_anon.metrics.cost.nllm
CREATE OR REPLACE TEMP MACRO anon_nllm_of(pairs, qids, k := NULL) AS TABLE
  FROM anon_metric_edge_cost_of(pairs, qids, metric := 'nllm', k := k);

-- anon_wllm_of(pairs, qids, k := NULL): WLLM, sum over cells of (nl(v) - 1) wid(Q). DOUBLE.
-- Twin: polars_anon.metrics.cost.wllm
CREATE OR REPLACE TEMP MACRO anon_wllm_of(pairs, qids, k := NULL) AS TABLE
  FROM anon_metric_edge_cost_of(pairs, qids, metric := 'wllm', k := k);

-- anon_wnllm_of(pairs, qids, k := NULL): WNLLM, sum over cells of (nl(v) - 1) / nl(G) wid(Q).
-- DOUBLE.
-- Twin: polars_anon.metrics.cost.wnllm
CREATE OR REPLACE TEMP MACRO anon_wnllm_of(pairs, qids, k := NULL) AS TABLE
  FROM anon_metric_edge_cost_of(pairs, qids, metric := 'wnllm', k := k);

-- anon_alteration_of(pairs, qids, k := NULL): percentage of alteration against T* (every cell
-- at the root), averaged over the seven metrics; a metric with m(T*) = 0 is left out (0 when
-- all are). DOUBLE in [0, 100].
-- Twin: polars_anon.metrics.cost.alteration
CREATE OR REPLACE TEMP MACRO anon_alteration_of(pairs, qids, k := NULL) AS TABLE
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
  FROM anon_metric_read(pairs, qids, '_cells', k) AS c
  GROUP BY GROUPING SETS ((c.attribute, c.i), ()) ORDER BY c.i ASC NULLS FIRST;

-- anon_modified_of(pairs, qids, k := NULL): percentage of cells published as anything but
-- their original value, a suppressed row's in every qid. DOUBLE in [0, 100].
-- Twin: polars_anon.metrics.cost.modified
CREATE OR REPLACE TEMP MACRO anon_modified_of(pairs, qids, k := NULL) AS TABLE
  SELECT c.attribute,
         CASE WHEN sum(c.size) > 0 THEN 100.0 * sum(CASE WHEN c.suppressed OR c.leaf <> c.pub THEN c.size ELSE 0 END) / sum(c.size) ELSE 0.0 END AS value
  FROM anon_metric_read(pairs, qids, '_cells', k) AS c
  GROUP BY GROUPING SETS ((c.attribute, c.i), ()) ORDER BY c.i ASC NULLS FIRST;

-- anon_deleted_of(pairs, qids, k := NULL): percentage of cells generalized to the root of
-- their hierarchy, a suppressed row's in every qid. DOUBLE in [0, 100].
-- Twin: polars_anon.metrics.cost.deleted
CREATE OR REPLACE TEMP MACRO anon_deleted_of(pairs, qids, k := NULL) AS TABLE
  SELECT c.attribute,
         CASE WHEN sum(c.size) > 0
              THEN 100.0 * sum(CASE WHEN c.suppressed OR (c.p_is_root AND c.leaf <> c.pub) THEN c.size ELSE 0 END) / sum(c.size) ELSE 0.0 END AS value
  FROM anon_metric_read(pairs, qids, '_cells', k) AS c
  GROUP BY GROUPING SETS ((c.attribute, c.i), ()) ORDER BY c.i ASC NULLS FIRST;

-- anon_deleted_of_modified_of(pairs, qids, k := NULL): percentage of deleted cells among the
-- modified ones (0 when none is modified). DOUBLE.
-- Twin: polars_anon.metrics.cost.deleted_of_modified
CREATE OR REPLACE TEMP MACRO anon_deleted_of_modified_of(pairs, qids, k := NULL) AS TABLE
  SELECT c.attribute,
         CASE WHEN sum(CASE WHEN c.suppressed OR c.leaf <> c.pub THEN c.size ELSE 0 END) > 0
              THEN 100.0 * sum(CASE WHEN c.suppressed OR (c.p_is_root AND c.leaf <> c.pub) THEN c.size ELSE 0 END)
                         / sum(CASE WHEN c.suppressed OR c.leaf <> c.pub THEN c.size ELSE 0 END)
              ELSE 0.0 END AS value
  FROM anon_metric_read(pairs, qids, '_cells', k) AS c
  GROUP BY GROUPING SETS ((c.attribute, c.i), ()) ORDER BY c.i ASC NULLS FIRST;

-- ---------------------------------------------------------------- papers 002 and 003: cells
-- anon_granularity_of(pairs, qids, k := NULL): sum over cells of (nl(v) - 1) / nl(G). DOUBLE.
-- Twin: polars_anon.metrics.cells.granularity
CREATE OR REPLACE TEMP MACRO anon_granularity_of(pairs, qids, k := NULL) AS TABLE
  SELECT c.attribute, sum(c.size * (c.p_leaves - 1)::DOUBLE / c.n_leaves) AS value
  FROM anon_metric_read(pairs, qids, '_cells', k) AS c
  GROUP BY GROUPING SETS ((c.attribute, c.i), ()) ORDER BY c.i ASC NULLS FIRST;

-- anon_iloss_of(pairs, qids, k := NULL): ILoss, sum over cells of (|v_g| - 1) / |D_A|: the
-- same sum as anon_granularity_of. DOUBLE.
-- Twin: polars_anon.metrics.cells.iloss
CREATE OR REPLACE TEMP MACRO anon_iloss_of(pairs, qids, k := NULL) AS TABLE
  FROM anon_granularity_of(pairs, qids, k := k);

-- anon_precision_of(pairs, qids, k := NULL): Precision, 1 - mean over cells of l_v / (h - 1).
-- DOUBLE in [0, 1].
-- Twin: polars_anon.metrics.cells.precision
CREATE OR REPLACE TEMP MACRO anon_precision_of(pairs, qids, k := NULL) AS TABLE
  SELECT c.attribute,
         1.0 - sum(c.size * CASE WHEN c.h > 1 THEN c.p_level::DOUBLE / (c.h - 1) ELSE 0.0 END) / sum(c.size) AS value
  FROM anon_metric_read(pairs, qids, '_cells', k) AS c
  GROUP BY GROUPING SETS ((c.attribute, c.i), ()) ORDER BY c.i ASC NULLS FIRST;

-- anon_information_loss_of(pairs, qids, k := NULL): Byun's information loss: per cell the
-- node's leaf range over the domain range (numeric) or l_v / (h - 1) (others), summed. DOUBLE.
-- Twin: polars_anon.metrics.cells.information_loss
CREATE OR REPLACE TEMP MACRO anon_information_loss_of(pairs, qids, k := NULL) AS TABLE
  SELECT c.attribute,
         sum(c.size * CASE WHEN c.numeric THEN (CASE WHEN c.domain > 0 THEN (c.p_num_hi - c.p_num_lo)::DOUBLE / c.domain ELSE 0.0 END)
                           WHEN c.h > 1 THEN c.p_level::DOUBLE / (c.h - 1) ELSE 0.0 END)::DOUBLE AS value
  FROM anon_metric_read(pairs, qids, '_cells', k) AS c
  GROUP BY GROUPING SETS ((c.attribute, c.i), ()) ORDER BY c.i ASC NULLS FIRST;

-- anon_metric_levels_of(pairs, qids, k := NULL): per qid i, attribute, h and its full-domain level L (the
-- highest published level of the kept rows), NULL when some kept cell is not published at
-- level L.
-- Twin: polars_anon.metrics.cells._levels
CREATE OR REPLACE TEMP MACRO anon_metric_levels_of(pairs, qids, k := NULL) AS TABLE
  WITH
  c AS (SELECT * FROM anon_metric_read(pairs, qids, '_cells', k) WHERE NOT suppressed),
  top AS (SELECT c.i, max(c.p_level) AS L FROM c GROUP BY c.i),
  ok AS (
    SELECT c.i, bool_and(c.p_level <= top.L AND (c.p_parent_level IS NULL OR c.p_parent_level > top.L)) AS ok
    FROM c JOIN top ON top.i = c.i GROUP BY c.i),
  nd AS (SELECT i, attribute, h FROM anon_metric_nodes(anon_metric_checked(pairs, qids, k)) WHERE is_root)
  SELECT nd.i, nd.attribute, nd.h, CASE WHEN coalesce(ok.ok, true) THEN coalesce(top.L, 0) END AS L
  FROM nd LEFT JOIN top ON top.i = nd.i LEFT JOIN ok ON ok.i = nd.i;

-- anon_absolute_distance_of(pairs, qids, k := NULL): sum of the full-domain levels (inferred as
-- anon_metric_levels_of); NULL unless full-domain. BIGINT.
-- Twin: polars_anon.metrics.cells.absolute_distance
CREATE OR REPLACE TEMP MACRO anon_absolute_distance_of(pairs, qids, k := NULL) AS TABLE
  SELECT l.attribute, (CASE WHEN count(*) = count(l.L) THEN sum(l.L) END)::BIGINT AS value
  FROM anon_metric_levels_of(pairs, qids, k := k) AS l
  GROUP BY GROUPING SETS ((l.attribute, l.i), ()) ORDER BY l.i ASC NULLS FIRST;

-- anon_relative_distance_of(pairs, qids, k := NULL): sum of L / (h - 1) over the qids; NULL
-- unless full-domain. DOUBLE.
-- Twin: polars_anon.metrics.cells.relative_distance
CREATE OR REPLACE TEMP MACRO anon_relative_distance_of(pairs, qids, k := NULL) AS TABLE
  SELECT l.attribute,
         CASE WHEN count(*) = count(l.L) THEN sum(CASE WHEN l.h > 1 THEN l.L::DOUBLE / (l.h - 1) ELSE 0.0 END) END::DOUBLE AS value
  FROM anon_metric_levels_of(pairs, qids, k := k) AS l
  GROUP BY GROUPING SETS ((l.attribute, l.i), ()) ORDER BY l.i ASC NULLS FIRST;

-- anon_entropy_of(pairs, qids, k := NULL): Gionis' conditional entropy, sum over cells of
-- H(original | published node), the shares counted in the original table. DOUBLE.
-- Twin: polars_anon.metrics.cells.entropy
CREATE OR REPLACE TEMP MACRO anon_entropy_of(pairs, qids, k := NULL) AS TABLE
  WITH
  c AS (FROM anon_metric_read(pairs, qids, '_cells', k)),
  counts AS (SELECT c.attribute, c.leaf, sum(c.size) AS n FROM c GROUP BY ALL),
  under AS (
    SELECT counts.attribute, cl.ancestor, counts.n,
           counts.n::DOUBLE / sum(counts.n) OVER (PARTITION BY counts.attribute, cl.ancestor) AS share
    FROM counts JOIN anon_closure AS cl ON cl.hierarchy = counts.attribute AND cl.leaf = counts.leaf),
  hn AS (SELECT attribute, ancestor, sum(-share * ln(share)) AS H FROM under GROUP BY ALL)
  SELECT c.attribute, sum(c.size * coalesce(hn.H, 0.0))::DOUBLE AS value
  FROM c LEFT JOIN hn ON hn.attribute = c.attribute AND hn.ancestor = c.pub
  GROUP BY GROUPING SETS ((c.attribute, c.i), ()) ORDER BY c.i ASC NULLS FIRST;

-- anon_ambiguity_of(pairs, qids, k := NULL): mean over records of the product of nl(v) over the
-- qids (it depends on the published tuple only: summed per class, suppressed rows at the
-- roots); per qid the mean nl(v). DOUBLE.
-- Twin: polars_anon.metrics.cells.ambiguity
CREATE OR REPLACE TEMP MACRO anon_ambiguity_of(pairs, qids, k := NULL) AS TABLE
  WITH
  nd AS (SELECT i, node, leaves FROM anon_metric_nodes(anon_metric_checked(pairs, qids, k))),
  cl AS (SELECT cls, sum(size) AS size FROM anon_metric_read(pairs, qids, '_classes', k) WHERE i IS NULL GROUP BY cls),
  u AS (SELECT cl.cls, cl.size, r.i, coalesce(cl.cls[r.i + 1], 0) AS node FROM cl CROSS JOIN range(len(anon_names(qids))) AS r(i)),
  rec AS (
    SELECT u.cls, any_value(u.size) AS size, product(nd.leaves::DOUBLE) AS amb
    FROM u JOIN nd ON nd.i = u.i AND nd.node = u.node GROUP BY u.cls),
  c AS (FROM query_table(anon_metric_part(pairs, '_cells')))
  SELECT NULL::VARCHAR AS attribute, sum(rec.size * rec.amb)::DOUBLE / sum(rec.size) AS value FROM rec
  UNION ALL
  SELECT attribute, value FROM (
    SELECT c.i, c.attribute, sum(c.size * c.p_leaves)::DOUBLE / sum(c.size) AS value FROM c GROUP BY c.i, c.attribute ORDER BY c.i ASC NULLS LAST);

-- anon_squared_distance_error_of(pairs, qids, k := NULL): sum over records of sqrt(sum over
-- numeric qids of (a - mean leaf value of v)^2) (node values looked up by node id in lists);
-- per qid sum of |a - mean(v)|; NULL without numeric qids. DOUBLE.
-- Twin: polars_anon.metrics.cells.squared_distance_error
CREATE OR REPLACE TEMP MACRO anon_squared_distance_error_of(pairs, qids, k := NULL) AS TABLE
  WITH
  nd AS (SELECT i, node, numeric, num_lo, num_mean FROM anon_metric_nodes(anon_metric_checked(pairs, qids, k))),
  per AS (SELECT i, bool_and(numeric) AS num, list(num_lo ORDER BY node ASC NULLS LAST) AS lo, list(num_mean ORDER BY node ASC NULLS LAST) AS mean FROM nd GROUP BY i),
  lk AS (SELECT bool_or(num) AS any_num, list(num ORDER BY i ASC NULLS LAST) AS num, list(lo ORDER BY i ASC NULLS LAST) AS lo, list(mean ORDER BY i ASC NULLS LAST) AS mean FROM per),
  c AS (FROM anon_metric_read(pairs, qids, '_cells', k))
  SELECT NULL::VARCHAR AS attribute,
         CASE WHEN any_value(lk.any_num) THEN sum(pr.size * sqrt(list_sum(list_transform(range(len(anon_names(qids))), lambda j:
             CASE WHEN lk.num[j + 1] THEN (lk.lo[j + 1][pr.o[j + 1] + 1] - lk.mean[j + 1][pr.p[j + 1] + 1]) ** 2 ELSE 0.0 END))))
         END::DOUBLE AS value
  FROM query_table(anon_metric_part(pairs, '')) AS pr CROSS JOIN lk
  UNION ALL
  SELECT attribute, value FROM (
    SELECT c.i, c.attribute, CASE WHEN bool_and(c.numeric) THEN sum(c.size * abs(c.l_num_lo - c.p_num_mean)) END::DOUBLE AS value
    FROM c GROUP BY c.i, c.attribute ORDER BY c.i ASC NULLS LAST);

-- ---------------------------------------------------------------- the published partition
-- anon_discernibility_of(pairs, qids, k := NULL): sum of squared class sizes, plus |D| per
-- suppressed row. BIGINT.
-- Twin: polars_anon.metrics.partition.discernibility
CREATE OR REPLACE TEMP MACRO anon_discernibility_of(pairs, qids, k := NULL) AS TABLE
  WITH
  c AS (SELECT i, cls, sum(size) AS size FROM anon_metric_read(pairs, qids, '_classes', k) GROUP BY ALL),
  t AS (SELECT i, sum(size) FILTER (WHERE cls IS NOT NULL) AS kept, coalesce(sum(size) FILTER (WHERE cls IS NULL), 0) AS sup,
               sum(size) AS n, coalesce(sum(size * size) FILTER (WHERE cls IS NOT NULL), 0) AS dm FROM c GROUP BY i)
  SELECT CASE WHEN t.i IS NULL THEN NULL ELSE anon_names(qids)[t.i + 1] END AS attribute, (t.dm + t.sup * t.n)::BIGINT AS value
  FROM t ORDER BY t.i ASC NULLS FIRST;

-- anon_c_avg_of(pairs, qids, k := NULL): kept rows / (k * classes); without k the smallest
-- class size stands in. DOUBLE.
-- Twin: polars_anon.metrics.partition.c_avg
CREATE OR REPLACE TEMP MACRO anon_c_avg_of(pairs, qids, k := NULL) AS TABLE
  WITH c AS (SELECT i, cls, sum(size) AS size FROM anon_metric_read(pairs, qids, '_classes', k) WHERE cls IS NOT NULL GROUP BY ALL)
  SELECT CASE WHEN c.i IS NULL THEN NULL ELSE anon_names(qids)[c.i + 1] END AS attribute,
         (sum(c.size)::DOUBLE / (coalesce(anon_metric_k(k), min(c.size)) * count(*)))::DOUBLE AS value
  FROM c GROUP BY c.i ORDER BY c.i ASC NULLS FIRST;

-- anon_cm_of(pairs, qids, k := NULL): classification metric, (rows outside their class's
-- majority sensitive value + suppressed rows) / rows. Needs pairs made with the sensitive
-- attribute. DOUBLE in [0, 1].
-- Twin: polars_anon.metrics.partition.cm
CREATE OR REPLACE TEMP MACRO anon_cm_of(pairs, qids, k := NULL) AS TABLE
  WITH
  c AS (FROM anon_metric_read(pairs, qids, '_classes', k)),
  m AS (SELECT i, cls, sum(size) AS n, max(size) AS top, count(s) AS has_s FROM c GROUP BY i, cls),
  t AS (SELECT i, sum(n - top) FILTER (WHERE cls IS NOT NULL) AS minority, sum(n) FILTER (WHERE cls IS NULL) AS sup,
               sum(n) AS rows, sum(has_s) AS has_s FROM m GROUP BY i)
  SELECT CASE WHEN t.i IS NULL THEN NULL ELSE anon_names(qids)[t.i + 1] END AS attribute,
         CASE WHEN t.has_s = 0 THEN error('anon_cm needs the sensitive attribute: sensitive := ''<column>'' '
                                          || '(when making the pairs, for anon_cm_of)')
              ELSE (coalesce(t.minority, 0) + coalesce(t.sup, 0))::DOUBLE / t.rows END::DOUBLE AS value
  FROM t ORDER BY t.i ASC NULLS FIRST;

-- anon_min_class_size_of(pairs, qids, k := NULL): the smallest class (effective k); 0 when no
-- row is kept. BIGINT.
-- Twin: polars_anon.metrics.partition.min_class_size
CREATE OR REPLACE TEMP MACRO anon_min_class_size_of(pairs, qids, k := NULL) AS TABLE
  WITH c AS (SELECT i, cls, sum(size) AS size FROM anon_metric_read(pairs, qids, '_classes', k) GROUP BY ALL)
  SELECT CASE WHEN c.i IS NULL THEN NULL ELSE anon_names(qids)[c.i + 1] END AS attribute,
         coalesce(min(c.size) FILTER (WHERE c.cls IS NOT NULL), 0)::BIGINT AS value
  FROM c GROUP BY c.i ORDER BY c.i ASC NULLS FIRST;

-- anon_n_classes_of(pairs, qids, k := NULL): number of classes of the kept rows. BIGINT.
-- Twin: polars_anon.metrics.partition.n_classes
CREATE OR REPLACE TEMP MACRO anon_n_classes_of(pairs, qids, k := NULL) AS TABLE
  WITH c AS (SELECT DISTINCT i, cls FROM anon_metric_read(pairs, qids, '_classes', k))
  SELECT CASE WHEN c.i IS NULL THEN NULL ELSE anon_names(qids)[c.i + 1] END AS attribute, count(c.cls)::BIGINT AS value
  FROM c GROUP BY c.i ORDER BY c.i ASC NULLS FIRST;

-- anon_suppressed_of(pairs, qids, k := NULL): original rows absent from anon (the same on
-- every row). BIGINT.
-- Twin: polars_anon.metrics.partition.suppressed
CREATE OR REPLACE TEMP MACRO anon_suppressed_of(pairs, qids, k := NULL) AS TABLE
  WITH
  s AS (SELECT coalesce(sum(size) FILTER (WHERE cls IS NULL), 0)::BIGINT AS n FROM anon_metric_read(pairs, qids, '_classes', k) WHERE i IS NULL),
  ix AS (SELECT NULL::BIGINT AS i UNION ALL SELECT unnest(range(len(anon_names(qids)))))
  SELECT CASE WHEN ix.i IS NULL THEN NULL ELSE anon_names(qids)[ix.i + 1] END AS attribute, s.n AS value
  FROM ix CROSS JOIN s ORDER BY ix.i ASC NULLS FIRST;

-- anon_k_of(pairs, qids, k := NULL): the requested k as given (NULL if not), on every row.
-- BIGINT.
-- Twin: polars_anon.metrics.partition.k
CREATE OR REPLACE TEMP MACRO anon_k_of(pairs, qids, k := NULL) AS TABLE
  WITH ix AS (SELECT NULL::BIGINT AS i UNION ALL SELECT unnest(range(len(anon_names(qids)))))
  SELECT CASE WHEN ix.i IS NULL THEN NULL ELSE anon_names(qids)[ix.i + 1] END AS attribute,
         anon_metric_k(k) AS value
  FROM ix WHERE anon_metric_check(pairs, qids, k) ORDER BY ix.i ASC NULLS FIRST;

-- anon_diameter_of(pairs, qids, k := NULL): the largest Hamming distance between two distinct
-- published tuples of the kept rows, by counting the pairs that agree on each subset of qids
-- and inverting over supersets (NULL above 12 qids); per qid 1 when it has two published
-- values. BIGINT.
-- Twin: polars_anon.metrics.partition.diameter
CREATE OR REPLACE TEMP MACRO anon_diameter_of(pairs, qids, k := NULL) AS TABLE
  WITH
  t AS MATERIALIZED (SELECT DISTINCT cls AS p FROM anon_metric_read(pairs, qids, '_classes', k) WHERE i IS NULL AND cls IS NOT NULL),
  masks AS (SELECT unnest(range(CASE WHEN len(anon_names(qids)) <= 12 THEN 1::BIGINT << len(anon_names(qids)) ELSE 0 END)) AS mask),
  g AS (
    SELECT masks.mask, list_select(t.p, list_filter(range(1, len(anon_names(qids)) + 1), lambda j: (masks.mask >> (j - 1)) & 1 = 1)) AS key,
           count(*) AS c
    FROM t CROSS JOIN masks GROUP BY ALL),
  agree AS (SELECT mask, sum(c * c)::HUGEINT AS n FROM g GROUP BY mask),
  exact AS (
    SELECT s.mask, sum(CASE WHEN (bit_count(tt.mask) - bit_count(s.mask)) % 2 = 0 THEN tt.n ELSE -tt.n END) AS e
    FROM agree AS s JOIN agree AS tt ON (s.mask & tt.mask) = s.mask GROUP BY s.mask)
  SELECT NULL::VARCHAR AS attribute,
         CASE WHEN len(anon_names(qids)) > 12 THEN NULL
              ELSE coalesce(len(anon_names(qids)) - min(bit_count(e.mask)) FILTER (WHERE e.e > 0 AND e.mask <> (1::BIGINT << len(anon_names(qids))) - 1), 0)
         END::BIGINT AS value
  FROM exact AS e
  UNION ALL
  SELECT attribute, value FROM (
    SELECT r.i, anon_names(qids)[r.i + 1] AS attribute, (count(DISTINCT t.p[r.i + 1]) >= 2)::BIGINT AS value
    FROM range(len(anon_names(qids))) AS r(i) LEFT JOIN t ON true GROUP BY r.i ORDER BY r.i ASC NULLS LAST);

-- ---------------------------------------------------------------- distributions
-- anon_hellinger_of(pairs, qids, k := NULL): per qid the Hellinger distance between the leaf
-- distribution in orig and that of anon read back onto the leaves (a node spreads its rows
-- evenly over its leaves); the median over qids. DOUBLE.
-- Twin: polars_anon.metrics.distribution.hellinger
CREATE OR REPLACE TEMP MACRO anon_hellinger_of(pairs, qids, k := NULL) AS TABLE
  WITH
  c AS (FROM anon_metric_read(pairs, qids, '_cells', k)),
  n AS (SELECT sum(size)::DOUBLE / len(anon_names(qids)) AS n FROM c),
  p AS (SELECT c.i, c.leaf, sum(c.size)::DOUBLE / any_value(n.n) AS P FROM c, n GROUP BY ALL),
  q AS (
    SELECT c.i, cl.leaf, sum(c.size::DOUBLE / c.p_leaves) / any_value(n.n) AS Q
    FROM c CROSS JOIN n JOIN anon_closure AS cl ON cl.hierarchy = c.attribute AND cl.ancestor = c.pub
    GROUP BY ALL),
  d AS (
    SELECT coalesce(p.i, q.i) AS i, sqrt(sum((sqrt(coalesce(p.P, 0.0)) - sqrt(coalesce(q.Q, 0.0))) ** 2)) / sqrt(2.0) AS value
    FROM p FULL JOIN q ON p.i = q.i AND p.leaf = q.leaf GROUP BY ALL)
  SELECT NULL::VARCHAR AS attribute, median(d.value)::DOUBLE AS value FROM d
  UNION ALL
  SELECT attribute, value FROM (SELECT d.i, anon_names(qids)[d.i + 1] AS attribute, d.value FROM d ORDER BY d.i ASC NULLS LAST);

-- anon_metric_joint_of(pairs, qids): the contingency tables of every unordered pair of
-- attributes x < y (the qids, then the sensitive one, index len(qids), when the pairs carry
-- it) in the original (side 'o') and the published (side 'p') table: x, y, side, va, vb, nab
-- (rows). Read off the pairs' code lists (the published side summed per published tuple
-- first), no row join. Refuses a qid with no hierarchy loaded (its codes are labels, not
-- nodes: only the classes metrics read those). Materialize it as <pairs>_joint.
-- Twin: polars_anon.metrics.distribution._pairwise
CREATE OR REPLACE TEMP MACRO anon_metric_joint_of(pairs, qids) AS TABLE
  WITH
  __anon_built AS (  -- the first CTE; the codes of a qid without a hierarchy are labels, not nodes: refused
    SELECT coalesce(min(CASE WHEN n.hierarchy IS NULL THEN error(anon_msg_no_hierarchy_metric(q.attribute)) END), true)
             AS ok
    FROM (SELECT unnest(qids) AS attribute) AS q
    LEFT JOIN (SELECT DISTINCT hierarchy FROM anon_nodes) AS n ON n.hierarchy = q.attribute),
  pr AS (FROM query_table(anon_table(pairs)) WHERE (SELECT ok FROM __anon_built)),
  pp AS (SELECT p, s, sum(size) AS size FROM pr GROUP BY ALL),
  m AS (SELECT len(qids) + CASE WHEN count(s) > 0 THEN 1 ELSE 0 END AS m FROM pp),
  ix AS (SELECT a.x, b.y FROM m, range(m.m) AS a(x), range(m.m) AS b(y) WHERE a.x < b.y)
  SELECT ix.x, ix.y, 'o' AS side, pr.o[ix.x + 1] AS va, CASE WHEN ix.y = len(qids) THEN pr.s ELSE pr.o[ix.y + 1] END AS vb,
         sum(pr.size)::BIGINT AS nab
  FROM pr CROSS JOIN ix GROUP BY ALL
  UNION ALL
  SELECT ix.x, ix.y, 'p', pp.p[ix.x + 1], CASE WHEN ix.y = len(qids) THEN pp.s ELSE pp.p[ix.y + 1] END, sum(pp.size)::BIGINT
  FROM pp CROSS JOIN ix GROUP BY ALL;

-- anon_metric_pairwise_of(pairs, qids, with_s := false, k := NULL): for every unordered pair of
-- attributes x < y of <pairs>_joint (the qids; the sensitive one too when with_s), Cramér's V
-- and the mutual information in orig (v_o, mi_o) and in anon (v_p, mi_p). Refuses with_s on
-- pairs made without the sensitive attribute.
-- Twin: polars_anon.metrics.distribution._pairwise
CREATE OR REPLACE TEMP MACRO anon_metric_pairwise_of(pairs, qids, with_s := false, k := NULL) AS TABLE
  WITH
  joint AS (SELECT * FROM anon_metric_read(pairs, qids, '_joint', k) WHERE with_s OR y < len(anon_names(qids))),
  n AS (SELECT sum(nab) FILTER (WHERE x = 0 AND y = 1 AND side = 'o') AS n,
               count(*) FILTER (WHERE y = len(anon_names(qids))) AS has_s FROM joint),
  mg AS (
    SELECT *, sum(nab) OVER (PARTITION BY x, y, side, va) AS na, sum(nab) OVER (PARTITION BY x, y, side, vb) AS nb FROM joint),
  st AS (
    SELECT x, y, side,
           sum(nab::DOUBLE * nab / (na * nb)) - 1.0 AS phi2,
           least(count(DISTINCT va), count(DISTINCT vb)) - 1 AS dof,
           sum(nab::DOUBLE / n.n * ln(n.n::DOUBLE * nab / (na * nb))) AS mi
    FROM mg CROSS JOIN n GROUP BY x, y, side),
  v AS (SELECT x, y, side, CASE WHEN dof > 0 THEN sqrt(greatest(phi2, 0.0) / dof) ELSE 0.0 END AS v, mi FROM st)
  SELECT o.x, o.y, o.v AS v_o, p.v AS v_p, o.mi AS mi_o,
         CASE WHEN with_s AND n.has_s = 0 THEN error('anon_mi_loss needs the sensitive attribute: sensitive := ''<column>'' '
                                                     || '(when making the pairs, for anon_mi_loss_of)') ELSE p.mi END AS mi_p
  FROM n LEFT JOIN (v AS o JOIN v AS p ON o.x = p.x AND o.y = p.y AND o.side = 'o' AND p.side = 'p') ON true
  WHERE o.x IS NOT NULL OR (with_s AND n.has_s = 0);

-- anon_cramers_v_of(pairs, qids, k := NULL): median over qid pairs of |V in orig - V in anon|
-- (Cramér's V); per qid over the pairs that include it; NULL with one qid. DOUBLE.
-- Twin: polars_anon.metrics.distribution.cramers_v
CREATE OR REPLACE TEMP MACRO anon_cramers_v_of(pairs, qids, k := NULL) AS TABLE
  WITH
  d AS MATERIALIZED (SELECT x, y, abs(v_o - v_p) AS change FROM anon_metric_pairwise_of(pairs, qids, k := k)),
  ix AS (SELECT unnest(range(len(anon_names(qids)))) AS i)
  SELECT NULL::VARCHAR AS attribute, median(d.change)::DOUBLE AS value FROM d
  UNION ALL
  SELECT attribute, value FROM (
    SELECT ix.i, anon_names(qids)[ix.i + 1] AS attribute, median(d.change)::DOUBLE AS value
    FROM ix LEFT JOIN d ON d.x = ix.i OR d.y = ix.i GROUP BY ix.i ORDER BY ix.i ASC NULLS LAST);

-- anon_mi_loss_of(pairs, qids, k := NULL): mean over pairs of the qids and the sensitive
-- attribute of MI(orig) - MI(anon); per qid over the pairs that include it. Needs pairs made
-- with the sensitive attribute. DOUBLE.
-- Twin: polars_anon.metrics.distribution.mi_loss
CREATE OR REPLACE TEMP MACRO anon_mi_loss_of(pairs, qids, k := NULL) AS TABLE
  WITH
  d AS MATERIALIZED (SELECT x, y, mi_o - mi_p AS delta FROM anon_metric_pairwise_of(pairs, qids, with_s := true, k := k)),
  ix AS (SELECT unnest(range(len(anon_names(qids)))) AS i)
  SELECT NULL::VARCHAR AS attribute, avg(d.delta)::DOUBLE AS value FROM d
  UNION ALL
  SELECT attribute, value FROM (
    SELECT ix.i, anon_names(qids)[ix.i + 1] AS attribute, avg(d.delta)::DOUBLE AS value
    FROM ix LEFT JOIN d ON d.x = ix.i OR d.y = ix.i GROUP BY ix.i ORDER BY ix.i ASC NULLS LAST);

-- ---------------------------------------------------------------- over the tables directly
-- anon_<name>(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): the metric of
-- anon_<name>_of over pairs made in the query (the original calling convention; every call
-- reads both tables again). Each is anon_metric('<name>', ...) of sql/_metrics_direct.sql,
-- which makes the pairs and their companions once for all of them; sensitive is passed on
-- by anon_cm and anon_mi_loss only (the others need no sensitive values: fewer pairs).

-- anon_distortion(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_distortion_of over the tables.
-- Twin: polars_anon.metrics.cost.distortion
CREATE OR REPLACE TEMP MACRO anon_distortion(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('distortion', orig, anon, qids, key := key, k := k);

-- anon_ncp(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_ncp_of over the tables.
-- Twin: polars_anon.metrics.cost.ncp
CREATE OR REPLACE TEMP MACRO anon_ncp(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('ncp', orig, anon, qids, key := key, k := k);

-- anon_total(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_total_of over the tables.
-- Twin: polars_anon.metrics.cost.total
CREATE OR REPLACE TEMP MACRO anon_total(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('total', orig, anon, qids, key := key, k := k);

-- anon_llm(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_llm_of over the tables.
-- Twin: polars_anon.metrics.cost.llm
CREATE OR REPLACE TEMP MACRO anon_llm(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('llm', orig, anon, qids, key := key, k := k);

-- anon_nllm(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_nllm_of over the tables.
-- Twin: polars_anon.metrics.cost.nllm
CREATE OR REPLACE TEMP MACRO anon_nllm(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('nllm', orig, anon, qids, key := key, k := k);

-- anon_wllm(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_wllm_of over the tables.
-- Twin: polars_anon.metrics.cost.wllm
CREATE OR REPLACE TEMP MACRO anon_wllm(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('wllm', orig, anon, qids, key := key, k := k);

-- anon_wnllm(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_wnllm_of over the tables.
-- Twin: polars_anon.metrics.cost.wnllm
CREATE OR REPLACE TEMP MACRO anon_wnllm(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('wnllm', orig, anon, qids, key := key, k := k);

-- anon_alteration(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_alteration_of over the tables.
-- Twin: polars_anon.metrics.cost.alteration
CREATE OR REPLACE TEMP MACRO anon_alteration(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('alteration', orig, anon, qids, key := key, k := k);

-- anon_modified(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_modified_of over the tables.
-- Twin: polars_anon.metrics.cost.modified
CREATE OR REPLACE TEMP MACRO anon_modified(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('modified', orig, anon, qids, key := key, k := k);

-- anon_deleted(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_deleted_of over the tables.
-- Twin: polars_anon.metrics.cost.deleted
CREATE OR REPLACE TEMP MACRO anon_deleted(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('deleted', orig, anon, qids, key := key, k := k);

-- anon_deleted_of_modified(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_deleted_of_modified_of over the tables.
-- Twin: polars_anon.metrics.cost.deleted_of_modified
CREATE OR REPLACE TEMP MACRO anon_deleted_of_modified(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('deleted_of_modified', orig, anon, qids, key := key, k := k);

-- anon_iloss(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_iloss_of over the tables.
-- Twin: polars_anon.metrics.cells.iloss
CREATE OR REPLACE TEMP MACRO anon_iloss(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('iloss', orig, anon, qids, key := key, k := k);

-- anon_granularity(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_granularity_of over the tables.
-- Twin: polars_anon.metrics.cells.granularity
CREATE OR REPLACE TEMP MACRO anon_granularity(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('granularity', orig, anon, qids, key := key, k := k);

-- anon_precision(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_precision_of over the tables.
-- Twin: polars_anon.metrics.cells.precision
CREATE OR REPLACE TEMP MACRO anon_precision(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('precision', orig, anon, qids, key := key, k := k);

-- anon_absolute_distance(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_absolute_distance_of over the tables.
-- Twin: polars_anon.metrics.cells.absolute_distance
CREATE OR REPLACE TEMP MACRO anon_absolute_distance(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('absolute_distance', orig, anon, qids, key := key, k := k);

-- anon_relative_distance(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_relative_distance_of over the tables.
-- Twin: polars_anon.metrics.cells.relative_distance
CREATE OR REPLACE TEMP MACRO anon_relative_distance(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('relative_distance', orig, anon, qids, key := key, k := k);

-- anon_entropy(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_entropy_of over the tables.
-- Twin: polars_anon.metrics.cells.entropy
CREATE OR REPLACE TEMP MACRO anon_entropy(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('entropy', orig, anon, qids, key := key, k := k);

-- anon_ambiguity(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_ambiguity_of over the tables.
-- Twin: polars_anon.metrics.cells.ambiguity
CREATE OR REPLACE TEMP MACRO anon_ambiguity(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('ambiguity', orig, anon, qids, key := key, k := k);

-- anon_squared_distance_error(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_squared_distance_error_of over the tables.
-- Twin: polars_anon.metrics.cells.squared_distance_error
CREATE OR REPLACE TEMP MACRO anon_squared_distance_error(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('squared_distance_error', orig, anon, qids, key := key, k := k);

-- anon_information_loss(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_information_loss_of over the tables.
-- Twin: polars_anon.metrics.cells.information_loss
CREATE OR REPLACE TEMP MACRO anon_information_loss(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('information_loss', orig, anon, qids, key := key, k := k);

-- anon_discernibility(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_discernibility_of over the tables.
-- Twin: polars_anon.metrics.partition.discernibility
CREATE OR REPLACE TEMP MACRO anon_discernibility(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('discernibility', orig, anon, qids, key := key, k := k);

-- anon_c_avg(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_c_avg_of over the tables.
-- Twin: polars_anon.metrics.partition.c_avg
CREATE OR REPLACE TEMP MACRO anon_c_avg(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('c_avg', orig, anon, qids, key := key, k := k);

-- anon_cm(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_cm_of over the tables.
-- Twin: polars_anon.metrics.partition.cm
CREATE OR REPLACE TEMP MACRO anon_cm(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('cm', orig, anon, qids, key := key, sensitive := sensitive, k := k);

-- anon_diameter(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_diameter_of over the tables.
-- Twin: polars_anon.metrics.partition.diameter
CREATE OR REPLACE TEMP MACRO anon_diameter(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('diameter', orig, anon, qids, key := key, k := k);

-- anon_k(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_k_of over the tables.
-- Twin: polars_anon.metrics.partition.k
CREATE OR REPLACE TEMP MACRO anon_k(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('k', orig, anon, qids, key := key, k := k);

-- anon_min_class_size(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_min_class_size_of over the tables.
-- Twin: polars_anon.metrics.partition.min_class_size
CREATE OR REPLACE TEMP MACRO anon_min_class_size(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('min_class_size', orig, anon, qids, key := key, k := k);

-- anon_n_classes(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_n_classes_of over the tables.
-- Twin: polars_anon.metrics.partition.n_classes
CREATE OR REPLACE TEMP MACRO anon_n_classes(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('n_classes', orig, anon, qids, key := key, k := k);

-- anon_suppressed(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_suppressed_of over the tables.
-- Twin: polars_anon.metrics.partition.suppressed
CREATE OR REPLACE TEMP MACRO anon_suppressed(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('suppressed', orig, anon, qids, key := key, k := k);

-- anon_hellinger(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_hellinger_of over the tables.
-- Twin: polars_anon.metrics.distribution.hellinger
CREATE OR REPLACE TEMP MACRO anon_hellinger(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('hellinger', orig, anon, qids, key := key, k := k);

-- anon_cramers_v(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_cramers_v_of over the tables.
-- Twin: polars_anon.metrics.distribution.cramers_v
CREATE OR REPLACE TEMP MACRO anon_cramers_v(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('cramers_v', orig, anon, qids, key := key, k := k);

-- anon_mi_loss(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_mi_loss_of over the tables.
-- Twin: polars_anon.metrics.distribution.mi_loss
CREATE OR REPLACE TEMP MACRO anon_mi_loss(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('mi_loss', orig, anon, qids, key := key, sensitive := sensitive, k := k);

-- ---------------------------------------------------------------- the methods' average cell loss
-- anon_loss_of(pairs, qids, k := NULL): mean over cells of (nl(v) - 1) / (nl(G) - 1), a
-- suppressed row counting 1 per cell, a kept cell of a one-leaf hierarchy 0. DOUBLE in [0, 1].
-- Twin: polars_anon.metrics.cells.loss
CREATE OR REPLACE TEMP MACRO anon_loss_of(pairs, qids, k := NULL) AS TABLE
  SELECT c.attribute,
         (sum(c.size * CASE WHEN c.suppressed THEN 1.0 WHEN c.n_leaves > 1 THEN (c.p_leaves - 1)::DOUBLE / (c.n_leaves - 1) ELSE 0.0 END)
          / sum(c.size))::DOUBLE AS value
  FROM anon_metric_read(pairs, qids, '_cells', k) AS c
  GROUP BY GROUPING SETS ((c.attribute, c.i), ()) ORDER BY c.i ASC NULLS FIRST;

-- anon_loss(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): anon_loss_of over the tables.
-- Twin: polars_anon.metrics.cells.loss
CREATE OR REPLACE TEMP MACRO anon_loss(orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  FROM anon_metric('loss', orig, anon, qids, key := key, k := k);

-- anon_no_pairs, anon_no_pairs_cells, anon_no_pairs_classes, anon_no_pairs_joint: the empty tables an
-- anon_<metric>_of reads for a pairs argument that is not text (anon_metric_part), with the columns of the real ones.
CREATE OR REPLACE TEMP VIEW anon_no_pairs AS
  SELECT NULL::BIGINT[] AS o, NULL::BIGINT[] AS p, NULL::BIGINT AS s, NULL::BOOLEAN AS suppressed, NULL::BIGINT AS size
  WHERE false;
CREATE OR REPLACE TEMP VIEW anon_no_pairs_cells AS FROM anon_metric_cells_of('anon_no_pairs', []::VARCHAR[]);
CREATE OR REPLACE TEMP VIEW anon_no_pairs_classes AS FROM anon_metric_classes_of('anon_no_pairs', []::VARCHAR[]);
CREATE OR REPLACE TEMP VIEW anon_no_pairs_joint AS FROM anon_metric_joint_of('anon_no_pairs', []::VARCHAR[]);
