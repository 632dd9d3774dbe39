"""Griffe extension for the API reference: Sphinx roles in docstrings shown as code.

The docstrings cross-reference with Sphinx roles (``:func:`polars_anon.anonymize```), which
MkDocs does not read; each becomes inline code (`` `polars_anon.anonymize` ``, the ``~`` prefix
dropped) and double-backquoted literals become single-backquoted code.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:func|mod|class|meth|data|attr|exc|obj|py:\w+):`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def plain(text: str) -> str:
    """`text` with Sphinx roles and double-backquoted literals as Markdown inline code."""
    text = _ROLE.sub(lambda m: f"`{m.group(1).split(' <')[-1].rstrip('>')}`", text)
    return _LITERAL.sub(r"`\1`", text)


class SphinxRoles(griffe.Extension):
    """Rewrite every docstring griffe loads (see the module docstring)."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = plain(obj.docstring.value)
