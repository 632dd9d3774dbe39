-- The label rule in SQL: how a value becomes the text a hierarchy's labels are matched with and a
-- table publishes (polars_anon.labels). DuckDB's own cast (v::VARCHAR) differs from it: -0.0
-- ('-0.0', the rule's '0.0'), NaN ('nan', 'NaN'), exponents ('1e-07', '1e-7'; '1e-05', '0.00001'),
-- timestamps (DuckDB drops a zero fraction, Polars writes every digit of the unit) and times.
-- The helpers come first (a macro names only macros made before it); anon_label is at the end.

-- anon_label_sig(a): the significant digits of the positive number whose DuckDB text is a
-- (``1.5e-07``, ``120.5``), without trailing zeros (``15``, ``1205``).
-- Twin: polars_anon.labels.label_expr (a part of it)
CREATE OR REPLACE TEMP MACRO anon_label_sig(a) AS
  CASE WHEN contains(a, 'e') THEN rtrim(replace(split_part(a, 'e', 1), '.', ''), '0')
       ELSE rtrim(ltrim(replace(a, '.', ''), '0'), '0') END;

-- anon_label_exp(a): the decimal exponent of the first significant digit of the positive number
-- whose DuckDB text is a (``1.5e-07``: -7, ``120.5``: 2, ``0.05``: -2).
-- Twin: polars_anon.labels.label_expr (a part of it)
CREATE OR REPLACE TEMP MACRO anon_label_exp(a) AS
  CASE WHEN contains(a, 'e') THEN split_part(a, 'e', 2)::INTEGER
       WHEN split_part(a, '.', 1) <> '0' THEN length(split_part(a, '.', 1)) - 1
       ELSE -1 - (length(split_part(a, '.', 2)) - length(ltrim(split_part(a, '.', 2), '0'))) END;

-- anon_label_digits(d, e, lo, hi): significant digits d (no trailing zero) times 10^e, laid out as
-- Polars does: with a decimal point ('1200.0', '0.00015') when lo <= e <= hi, else with an
-- exponent ('1.5e-7', '1e+16').
-- Twin: polars_anon.labels.label_expr (a part of it)
CREATE OR REPLACE TEMP MACRO anon_label_digits(d, e, lo, hi) AS
  CASE WHEN e > hi OR e < lo
         THEN left(d, 1) || CASE WHEN length(d) > 1 THEN '.' || substr(d, 2) ELSE '' END
              || CASE WHEN e < 0 THEN 'e-' ELSE 'e+' END || abs(e)::VARCHAR
       WHEN e < 0 THEN '0.' || repeat('0', -e - 1) || d
       ELSE rpad(left(d, e + 1), (e + 1)::INTEGER, '0') || '.' || coalesce(nullif(substr(d, e + 2), ''), '0') END;

-- anon_label_float(s, lo, hi): the label of the FLOAT or DOUBLE whose DuckDB text is s, with a
-- decimal point for decimal exponents lo..hi (anon_label).
-- Twin: polars_anon.labels.label_expr (a part of it)
CREATE OR REPLACE TEMP MACRO anon_label_float(s, lo, hi) AS
  CASE WHEN s IN ('nan', '-nan') THEN 'NaN'
       WHEN s IN ('inf', '-inf') THEN s
       WHEN s IN ('0.0', '-0.0') THEN '0.0'
       WHEN NOT contains(s, 'e') AND lo = -5 AND hi = 15 THEN s  -- a DOUBLE's decimal form (1e-4 to below 1e16): Polars'
       -- the lambda binds the digits and the exponent once: anon_label_digits reads them 4 and 8 times, and a macro's
       -- argument is copied where it is used (binding anon_label cost 36-41 ms, 11 with the lambdas)
       ELSE CASE WHEN starts_with(s, '-') THEN '-' ELSE '' END || list_transform(
              [{'d': anon_label_sig(ltrim(s, '-')), 'e': anon_label_exp(ltrim(s, '-'))}],
              lambda x: anon_label_digits(x.d, x.e, lo, hi))[1] END;

-- anon_label_float32(s): the text of the FLOAT whose DuckDB text is s with the fewest significant
-- digits that read back as it ('1122099.2' for DuckDB's '1122099.25': DuckDB does not always write
-- the fewest, Polars does). s itself when it has at most 7 (another text of 7 digits or fewer is at
-- least 1e-7 of the value away, beyond a FLOAT's half-spacing, 2^-24 of it, so it does not read
-- back); else the first of the correctly rounded texts with 1 to 9 digits that casts back to it.
-- Twin: polars_anon.labels.label_expr (a part of it)
CREATE OR REPLACE TEMP MACRO anon_label_float32(s) AS
  CASE WHEN s IN ('nan', '-nan', 'inf', '-inf', '0.0', '-0.0') THEN s
       WHEN length(anon_label_sig(ltrim(s, '-'))) <= 7 THEN s
       ELSE list_filter(list_transform(range(0, 9), lambda k: printf('%.' || k::VARCHAR || 'e', s::DOUBLE)),
                        lambda c: c::FLOAT = s::FLOAT)[1] END;

-- anon_label_year(y): a year as Polars writes it: four digits at least, a sign outside 0-9999.
-- Twin: polars_anon.labels.label_expr (a part of it)
CREATE OR REPLACE TEMP MACRO anon_label_year(y) AS
  CASE WHEN y < 0 THEN '-' ELSE '' END || CASE WHEN y > 9999 THEN '+' ELSE '' END
  || CASE WHEN abs(y) >= 1000 THEN abs(y)::VARCHAR ELSE lpad(abs(y)::VARCHAR, 4, '0') END;

-- anon_label_offset(m): a UTC offset of m minutes as Polars writes it: +HH:MM or -HH:MM.
-- Twin: polars_anon.labels.label_expr (a part of it)
CREATE OR REPLACE TEMP MACRO anon_label_offset(m) AS
  CASE WHEN m < 0 THEN '-' ELSE '+' END || lpad((abs(m) // 60)::VARCHAR, 2, '0') || ':'
  || lpad((abs(m) % 60)::VARCHAR, 2, '0');

-- anon_label_fraction(ns): the fraction of a second of ns nanoseconds as Polars' %.f writes it:
-- nothing, or a point and the fewest of 3, 6 or 9 digits that hold it.
-- Twin: polars_anon.labels.label_expr (a part of it)
CREATE OR REPLACE TEMP MACRO anon_label_fraction(ns) AS
  CASE WHEN ns = 0 THEN ''
       WHEN ns % 1000000 = 0 THEN '.' || lpad((ns // 1000000)::VARCHAR, 3, '0')
       WHEN ns % 1000 = 0 THEN '.' || lpad((ns // 1000)::VARCHAR, 6, '0')
       ELSE '.' || lpad(ns::VARCHAR, 9, '0') END;

-- anon_label_text(t, s, what): the label of the value of type t whose DuckDB text is s (anon_label).
-- Twin: polars_anon.labels.label_expr (a part of it)
CREATE OR REPLACE TEMP MACRO anon_label_text(t, s, what) AS
  CASE
    WHEN t IN ('VARCHAR', 'BOOLEAN', 'TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT', 'UTINYINT', 'USMALLINT',
               'UINTEGER', 'UBIGINT', 'UHUGEINT', '"NULL"')
      OR starts_with(t, 'DECIMAL(') OR starts_with(t, 'ENUM(') THEN s
    WHEN t NOT IN ('FLOAT', 'DOUBLE', 'DATE', 'TIMESTAMP', 'TIMESTAMP_S', 'TIMESTAMP_MS', 'TIMESTAMP_NS',
                   'TIMESTAMP WITH TIME ZONE', 'TIME', 'TIME_NS')
      THEN error(coalesce('column ''' || what || ''' has', 'a value of') || ' type ' || t || ', which has no label '
                 || 'polars_anon matches (Polars'' String cast of it differs, or there is none); cast it first, to '
                 || 'VARCHAR or to a type with a label')
    WHEN t = 'TIMESTAMP WITH TIME ZONE' AND current_setting('TimeZone') NOT IN ('UTC', 'Etc/UTC')
      THEN error(coalesce('column ''' || what || ''' has', 'a value of') || ' type ' || t || ' in the session''s time '
                 || 'zone ' || current_setting('TimeZone') || ', whose rules DuckDB (ICU) and Polars do not always '
                 || 'agree on (daylight saving time after 2099, old local times), so the labels could differ; '
                 || 'SET TimeZone = ''UTC'' first, or cast the column to TIMESTAMP')
    WHEN s IS NULL THEN NULL
    WHEN t IN ('FLOAT', 'DOUBLE')  -- one anon_label_float to bind, not two; the lambda computes anon_label_float32
                                   -- once, not at each use of its argument
      THEN list_transform([CASE WHEN t = 'FLOAT' THEN anon_label_float32(s) ELSE s END],
                          lambda x: anon_label_float(x, CASE WHEN t = 'FLOAT' THEN -6 ELSE -5 END,
                                                     CASE WHEN t = 'FLOAT' THEN 12 ELSE 15 END))[1]
    WHEN t = 'DATE' THEN anon_label_year(year(s::DATE)) || strftime(s::DATE, '-%m-%d')
    WHEN t = 'TIMESTAMP' THEN anon_label_year(year(s::TIMESTAMP)) || strftime(s::TIMESTAMP, '-%m-%d %H:%M:%S.%f')
    WHEN t IN ('TIMESTAMP_S', 'TIMESTAMP_MS')
      THEN anon_label_year(year(s::TIMESTAMP)) || strftime(s::TIMESTAMP, '-%m-%d %H:%M:%S.%g')
    WHEN t = 'TIMESTAMP_NS'  -- years 1677-2262 only; year() of a TIMESTAMP_NS rounds towards 1970
      THEN strftime(s::TIMESTAMP_NS, '%Y-%m-%d %H:%M:%S.%n')
    WHEN t = 'TIMESTAMP WITH TIME ZONE'
      THEN anon_label_year(year(s::TIMESTAMPTZ)) || strftime(s::TIMESTAMPTZ, '-%m-%d %H:%M:%S.%f')
           || anon_label_offset(timezone_hour(s::TIMESTAMPTZ) * 60 + timezone_minute(s::TIMESTAMPTZ))
    WHEN s = '24:00:00'
      THEN error(coalesce('column ''' || what || ''': the', 'the') || ' time 24:00:00 has no label (Polars reads '
                 || 'it as null); write it as 00:00:00 or leave it out')
    WHEN t = 'TIME' THEN left(s, 8) || anon_label_fraction((microsecond(s::TIME) % 1000000) * 1000)
    ELSE left(s, 8) || anon_label_fraction(nanosecond(s::TIME_NS) % 1000000000) END;

-- anon_label(v, what := NULL): v's label (VARCHAR), NULL for NULL. By DuckDB's type (typeof):
--   VARCHAR, ENUM, BOOLEAN, the integers, DECIMAL, DATE: as DuckDB casts them, but a DATE
--     outside years 1-9999 as Polars writes it ('0000-12-31', '-0221-09-04', '+10000-01-01');
--   FLOAT, DOUBLE: the shortest digits that read back as the value (DuckDB's and Polars'), laid
--     out as Polars does: a decimal point from 1e-5 to below 1e16 (FLOAT: 1e-6 to below 1e13),
--     else an exponent without leading zeros ('1.5e-7', '1e+16'); -0.0 is '0.0', NaN 'NaN';
--   TIMESTAMP, TIMESTAMP_S/_MS/_NS: every digit of the fraction Polars reads them with (6; 3 for
--     _S and _MS, which Polars reads in milliseconds; 9); WITH TIME ZONE (as DuckDB hands it to
--     Polars: in the session's time zone) only when that zone is UTC: '...+00:00';
--   TIME, TIME_NS: the fraction of a second in 0, 3, 6 or 9 digits, the fewest that hold it.
-- Refuses, with an error naming `what` (a column or hierarchy) and the type, every other type
-- (TIME WITH TIME ZONE: Polars drops the offset, so two instants would share a label; intervals,
-- blobs, UUIDs, lists, structs, ...), WITH TIME ZONE in a session whose time zone is not UTC
-- (DuckDB's ICU and Polars' zone rules differ: DST after 2099, old local mean times), and the
-- TIME 24:00:00 (Polars reads it as null).
-- Twin: polars_anon.labels.label_expr
CREATE OR REPLACE TEMP MACRO anon_label(v, what := NULL) AS anon_label_text(typeof(v), v::VARCHAR, what);
