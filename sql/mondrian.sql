-- anon_mondrian(coords_tbl, tuples_tbl, k := 2, split := 'strict', count_dims := []): Mondrian partition
-- [paper 002 §3.2, paper 003 Algorithm 3] as one recursive query, one recursion step per
-- breadth-first round over every open partition.
--   coords_tbl: (t BIGINT, dim BIGINT, x BIGINT, v DOUBLE): the rank x and coordinate v of
--               tuple t on axis dim (polars_anon.algorithms.mondrian.coordinates, long form)
--   tuples_tbl: (t BIGINT, size BIGINT): the distinct tuples and their row counts
-- Returns (t, off, size, class): a tuple's records off .. off + size - 1 (row order) are in
-- class `class` (relaxed cuts may split a tuple). Strict: lhs = x <= pv (pv the lower median)
-- when that keeps k rows on both sides, else lhs = x < pv when that does; relaxed: lhs holds
-- floor(n / 2) rows, records equal to the median dealt out in (t, off) order. The cut attribute is the widest
-- normalized range with an allowable cut, ties to the lower dim; the dims listed in
-- count_dims measure their width as (distinct values - 1) / (distinct values in the table - 1).
-- Refuses split outside strict / relaxed, an empty tuples table, and k that is not an integer
-- from 1 to the table's rows (sum of size), as pa.anonymize refuses them.
-- Twin: polars_anon.algorithms.mondrian.partition
CREATE OR REPLACE TEMP MACRO anon_mondrian(coords_tbl, tuples_tbl, k := 2, split := 'strict', count_dims := []::BIGINT[]) AS TABLE
  WITH RECURSIVE r(t, off, size, pid, rnd, done) AS (
    SELECT s.t::BIGINT, 0::BIGINT, s.size::BIGINT, 0::BIGINT, 0::BIGINT, false
    FROM query_table(anon_table(tuples_tbl)) AS s
    WHERE (SELECT CASE WHEN anon_check_choice('split', split, ['strict', 'relaxed']) IS NULL THEN false  -- checked once,
                       WHEN anon_check_k(k) IS NULL THEN false                                         -- in this order
                       WHEN n.rows = 0 THEN error(anon_msg_empty_table(tuples_tbl::VARCHAR, 'anonymize'))
                       ELSE anon_check_k(k, n.rows) IS NOT NULL END
           FROM (SELECT coalesce(sum(u.size), 0) AS rows FROM query_table(anon_table(tuples_tbl)) AS u) AS n)
    UNION ALL
    (WITH w AS (SELECT * FROM r WHERE NOT r.done),
     co AS (SELECT * FROM query_table(anon_table(coords_tbl))),
     spans AS (
       SELECT co.dim,
              CASE WHEN list_contains(count_dims, co.dim) THEN (count(DISTINCT co.x) - 1)::DOUBLE
                   ELSE max(co.v) - min(co.v) END AS span
       FROM co GROUP BY co.dim),
     pts AS (
       SELECT w.pid, co.dim, co.x, any_value(co.v) AS v, sum(w.size) AS c
       FROM w JOIN co ON co.t = w.t GROUP BY w.pid, co.dim, co.x),
     cum AS (
       SELECT p.*,
              sum(p.c) OVER (PARTITION BY p.pid, p.dim ORDER BY p.x ASC NULLS LAST ROWS UNBOUNDED PRECEDING) AS cum,
              sum(p.c) OVER (PARTITION BY p.pid, p.dim) AS n,
              count(*) OVER (PARTITION BY p.pid, p.dim) AS nd,
              (max(p.v) OVER (PARTITION BY p.pid, p.dim) - min(p.v) OVER (PARTITION BY p.pid, p.dim)) AS range
       FROM pts AS p),
     stats AS (
       SELECT q.pid, q.dim, q.n, q.nd, q.x AS pv, q.cum AS lhs, q.cum - q.c AS before,
              CASE WHEN list_contains(count_dims, q.dim) THEN (q.nd - 1)::DOUBLE ELSE q.range END
                / CASE WHEN sp.span > 0 THEN sp.span ELSE 1.0 END AS width
       FROM cum AS q JOIN spans AS sp ON sp.dim = q.dim
       WHERE q.cum >= CASE WHEN split = 'strict' THEN (q.n + 1) // 2 ELSE q.n // 2 END
       QUALIFY row_number() OVER (PARTITION BY q.pid, q.dim ORDER BY q.x ASC NULLS LAST) = 1),
     oks AS (
       SELECT st.*,
              st.lhs >= k AND st.n - st.lhs >= k AS ok_le,
              st.before >= k AND st.n - st.before >= k AS ok_lt
       FROM stats AS st),
     flags AS (
       SELECT o.*, split = 'strict' AND o.ok_lt AND NOT o.ok_le AS use_lt
       FROM oks AS o),
     dec AS (
       SELECT f.pid, f.dim, CASE WHEN f.use_lt THEN f.pv - 1 ELSE f.pv END AS pv,
              CASE WHEN split = 'strict' THEN CASE WHEN f.use_lt THEN f.before ELSE f.lhs END
                   ELSE f.n // 2 - f.before END AS take
       FROM flags AS f
       WHERE CASE WHEN split = 'strict' THEN f.ok_le OR f.ok_lt
                  ELSE f.n // 2 >= k AND f.nd >= 2 END
       QUALIFY row_number() OVER (PARTITION BY f.pid ORDER BY f.width DESC NULLS LAST, f.dim ASC NULLS LAST) = 1),
     a AS (
       SELECT w.t, w.off, w.size, w.pid, w.rnd, d.dim, d.pv, d.take, co.x AS sel
       FROM w LEFT JOIN dec AS d ON d.pid = w.pid
       LEFT JOIN co ON co.t = w.t AND co.dim = d.dim),
     b AS (
       SELECT a.*,
              coalesce(sum(CASE WHEN a.sel = a.pv THEN a.size ELSE 0 END) OVER (
                PARTITION BY a.pid ORDER BY a.t ASC NULLS LAST, a.off ASC NULLS LAST ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS start
       FROM a WHERE a.dim IS NOT NULL),
     lefts AS (
       SELECT b.*,
              CASE WHEN split = 'strict' THEN CASE WHEN b.sel <= b.pv THEN b.size ELSE 0 END
                   WHEN b.sel < b.pv THEN b.size
                   WHEN b.sel > b.pv THEN 0
                   ELSE least(greatest(b.take - b.start, 0), b.size) END AS lsize
       FROM b),
     parts AS (
       SELECT l.t, l.off, l.lsize AS size, l.pid, 0 AS side, l.rnd FROM lefts AS l WHERE l.lsize > 0
       UNION ALL
       SELECT l.t, l.off + l.lsize, l.size - l.lsize, l.pid, 1, l.rnd FROM lefts AS l WHERE l.lsize < l.size)
     SELECT a.t, a.off, a.size, a.pid, a.rnd, true FROM a WHERE a.dim IS NULL
     UNION ALL
     SELECT p.t, p.off, p.size, dense_rank() OVER (ORDER BY p.pid ASC NULLS LAST, p.side ASC NULLS LAST) - 1, p.rnd + 1, false FROM parts AS p)
  )
  SELECT r.t, r.off, r.size, (dense_rank() OVER (ORDER BY r.rnd ASC NULLS LAST, r.pid ASC NULLS LAST) - 1)::BIGINT AS class
  FROM r WHERE r.done
  ORDER BY r.t ASC NULLS LAST, r.off ASC NULLS LAST;
