"""The kinds of engine session the road cannot drive, refused in one line: before a session is made (the Spark
engine's :func:`~polars_anon.engines.spark.session`, before pyspark starts one) and when one is handed over
(:func:`consult_session`, the road's first step). A row of the capability table
(:mod:`polars_anon.pipeline.capabilities`), kept here, below the engines, so that the engine that makes the session
reads the same row.
"""

from __future__ import annotations

from polars_anon.errors import InvalidParameterError

__all__ = ["SESSIONS", "consult_session", "refuse_session"]

SESSIONS: dict[tuple[str, str], str] = {
    ("spark", "connect"): (
        "engine 'spark' needs a classic Spark session (a JVM behind Py4J), not Spark Connect: it checks, stages and "
        "renames outputs with Hadoop's FileSystem API and checks the executors through the SparkContext, which Spark "
        "Connect does not expose; run where pyspark starts a classic session (spark-submit, or pyspark without "
        "SPARK_REMOTE / .remote())"
    ),
}
"""The kinds of session an engine is refused on (engine name, kind): why. Spark Connect sessions (``sc://...``)."""


def consult_session(engine: object) -> None:
    """Refuse an engine whose session is of a kind it cannot drive (a Spark Connect session), before any data is read.

    >>> class Connect:  # what a Spark Connect session's engine says of it
    ...     name, session_kind = "spark", "connect"
    >>> consult_session(Connect())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: engine 'spark' needs a classic Spark session (a JVM behind Py4J), ...
    """
    refuse_session(str(getattr(engine, "name", "")), str(getattr(engine, "session_kind", "classic")))


def refuse_session(engine: str, kind: str) -> None:
    """Refuse a session of `kind` for `engine` (a row of :data:`SESSIONS`), before it is used or even made: a Spark
    Connect session is refused before pyspark starts one (its client libraries may be missing: their error is
    pyspark's, not ours).

    >>> refuse_session("spark", "classic")
    """
    why = SESSIONS.get((engine, kind))
    if why is not None:
        raise InvalidParameterError(why)
