-- Encodings for machine learning, one row per (class, encoded column): the SQL twin of the
-- `classes` layout of polars_anon.write_encoded (rows of one class are identical in every
-- encoding, so a class's block is all there is to compute) [paper 000 §II-C, §III-A].
--
-- anon_encode_classes(anon, qids, representation := 'proportional', orig := NULL):
--   anon            table/view name of the published rows (qid columns hold hierarchy nodes)
--   qids            VARCHAR list; each hierarchy loaded under its qid's name
--                   (polars_anon.duckdb.load_hierarchy)
--   representation  proportional (share of the class's original values equal to or under
--                   the node; needs orig), fillparent, fillchild, oneclass, setbinary (leaf
--                   columns only)
--   orig            table/view name of the original rows, row-aligned with anon (lined up by
--                   position, as pa.anonymize publishes when nothing is suppressed)
-- Result: class (VARCHAR[]: the published tuple in qids order), size (BIGINT: rows in the class),
-- attribute, col ('<qid>_<node label>'), col_index (BIGINT: 0-based position in the wide column order:
-- the qids in order, each block by level then depth-first), value (DOUBLE); every
-- (class, column) pair, zeros included, ordered by class then col_index. Wide, in DuckDB:
--   PIVOT (SELECT class, col, value FROM anon_encode_classes(...)) ON col USING first(value)
-- Refuses an unknown representation, an empty qids and qids that are not columns of anon
-- (or orig), whatever the rows; with orig, an original value that is not under its row's
-- published one (the tables are not row-aligned), as encode does.
-- Twin: polars_anon.encode.encode / polars_anon.write_encoded(layout='classes')
CREATE OR REPLACE TEMP MACRO anon_encode_classes(anon, qids, representation := 'proportional', orig := NULL) AS TABLE
  WITH
  rep AS MATERIALIZED (  -- the checks, in this order, once whatever the rows
    SELECT CASE WHEN anon_check_choice('representation', representation,
                                       ['proportional', 'fillparent', 'fillchild', 'oneclass', 'setbinary']) IS NULL THEN NULL
                WHEN anon_name(representation) = 'proportional' AND orig IS NULL
                THEN error('representation ''proportional'' needs the original rows: orig := ''<table>'' (row-aligned)')
                WHEN NOT anon_check_qids(anon, qids, 'anon') THEN NULL
                WHEN anon_check_qids(coalesce(orig, anon), qids, 'orig') THEN anon_name(representation) END AS r),
  pub_rows AS (  -- __anon_none keeps the COLUMNS from matching nothing (refused by DuckDB before the checks run)
    SELECT COLUMNS('^(' || array_to_string(list_transform(anon_names(qids) || ['__anon_none'], lambda x: regexp_escape(x)), '|') || ')$')
             AS '__anon_p_\1',
           true AS __anon_pub
    FROM (SELECT *, NULL AS __anon_none FROM query_table(anon_table(anon)))
    WHERE (SELECT r IS NOT NULL FROM rep)),  -- the checks before anything else
  orig_rows AS (
    SELECT COLUMNS(lambda c: list_contains(anon_names(qids), c) OR c = '__anon_none'), true AS __anon_orig
    FROM (SELECT *, NULL AS __anon_none FROM query_table(anon_table(coalesce(orig, anon))))),
  grouped AS (  -- one pass over the rows: (published tuple, original tuple) counts, the original only for proportional
    SELECT *, count(*) AS __anon_n FROM pub_rows POSITIONAL JOIN orig_rows
    WHERE anon_name(representation) = 'proportional' GROUP BY ALL
    UNION ALL BY NAME
    SELECT *, count(*) AS __anon_n FROM pub_rows WHERE anon_name(representation) <> 'proportional' GROUP BY ALL),
  pairs AS (
    SELECT CASE WHEN anon_name(representation) = 'proportional' AND (__anon_pub IS NULL OR __anon_orig IS NULL)
                THEN error('the original and the published table have different row counts; they are lined up by position')
                ELSE list_transform(anon_names(qids), lambda q: map_extract_value(pm, '__anon_p_' || q)) END AS p,
           list_transform(anon_names(qids), lambda q: map_extract_value(om, q)) AS o, __anon_n AS n
    FROM (SELECT struct_pack(*COLUMNS(lambda c: starts_with(c, '__anon_p_')))::MAP(VARCHAR, VARCHAR) AS pm,
                 struct_pack(*COLUMNS(lambda c: list_contains(anon_names(qids), c) OR c = '__anon_none'))::MAP(VARCHAR, VARCHAR) AS om,
                 __anon_pub, __anon_orig, __anon_n
          FROM grouped)),
  cls AS (SELECT p, sum(n)::BIGINT AS size FROM pairs GROUP BY ALL),  -- a sum is HUGEINT: Polars reads Decimal
  q AS (SELECT unnest(anon_names(qids)) AS attribute, unnest(range(len(anon_names(qids)))) AS i),
  nd AS (
    SELECT q.i, q.attribute, n.node, n.label, n.level, n.depth, n.order_lo, n.order_hi,
           NOT EXISTS (SELECT 1 FROM anon_nodes AS c WHERE c.hierarchy = n.hierarchy AND c.parent = n.node) AS is_leaf
    FROM q JOIN anon_nodes AS n ON n.hierarchy = q.attribute),
  cols AS (
    SELECT nd.*, row_number() OVER (PARTITION BY nd.i ORDER BY nd.level ASC NULLS LAST, nd.node ASC NULLS LAST) - 1 AS k
    FROM nd WHERE anon_name(representation) <> 'setbinary' OR nd.is_leaf),
  blocks AS (
    SELECT q.i, coalesce(sum(count(cols.node)) OVER (ORDER BY q.i ASC NULLS LAST ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS off,
           count(cols.node) AS width
    FROM q LEFT JOIN cols ON cols.i = q.i GROUP BY q.i),
  published AS (  -- the node each class publishes for each qid
    SELECT cls.p, q.i,
           CASE WHEN nd.node IS NULL
                THEN error(CASE WHEN (SELECT count(*) FROM anon_nodes WHERE hierarchy = q.attribute) = 0
                                THEN anon_msg_no_hierarchy(q.attribute)
                                ELSE anon_msg_encode_not_in_hierarchy(q.attribute, 'published', cls.p[q.i + 1], 'a node')
                           END)
                ELSE nd.node END AS node,
           nd.depth, nd.order_lo, nd.order_hi
    FROM cls CROSS JOIN q LEFT JOIN nd ON nd.i = q.i AND nd.label = cls.p[q.i + 1]),
  leaf_counts AS (  -- proportional: original leaves per (class, qid), summed into every ancestor
    SELECT pairs.p, q.i, pairs.o[q.i + 1] AS leaf_label, sum(pairs.n) AS n
    FROM pairs CROSS JOIN q WHERE anon_name(representation) = 'proportional' GROUP BY ALL),
  not_under AS (  -- proportional: (qid, published, original) pairs whose original leaf is not under the published node
    SELECT d.i, d.pl, d.ol
    FROM (SELECT DISTINCT q.i, pairs.p[q.i + 1] AS pl, pairs.o[q.i + 1] AS ol
          FROM pairs CROSS JOIN q WHERE anon_name(representation) = 'proportional') AS d
    JOIN nd AS pn ON pn.i = d.i AND pn.label = d.pl
    JOIN nd AS lf ON lf.i = d.i AND lf.label = d.ol AND lf.is_leaf  -- other values: refused as not a node / leaf
    WHERE NOT EXISTS (SELECT 1 FROM anon_closure AS c
                      WHERE c.hierarchy = pn.attribute AND c.leaf = lf.node AND c.ancestor = pn.node)),
  truthful AS MATERIALIZED (  -- the first such qid and its first 5 pairs, as encode refuses them
    SELECT coalesce(
      (SELECT error(anon_msg_not_under_published(
                anon_names(qids)[b.i + 1],
                array_to_string(list(anon_msg_repr(b.ol) || ' -> ' || anon_msg_repr(b.pl) ORDER BY b.pl ASC NULLS LAST, b.ol ASC NULLS LAST)[1:5], ', ')))
       FROM not_under AS b WHERE b.i = (SELECT min(i) FROM not_under) GROUP BY b.i),
      true) AS ok),
  shares AS (
    SELECT lc.p, lc.i, cl.ancestor AS node,
           sum(CASE WHEN lf.node IS NULL OR NOT lf.is_leaf
                    THEN error(anon_msg_encode_not_in_hierarchy(anon_names(qids)[lc.i + 1], 'original', lc.leaf_label, 'a leaf'))
                    ELSE lc.n END) AS n
    FROM leaf_counts AS lc
    LEFT JOIN nd AS lf ON lf.i = lc.i AND lf.label = lc.leaf_label
    LEFT JOIN anon_closure AS cl ON cl.hierarchy = anon_names(qids)[lc.i + 1] AND cl.leaf = lf.node
    GROUP BY ALL)
  SELECT cls.p AS class, cls.size, cols.attribute, cols.attribute || '_' || cols.label AS col,
         (blocks.off + cols.k)::BIGINT AS col_index,
         CASE (SELECT r FROM rep)
           WHEN 'proportional' THEN coalesce(sh.n, 0)::DOUBLE / cls.size
           WHEN 'oneclass' THEN (cols.node = pub.node)::DOUBLE
           WHEN 'fillparent' THEN (cols.order_lo <= pub.order_lo AND pub.order_hi <= cols.order_hi
                                   AND cols.depth <= pub.depth)::DOUBLE
           ELSE (pub.order_lo <= cols.order_lo AND cols.order_hi <= pub.order_hi AND cols.depth >= pub.depth)::DOUBLE
         END AS value
  FROM cls
  CROSS JOIN cols
  JOIN blocks ON blocks.i = cols.i
  JOIN published AS pub ON pub.p = cls.p AND pub.i = cols.i
  LEFT JOIN shares AS sh ON sh.p = cls.p AND sh.i = cols.i AND sh.node = cols.node
  WHERE (SELECT r IS NOT NULL FROM rep) AND (SELECT ok FROM truthful)
  ORDER BY cls.p ASC NULLS LAST, col_index ASC NULLS LAST;
