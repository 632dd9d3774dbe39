"""Method advice: when the chosen method loses much more than another would on the same data, say so.

Choosing a method is hard for a first-time user, and the default (``fulldomain``)
generalizes every value of a quasi-identifier to one level: on a small table with
many distinct values it can publish most cells as ``*`` where a local method keeps
far more. The remedy chosen here is advice, not an ``auto`` method: the run keeps the
method the user asked for (its guarantee and its output stay what they chose), and
the report (``method_advice``), its HTML page and the command line's summary line name
the better method with both losses. The advice's ``text`` is stored in the syntax of the road that made the run
(``try method="topdown"`` from a Python call, ``try method = "topdown"`` from a job file): every display of a run
shows the one stored sentence, and a run's report is read by whoever made it that way.

**How it is measured (cheaply).** After the chosen method ran, each other method of
:data:`CANDIDATES` runs on the same class aggregates, with the same k, privacy models
and seed, its default options (plus those of the user's options it takes) and its
default metric; no row is read again and nothing is published. Its loss is the
average cell loss of its tuple map (:func:`polars_anon.report.metrics.map_loss`,
suppressed cells counting 1), the figure the report calls ``loss``. A method that
cannot meet the request (infeasible), or that the request's models exclude (a
population table needs a full-domain method), is left out; advice never fails the run.
Every candidate reruns when the
aggregates hold at most :data:`MAX_CLASSES` classes; up to :data:`MAX_CLASSES_TOPDOWN`, topdown alone (the local
method whose cost grows with the classes about linearly; on Adult's 18,109 classes it names topdown at 0.07
where fulldomain loses 0.66 at k = 10); above that none. Every qid needs a hierarchy, and the chosen loss must be
at least :data:`MARGIN` (below it the rule cannot give advice, whatever the others lose). A planner route (an
engine's table of more classes than ``driver_tuples``) gives none: its aggregates stay in the engine.

**The rule.** Advice is given when the best other method loses at least
:data:`MARGIN` less (absolute) *and* at most :data:`RATIO` times the chosen loss:
``best <= loss - 0.10 and best <= 0.75 * loss``; both, so that neither a tiny
absolute gain on a heavy loss nor a large relative gain on a small loss raises it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from polars_anon._types import Road
from polars_anon.messages import assignment
from polars_anon.report.metrics import map_loss

if TYPE_CHECKING:
    from collections.abc import Callable

    from polars_anon.algorithms import Plan
    from polars_anon.pipeline.state import Aggregated
    from polars_anon.privacy.constraints import Constraints
    from polars_anon.request import Request

__all__ = [
    "CANDIDATES",
    "MARGIN",
    "MAX_CLASSES",
    "MAX_CLASSES_TOPDOWN",
    "RATIO",
    "advise",
    "candidates",
    "method_advice",
]

CANDIDATES = ("fulldomain", "topdown", "greedy", "mondrian")
"""The methods compared (those that publish hierarchy nodes, so their losses are comparable)."""
MAX_CLASSES = 5_000
"""Every candidate reruns on aggregates of at most this many classes (greedy's cost grows faster than linearly)."""
MAX_CLASSES_TOPDOWN = 50_000
"""Above :data:`MAX_CLASSES` and up to this many classes, topdown alone reruns (on Adult, k = 10, 18,109 classes:
0.4-0.5 CPU s)."""
MARGIN = 0.10
RATIO = 0.75


def advise(loss: float | None, losses: dict[str, float], chosen: str, road: Road = "python") -> dict[str, Any] | None:
    """The advice of the rule above, from the chosen method's loss and the others' (None: no advice). Its ``text``
    names the better method in the syntax of the `road` that made the run (:func:`polars_anon.messages.assignment`).

    >>> advise(0.75, {"topdown": 0.28, "greedy": 0.31}, "fulldomain")["better"]
    'topdown'
    >>> advise(0.75, {"topdown": 0.28}, "fulldomain")["text"].split("; ")[1]
    'try method="topdown"'
    >>> advise(0.75, {"topdown": 0.28}, "fulldomain", "job")["text"].split("; ")[1]
    'try method = "topdown"'
    >>> advise(0.30, {"topdown": 0.25}, "fulldomain") is None   # 0.05 less: not much
    True
    """
    others = {m: v for m, v in losses.items() if m != chosen}
    if loss is None or not others:
        return None
    better = min(others, key=lambda m: (others[m], CANDIDATES.index(m) if m in CANDIDATES else len(CANDIDATES)))
    best = others[better]
    if not (best <= loss - MARGIN and best <= RATIO * loss):
        return None
    return {
        "chosen": chosen,
        "loss": loss,
        "better": better,
        "better_loss": best,
        "losses": dict(sorted(losses.items())),
        "text": (
            f"method advice: {better} would lose {best:.2f} (average cell loss) where {chosen} lost {loss:.2f} on the "
            f"same data; try {assignment('method', better, road)}"
        ),
    }


def candidates(n_classes: int) -> tuple[str, ...]:
    """The methods that rerun for advice on aggregates of `n_classes` classes (see the module docstring).

    >>> candidates(4_000), candidates(18_109), candidates(120_665)
    (('fulldomain', 'topdown', 'greedy', 'mondrian'), ('topdown',), ())
    """
    if n_classes <= MAX_CLASSES:
        return CANDIDATES
    return ("topdown",) if n_classes <= MAX_CLASSES_TOPDOWN else ()


def method_advice(
    data: Aggregated,
    request: Request,
    plan: Plan,
    constraints: tuple[Constraints, Any],
    run_method: Callable[[Aggregated, Request, tuple[Constraints, Any]], Plan],
) -> dict[str, Any] | None:
    """Measure the other candidates on the aggregates `data` with the road's `run_method` and apply
    :func:`advise` to them and the chosen method's `plan` (see the module docstring)."""
    from polars_anon.algorithms import METHODS

    others = [m for m in candidates(data.aggregates.height) if m != request.method.name]
    if request.method.name not in CANDIDATES or not others or any(q not in request.hierarchies for q in request.qids):
        return None  # decided before the chosen map's loss is computed (a pass over every class)
    loss = map_loss(plan.map, request.hierarchies)[0]
    if loss is None or loss < MARGIN:
        return None  # losses are at least 0: no method loses MARGIN less than a loss below MARGIN (none is run)
    from polars_anon.request import FULL_DOMAIN_METHODS

    given = dataclasses.asdict(request.options)
    losses = {request.method.name: loss}
    population = any(m.needs_population_table for m in request.privacy)
    for name in others:
        if population and name not in FULL_DOMAIN_METHODS:
            continue  # a model with a population table needs a full-domain method (as check_request says)
        spec = METHODS[name]
        fields = {f.name for f in dataclasses.fields(spec.options)}
        try:
            options = spec.options(**{k: v for k, v in given.items() if k in fields})
            other = dataclasses.replace(request, method=spec, options=options, metric=None)
            plan = run_method(data, other, constraints)
        except Exception:  # noqa: BLE001, S112  infeasible, an option it refuses, anything: advice never fails the run
            continue
        value, _ = map_loss(plan.map, request.hierarchies)
        if value is not None:
            losses[name] = value
    return advise(loss, losses, request.method.name, request.road)
