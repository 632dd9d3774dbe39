"""The one road every interface calls (``pa.anonymize``, the job file, the CLI, the namespace, explore).

check the request (:func:`polars_anon.request.check_request`, before any data is read) -> the
capability table (:mod:`polars_anon.pipeline.capabilities`: is this method, option and privacy
model run on this engine?) -> the engine's aggregates (:meth:`polars_anon.engines.Engine.aggregate`)
-> :func:`polars_anon.request.check_data` on them -> the method on the driver, or the engine's
planner (:mod:`polars_anon.engines.planners`), either way one tuple map, checked
(:func:`polars_anon.pipeline.road.check_map`) -> the engine publishes the map -> the one report
-> the result (:class:`polars_anon.pipeline.result.Anonymized`), which verifies and writes.

Modules: :mod:`~polars_anon.pipeline.state` (what the road carries between its steps; imported by the
engines, so it imports none of them), :mod:`~polars_anon.pipeline.capabilities` (the table),
:mod:`~polars_anon.pipeline.road` (the road), :mod:`~polars_anon.pipeline.result` (the result).
This package's ``__init__`` imports nothing, so an engine may import :mod:`~polars_anon.pipeline.state`
without loading the road (no import circle).
"""
