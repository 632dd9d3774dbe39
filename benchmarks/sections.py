"""Results files written one section at a time: ``## name`` sections replaced in place, kept in a fixed order."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path


def replace_section(path: Path, title: str, name: str, body: str, order: Sequence[str]) -> None:
    """Replace (or add) section `name` of the markdown file `path`; sections are written in `order`."""
    text = path.read_text() if path.exists() else f"# {title}\n"
    parts = re.split(r"(?m)^## ", text)
    head, sections = parts[0], {p.split("\n", 1)[0]: p for p in parts[1:]}
    sections[name] = f"{name}\n\n{body}\n\n"
    path.write_text(head + "".join("## " + sections[key] for key in order if key in sections))
