-- Hierarchy tables. polars_anon.duckdb.load_hierarchy(con, name, hierarchy) fills them;
-- `hierarchy` names the hierarchy (usually the quasi-identifier).
--   anon_nodes(hierarchy, node, label, parent, level, depth, leaves, order_lo, order_hi)
--   anon_closure(hierarchy, leaf, ancestor, distance)
--   anon_levels(hierarchy, label, level, value): each node's label published at each level
-- Twin: polars_anon.hierarchy.Hierarchy.nodes / .closure / .level_map
CREATE TEMP TABLE IF NOT EXISTS anon_nodes (
  hierarchy VARCHAR, node BIGINT, label VARCHAR, parent BIGINT, level BIGINT, depth BIGINT,
  leaves BIGINT, order_lo BIGINT, order_hi BIGINT);
CREATE TEMP TABLE IF NOT EXISTS anon_closure (hierarchy VARCHAR, leaf BIGINT, ancestor BIGINT, distance BIGINT);
CREATE TEMP TABLE IF NOT EXISTS anon_levels (hierarchy VARCHAR, label VARCHAR, level BIGINT, value VARCHAR);

-- anon_generalize(h, v, lvl): the value v (any type, matched as text) published at level lvl
-- of hierarchy h; NULL when v is not a node of h. Use it inside SELECT * REPLACE (...).
-- Twin: polars_anon.generalize.generalize_expr
CREATE OR REPLACE TEMP MACRO anon_generalize(h, v, lvl) AS (
  SELECT m.value FROM anon_levels AS m
  WHERE m.hierarchy = h AND m.label = v::VARCHAR
    AND m.level = CASE WHEN lvl < 0 THEN error('level must be >= 0, got ' || lvl) ELSE lvl END);

-- anon_level_map(h, lvl): the table label -> value of hierarchy h at level lvl.
-- Twin: polars_anon.hierarchy.Hierarchy.level_map
CREATE OR REPLACE TEMP MACRO anon_level_map(h, lvl) AS TABLE
  SELECT m.label, m.value FROM anon_levels AS m WHERE m.hierarchy = h AND m.level = lvl ORDER BY m.label;
