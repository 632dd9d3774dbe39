"""Literal option types shared by the public API."""

from __future__ import annotations

from typing import Literal

Method = Literal["fulldomain", "greedy", "mondrian", "datafly", "mdav", "topdown", "local_suppression"]
NullPolicy = Literal["error", "suppress"]
SuppressPolicy = Literal["remove", "root"]
DateLevel = Literal["day", "month", "quarter", "year", "5years", "decade"]
EngineName = Literal["polars", "duckdb", "spark"]
Road = Literal["python", "job"]
"""How the user asked: a Python call's keywords or a job file's keys (a refusal's way out is spelled in them)."""
