"""Random generalization hierarchies, order-preserving or shuffled [paper 003 §3.3.2].

The procedure of the paper: start from the set of all values (the root), split it
into a random partition of at least two parts, split each part again, until every
part is a single value. *Ordered* trees split into runs of consecutive values (so
only neighbours are generalized together: Datafly's "VGH (a)" of Figure 3.2);
*shuffled* trees split into arbitrary subsets ("VGH (b)"). Then the depth
constraint: with D the depth of the shallowest leaf, every node at depth D - 1
gets its values as direct leaf children and everything deeper is dropped, so all
leaves sit at depth D and full-domain recoding (Datafly) is coherent (Figure 3.3).

Readings taken where the paper leaves room: a split makes between 2 and
``max_children`` parts, the count and the cut points drawn uniformly; an inner
node is labelled ``[first..last]`` (ordered) or ``{a,b,c}`` (shuffled, values in
input order); the root is labelled `root`. The same values and seed give the same
tree. Public API: :meth:`Hierarchy.random_ordered <polars_anon.Hierarchy.random_ordered>`
and :meth:`Hierarchy.random_shuffled <polars_anon.Hierarchy.random_shuffled>`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np

from polars_anon._validate import check_seed, is_integer
from polars_anon.builders.values import Row, as_series, string_labels
from polars_anon.errors import HierarchyError, InvalidParameterError, preview
from polars_anon.labels import set_label

__all__ = ["rows"]


def _check(values: Iterable[object]) -> list[str]:
    labels = string_labels(as_series(values, "random hierarchy"), "random hierarchy").to_list()
    if not labels:
        raise HierarchyError("random hierarchy: no values given; the hierarchy would be empty")
    if None in labels:
        raise HierarchyError("random hierarchy: a value is null; give only non-null values")
    dup = [v for v, n in Counter(labels).items() if n > 1]
    if dup:
        raise HierarchyError(
            f"random hierarchy: {len(dup)} values are given twice (first: {preview(dup)}); give each once"
        )
    return labels


def _check_max_children(max_children: object) -> int:
    """`max_children` as a Python int when it is an integer >= 2 (NumPy's too, as every method takes them)."""
    if not is_integer(max_children) or max_children < 2:
        raise InvalidParameterError(f"random hierarchy: max_children must be an integer >= 2, got {max_children!r}")
    return int(max_children)


def _build(labels: list[str], seed: int, max_children: int, root: str, ordered: bool) -> list[Row]:
    if root in labels:
        raise HierarchyError(f"random hierarchy: the root label {root!r} is also a value; pass another root=")
    rng = np.random.default_rng([int(seed), 3 if ordered else 4])
    n = len(labels)
    if n == 1:
        return [[labels[0], root]]
    # nodes: (positions of its values, depth); children by parent index
    members: list[np.ndarray] = [np.arange(n)]
    depth = [0]
    children: list[list[int]] = [[]]
    stack = [0]
    while stack:
        node = stack.pop()
        pos = members[node]
        if len(pos) == 1:
            continue
        parts = int(rng.integers(2, min(max_children, len(pos)) + 1))
        cuts = np.sort(rng.choice(np.arange(1, len(pos)), parts - 1, replace=False))
        if not ordered:
            pos = rng.permutation(pos)
        for piece in np.split(pos, cuts):
            members.append(np.sort(piece))
            depth.append(depth[node] + 1)
            children.append([])
            children[node].append(len(members) - 1)
            stack.append(len(members) - 1)
    shallowest = min(d for i, d in enumerate(depth) if len(members[i]) == 1)
    runs: dict[str, tuple[int, int]] = {}  # an ordered run's label -> its first and last position

    def name(i: int) -> str:
        pos = members[i]
        if i == 0:
            return root
        if len(pos) == 1:
            return labels[pos[0]]
        if ordered:
            return _run_label(labels, int(pos[0]), int(pos[-1]), runs)
        return set_label([labels[p] for p in pos])

    out: list[Row] = []
    walk = [(0, [root])]
    while walk:  # depth-first, children in order, cut at the shallowest leaf depth
        node, chain = walk.pop()
        if depth[node] == shallowest - 1 or not children[node]:
            out.extend([labels[p], *reversed(chain)] for p in members[node])
            continue
        walk.extend((c, [*chain, name(c)]) for c in reversed(children[node]))
    return out


def _run_label(labels: list[str], first: int, last: int, runs: dict[str, tuple[int, int]]) -> str:
    """``[first..last]``, refused when another run of `runs` (label -> positions, updated) has that label: values
    holding ``..`` can make two runs one label ("a" to "b..c" and "a..b" to "c" are both ``[a..b..c]``).

    >>> _run_label(["a", "b..c", "a..b", "c"], 0, 1, {"[a..b..c]": (2, 3)})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.HierarchyError: random hierarchy: the runs 'a'..'b..c' and 'a..b'..'c' are both labelled ...
    """
    label = f"[{labels[first]}..{labels[last]}]"
    other = runs.setdefault(label, (first, last))
    if other != (first, last):
        raise HierarchyError(
            f"random hierarchy: the runs {labels[first]!r}..{labels[last]!r} and {labels[other[0]]!r}.."
            f"{labels[other[1]]!r} are both labelled {label!r} (values holding '..'); relabel the values so that "
            "none holds '..'"
        )
    return label


def rows(
    values: Iterable[object], *, seed: int = 0, max_children: int = 3, root: str = "*", ordered: bool
) -> list[Row]:
    """Rows of a random equal-depth tree over `values` (given order kept when `ordered`).

    >>> rows(range(4), seed=4, ordered=True)
    [['0', '[0..1]', '*'], ['1', '[0..1]', '*'], ['2', '[2..3]', '*'], ['3', '[2..3]', '*']]
    """
    labels = _check(values)
    max_children = _check_max_children(max_children)
    check_seed(seed, where="random hierarchy: ")  # as a method's: -1 reached NumPy's bare refusal, 1.7 was taken
    return _build(labels, seed, max_children, root, ordered=ordered)
