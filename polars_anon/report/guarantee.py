"""What a report's guarantee is called and what its verified counts count: one place for every display (the
``repr`` of a result, its notebook summary, the report page, the command line's summary line).

The report's ``n_classes`` and ``min_class_size`` are what the independent check verified, in the guarantee's
own terms: classes of equal published tuples (k-anonymity), MDAV clusters whose values were permuted
(probabilistic k-anonymity: equal published tuples may form smaller groups, and some records keep their own
tuple), or distinct published patterns and the fewest records a record matches with a missing value read as a
wildcard (local suppression: sdcMicro's wildcard ``fk``).

>>> r = {"guarantee": "probabilistic", "k": 3, "n_rows": 12, "n_classes": 4, "min_class_size": 3}
>>> guarantee_name(r)
'probabilistic k-anonymity'
>>> verified_shape(r)
'in 4 MDAV clusters of at least k = 3 rows (values permuted within each), smallest cluster 3'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = [
    "PROBABILISTIC",
    "WILDCARD",
    "Terms",
    "counts",
    "exposure_phrase",
    "guarantee_name",
    "planned_shape",
    "risk_terms",
    "sizes_caption",
    "terms",
    "verified_shape",
]


PROBABILISTIC = "probabilistic"
"""The ``guarantee`` of MDAV with ``publish="permute"``."""
WILDCARD = "wildcard-k-anonymity"
"""The ``guarantee`` of local suppression (:data:`polars_anon.algorithms.local_suppression.GUARANTEE`)."""


class Terms(NamedTuple):
    """How a guarantee is named and what its verified counts are."""

    name: str
    """The guarantee's name in every display."""
    unit: str
    """What ``n_classes`` counts, in a word (plural)."""
    groups: str
    """What ``n_classes`` counts."""
    smallest: str
    """What ``min_class_size`` is."""
    short: str
    """The same after :attr:`groups` (where 'classes' already says what is smallest)."""
    sizes: str
    """What the published class-size histogram counts (``class_sizes.published``)."""
    bars: tuple[str, str]
    """What a bin of that histogram counts besides rows (one, many)."""
    checked: str
    """What the independent check verified."""
    risk: str
    """What the output's risk figures (``risk.output``) read as classes."""
    axis: str
    """The class-size plot's axis: what a size counts, in the input and as published."""
    alone: str
    """What a sample unique does (a record of size 1), after 'of the records'."""
    group: str
    """One of what ``n_classes`` counts (:attr:`groups` for a count of 1)."""

    def counted(self, n: Any) -> str:
        """`n` of :attr:`groups`, '1 class' for one ('4 classes', '1 distinct pattern').

        >>> _TERMS["k-anonymity"].counted(1), _TERMS["k-anonymity"].counted(1234)
        ('1 class', '1,234 classes')
        """
        return f"{_n(n)} {self.group if n == 1 else self.groups}"


_TERMS = {
    "k-anonymity": Terms(
        "k-anonymity",
        "classes",
        "classes",
        "smallest class",
        "smallest",
        "published class sizes",
        ("class", "classes"),
        "verified on the published rows",
        "classes of equal published tuples",
        "class size (rows sharing one combination of quasi-identifier values)",
        "are alone in their class",
        "class",
    ),
    PROBABILISTIC: Terms(
        "probabilistic k-anonymity",
        "clusters",
        "MDAV clusters of at least k = {k} rows (values permuted within each)",
        "smallest cluster",
        "smallest cluster",
        "groups of equal published tuples (not the clusters the guarantee counts)",
        ("group", "groups"),
        "verified: every cluster has k rows and publishes its own input values",
        "groups of equal published tuples, not the clusters",
        "class size (rows sharing one combination of quasi-identifier values; as published, groups of equal tuples, "
        "not the clusters)",
        "are alone in their group of equal tuples",
        "MDAV cluster of at least k = {k} rows (values permuted within it)",
    ),
    WILDCARD: Terms(
        "k-anonymity with missing values as wildcards",
        "patterns",
        "distinct patterns",
        "fewest records a record matches",
        "fewest records a record matches",
        "records by the number of records each matches (a missing value matches any value)",
        ("pattern", "patterns"),
        "verified on the published rows, a missing value matching any value",
        "each record against the records it matches, a missing value matching any value",
        "class size (rows sharing one combination of quasi-identifier values; as published, records a record "
        "matches, a missing value matching any value)",
        "match no record but themselves (a missing value matches any value)",
        "distinct pattern",
    ),
}


def terms(report: Mapping[str, Any]) -> Terms:
    """The :class:`Terms` of the report's ``guarantee`` (k-anonymity when it names none).

    >>> terms({"guarantee": "wildcard-k-anonymity"}).smallest
    'fewest records a record matches'
    """
    found = _TERMS.get(str(report.get("guarantee") or "k-anonymity"), _TERMS["k-anonymity"])
    k = report.get("k")
    return found._replace(groups=found.groups.format(k=k), group=found.group.format(k=k))


def risk_terms(risk: Mapping[str, Any]) -> Terms:
    """The :class:`Terms` of :func:`polars_anon.risk`'s figures: wildcard patterns when they read missing values as
    wildcards (``missing="wildcard"``), else classes of equal tuples (of any table: not 'published').

    >>> risk_terms({"missing": "wildcard"}).groups, risk_terms({}).sizes
    ('distinct patterns', 'class sizes')
    """
    if risk.get("missing") == "wildcard":
        return _TERMS[WILDCARD]
    return _TERMS["k-anonymity"]._replace(sizes="class sizes")


def guarantee_name(report: Mapping[str, Any]) -> str:
    """The guarantee's name: 'k-anonymity', 'probabilistic k-anonymity', or 'k-anonymity with missing values as
    wildcards'."""
    return terms(report).name


def _n(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def verified_shape(report: Mapping[str, Any]) -> str:
    """The verified counts in the guarantee's terms, after the rows ('in 4 classes, smallest 3').

    >>> verified_shape({"guarantee": "wildcard-k-anonymity", "n_rows": 12, "n_classes": 7, "min_class_size": 2})
    'in 7 distinct patterns, fewest records a record matches 2'
    """
    t = terms(report)
    return f"in {t.counted(report.get('n_classes'))}, {t.short} {_n(report.get('min_class_size'))}"


def counts(report: Mapping[str, Any]) -> tuple[Any, Any]:
    """``n_classes`` and ``min_class_size`` in the guarantee's terms: the verified ones, else the method's plan
    (MDAV permute: its clusters; otherwise the published class sizes it planned).

    >>> counts({"guarantee": "probabilistic", "details": {"n_clusters": 4, "min_cluster_size": 3}})
    (4, 3)
    >>> counts({"class_sizes": {"published": {"n_classes": 2, "min": 5}}, "n_classes": 2, "min_class_size": 6})
    (2, 6)
    """
    if "min_class_size" in report:
        return report.get("n_classes"), report["min_class_size"]
    if report.get("guarantee") == PROBABILISTIC:
        details = report.get("details") or {}
        return details.get("n_clusters"), details.get("min_cluster_size")
    planned = (report.get("class_sizes") or {}).get("published") or {}
    return planned.get("n_classes"), planned.get("min")


def planned_shape(report: Mapping[str, Any]) -> str:
    """The method's plan in the guarantee's terms, before the check ('4 classes planned, smallest class 2').

    >>> planned_shape({"k": 3, "class_sizes": {"published": {"n_classes": 4, "min": 3}}})
    '4 classes planned, smallest 3'
    """
    t, (n, smallest) = terms(report), counts(report)
    return f"{t.counted(n)} planned, {t.short} {_n(smallest)}"


def exposure_phrase(report: Mapping[str, Any]) -> str | None:
    """What probabilistic k-anonymity leaves exposed: records published with their own exact tuple; None for
    another guarantee (or a report without the figure).

    >>> exposure_phrase({"own_tuple_records": 3, "own_tuple_unique": 1, "classic_min_class_size": 1})
    '3 records published with their own exact tuple, 1 of them unique in the release (equal published tuples: \
smallest group 1)'
    """
    own = report.get("own_tuple_records")
    if own is None:
        return None
    text = (
        f"{_n(own)} records published with their own exact tuple, {_n(report.get('own_tuple_unique', 0))} of them "
        "unique in the release"
    )
    classic = report.get("classic_min_class_size")
    return text + (f" (equal published tuples: smallest group {_n(classic)})" if classic is not None else "")


def sizes_caption(report: Mapping[str, Any]) -> str:
    """What the published class-size histogram counts, in the guarantee's terms."""
    return terms(report).sizes
