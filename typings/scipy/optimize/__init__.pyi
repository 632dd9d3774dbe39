# The two functions of scipy.optimize the package calls (privacy/uniqueness.py), typed for pyright. scipy ships no
# annotations for them, and pyright inferred `root`'s return type from its source on every run: 40 of the type
# check's ~90 CPU s. A module of scipy.optimize not named here is not imported by the package (pyright would say so).
from collections.abc import Callable
from typing import Any

def root(fun: Callable[..., Any], x0: Any, *args: Any, **kwargs: Any) -> Any: ...
def brentq(f: Callable[..., Any], a: float, b: float, *args: Any, **kwargs: Any) -> float: ...
