"""Generalization: fixed levels per quasi-identifier, or a partition's common ancestors.

Both are relational steps over the hierarchy tables: a value map for levels
(``replace_strict``, which streams) and a ``paths`` join + group-by for partitions.
Quasi-identifier columns come out as String (a generalized value is a label).
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_anon._validate import check_columns, check_mapping, check_name, not_leaves
from polars_anon.errors import InvalidParameterError
from polars_anon.hierarchy import Hierarchy, check_hierarchies, check_hierarchy
from polars_anon.labels import label_series

__all__ = ["class_ancestors", "generalize", "generalize_expr", "generalize_partition"]


def generalize_expr(column: str | pl.Expr, hierarchy: Hierarchy, level: int) -> pl.Expr:
    """Expression that publishes a column at a hierarchy level.

    Values are matched to node labels as strings (nulls stay null); a value that is not a node of the hierarchy
    is refused when the query runs, at any level, 0 included, with the road's message
    (:func:`polars_anon._validate.not_leaves`: the column and the first such values of the batch that held them;
    Polars adds the expression after it). The map is a cast to an Enum of the node labels followed by a gather
    of the published labels: unlike ``replace_strict`` it streams in constant memory on the streaming engine.

    >>> h = Hierarchy.suppression(["F", "M"])
    >>> pl.DataFrame({"g": ["F", "M"]}).select(generalize_expr("g", h, 1))["g"].to_list()
    ['*', '*']
    >>> pl.DataFrame({"g": ["F", "X"]}).select(generalize_expr("g", h, 0))
    Traceback (most recent call last):
    ...
    polars_anon.errors.ValueNotInHierarchyError: column 'g': 'X' is not a leaf of its hierarchy; add it to the
    hierarchy or drop those rows
    ...
    """
    check_hierarchy(hierarchy)
    if not isinstance(column, pl.Expr):
        check_name(column, "column")  # or an expression
    expr = pl.col(column) if isinstance(column, str) else column
    m = hierarchy.level_map(level)  # validates the level
    nodes = m["label"]

    def known(values: pl.Series) -> pl.Series:
        """The values as String labels, once every one is a node (a query-time check: an expression sees no data
        before)."""
        labels = label_series(values)
        distinct = labels.drop_nulls().unique().sort()
        missing = distinct.filter(~distinct.is_in(nodes.implode()))
        if len(missing):
            raise not_leaves(values.name, missing.to_list(), leaves=hierarchy.leaf_labels)
        return labels

    checked = expr.map_batches(known, return_dtype=pl.String, is_elementwise=True)
    if level == 0:
        return checked
    code = checked.cast(pl.Enum(nodes)).to_physical()
    name = expr.meta.output_name(raise_if_undetermined=False)
    out = pl.lit(m["value"]).gather(code)
    return out if name is None else out.alias(name)


def generalize(lf: pl.LazyFrame, hierarchies: Mapping[str, Hierarchy], levels: Mapping[str, int]) -> pl.LazyFrame:
    """Publish each quasi-identifier at its level (full-domain generalization).

    Parameters
    ----------
    lf
        The table; row count and order are kept, other columns are untouched.
    hierarchies
        Quasi-identifier name -> hierarchy.
    levels
        Quasi-identifier name -> level (0 keeps the value). Missing names stay at 0.

    Examples
    --------
    >>> h = Hierarchy.intervals(range(30, 40), [5])
    >>> generalize(pl.LazyFrame({"age": [31, 38]}), {"age": h}, {"age": 1}).collect()["age"].to_list()
    ['30-34', '35-39']
    """
    hierarchies = check_hierarchies(hierarchies)
    check_mapping(levels, "levels", "qid -> level")
    unknown = [q for q in levels if q not in hierarchies]
    if unknown:
        raise InvalidParameterError(
            f"levels names {unknown}, which have no hierarchy; hierarchies are given for {list(hierarchies)}"
        )
    checked = {q: h.check_level(levels.get(q, 0), f"levels[{q!r}]: ") for q, h in hierarchies.items()}
    check_columns(lf, hierarchies, "hierarchies")
    return lf.with_columns(generalize_expr(q, h, checked[q]).alias(q) for q, h in hierarchies.items())


def class_ancestors(assigned: pl.LazyFrame, hierarchies: Mapping[str, Hierarchy], class_col: str) -> pl.LazyFrame:
    """Each class's lowest common ancestor per quasi-identifier.

    `assigned` has the class column and the quasi-identifier columns (rows or
    distinct tuples: only the distinct (class, value) pairs matter). For each
    quasi-identifier: join the values to ``paths``, count per (class, ancestor),
    keep the ancestors that cover every distinct value of the class, and take
    the deepest one [paper 000 §II-A, Merge].

    Returns one row per class: the class column and the quasi-identifiers as
    published labels.
    """
    out: pl.LazyFrame | None = None
    for q, h in hierarchies.items():
        ids = pl.LazyFrame({"__anon_label": h.labels, "__anon_node": list(range(h.n_nodes))})
        paths = pl.LazyFrame(h.paths.select("node", "ancestor")).join(
            pl.LazyFrame(h.nodes.select(pl.col("node").alias("ancestor"), pl.col("depth").alias("__anon_depth"))),
            on="ancestor",
        )
        pairs = (
            assigned.select(class_col, pl.col(q).cast(pl.String).alias("__anon_label"))
            .unique()
            .join(ids, on="__anon_label")
        )
        width = pairs.group_by(class_col).agg(pl.len().alias("__anon_n"))
        lca = (
            pairs.join(paths, left_on="__anon_node", right_on="node")
            .group_by(class_col, "ancestor", "__anon_depth")
            .agg(pl.len().alias("__anon_cover"))
            .join(width, on=class_col)
            .filter(pl.col("__anon_cover") == pl.col("__anon_n"))
            .group_by(class_col)
            .agg(pl.col("ancestor").sort_by("__anon_depth").last())
            .select(
                class_col,
                pl.col("ancestor").replace_strict(list(range(h.n_nodes)), h.labels, return_dtype=pl.String).alias(q),
            )
        )
        out = lca if out is None else out.join(lca, on=class_col)
    if out is None:
        raise ValueError("class_ancestors needs at least one hierarchy")
    return out


def generalize_partition(lf: pl.LazyFrame, hierarchies: Mapping[str, Hierarchy], class_col: str) -> pl.LazyFrame:
    """Publish every row's quasi-identifiers as its class's lowest common ancestors.

    Row order and count are kept; `class_col` stays in the output (drop it if the
    class ids are not to be published).

    >>> race = Hierarchy.from_dict({"*": {"A": ["a", "b"], "c": None}})
    >>> lf = pl.LazyFrame({"race": ["a", "b", "c"], "cls": [0, 0, 1]})
    >>> generalize_partition(lf, {"race": race}, "cls").collect()["race"].to_list()
    ['A', 'A', 'c']
    """
    hierarchies = check_hierarchies(hierarchies)
    if not hierarchies:
        raise InvalidParameterError("hierarchies is empty; give at least one qid -> Hierarchy to publish")
    check_columns(lf, [*hierarchies, check_name(class_col, "class_col")], "hierarchies and class_col")
    published = class_ancestors(lf, hierarchies, class_col)
    return (
        lf.drop(list(hierarchies))
        .join(published, on=class_col, how="left", maintain_order="left")
        .select(lf.collect_schema().names())
    )
