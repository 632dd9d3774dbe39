"""Storage locations: local paths, and URIs (``hdfs://``, ``s3a://``, ``file://``, ...) kept exactly as written.

``pathlib`` turns ``hdfs://namenode/x`` into ``hdfs:/namenode/x``; a :class:`URI` never touches
the text. It offers the few name helpers the outputs need (``name``, ``stem``, ``suffix``,
``parent``, ``with_name``) and, once bound to a :class:`FileSystem` (the engine's, e.g. Spark's
Hadoop FileSystem), ``exists``, ``is_dir`` and ``write_text``, so the all-or-nothing outputs
(:mod:`polars_anon.outputs`) work on it as on a local path. Which engine reads which scheme is
a row of the capability table (:func:`polars_anon.pipeline.capabilities.storage`).

>>> u = URI("hdfs://namenode:8020/data/out/voters.parquet")
>>> u.scheme, u.name, u.stem, u.suffix
('hdfs', 'voters.parquet', 'voters', '.parquet')
>>> u.with_name("voters.report.json")
'hdfs://namenode:8020/data/out/voters.report.json'
>>> u.parent, u.parent.parent.parent, u.parent.parent.parent.parent
('hdfs://namenode:8020/data/out', 'hdfs://namenode:8020/', 'hdfs://namenode:8020/')
>>> scheme_of("s3a://bucket/x.parquet"), scheme_of("/tmp/x.parquet"), scheme_of("C:/x")
('s3a', None, None)
>>> local_path("file:///tmp/a%20b.parquet")
PosixPath('/tmp/a b.parquet')
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Protocol
from urllib.parse import unquote, urlsplit

from polars_anon.errors import InvalidParameterError

__all__ = ["URI", "FileSystem", "as_location", "is_uri", "local_path", "scheme_of"]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+)://")


def scheme_of(path: object) -> str | None:
    """The URI scheme of `path` (lower case), or None for a plain path (a one-letter scheme is a drive)."""
    if not isinstance(path, str):
        return None
    match = _SCHEME.match(path)
    return match.group(1).lower() if match else None


def is_uri(path: object) -> bool:
    """Whether `path` is a URI (``scheme://...``), to be kept as written."""
    return scheme_of(path) is not None


def as_location(path: str | Path) -> Path | URI:
    """A URI kept as written (a :class:`URI`, bound or not), anything else a Path."""
    if isinstance(path, URI):
        return path
    return URI(path) if is_uri(path) else Path(path)


def local_path(uri: str) -> Path:
    """The local path of a ``file://`` URI (``file:///x``, ``file://localhost/x``); percent escapes decoded."""
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost"):
        raise InvalidParameterError(f"{uri!r} is not a local file:// URI (file:///path)")
    return Path(unquote(parts.path))


class FileSystem(Protocol):
    """The operations the outputs need on a file system named by URIs (Spark's: Hadoop's FileSystem API)."""

    def exists(self, uri: str) -> bool: ...

    def is_dir(self, uri: str) -> bool: ...

    def mkdirs(self, uri: str) -> None: ...

    def rename(self, source: str, target: str) -> None:
        """Rename `source` to `target` (which does not exist); raise when the file system refuses."""
        ...

    def delete(self, uri: str, recursive: bool = True) -> None:
        """Remove a file or a folder (with everything in it when `recursive`; nothing there: nothing happens)."""
        ...

    def write_bytes(self, uri: str, data: bytes) -> None:
        """Create the file `uri` (it must not exist) holding `data`."""
        ...

    def names(self, uri: str) -> list[str]:
        """The names of the entries in the folder `uri` (not recursive)."""
        ...


class URI(str):
    """A location named by a URI, kept as written; bound to a :class:`FileSystem` by :meth:`on`."""

    fs: FileSystem | None = None

    def on(self, fs: FileSystem | None) -> URI:
        """The same URI bound to `fs` (the file system that checks, writes and renames it)."""
        bound = URI(self)
        bound.fs = fs
        return bound

    @property
    def scheme(self) -> str:
        return scheme_of(self) or ""

    def _root_end(self) -> int:
        """Index just past ``scheme://authority`` (the part no parent removes)."""
        start = len(self.scheme) + 3
        slash = self.find("/", start)
        return len(self) if slash < 0 else slash

    @property
    def name(self) -> str:
        rest = self[self._root_end() :].rstrip("/")
        return rest.rsplit("/", 1)[-1] if rest else ""

    @property
    def suffix(self) -> str:
        name = self.name
        dot = name.rfind(".")
        return name[dot:] if dot > 0 else ""

    @property
    def stem(self) -> str:
        return self.name[: len(self.name) - len(self.suffix)]

    @property
    def parent(self) -> URI:
        end = self._root_end()
        rest = self[end:].rstrip("/")
        head = rest.rsplit("/", 1)[0] if "/" in rest else ""
        return URI(self[:end] + (head or "/")).on(self.fs)

    def with_name(self, name: str) -> URI:
        parent = self.parent
        return URI(parent.rstrip("/") + "/" + name).on(self.fs)

    def with_suffix(self, suffix: str) -> URI:
        return self.with_name(self.stem + suffix)

    def _fs(self) -> FileSystem:
        if self.fs is None:
            raise InvalidParameterError(
                f"{str(self)!r}: no engine file system reads this URI here; engine 'spark' writes hdfs://, s3a://, "
                "file:// and every scheme its Hadoop configuration knows"
            )
        return self.fs

    def exists(self) -> bool:
        return self._fs().exists(self)

    def is_dir(self) -> bool:
        return self._fs().is_dir(self)

    def write_text(self, text: str, encoding: str = "utf-8") -> int:
        data = text.encode(encoding)
        self._fs().write_bytes(self, data)
        return len(text)

    def write_bytes(self, data: bytes) -> int:
        self._fs().write_bytes(self, data)
        return len(data)

    def __truediv__(self, name: str) -> URI:
        return URI(self.rstrip("/") + "/" + name).on(self.fs)
