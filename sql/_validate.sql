-- Checks shared by the macros: each returns true (or the checked value) or raises the error of
-- the same refusal in Python (the messages of polars_anon/messages.py, sql/_messages.sql).
-- Use them where DuckDB evaluates them once whatever the rows, e.g. in an uncorrelated
-- scalar subquery of a WHERE clause, so that an empty table is refused as well; order several
-- with CASE WHEN <first> THEN <second> END (AND may run them in any order).

-- anon_is_integer(x): whether x has an integer type (a DECIMAL 2.0 or a DOUBLE is not one,
-- as a Python float is not an int).
-- Twin: polars_anon._validate.is_integer
CREATE OR REPLACE TEMP MACRO anon_is_integer(x) AS
  typeof(x) IN ('TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT', 'UTINYINT', 'USMALLINT', 'UINTEGER', 'UBIGINT', 'UHUGEINT');

-- anon_duplicates(names): the names listed more than once, sorted (a NULL is no name: see anon_missing_columns).
-- Twin: polars_anon._validate.check_unique
CREATE OR REPLACE TEMP MACRO anon_duplicates(names) AS
  list_sort(list_distinct(list_filter(names, lambda n: len(list_filter(names, lambda m: m = n)) > 1)), 'ASC', 'NULLS LAST');

-- anon_no_table: the empty view a table argument that is not text (3, NULL, ['t']) is read as, so that the query
-- binds and anon_check_columns refuses the argument by name (query_table raised DuckDB's own Binder or Catalog Error:
-- 'Cannot use NULL as function argument', 'Table with name 3 does not exist!').
CREATE OR REPLACE TEMP VIEW anon_no_table AS SELECT NULL AS __anon_no_table WHERE false;

-- anon_table(tbl): the name query_table reads for a table argument: tbl when it is text, else 'anon_no_table'.
-- Every query_table(...) of a macro's table argument reads query_table(anon_table(tbl)).
-- Twin: polars_anon.engines.duckdb.DuckDBEngine.table (its check of the argument's type)
CREATE OR REPLACE TEMP MACRO anon_table(tbl) AS
  CASE WHEN tbl IS NOT NULL AND typeof(tbl) = 'VARCHAR' THEN tbl::VARCHAR ELSE 'anon_no_table' END;

-- anon_names(names): a names argument (qids, keys) as the VARCHAR list the macros read, binding from any type
-- ([] when it is not a list of text: its checks, anon_check_names_arg or anon_check_qids, refuse it first).
-- A macro reads anon_names(qids) wherever it uses qids: 'x', 3 or [1] were DuckDB's own Binder or Conversion Errors.
-- Twin: polars_anon._validate.names_list
CREATE OR REPLACE TEMP MACRO anon_names(names) AS
  CASE WHEN typeof(names) IN ('VARCHAR[]', '"NULL"[]') THEN TRY_CAST(names AS VARCHAR[]) ELSE []::VARCHAR[] END;

-- anon_name(name): a column-name argument (sensitive, key, weight) as the VARCHAR the macros read (see anon_names).
-- Twin: polars_anon._validate.names_list
CREATE OR REPLACE TEMP MACRO anon_name(name) AS TRY_CAST(name AS VARCHAR);

-- anon_columns_of(tbl): the column names of table or view tbl (read from no row).
-- Twin: polars.LazyFrame.collect_schema
CREATE OR REPLACE TEMP MACRO anon_columns_of(tbl) AS (
  SELECT struct_keys(__anon_row) FROM (SELECT 1) LEFT JOIN (FROM query_table(anon_table(tbl)) LIMIT 0) AS __anon_row ON true);

-- anon_missing_of(columns, names): the names (a VARCHAR list) that are not in the list columns (a NULL is none).
-- Twin: polars_anon._validate.check_columns
CREATE OR REPLACE TEMP MACRO anon_missing_of(columns, names) AS
  list_filter(names, lambda n: n IS NULL OR NOT list_contains(columns, n));

-- anon_missing_columns(tbl, names): the names (a VARCHAR list) that are not columns of tbl (a NULL is none).
-- Twin: polars_anon._validate.check_columns
CREATE OR REPLACE TEMP MACRO anon_missing_columns(tbl, names) AS (
  SELECT anon_missing_of(c.cols, names) FROM (SELECT anon_columns_of(tbl) AS cols) AS c);

-- anon_check_columns(tbl, names, what, arg := 'tbl'): true, or an error when tbl (the macro's argument `arg`) is not
-- text naming a table or view (see anon_table), naming the `names` (a VARCHAR list,
-- called `what` in the message) that are not columns of table or view tbl, or else the first
-- other column of tbl named with the macros' helper prefix '__anon_' (the macros add helper
-- columns beside the user's and select them by name, so a user's '__anon_w' was read as the
-- weights and a '__anon_none' split the classes; the `names` are refused by their callers, in
-- their role). One subquery reads the columns and makes the message (NULL when all is well);
-- the error is raised outside it, by a lambda over that one value, so that a CASE orders several
-- checks (DuckDB runs the subqueries of every branch first). One subquery and one message to
-- bind, not five and two: a third of the planning time of anon_check_qids, which every table
-- macro runs.
-- A session whose default_collation is not the byte-wise one ('' or 'binary') is refused first, naming
-- the setting: every macro runs this check, and under 'nocase' they merged 'F' and 'f' into one class.
-- Twin: polars_anon._validate.check_columns, refuse_built_names (the prefix)
CREATE OR REPLACE TEMP MACRO anon_check_columns(tbl, names, what, arg := 'tbl') AS
  list_transform(
    [(SELECT CASE WHEN lower(current_setting('default_collation')) NOT IN ('', 'binary')
                  THEN anon_msg_duckdb_setting('default_collation', current_setting('default_collation'), 'the SQL macros',
                                               'read ''F'' and ''f'' as one value', '')
                  WHEN tbl IS NULL OR typeof(tbl) <> 'VARCHAR'
                  THEN anon_msg_not_names(arg, 'the name of a table or view', tbl)
                  WHEN len(m.missing) > 0
                  THEN anon_msg_columns_not_found(what, m.missing, 'table ' || anon_msg_repr(tbl::VARCHAR), m.cols)
                  WHEN m.helper IS NOT NULL
                  THEN anon_msg_built_name('column', m.helper, 'the SQL macros use for their helper columns',
                                           'names starting with ''__anon_''', anon_sql_rename(m.helper, m.helper[3:]))
             END
      FROM (SELECT c.cols, anon_missing_of(c.cols, names) AS missing,
                   anon_built_name(list_filter(c.cols, lambda x: NOT list_contains(names, x)), []) AS helper
            FROM (SELECT anon_columns_of(tbl) AS cols) AS c) AS m)],
    lambda msg: CASE WHEN msg IS NULL THEN true ELSE error(msg) END)[1];

-- anon_check_qids(tbl, qids, arg := 'tbl'): true, or an error when qids is empty or NULL, is not a list of text,
-- holds a NULL, names a column twice, or tbl (the argument `arg`) is not a table name or lacks a qid (in that order).
-- Twin: polars_anon._validate.check_qids
CREATE OR REPLACE TEMP MACRO anon_check_qids(tbl, qids, arg := 'tbl') AS
  CASE WHEN qids IS NULL THEN error(anon_msg_qids_empty())
       WHEN anon_check_names_arg('qids', qids) THEN anon_check_qid_list(tbl, anon_names(qids), arg) END;

-- anon_check_qid_list(tbl, qids, arg): anon_check_qids once qids is known to be a VARCHAR list.
-- Twin: polars_anon._validate.check_qids
CREATE OR REPLACE TEMP MACRO anon_check_qid_list(tbl, qids, arg) AS
  CASE WHEN len(qids) = 0 THEN error(anon_msg_qids_empty())
       -- a NULL among the names: Python's words for a list that is not all names (the list shown as Python shows it,
       -- where the generated message shows a scalar: its trailing 'None' replaced)
       WHEN len(list_filter(qids, lambda q: q IS NULL)) > 0
       THEN error(left(anon_msg_not_names('qids', 'a column name or a list of column names', NULL), -4)
                  || anon_msg_repr_list(qids))
       WHEN len(anon_duplicates(qids)) > 0 THEN error(anon_msg_names_twice('qids', anon_duplicates(qids), 'quasi-identifier'))
       ELSE anon_check_columns(tbl, qids, 'qids', arg) END;

-- anon_check_k(k, n_rows := NULL): k as BIGINT, or an error when k is not an integer >= 1 or,
-- n_rows given, is above it.
-- Twin: polars_anon._validate.check_k
CREATE OR REPLACE TEMP MACRO anon_check_k(k, n_rows := NULL) AS
  CASE WHEN NOT anon_is_integer(k) OR NOT coalesce(TRY_CAST(k AS BIGINT) >= 1, false) THEN error(anon_msg_k_not_integer(k))
       WHEN TRY_CAST(k AS BIGINT) > n_rows THEN error(anon_msg_k_above_rows(k, n_rows))
       ELSE TRY_CAST(k AS BIGINT) END;

-- anon_check_choice(name, value, allowed): value as VARCHAR, or an error when it is not one of the VARCHAR
-- list allowed (3 included: it was a Binder Error; read the value as anon_name(value) elsewhere).
-- Twin: polars_anon._validate.check_choice
CREATE OR REPLACE TEMP MACRO anon_check_choice(name, value, allowed) AS
  CASE WHEN value IS NULL OR typeof(value) <> 'VARCHAR' OR NOT list_contains(allowed, anon_name(value))
       THEN error(anon_msg_choice(name, allowed, value)) ELSE anon_name(value) END;

-- anon_is_number(x): whether x has a numeric type (a BOOLEAN or a VARCHAR is not one, as in Python).
-- Twin: polars_anon.privacy.base.check_positive (its type test)
CREATE OR REPLACE TEMP MACRO anon_is_number(x) AS
  anon_is_integer(x) OR typeof(x) IN ('FLOAT', 'DOUBLE') OR typeof(x) LIKE 'DECIMAL%';

-- anon_check_names_arg(what, value, many := true): true, or the error of an argument `what` that names columns
-- given another type: many, a list of text ([] included; not NULL); else a text, or NULL (none). A macro checks its
-- arguments with it first and reads TRY_CAST(value AS VARCHAR[]) (AS VARCHAR), which binds from any type: a text where
-- a list is due, [1] and 3 were DuckDB's own conversion or binder errors, quoting the macro's text. (No check runs
-- inside a COLUMNS(lambda ...), which DuckDB evaluates when it binds and where error() is not allowed.)
-- Twin: polars_anon._validate.names_list
CREATE OR REPLACE TEMP MACRO anon_check_names_arg(what, value, many := true) AS
  CASE WHEN CASE WHEN many THEN value IS NOT NULL AND typeof(value) IN ('VARCHAR[]', '"NULL"[]')
                 ELSE value IS NULL OR typeof(value) = 'VARCHAR' END THEN true
       ELSE error(anon_msg_not_names(what, CASE WHEN many THEN 'a list of column names' ELSE 'a column name' END, value))
  END;

-- anon_check_positive(w, key, value, at_least := 0, strict := true, integral := false): value, or the error
-- of a model's parameter `key` (w names the model, e.g. "l-diversity on 's'") that is not a finite number
-- above at_least (or at least it, strict := false; integral := true: a whole number, 2.0 included, as in Python).
-- Twin: polars_anon.privacy.base.check_positive
CREATE OR REPLACE TEMP MACRO anon_check_positive(w, key, value, at_least := 0, strict := true, integral := false) AS
  CASE WHEN NOT anon_is_number(value) OR value IS NULL OR NOT isfinite(TRY_CAST(value AS DOUBLE))
            OR (integral AND TRY_CAST(value AS DOUBLE) <> floor(TRY_CAST(value AS DOUBLE)))
            OR (CASE WHEN strict THEN TRY_CAST(value AS DOUBLE) <= at_least ELSE TRY_CAST(value AS DOUBLE) < at_least END)
       THEN error(anon_msg_not_positive(w, key, CASE WHEN integral THEN 'an integer' ELSE 'a number' END,
                                        CASE WHEN strict THEN '> ' ELSE '>= ' END || at_least::VARCHAR, value))
       ELSE value END;

-- anon_check_fraction(w, key, value, low_open := false, high_open := false): value, or the error of a
-- model's parameter outside [0, 1] (or (0, 1], [0, 1) as the flags say).
-- Twin: polars_anon.privacy.base.check_fraction
CREATE OR REPLACE TEMP MACRO anon_check_fraction(w, key, value, low_open := false, high_open := false) AS
  CASE WHEN NOT anon_is_number(value) OR value IS NULL OR NOT isfinite(TRY_CAST(value AS DOUBLE))
            OR (CASE WHEN low_open THEN TRY_CAST(value AS DOUBLE) <= 0 ELSE TRY_CAST(value AS DOUBLE) < 0 END)
            OR (CASE WHEN high_open THEN TRY_CAST(value AS DOUBLE) >= 1 ELSE TRY_CAST(value AS DOUBLE) > 1 END)
       THEN error(anon_msg_not_fraction(w, key, CASE WHEN low_open THEN '(' ELSE '[' END || '0, 1'
                                        || CASE WHEN high_open THEN ')' ELSE ']' END, value))
       ELSE value END;

-- anon_check_attribute(w, qids, sensitive): true, or the error of a model whose attribute is a qid.
-- Twin: polars_anon.request.check_model_roles
CREATE OR REPLACE TEMP MACRO anon_check_attribute(w, qids, sensitive) AS
  CASE WHEN list_contains(qids, sensitive) THEN error(anon_msg_attribute_role(w, sensitive, 'a quasi-identifier'))
       ELSE true END;

-- anon_built_name(names, built): the first of the names (a VARCHAR list) that a macro builds beside them:
-- one of `built` (lower-case names) or a name starting with '__anon_' (its helper columns), matched without
-- case as DuckDB matches column names; NULL when none is.
-- Twin: polars_anon._validate.refuse_built_names (its rule, with helpers)
CREATE OR REPLACE TEMP MACRO anon_built_name(names, built) AS
  list_filter(names, lambda n: list_contains(built, lower(n)) OR starts_with(lower(n), '__anon_'))[1];

-- anon_sql_rename(name, other): a refusal's hint in SQL, how to rename a column: SELECT * RENAME ("name" AS "other").
-- Twin: polars_anon._validate.refuse_built_names (its hint, lf.rename({...}))
CREATE OR REPLACE TEMP MACRO anon_sql_rename(name, other) AS
  'SELECT * RENAME ("' || replace(name, '"', '""') || '" AS "' || replace(other, '"', '""') || '")';

-- anon_check_built_names(names, built, what, who): true, or the error naming the first of the names (columns
-- in the role `what`, e.g. 'qid column') that is one of `built` (lower-case identifiers) or starts with
-- '__anon_' (`who` says whose names they are): a column the macro builds is never taken from the user's table.
-- The name found is a lambda's parameter, so that the message's reprs of it do not each bind the search
-- again (a macro's arguments are copied where they are used: binding cost three times as much).
-- Twin: polars_anon._validate.refuse_built_names
CREATE OR REPLACE TEMP MACRO anon_check_built_names(names, built, what, who) AS
  list_transform(
    [{'n': anon_built_name(names, built),
      'named': CASE WHEN len(built) > 0 THEN '[''' || array_to_string(built, ''', ''') || '''] and ' ELSE '' END
               || 'names starting with ''__anon_'''}],
    lambda x: CASE WHEN x.n IS NULL THEN true
                   ELSE error(anon_msg_built_name(what, x.n, who, x.named, anon_sql_rename(
                                x.n, CASE WHEN starts_with(x.n, '__') THEN x.n[3:] ELSE x.n || '_' END)))
              END)[1];

-- anon_check_reserved(names, what := 'qid column', extra := []): true, or the error of a column named like one
-- of the anonymizer's aggregates ('count', 'size', and the `extra` names a macro adds) or its helpers.
-- Twin: polars_anon._validate.refuse_reserved
CREATE OR REPLACE TEMP MACRO anon_check_reserved(names, what := 'qid column', extra := []) AS
  anon_check_built_names(names, ['count', 'size'] || extra, what, 'the anonymizer reserves for its own columns');

-- anon_check_rows(tbl): true, or the error of a checked table that has no rows (no class to vouch for: neither
-- k-anonymous nor private, not "no class violates"). One subquery looks for a row; the error is raised outside it,
-- by a lambda, so that a CASE orders it after the other checks (see anon_check_columns).
-- Twin: polars_anon.privacy.evaluate.refuse_empty
CREATE OR REPLACE TEMP MACRO anon_check_rows(tbl) AS
  list_transform([(SELECT count(*) FROM (FROM query_table(anon_table(tbl)) LIMIT 1))],
                 lambda n: CASE WHEN n > 0 THEN true
                                ELSE error(anon_msg_no_rows('check', 'there is nothing to check')) END)[1];

-- anon_check_present(tbl, names, what): true, or the error naming the `names` (a VARCHAR list, called `what`) that
-- are not columns of tbl, in anon_check_columns' words: for a table an earlier anon_check_columns of the same query
-- has checked (the setting, tbl's type, its helper columns), which a second one would only check again. One
-- subquery and one message to bind, not four: each anon_check_columns cost about 12 ms to bind.
-- Twin: polars_anon._validate.check_columns
CREATE OR REPLACE TEMP MACRO anon_check_present(tbl, names, what) AS
  list_transform(
    [(SELECT CASE WHEN len(m.missing) > 0
                  THEN anon_msg_columns_not_found(what, m.missing, 'table ' || anon_msg_repr(tbl::VARCHAR), m.cols) END
      FROM (SELECT c.cols, anon_missing_of(c.cols, names) AS missing
            FROM (SELECT anon_columns_of(tbl) AS cols) AS c) AS m)],
    lambda msg: CASE WHEN msg IS NULL THEN true ELSE error(msg) END)[1];

-- anon_check_column_arg(tbl, what, value): true, or the error of an argument `what` that names one column (key,
-- sensitive) given another type (3, ['id']), or naming a column tbl lacks; NULL (none) is true. tbl is a table an
-- earlier anon_check_columns of the same query has checked (see anon_check_present). A macro reads the column as
-- list_value(*COLUMNS(lambda c: c = anon_name(value) OR c = '<a NULL helper column>')) in a subquery, element [1]
-- outside it: that binds without such a column (COLUMNS(lambda c: c = value) matching nothing was DuckDB's Binder
-- Error quoting the lambda).
-- Twin: polars_anon.duckdb.pairs.metric_pairs (its column checks)
CREATE OR REPLACE TEMP MACRO anon_check_column_arg(tbl, what, value) AS
  CASE WHEN anon_check_names_arg(what, value, false)
       THEN CASE WHEN value IS NULL THEN true ELSE anon_check_present(tbl, [anon_name(value)], what) END END;
