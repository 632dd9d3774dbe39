-- Statistical disclosure control (sdcMicro's freqCalc, indivRisk and global risk) as macros: the
-- relational twins of polars_anon.sdc. A missing key value is a category of its own here (GROUP BY
-- groups nulls together: polars_anon.sdc.frequencies with missing = 'category'); sdcMicro's
-- wildcard reading and the exact individual risk are Python only. Every table macro refuses keys that are not a
-- list of text or empty, a weight that is not a text, a key or weight that is not a column, a weight also named as a
-- key, a key named like a column they build, and bad weights (anon_frequencies; the messages of
-- polars_anon/messages.py).

-- anon_sdc_risk_of(fk, big_fk): the Benedetti-Franconi individual risk of a pattern with fk records and
-- weighted count big_fk (Fk), unchecked (the table macros' counts are checked before): sdcMicro's approximation
-- (exact for fk = 1 and 2; p / (fk - 1 + p) with p = fk / Fk above), and 1 / fk when Fk <= fk (no sampling); for
-- fk = 1 and 2 with Fk within a hair of fk, the series of those formulas (they cancel there: 1.5 for fk = 2,
-- Fk = 2.000000001, where the risk is 0.5). The text of polars_anon.sdc.measures.risk_sql('fk', 'big_fk').
-- Twin: polars_anon.sdc.risk.benedetti_franconi (method "approx", its formulas)
CREATE OR REPLACE TEMP MACRO anon_sdc_risk_of(fk, big_fk) AS
  (CASE WHEN big_fk <= fk THEN 1.0 / fk WHEN fk IN (1, 2) AND ((big_fk - fk) / CAST(big_fk AS DOUBLE)) < 0.05 THEN CASE WHEN fk = 1 THEN (1 - ((big_fk - fk) / CAST(big_fk AS DOUBLE))) * (1.0 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.5 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.3333333333333333 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.25 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.2 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.16666666666666666 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.14285714285714285 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.125 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.1111111111111111 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.1 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.09090909090909091 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.08333333333333333 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * 0.07692307692307693)))))))))))) ELSE (1 - ((big_fk - fk) / CAST(big_fk AS DOUBLE))) - (1 - ((big_fk - fk) / CAST(big_fk AS DOUBLE))) * (1 - ((big_fk - fk) / CAST(big_fk AS DOUBLE))) * (0.5 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.3333333333333333 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.25 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.2 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.16666666666666666 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.14285714285714285 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.125 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.1111111111111111 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.1 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.09090909090909091 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.08333333333333333 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * (0.07692307692307693 + ((big_fk - fk) / CAST(big_fk AS DOUBLE)) * 0.07142857142857142)))))))))))) END WHEN fk = 1 THEN ((CAST(fk AS DOUBLE) / big_fk) / (1 - (CAST(fk AS DOUBLE) / big_fk))) * ln(1 / (CAST(fk AS DOUBLE) / big_fk)) WHEN fk = 2 THEN ((CAST(fk AS DOUBLE) / big_fk) / (1 - (CAST(fk AS DOUBLE) / big_fk))) - ((CAST(fk AS DOUBLE) / big_fk) / (1 - (CAST(fk AS DOUBLE) / big_fk))) * ((CAST(fk AS DOUBLE) / big_fk) / (1 - (CAST(fk AS DOUBLE) / big_fk))) * ln(1 / (CAST(fk AS DOUBLE) / big_fk)) ELSE (CAST(fk AS DOUBLE) / big_fk) / (fk - 1 + (CAST(fk AS DOUBLE) / big_fk)) END);

-- anon_sdc_risk(fk, big_fk): anon_sdc_risk_of for one pattern given by hand, read as DOUBLEs, once checked as
-- Python checks them: fk, then Fk, a finite number (not text, not a BOOLEAN), then fk > 0 and Fk >= fk (it gave
-- -0.0 for fk = 0, 0.0909 for fk = -1 and 0.333 for fk = 3, Fk = 2); a NULL gives NULL, as SQL's functions do.
-- Twin: polars_anon.sdc.risk.benedetti_franconi (method "approx")
CREATE OR REPLACE TEMP MACRO anon_sdc_risk(fk, big_fk) AS
  CASE WHEN fk IS NULL OR big_fk IS NULL THEN NULL
       WHEN NOT anon_is_number(fk) OR NOT isfinite(TRY_CAST(fk AS DOUBLE)) THEN error(anon_msg_risk_not_finite('fk', '', fk))
       WHEN NOT anon_is_number(big_fk) OR NOT isfinite(TRY_CAST(big_fk AS DOUBLE))
       THEN error(anon_msg_risk_not_finite('Fk', '', big_fk))
       WHEN TRY_CAST(fk AS DOUBLE) <= 0 OR TRY_CAST(big_fk AS DOUBLE) < TRY_CAST(fk AS DOUBLE)
       THEN error(anon_msg_risk_counts('', fk, big_fk))
       ELSE anon_sdc_risk_of(TRY_CAST(fk AS DOUBLE), TRY_CAST(big_fk AS DOUBLE)) END;

-- anon_exact_sum(v): the sum of the DOUBLE values v (an aggregate) with the same bits in any row order and
-- with any number of threads: HUGEINT sums of fixed-point parts (SUM of doubles adds in thread order; SUM itself
-- when the magnitudes add up to 2^85 or more), each safe from overflow whatever the values (SQL sums both branches).
-- Twin: polars_anon.sdc.measures.exact_sum_sql
CREATE OR REPLACE TEMP MACRO anon_exact_sum(v) AS
  (CASE WHEN SUM(ABS(CAST(v AS DOUBLE))) < 3.8685626227668134e+25 THEN CAST(((CASE WHEN SUM(ABS(CAST(v AS DOUBLE))) < 3.8685626227668134e+25 THEN SUM(CAST(TRUNC((CASE WHEN ABS(CAST(v AS DOUBLE)) < 3.8685626227668134e+25 THEN ROUND(CAST(v AS DOUBLE) * 1099511627776.0) ELSE 0 END) / 3.8685626227668134e+25) AS HUGEINT)) ELSE 0 END) * CAST('38685626227668133590597632' AS HUGEINT) + SUM(CAST(((CASE WHEN ABS(CAST(v AS DOUBLE)) < 3.8685626227668134e+25 THEN ROUND(CAST(v AS DOUBLE) * 1099511627776.0) ELSE 0 END) - TRUNC((CASE WHEN ABS(CAST(v AS DOUBLE)) < 3.8685626227668134e+25 THEN ROUND(CAST(v AS DOUBLE) * 1099511627776.0) ELSE 0 END) / 3.8685626227668134e+25) * 3.8685626227668134e+25) AS HUGEINT))) AS DOUBLE) / 1099511627776.0 + CAST(SUM(CAST((CASE WHEN ABS(CAST(v AS DOUBLE)) < 3.8685626227668134e+25 THEN ROUND((CAST(v AS DOUBLE) * 1099511627776.0 - ROUND(CAST(v AS DOUBLE) * 1099511627776.0)) * 1.2089258196146292e+24) ELSE 0 END) AS HUGEINT)) AS DOUBLE) / 1.329227995784916e+36 ELSE SUM(CAST(v AS DOUBLE)) END);

-- anon_check_weight(tbl, weight): true, or an error when weight (not NULL) is not a column of tbl.
-- Twin: polars_anon.sdc.frequencies.check_weights (the column check; anon_frequencies reads the values)
CREATE OR REPLACE TEMP MACRO anon_check_weight(tbl, weight) AS
  CASE WHEN weight IS NULL THEN true ELSE anon_check_columns(tbl, [weight], 'weight') END;

-- anon_check_keys(tbl, keys): true, or the error of key variables that are empty, named twice or not columns of tbl
-- (in the words Python's SDC functions use: 'keys', not 'qids').
-- Twin: polars_anon._validate.check_keys
CREATE OR REPLACE TEMP MACRO anon_check_keys(tbl, keys) AS
  CASE WHEN keys IS NULL OR len(keys) = 0 THEN error(anon_msg_keys_empty('keys'))
       WHEN len(anon_duplicates(keys)) > 0 THEN error(anon_msg_names_twice('keys', anon_duplicates(keys), 'column'))
       ELSE anon_check_columns(tbl, keys, 'keys') END;

-- anon_check_sdc_keys(tbl, keys, weight): true, or the error of keys that are empty, named twice or not columns,
-- a weight that is not a column, a weight that is also a key (it gave the risk of the weights' own patterns), or a
-- key named like a column the SDC macros build ('fk', 'big_fk', 'risk', any '__anon_*' name; without case, as DuckDB
-- matches names), in that order.
-- Twin: polars_anon.sdc.frequencies.check_frequency_args with refuse_built_names
CREATE OR REPLACE TEMP MACRO anon_check_sdc_keys(tbl, keys, weight) AS
  CASE WHEN anon_check_keys(tbl, keys) THEN
    CASE WHEN anon_check_weight(tbl, weight) THEN
      CASE WHEN list_contains(keys, weight) THEN error(anon_msg_weight_is_key(weight))
           ELSE anon_check_built_names(keys, ['fk', 'big_fk', 'risk'], 'key column', 'the SDC macros build beside the keys')
      END END END;

-- anon_weight_bad(w): whether a sampling weight is missing, NaN, infinite or not above 0 (NaN sorts above infinity).
-- Twin: polars_anon.sdc.frequencies.check_weights (its test of a value)
CREATE OR REPLACE TEMP MACRO anon_weight_bad(w) AS
  w IS NULL OR NOT coalesce(TRY_CAST(w AS DOUBLE) > 0 AND TRY_CAST(w AS DOUBLE) < 'inf'::DOUBLE, false);

-- anon_keys_first(keys): the SQL text that selects the keys, in keys' order (COLUMNS lists a table's columns in
-- the table's order), then __anon_fk and __anon_big_fk, from __anon_patterns. Each key is a COLUMNS(lambda ...)
-- that also matches __anon_none, so that the text binds with a key that is no column (DuckDB binds it before the
-- checks run, which then refuse that key by name); the caller drops the __anon_none columns.
-- Twin: polars_anon.sdc.frequencies.patterns (its keys in keys' order)
CREATE OR REPLACE TEMP MACRO anon_keys_first(keys) AS
  'SELECT ' || array_to_string(list_transform(coalesce(keys, []), lambda k: 'COLUMNS(lambda c: c = '
    || coalesce('''' || replace(k, '''', '''''') || '''', 'NULL') || ' OR c = ''__anon_none''), '), '')
  || '__anon_fk, __anon_big_fk FROM __anon_patterns';

-- anon_counts_of(tbl, keys, weight, args_ok): anon_frequencies_of with keys as a VARCHAR list and weight as a VARCHAR,
-- once args_ok (their types' check) holds.
-- Twin: polars_anon.sdc.frequencies.pattern_frequencies (its counts under the helper names)
CREATE OR REPLACE TEMP MACRO anon_counts_of(tbl, keys, weight, args_ok) AS TABLE
  WITH __anon_ok AS MATERIALIZED (SELECT CASE WHEN args_ok THEN anon_check_sdc_keys(tbl, keys, weight) END AS ok),
  __anon_rows AS (  -- __anon_w: the weight in its own type (NULL without one)
    SELECT * EXCLUDE (__anon_ws), __anon_ws[1] AS __anon_w
    FROM (SELECT *, list_value(*COLUMNS(lambda c: c = weight OR c = '__anon_nw')) AS __anon_ws
          FROM (SELECT *, NULL AS __anon_none, NULL AS __anon_nw FROM query_table(anon_table(tbl))))
    WHERE (SELECT o.ok FROM __anon_ok AS o)),
  __anon_w_ok AS MATERIALIZED (
    SELECT CASE WHEN weight IS NULL THEN true
                WHEN (SELECT o.ok FROM __anon_ok AS o) IS NULL THEN NULL  -- the keys and the table first (no row read)
                WHEN NOT anon_is_number(any_value(__anon_w)) THEN error(anon_msg_weight_not_numeric(weight, typeof(any_value(__anon_w))))
                WHEN count(*) FILTER (WHERE anon_weight_bad(__anon_w)) > 0
                THEN error(anon_msg_bad_weights(weight, count(*) FILTER (WHERE anon_weight_bad(__anon_w)),
                                                (list(__anon_w) FILTER (WHERE anon_weight_bad(__anon_w)))[1:5]))
                ELSE true END AS ok
    FROM __anon_rows WHERE weight IS NOT NULL),  -- no scan without a weight
  __anon_patterns AS MATERIALIZED (
    SELECT COLUMNS(lambda c: list_contains(keys, c) OR c = '__anon_none'), count(*)::DOUBLE AS __anon_fk,
           CASE WHEN weight IS NULL THEN count(*)::DOUBLE ELSE anon_exact_sum(__anon_w) END AS __anon_big_fk
    FROM __anon_rows WHERE (SELECT o.ok FROM __anon_w_ok AS o)
    GROUP BY ALL),
  __anon_fk_ok AS MATERIALIZED (
    SELECT CASE WHEN count(*) FILTER (WHERE __anon_big_fk < __anon_fk) > 0
                THEN error(anon_msg_weights_below_count('', weight, count(*) FILTER (WHERE __anon_big_fk < __anon_fk), ''))
                ELSE true END AS ok
    FROM __anon_patterns)
  SELECT COLUMNS(lambda c: NOT starts_with(c, '__anon_none')) FROM query(anon_keys_first(keys))
  WHERE (SELECT o.ok FROM __anon_fk_ok AS o);

-- anon_frequencies_of(tbl, keys, weight := NULL): anon_frequencies with fk and big_fk named __anon_fk and
-- __anon_big_fk (what the SDC macros read: a key named fk, of any type, then binds, and the check refuses it by name;
-- read as fk it was DuckDB's Binder Error, 'Cannot compare values of type DOUBLE and type VARCHAR'). keys must be a
-- list of text and weight a text (anon_check_names_arg: keys := 'a', [1] and weight := 3 were DuckDB's own errors).
-- Twin: polars_anon.sdc.frequencies.pattern_frequencies (its counts under the helper names)
CREATE OR REPLACE TEMP MACRO anon_frequencies_of(tbl, keys, weight := NULL) AS TABLE
  FROM anon_counts_of(tbl, TRY_CAST(keys AS VARCHAR[]), TRY_CAST(weight AS VARCHAR),
                      CASE WHEN anon_check_names_arg('keys', keys) THEN anon_check_names_arg('weight', weight, false) END);

-- anon_frequencies(tbl, keys, weight := NULL): one row per distinct key pattern: the key columns (in keys' order),
-- fk (records, DOUBLE) and big_fk (Fk: the sum of the weights; fk without a weight), sorted. Refuses what
-- anon_check_sdc_keys refuses, then a weight column that is not numeric, weights missing, NaN, infinite or not
-- above 0 (naming up to 5 of them), and key patterns whose weights sum below their record count (Fk < fk).
-- Twin: polars_anon.sdc.frequencies.pattern_frequencies (missing = "category")
CREATE OR REPLACE TEMP MACRO anon_frequencies(tbl, keys, weight := NULL) AS TABLE
  SELECT * EXCLUDE (__anon_fk, __anon_big_fk), __anon_fk AS fk, __anon_big_fk AS big_fk
  FROM anon_frequencies_of(tbl, keys, weight := weight) ORDER BY ALL ASC NULLS LAST;

-- anon_individual_risk(tbl, keys, weight := NULL): anon_frequencies with each pattern's risk
-- (anon_sdc_risk_of; 1 / fk without a weight).
-- Twin: polars_anon.sdc.risk.individual_risk (per pattern; method "approx", missing "category")
CREATE OR REPLACE TEMP MACRO anon_individual_risk(tbl, keys, weight := NULL) AS TABLE
  SELECT * EXCLUDE (__anon_fk, __anon_big_fk), __anon_fk AS fk, __anon_big_fk AS big_fk,
         anon_sdc_risk_of(__anon_fk, __anon_big_fk) AS risk
  FROM anon_frequencies_of(tbl, keys, weight := weight) ORDER BY ALL ASC NULLS LAST;

-- anon_global_risk(tbl, keys, weight := NULL): one row: n_rows, global_risk (the mean individual
-- risk), expected_reidentifications (their sum), n_unique (records with fk = 1), n_pairs (fk = 2).
-- Refuses what anon_frequencies refuses, and an empty table (its global risk is undefined).
-- Twin: polars_anon.sdc.risk.global_risk (method "approx", missing "category")
CREATE OR REPLACE TEMP MACRO anon_global_risk(tbl, keys, weight := NULL) AS TABLE
  WITH __anon_risks AS (
    SELECT __anon_fk, anon_sdc_risk_of(__anon_fk, __anon_big_fk) AS __anon_risk
    FROM anon_frequencies_of(tbl, keys, weight := weight))
  SELECT CASE WHEN count(*) = 0 THEN error(anon_msg_no_rows('global_risk', 'global risk is undefined'))
              ELSE sum(__anon_fk)::BIGINT END AS n_rows,
         anon_exact_sum(__anon_fk * __anon_risk) / sum(__anon_fk) AS global_risk,
         anon_exact_sum(__anon_fk * __anon_risk) AS expected_reidentifications,
         coalesce(sum(__anon_fk) FILTER (WHERE __anon_fk = 1), 0)::BIGINT AS n_unique,
         coalesce(sum(__anon_fk) FILTER (WHERE __anon_fk = 2), 0)::BIGINT AS n_pairs
  FROM __anon_risks;
