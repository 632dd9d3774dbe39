"""The publish step against a brute-force reference: each row looked up in the map by hand (Python dicts).

Maps are drawn so that some publish every column from its own value alone (published column by
column, :func:`polars_anon.publish.column_maps`) and others do not (published on the tuple code), with
and without suppressed rows; the published rows must be the reference's in both cases.
"""

from __future__ import annotations

from unittest.mock import patch

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_anon.publish as publish_module
from polars_anon.publish import column_maps, publish
from polars_anon.tuplemap import TupleMap

QIDS = ["a", "b"]
VALUES = {"a": ["x", "y", "z"], "b": ["1", "2"]}


@st.composite
def cases(draw: st.DrawFn) -> tuple[pl.DataFrame, dict[tuple[str, str], tuple[str, str, bool]], bool]:
    """Rows, the map (tuple -> published tuple, suppressed) and whether it was drawn column by column."""
    rows = draw(st.lists(st.tuples(*(st.sampled_from(VALUES[q]) for q in QIDS)), min_size=1, max_size=12))
    tuples = sorted(set(rows))
    by_column = draw(st.booleans())
    labels = st.sampled_from(["*", "x", "y", "1", "w"])
    if by_column:  # each column's published value from its own value
        own = {q: {v: draw(labels) for v in VALUES[q]} for q in QIDS}
        published = {t: (own["a"][t[0]], own["b"][t[1]]) for t in tuples}
    else:
        published = {t: (draw(labels), draw(labels)) for t in tuples}
    suppressed = {t: draw(st.booleans()) and draw(st.booleans()) for t in tuples}
    tmap = {t: (*published[t], suppressed[t]) for t in tuples}
    frame = pl.DataFrame(rows, schema=QIDS, orient="row").with_columns(pl.int_range(pl.len()).alias("row"))
    return frame, tmap, by_column


@settings(max_examples=60, deadline=None)
@given(cases())
def test_publish_matches_a_lookup_by_hand(case: tuple[pl.DataFrame, dict, bool]) -> None:
    _check_against_lookup(case)


@settings(max_examples=30, deadline=None)
@given(cases())
def test_publish_on_a_join_of_tuple_codes_matches_a_lookup_by_hand(case: tuple[pl.DataFrame, dict, bool]) -> None:
    """The tuple codes joined (a code space above DENSE_KEYS: Adult's 8 qids, 324M codes), not gathered densely."""
    with patch.object(publish_module, "DENSE_KEYS", 0):
        _check_against_lookup(case)


def _check_against_lookup(case: tuple[pl.DataFrame, dict, bool]) -> None:
    frame, tmap, by_column = case
    tuples = sorted(tmap)
    sizes = {t: 0 for t in tuples}
    for t in frame.select(QIDS).rows():
        sizes[t] += 1
    aggregates = pl.DataFrame(tuples, schema=QIDS, orient="row").with_columns(
        pl.Series("size", [sizes[t] for t in tuples])
    )
    suppressed = np.array([tmap[t][2] for t in tuples])
    m = TupleMap.from_labels(
        aggregates, QIDS, {q: pl.Series([tmap[t][i] for t in tuples]) for i, q in enumerate(QIDS)}, suppressed
    )
    expected = [(*tmap[(a, b)][:2], r) for a, b, r in frame.rows() if not tmap[(a, b)][2]]
    assert publish(frame.lazy(), m).collect().rows() == expected
    if by_column and not suppressed.any():
        assert column_maps(m) is not None  # published column by column
    if any(
        len({tmap[t][i] for t in tuples if t[i] == v}) > 1 for i, q in enumerate(QIDS) for v in VALUES[q]
    ):  # a value published as two: only the tuple decides
        assert column_maps(m) is None


def test_a_full_domain_map_publishes_from_its_node_ids_as_from_its_labels() -> None:
    """A map built from levels (its node ids known) and the same map built from its labels: the same column tables
    and the same published rows; with a suppressed tuple both take the tuple code."""
    from polars_anon import Hierarchy

    hs = {"age": Hierarchy.intervals(range(20, 40), [5, 10]), "sex": Hierarchy.suppression(["F", "M"])}
    rows = pl.DataFrame({"age": ["21", "22", "37", "21", "30"], "sex": ["F", "M", "F", "F", "M"], "n": range(5)})
    aggregates = rows.group_by("age", "sex").len("size").sort("age", "sex")
    for levels, small in (({"age": 1, "sex": 0}, None), ({"age": 2, "sex": 1}, None), ({"age": 0, "sex": 0}, True)):
        suppressed = (
            None if small is None else np.array([t == ("37", "F") for t in aggregates.select("age", "sex").rows()])
        )
        by_ids = TupleMap.from_levels(aggregates, hs, levels, suppressed)
        assert by_ids.known("age") is not None
        by_labels = TupleMap.from_labels(
            aggregates, ["age", "sex"], {q: by_ids.frame[f"__anon_out_{q}"] for q in ("age", "sex")}, suppressed
        )
        tables = column_maps(by_ids), column_maps(by_labels)
        if small:
            assert tables == (None, None)
        else:
            assert tables[0] is not None and tables[1] is not None
            assert all(tables[0][q].sort("age" if q == "age" else "sex").equals(tables[1][q]) for q in ("age", "sex"))
        published = publish(rows.lazy(), by_ids).collect()
        assert published.equals(publish(rows.lazy(), by_labels).collect())
        assert published.height == (4 if small else 5)
        if levels == {"age": 1, "sex": 0}:  # by hand: bands of 5, sex as is
            assert published.rows() == [
                ("20-24", "F", 0),
                ("20-24", "M", 1),
                ("35-39", "F", 2),
                ("20-24", "F", 3),
                ("30-34", "M", 4),
            ]


def test_a_tuple_the_map_lacks_is_published_as_nulls_on_either_path() -> None:
    """A row whose tuple is not in the map (the input changed after it was aggregated) gets no other tuple's labels:
    nulls, by the dense gather as by the join (a gather at the dense table's -1 read the last map row)."""
    aggregates = pl.DataFrame({"a": ["x", "x", "y"], "b": ["1", "2", "1"], "size": [1, 1, 1]})
    published = {"a": pl.Series(["*", "x", "*"]), "b": pl.Series(["*", "2", "*"])}  # by the tuple, not the column
    m = TupleMap.from_labels(aggregates, QIDS, published)
    assert column_maps(m) is None
    rows = pl.LazyFrame({"a": ["x", "y", "x"], "b": ["2", "2", "1"]})  # ("y", "2"): not in the map
    expected = [("x", "2"), (None, None), ("*", "*")]
    assert publish(rows, m).collect().rows() == expected
    with patch.object(publish_module, "DENSE_KEYS", 0):
        assert publish(rows, m).collect().rows() == expected
