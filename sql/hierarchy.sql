-- Hierarchy tables. polars_anon.duckdb.load_hierarchy(con, name, hierarchy) fills them;
-- `hierarchy` names the hierarchy (usually the quasi-identifier).
--   anon_nodes(hierarchy, node, label, parent, level, depth, leaves, order_lo, order_hi)
--   anon_closure(hierarchy, leaf, ancestor, distance)
--   anon_levels(hierarchy, label, level, value, leaf): each node's label published at each
--               level; leaf tells whether the label is a leaf
-- Twin: polars_anon.hierarchy.Hierarchy.nodes / .closure / .level_map
CREATE TEMP TABLE IF NOT EXISTS anon_nodes (
  hierarchy VARCHAR, node BIGINT, label VARCHAR, parent BIGINT, level BIGINT, depth BIGINT,
  leaves BIGINT, order_lo BIGINT, order_hi BIGINT);
CREATE TEMP TABLE IF NOT EXISTS anon_closure (hierarchy VARCHAR, leaf BIGINT, ancestor BIGINT, distance BIGINT);
CREATE TEMP TABLE IF NOT EXISTS anon_levels (hierarchy VARCHAR, label VARCHAR, level BIGINT, value VARCHAR, leaf BOOLEAN);

-- anon_check_level(h, lvl): true, or an error when no hierarchy is loaded as h or lvl is not
-- one of its levels (an integer from 0 to the root's level).
-- Twin: polars_anon.hierarchy.Hierarchy.generalize_ids
CREATE OR REPLACE TEMP MACRO anon_check_level(h, lvl) AS (
  SELECT CASE WHEN count(*) = 0 THEN error(anon_msg_no_hierarchy(h))
              WHEN NOT anon_is_integer(lvl) OR NOT coalesce(TRY_CAST(lvl AS BIGINT) BETWEEN 0 AND max(n.level), false)
              THEN error(anon_msg_level_out_of_range('hierarchy ' || anon_msg_repr(h) || ': ', lvl, max(n.level),
                                                     any_value(n.label) FILTER (WHERE n.parent IS NULL)))
              ELSE true END
  FROM anon_nodes AS n WHERE n.hierarchy = h);

-- anon_generalize(h, v, lvl): the value v published at level lvl of hierarchy h. v may have
-- any type: it is matched as DuckDB's text v::VARCHAR (not anon_label(v): 12 -> 500 ms), so the
-- INTEGER 23 matches the label '23'; a float, timestamp or time whose DuckDB text is not its
-- label (-0.0, nan, 1e-07, a timestamp without its fraction) matches no node and is refused
-- naming it, never published under another leaf: cast such a column with anon_label(v) first
-- (docs/guides/duckdb-sql.md). NULL stays NULL (h and lvl are checked all the same).
-- v may be any node of h (an inner node, such as a published '30-34', maps as level_map
-- says: '30-39' at level 2). Refuses (error naming it) a hierarchy h that is not loaded, a
-- level that is not an integer from 0 to the root's, and a value that is no node of h. Use it inside SELECT * REPLACE (...), or polars_anon.duckdb.generalize_sql.
-- Twin: polars_anon.generalize.generalize_expr
CREATE OR REPLACE TEMP MACRO anon_generalize(h, v, lvl) AS
  coalesce(
    (SELECT m.value FROM anon_levels AS m
     WHERE m.hierarchy = h AND m.label = v::VARCHAR AND anon_is_integer(lvl) AND m.level = TRY_CAST(lvl AS BIGINT)),
    CASE WHEN anon_check_level(h, lvl) THEN  -- refuses h and lvl also for a NULL v
      CASE WHEN v IS NOT NULL THEN error(anon_msg_not_a_leaf(h, v::VARCHAR)) END END);

-- anon_level_map(h, lvl): the table label -> value of hierarchy h at level lvl (every node);
-- refuses h not loaded and lvl out of range as anon_generalize does.
-- Twin: polars_anon.hierarchy.Hierarchy.level_map
CREATE OR REPLACE TEMP MACRO anon_level_map(h, lvl) AS TABLE
  SELECT m.label, m.value FROM anon_levels AS m
  WHERE (SELECT anon_check_level(h, lvl)) AND m.hierarchy = h AND m.level = TRY_CAST(lvl AS BIGINT)
  ORDER BY m.label ASC NULLS LAST;
