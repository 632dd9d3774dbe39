-- Refusal messages, generated from polars_anon/messages.py by
--   python -c 'import polars_anon.messages as m; m.write_sql()'
-- (do not edit by hand; tests/interfaces/test_sql_errors.py checks the file is current).
-- anon_msg_<name>(fields...) returns the message of polars_anon.messages.<NAME> with the
-- fields filled in, for error(...): a field shown with !r is quoted as Python's repr.

-- anon_msg_repr(x): a scalar as Python's repr shows it: 'text' (backslash, newline and tab
-- escaped; "it's" in double quotes), None, True / False, numbers as DuckDB prints them.
-- The text is escaped once and quoted by a lambda over it, and the pieces joined by one concat: every check binds
-- its messages whatever the rows, and nested || and replace chains cost more to bind the deeper they go.
-- Twin: builtins.repr
CREATE OR REPLACE TEMP MACRO anon_msg_repr(x) AS
  CASE WHEN x IS NULL THEN 'None'
       WHEN typeof(x) = 'BOOLEAN' THEN CASE WHEN x::VARCHAR = 'true' THEN 'True' ELSE 'False' END
       WHEN typeof(x) <> 'VARCHAR' THEN x::VARCHAR
       ELSE list_transform([replace(replace(replace(replace(x::VARCHAR, '\', '\\'), E'\n', '\n'), E'\r', '\r'),
                                    E'\t', '\t')],
                           lambda e: CASE WHEN contains(e, '''') AND NOT contains(e, '"') THEN concat('"', e, '"')
                                          ELSE concat('''', replace(e, '''', '\'''), '''') END)[1]
  END;

-- anon_msg_repr_list(xs): a list as Python's repr shows it: ['a', 'b'].
-- Twin: builtins.repr
CREATE OR REPLACE TEMP MACRO anon_msg_repr_list(xs) AS
  CASE WHEN xs IS NULL THEN 'None'
       ELSE concat('[', array_to_string(list_transform(xs, lambda x: anon_msg_repr(x)), ', '), ']') END;

-- anon_msg_columns_not_found(what, missing, where, columns): {what} {missing!r} not in {where}; its columns are {columns!r}
-- Twin: polars_anon.messages.COLUMNS_NOT_FOUND
CREATE OR REPLACE TEMP MACRO anon_msg_columns_not_found("what", "missing", "where", "columns") AS
  concat(coalesce("what"::VARCHAR, 'None'), ' ', anon_msg_repr_list("missing"), ' not in ', coalesce("where"::VARCHAR, 'None'), '; its columns are ', anon_msg_repr_list("columns"));

-- anon_msg_qids_empty(): qids is empty; name at least one quasi-identifier column
-- Twin: polars_anon.messages.QIDS_EMPTY
CREATE OR REPLACE TEMP MACRO anon_msg_qids_empty() AS
  'qids is empty; name at least one quasi-identifier column';

-- anon_msg_keys_empty(what): {what} must name at least one key variable, got []
-- Twin: polars_anon.messages.KEYS_EMPTY
CREATE OR REPLACE TEMP MACRO anon_msg_keys_empty("what") AS
  concat(coalesce("what"::VARCHAR, 'None'), ' must name at least one key variable, got []');

-- anon_msg_k_not_integer(k): k must be an integer >= 1, got {k!r}
-- Twin: polars_anon.messages.K_NOT_INTEGER
CREATE OR REPLACE TEMP MACRO anon_msg_k_not_integer("k") AS
  concat('k must be an integer >= 1, got ', anon_msg_repr("k"));

-- anon_msg_k_above_rows(k, n_rows): k={k} is larger than the table ({n_rows} rows); choose k <= {n_rows}
-- Twin: polars_anon.messages.K_ABOVE_ROWS
CREATE OR REPLACE TEMP MACRO anon_msg_k_above_rows("k", "n_rows") AS
  concat('k=', coalesce("k"::VARCHAR, 'None'), ' is larger than the table (', coalesce("n_rows"::VARCHAR, 'None'), ' rows); choose k <= ', coalesce("n_rows"::VARCHAR, 'None'));

-- anon_msg_empty_table(table, task): table {table!r} has no rows: there is nothing to {task}
-- Twin: polars_anon.messages.EMPTY_TABLE
CREATE OR REPLACE TEMP MACRO anon_msg_empty_table("table", "task") AS
  concat('table ', anon_msg_repr("table"), ' has no rows: there is nothing to ', coalesce("task"::VARCHAR, 'None'));

-- anon_msg_choice(name, allowed, value): {name} must be one of {allowed!r}, got {value!r}
-- Twin: polars_anon.messages.CHOICE
CREATE OR REPLACE TEMP MACRO anon_msg_choice("name", "allowed", "value") AS
  concat(coalesce("name"::VARCHAR, 'None'), ' must be one of ', anon_msg_repr_list("allowed"), ', got ', anon_msg_repr("value"));

-- anon_msg_names_not_qids(what, unknown, qids): {what} names {unknown!r}, which are not qids; the qids are {qids!r}
-- Twin: polars_anon.messages.NAMES_NOT_QIDS
CREATE OR REPLACE TEMP MACRO anon_msg_names_not_qids("what", "unknown", "qids") AS
  concat(coalesce("what"::VARCHAR, 'None'), ' names ', anon_msg_repr_list("unknown"), ', which are not qids; the qids are ', anon_msg_repr_list("qids"));

-- anon_msg_no_hierarchy(qid): qid {qid!r} has no hierarchy loaded; call polars_anon.duckdb.load_hierarchy(con, {qid!r}, h)
-- Twin: polars_anon.messages.NO_HIERARCHY
CREATE OR REPLACE TEMP MACRO anon_msg_no_hierarchy("qid") AS
  concat('qid ', anon_msg_repr("qid"), ' has no hierarchy loaded; call polars_anon.duckdb.load_hierarchy(con, ', anon_msg_repr("qid"), ', h)');

-- anon_msg_level_out_of_range(where, level, top, root): {where}level {level} is outside this hierarchy's levels 0..{top} (root {root!r})
-- Twin: polars_anon.messages.LEVEL_OUT_OF_RANGE
CREATE OR REPLACE TEMP MACRO anon_msg_level_out_of_range("where", "level", "top", "root") AS
  concat(coalesce("where"::VARCHAR, 'None'), 'level ', coalesce("level"::VARCHAR, 'None'), ' is outside this hierarchy''s levels 0..', coalesce("top"::VARCHAR, 'None'), ' (root ', anon_msg_repr("root"), ')');

-- anon_msg_not_a_leaf(column, value): column {column!r}: {value!r} is not a leaf of its hierarchy; add it to the hierarchy or drop those rows
-- Twin: polars_anon.messages.NOT_A_LEAF
CREATE OR REPLACE TEMP MACRO anon_msg_not_a_leaf("column", "value") AS
  concat('column ', anon_msg_repr("column"), ': ', anon_msg_repr("value"), ' is not a leaf of its hierarchy; add it to the hierarchy or drop those rows');

-- anon_msg_encode_not_in_hierarchy(column, what, value, kind): column {column!r} of the {what} table: {value!r} is not {kind} of its hierarchy; encode with the hierarchies the table was anonymized with
-- Twin: polars_anon.messages.ENCODE_NOT_IN_HIERARCHY
CREATE OR REPLACE TEMP MACRO anon_msg_encode_not_in_hierarchy("column", "what", "value", "kind") AS
  concat('column ', anon_msg_repr("column"), ' of the ', coalesce("what"::VARCHAR, 'None'), ' table: ', anon_msg_repr("value"), ' is not ', coalesce("kind"::VARCHAR, 'None'), ' of its hierarchy; encode with the hierarchies the table was anonymized with');

-- anon_msg_not_under_published(column, pairs): column {column!r}: original values are not under their published value (first: [{pairs}]); the original and published rows must be row-aligned, or share a class id column
-- Twin: polars_anon.messages.NOT_UNDER_PUBLISHED
CREATE OR REPLACE TEMP MACRO anon_msg_not_under_published("column", "pairs") AS
  concat('column ', anon_msg_repr("column"), ': original values are not under their published value (first: [', coalesce("pairs"::VARCHAR, 'None'), ']); the original and published rows must be row-aligned, or share a class id column');

-- anon_msg_hierarchy_not_loaded(where, name): {where}no hierarchy is loaded as {name!r}; call polars_anon.duckdb.load_hierarchy(con, {name!r}, h)
-- Twin: polars_anon.messages.HIERARCHY_NOT_LOADED
CREATE OR REPLACE TEMP MACRO anon_msg_hierarchy_not_loaded("where", "name") AS
  concat(coalesce("where"::VARCHAR, 'None'), 'no hierarchy is loaded as ', anon_msg_repr("name"), '; call polars_anon.duckdb.load_hierarchy(con, ', anon_msg_repr("name"), ', h)');

-- anon_msg_distance_parameter(where, parameter, needs, distance): {where}{parameter} is a parameter of distance {needs!r} only, got distance {distance!r}
-- Twin: polars_anon.messages.DISTANCE_PARAMETER
CREATE OR REPLACE TEMP MACRO anon_msg_distance_parameter("where", "parameter", "needs", "distance") AS
  concat(coalesce("where"::VARCHAR, 'None'), coalesce("parameter"::VARCHAR, 'None'), ' is a parameter of distance ', anon_msg_repr("needs"), ' only, got distance ', anon_msg_repr("distance"));

-- anon_msg_variant_parameter(where, key, needs, value, variant): {where}: {key} is a parameter of variant {needs!r} only, got {key}={value!r} with variant {variant!r}
-- Twin: polars_anon.messages.VARIANT_PARAMETER
CREATE OR REPLACE TEMP MACRO anon_msg_variant_parameter("where", "key", "needs", "value", "variant") AS
  concat(coalesce("where"::VARCHAR, 'None'), ': ', coalesce("key"::VARCHAR, 'None'), ' is a parameter of variant ', anon_msg_repr("needs"), ' only, got ', coalesce("key"::VARCHAR, 'None'), '=', anon_msg_repr("value"), ' with variant ', anon_msg_repr("variant"));

-- anon_msg_names_twice(what, dup, noun): {what} lists {dup!r} more than once; name each {noun} once
-- Twin: polars_anon.messages.NAMES_TWICE
CREATE OR REPLACE TEMP MACRO anon_msg_names_twice("what", "dup", "noun") AS
  concat(coalesce("what"::VARCHAR, 'None'), ' lists ', anon_msg_repr_list("dup"), ' more than once; name each ', coalesce("noun"::VARCHAR, 'None'), ' once');

-- anon_msg_not_positive(where, key, kind, bound, value): {where}: {key} must be {kind} {bound}, got {value!r}
-- Twin: polars_anon.messages.NOT_POSITIVE
CREATE OR REPLACE TEMP MACRO anon_msg_not_positive("where", "key", "kind", "bound", "value") AS
  concat(coalesce("where"::VARCHAR, 'None'), ': ', coalesce("key"::VARCHAR, 'None'), ' must be ', coalesce("kind"::VARCHAR, 'None'), ' ', coalesce("bound"::VARCHAR, 'None'), ', got ', anon_msg_repr("value"));

-- anon_msg_not_fraction(where, key, interval, value): {where}: {key} must be a number in {interval}, got {value!r}
-- Twin: polars_anon.messages.NOT_FRACTION
CREATE OR REPLACE TEMP MACRO anon_msg_not_fraction("where", "key", "interval", "value") AS
  concat(coalesce("where"::VARCHAR, 'None'), ': ', coalesce("key"::VARCHAR, 'None'), ' must be a number in ', coalesce("interval"::VARCHAR, 'None'), ', got ', anon_msg_repr("value"));

-- anon_msg_attribute_role(where, attribute, role): {where}: attribute {attribute!r} is {role}; a privacy model reads a sensitive column (not a qid, an insensitive or a dropped one)
-- Twin: polars_anon.messages.ATTRIBUTE_ROLE
CREATE OR REPLACE TEMP MACRO anon_msg_attribute_role("where", "attribute", "role") AS
  concat(coalesce("where"::VARCHAR, 'None'), ': attribute ', anon_msg_repr("attribute"), ' is ', coalesce("role"::VARCHAR, 'None'), '; a privacy model reads a sensitive column (not a qid, an insensitive or a dropped one)');

-- anon_msg_no_rows(what, why): {what}: the table has no rows; {why}
-- Twin: polars_anon.messages.NO_ROWS
CREATE OR REPLACE TEMP MACRO anon_msg_no_rows("what", "why") AS
  concat(coalesce("what"::VARCHAR, 'None'), ': the table has no rows; ', coalesce("why"::VARCHAR, 'None'));

-- anon_msg_sensitive_null(where, attribute, n, ignore, value): {where}: column {attribute!r} holds {n} null values; say how the model reads them: {ignore} (left out of every class's distribution and of the table's) or {value} (null is one more value)
-- Twin: polars_anon.messages.SENSITIVE_NULL
CREATE OR REPLACE TEMP MACRO anon_msg_sensitive_null("where", "attribute", "n", "ignore", "value") AS
  concat(coalesce("where"::VARCHAR, 'None'), ': column ', anon_msg_repr("attribute"), ' holds ', coalesce("n"::VARCHAR, 'None'), ' null values; say how the model reads them: ', coalesce("ignore"::VARCHAR, 'None'), ' (left out of every class''s distribution and of the table''s) or ', coalesce("value"::VARCHAR, 'None'), ' (null is one more value)');

-- anon_msg_sql_setting(key, value): pass {key} := {value!r}
-- Twin: polars_anon.messages.SQL_SETTING
CREATE OR REPLACE TEMP MACRO anon_msg_sql_setting("key", "value") AS
  concat('pass ', coalesce("key"::VARCHAR, 'None'), ' := ', anon_msg_repr("value"));

-- anon_msg_built_name(what, name, who, named, rename): {what} {name!r} is a name {who} ({named}); rename the column first, e.g. {rename}
-- Twin: polars_anon.messages.BUILT_NAME
CREATE OR REPLACE TEMP MACRO anon_msg_built_name("what", "name", "who", "named", "rename") AS
  concat(coalesce("what"::VARCHAR, 'None'), ' ', anon_msg_repr("name"), ' is a name ', coalesce("who"::VARCHAR, 'None'), ' (', coalesce("named"::VARCHAR, 'None'), '); rename the column first, e.g. ', coalesce("rename"::VARCHAR, 'None'));

-- anon_msg_weight_not_numeric(weight, dtype): weight column {weight!r} must be numeric, got {dtype}
-- Twin: polars_anon.messages.WEIGHT_NOT_NUMERIC
CREATE OR REPLACE TEMP MACRO anon_msg_weight_not_numeric("weight", "dtype") AS
  concat('weight column ', anon_msg_repr("weight"), ' must be numeric, got ', coalesce("dtype"::VARCHAR, 'None'));

-- anon_msg_bad_weights(weight, n, first): weight column {weight!r} has {n} values that are not positive numbers (first: {first!r}); a sampling weight is the number of people a record stands for
-- Twin: polars_anon.messages.BAD_WEIGHTS
CREATE OR REPLACE TEMP MACRO anon_msg_bad_weights("weight", "n", "first") AS
  concat('weight column ', anon_msg_repr("weight"), ' has ', coalesce("n"::VARCHAR, 'None'), ' values that are not positive numbers (first: ', anon_msg_repr_list("first"), '); a sampling weight is the number of people a record stands for');

-- anon_msg_weights_below_count(where, weight, n, first): {where}weight column {weight!r}: {n} key patterns have weights summing below their record count (Fk < fk{first}); sampling weights must be >= 1
-- Twin: polars_anon.messages.WEIGHTS_BELOW_COUNT
CREATE OR REPLACE TEMP MACRO anon_msg_weights_below_count("where", "weight", "n", "first") AS
  concat(coalesce("where"::VARCHAR, 'None'), 'weight column ', anon_msg_repr("weight"), ': ', coalesce("n"::VARCHAR, 'None'), ' key patterns have weights summing below their record count (Fk < fk', coalesce("first"::VARCHAR, 'None'), '); sampling weights must be >= 1');

-- anon_msg_weight_is_key(weight): weight column {weight!r} is also a key; pass it once
-- Twin: polars_anon.messages.WEIGHT_IS_KEY
CREATE OR REPLACE TEMP MACRO anon_msg_weight_is_key("weight") AS
  concat('weight column ', anon_msg_repr("weight"), ' is also a key; pass it once');

-- anon_msg_not_names(what, takes, value): {what} must be {takes}, got {value!r}
-- Twin: polars_anon.messages.NOT_NAMES
CREATE OR REPLACE TEMP MACRO anon_msg_not_names("what", "takes", "value") AS
  concat(coalesce("what"::VARCHAR, 'None'), ' must be ', coalesce("takes"::VARCHAR, 'None'), ', got ', anon_msg_repr("value"));

-- anon_msg_risk_not_finite(name, at, value): every {name} must be a finite number, got {name}{at} = {value!r}
-- Twin: polars_anon.messages.RISK_NOT_FINITE
CREATE OR REPLACE TEMP MACRO anon_msg_risk_not_finite("name", "at", "value") AS
  concat('every ', coalesce("name"::VARCHAR, 'None'), ' must be a finite number, got ', coalesce("name"::VARCHAR, 'None'), coalesce("at"::VARCHAR, 'None'), ' = ', anon_msg_repr("value"));

-- anon_msg_risk_counts(at, fk, big_fk): every fk must be > 0 and every Fk >= fk (weights below 1 are not allowed), got fk{at} = {fk!r}, Fk{at} = {big_fk!r}
-- Twin: polars_anon.messages.RISK_COUNTS
CREATE OR REPLACE TEMP MACRO anon_msg_risk_counts("at", "fk", "big_fk") AS
  concat('every fk must be > 0 and every Fk >= fk (weights below 1 are not allowed), got fk', coalesce("at"::VARCHAR, 'None'), ' = ', anon_msg_repr("fk"), ', Fk', coalesce("at"::VARCHAR, 'None'), ' = ', anon_msg_repr("big_fk"));

-- anon_msg_pairs_qids(pairs, made, qids, given): pairs table {pairs!r} was made with {made} qids, and qids {qids!r} names {given}; pass the qids it was made with, in their order
-- Twin: polars_anon.messages.PAIRS_QIDS
CREATE OR REPLACE TEMP MACRO anon_msg_pairs_qids("pairs", "made", "qids", "given") AS
  concat('pairs table ', anon_msg_repr("pairs"), ' was made with ', coalesce("made"::VARCHAR, 'None'), ' qids, and qids ', anon_msg_repr_list("qids"), ' names ', coalesce("given"::VARCHAR, 'None'), '; pass the qids it was made with, in their order');

-- anon_msg_key_not_unique(key, total, n_orig): key {key!r} is not unique in the anonymized table: the join gave {total} rows for {n_orig} original rows; use a row id column
-- Twin: polars_anon.messages.KEY_NOT_UNIQUE
CREATE OR REPLACE TEMP MACRO anon_msg_key_not_unique("key", "total", "n_orig") AS
  concat('key ', anon_msg_repr("key"), ' is not unique in the anonymized table: the join gave ', coalesce("total"::VARCHAR, 'None'), ' rows for ', coalesce("n_orig"::VARCHAR, 'None'), ' original rows; use a row id column');

-- anon_msg_key_shared(key, rows): key {key!r} is not unique in the original table: {rows} rows share a value; use a row id column
-- Twin: polars_anon.messages.KEY_SHARED
CREATE OR REPLACE TEMP MACRO anon_msg_key_shared("key", "rows") AS
  concat('key ', anon_msg_repr("key"), ' is not unique in the original table: ', coalesce("rows"::VARCHAR, 'None'), ' rows share a value; use a row id column');

-- anon_msg_key_null(key, rows): key {key!r} has {rows} null values in the original table; every row needs one
-- Twin: polars_anon.messages.KEY_NULL
CREATE OR REPLACE TEMP MACRO anon_msg_key_null("key", "rows") AS
  concat('key ', anon_msg_repr("key"), ' has ', coalesce("rows"::VARCHAR, 'None'), ' null values in the original table; every row needs one');

-- anon_msg_key_stray(rows, key): {rows} rows of the anonymized table have a key {key!r} the original table does not hold; the anonymized rows must come from the original's
-- Twin: polars_anon.messages.KEY_STRAY
CREATE OR REPLACE TEMP MACRO anon_msg_key_stray("rows", "key") AS
  concat(coalesce("rows"::VARCHAR, 'None'), ' rows of the anonymized table have a key ', anon_msg_repr("key"), ' the original table does not hold; the anonymized rows must come from the original''s');

-- anon_msg_duckdb_setting(setting, value, who, effect, default): DuckDB's {setting} is {value!r} on this connection; {who} compare text byte-wise, as Python does, and would {effect}: run SET {setting} = {default!r} first
-- Twin: polars_anon.messages.DUCKDB_SETTING
CREATE OR REPLACE TEMP MACRO anon_msg_duckdb_setting("setting", "value", "who", "effect", "default") AS
  concat('DuckDB''s ', coalesce("setting"::VARCHAR, 'None'), ' is ', anon_msg_repr("value"), ' on this connection; ', coalesce("who"::VARCHAR, 'None'), ' compare text byte-wise, as Python does, and would ', coalesce("effect"::VARCHAR, 'None'), ': run SET ', coalesce("setting"::VARCHAR, 'None'), ' = ', anon_msg_repr("default"), ' first');

-- anon_msg_no_hierarchy_metric(qid): qid {qid!r} has no hierarchy loaded, and this metric reads through one how far each cell is from its original; call polars_anon.duckdb.load_hierarchy(con, {qid!r}, h) (without one, only the classes metrics measure a qid: anon_k, anon_min_class_size, anon_n_classes, anon_suppressed, anon_discernibility, anon_c_avg, anon_cm, anon_diameter)
-- Twin: polars_anon.messages.NO_HIERARCHY_METRIC
CREATE OR REPLACE TEMP MACRO anon_msg_no_hierarchy_metric("qid") AS
  concat('qid ', anon_msg_repr("qid"), ' has no hierarchy loaded, and this metric reads through one how far each cell is from its original; call polars_anon.duckdb.load_hierarchy(con, ', anon_msg_repr("qid"), ', h) (without one, only the classes metrics measure a qid: anon_k, anon_min_class_size, anon_n_classes, anon_suppressed, anon_discernibility, anon_c_avg, anon_cm, anon_diameter)');
