"""All-or-nothing outputs: every file of a job is produced under a temporary name and
renamed into place only when all of them were written and verified.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> with Outputs() as out:
...     tmp = out.stage(folder / "a.txt")
...     _ = tmp.write_text("hello")
...     out.commit()
>>> sorted(p.name for p in folder.iterdir())
['a.txt']

What "nothing is written" means here:

- each output is staged as a hidden temporary file (or directory) beside its target,
  ``.<name>.<random>.tmp`` (the name cut to fit 255 bytes); folders that did not exist are created and remembered;
- on any error, on SIGINT or SIGTERM (turned into :class:`Interrupted` while the
  block runs), or on a full disk, every staged file and every created folder is
  removed and every existing output is left untouched: the directory is as before;
- :meth:`Outputs.commit` refuses an existing target unless ``overwrite``; it moves the
  targets that exist aside, renames every staged file into place, and on failure puts
  everything back; signals are held while it runs and while it cleans up, so a second
  Ctrl-C cannot interrupt either. A signal held during a commit that succeeded is
  ignored: every output is in place, the run is complete.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import signal
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Self

from polars_anon.errors import AnonError, InvalidParameterError, OutputError, OutputExistsError
from polars_anon.interrupts import install_handler, raises_on_signal, restore_handlers
from polars_anon.locations import URI, as_location, local_path
from polars_anon.messages import output_exists

__all__ = [
    "LAYOUT_MARKER",
    "ROW_GROUP",
    "PARQUET_SUFFIXES",
    "Interrupted",
    "Outputs",
    "check_apart",
    "check_parquet_target",
    "disk_error",
    "glob_matches",
    "recording",
    "staged_write",
    "temporary_name",
]

ROW_GROUP = 131_072
"""Rows per Parquet row group of every table we write (the engine's published table, the encoded outputs).
Polars' own default (the same size) also cuts a row group where the source's chunks end, and chunks can depend
on ``POLARS_MAX_THREADS``: MDAV's 200,000-row register had row groups of 100,000 + 31,072 + 68,928 rows with one
thread and 100,000 + 82,768 + 17,232 with four, and so had the ``statistical`` encoding of a greedy table (the
same rows, other bytes). A fixed size gives the same bytes (and, where chunks did not matter, the bytes it gave
before)."""

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_DISK = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_DISK_WORDS = ("no space left", "disk quota", "file too large")
PARQUET_SUFFIXES = (".parquet", ".pq")


def check_parquet_target(path: str | Path, what: str = "output", *, folder: bool = False) -> Path | URI:
    """Refuse a Parquet output path that does not end in .parquet (or .pq) or names a folder (no data is read).

    A URI (``hdfs://...``) is kept as written (a :class:`~polars_anon.locations.URI`); whether it is a folder is
    asked of its file system when one is bound to it.

    >>> check_parquet_target("out/x.csv")
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: output 'out/x.csv' must end in .parquet (it is written as Parquet)
    """
    path = as_location(path)
    if path.suffix.lower() not in PARQUET_SUFFIXES:
        raise InvalidParameterError(f"{what} {str(path)!r} must end in .parquet (it is written as Parquet)")
    if (
        not folder and (not isinstance(path, URI) or path.fs is not None) and path.is_dir()
    ):  # folder: the output is a folder of Parquet parts (Spark writes one)
        raise InvalidParameterError(f"{what} {str(path)!r} is a folder; give a file path ending in .parquet")
    return path


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived while outputs were being produced; nothing was written."""


_NAME_MAX = 255
"""The longest file name, in bytes, of the usual file systems (ext4, XFS, APFS, NTFS in UTF-16 units)."""


def _hidden_name(name: str, kind: str) -> str:
    """``.<name>.<12 random hex>.<kind>``, `name` cut (at a character) so the whole fits in :data:`_NAME_MAX`
    bytes: a legal long name keeps a legal temporary name, unique by its random part.

    >>> len(_hidden_name("L" * 250 + ".parquet", "tmp").encode()), _hidden_name("a.parquet", "tmp")[:11]
    (255, '.a.parquet.')
    """
    token = uuid.uuid4().hex[:12]
    room = _NAME_MAX - len(f"..{token}.{kind}")
    short = name.encode()[:room].decode(errors="ignore")  # a multi-byte character cut in two is dropped
    return f".{short}.{token}.{kind}"


def temporary_name(path: Path | URI) -> Path | URI:
    """A hidden temporary name beside `path` (:func:`_hidden_name`)."""
    return path.with_name(_hidden_name(path.name, "tmp"))


def _exists(path: Path | URI) -> bool:
    return path.exists() if isinstance(path, URI) else path.exists() or path.is_symlink()


def _replace(source: Path | URI, target: Path | URI) -> None:
    if isinstance(source, URI):
        assert source.fs is not None  # staged by Outputs.stage, which binds it
        source.fs.rename(source, str(target))
    else:
        os.replace(source, target)


def disk_error(exc: BaseException, path: Path | URI) -> OutputError | None:
    """An :class:`OutputError` when `exc` says the disk is full (or a file size limit hit), else None."""
    code = getattr(exc, "errno", None)
    text = str(exc).lower()
    if code in _DISK or any(w in text for w in _DISK_WORDS):
        return OutputError(f"no space left on the device while writing {str(path)!r}; nothing was written")
    return None


_REFUSED = re.compile(
    r"Mkdirs failed to create|Permission denied|AccessControlException|Operation not permitted|Read-only file system"
)
"""A file system's words (Python's, Hadoop's in a Spark trace) for a write it does not allow."""


def _refused(exc: BaseException, path: Path | URI) -> OutputError | None:
    """An :class:`OutputError` of one line when `exc` (a Spark job's Java trace too) says the file system refused
    the write (a folder that does not take new files, a URI's permissions), else None.

    >>> _refused(OSError("java.io.IOException: Mkdirs failed to create file:/r/.o.tmp/x\\n\\tat org..."), Path("r/o"))
    OutputError("cannot write 'r/o': the file system refused it (Mkdirs failed to create); nothing was written")
    """
    found = _REFUSED.search(str(exc))
    if found is None and not isinstance(exc, PermissionError):
        return None
    reason = found[0] if found else "Permission denied"
    return OutputError(f"cannot write {str(path)!r}: the file system refused it ({reason}); nothing was written")


def _local(path: Path | URI) -> Path | URI:
    """A ``file://`` URI as the local path it names (a scan can name its file either way); anything else as given.

    >>> _local(URI("file:///tmp/a%20b.parquet")), _local(URI("hdfs://h/a.parquet"))
    (PosixPath('/tmp/a b.parquet'), 'hdfs://h/a.parquet')
    """
    if isinstance(path, URI) and path.scheme == "file":
        try:
            return local_path(str(path))
        except InvalidParameterError:  # file://host/...: not this machine's
            return path
    return path


def _same(a: Path | URI, b: Path | URI) -> bool:
    """The same location: two local paths resolved (a ``file://`` URI is its local path), two URIs as written."""
    a, b = _local(a), _local(b)
    if isinstance(a, URI) or isinstance(b, URI):
        return isinstance(a, URI) and isinstance(b, URI) and str(a) == str(b)
    return a.resolve() == b.resolve()


def _reads_into(target: Path | URI, read: Path | URI) -> bool:
    """Whether writing `target` would replace data read from `read`: the same location, a location inside the
    folder `read` (a folder of parts: a new part would join it too), or one that the pattern `read` matches (a
    local `read` that exists is a file name, not a pattern, as the readers take it).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> [_reads_into(folder / t, folder) for t in ("p.parquet", "x/p.parquet")], _reads_into(folder, folder / "p")
    ([True, True], False)
    >>> pattern = folder / "*.parquet"
    >>> _reads_into(folder / "part-1.parquet", pattern), _reads_into(folder / "a.csv", pattern)
    (True, False)
    """
    if _same(target, read):
        return True
    target, read = _local(target), _local(read)
    if isinstance(target, URI) != isinstance(read, URI):
        return False
    if isinstance(target, URI):
        where, source = str(target), str(read)
    else:
        assert isinstance(read, Path)
        where, source = str(target.resolve()), str(read.resolve())
    inside = _under(target, read) and (isinstance(read, URI) or read.resolve().is_dir())  # a link to a folder: one
    literal = isinstance(read, Path) and read.exists()  # an existing file named with brackets is that file (io)
    return inside or (not literal and _GLOB.search(source) is not None and glob_matches(source, where))


_GLOB = re.compile(r"[*?\[]")
"""A path that is a pattern (Polars' and DuckDB's globs: ``*``, ``**``, ``?``, ``[...]``)."""


def glob_matches(pattern: str, path: str) -> bool:
    """Whether `path` is one of the files the glob `pattern` reads, as Polars and DuckDB expand it: ``*``, ``?`` and
    ``[...]`` match within one folder name (never a ``/``); ``**`` matches any number of folders (``d/**/*.parquet``:
    ``d/x.parquet`` and ``d/a/b/x.parquet``). Spark (Hadoop's glob) takes ``**`` as ``*``, one folder name
    (``d/**/*.parquet`` reads ``d/a/x.parquet`` only: checked by hand on Spark 4); those files are matched too, so a
    writer protects every file any engine reads.

    >>> [glob_matches("d/*.parquet", p) for p in ("d/x.parquet", "d/sub/x.parquet")]
    [True, False]
    >>> [glob_matches("d/**/*.parquet", p) for p in ("d/x.parquet", "d/a/b/x.parquet", "e/x.parquet")]
    [True, True, False]
    >>> glob_matches("d/p[0-9].parquet", "d/p1.parquet"), glob_matches("d/p?.parquet", "d/p/.parquet")
    (True, False)
    """
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and (end := pattern.find("]", i + 2)) != -1:
            inner = pattern[i + 1 : end]
            negate = inner[:1] in ("!", "^")
            body = inner[1:] if negate else inner
            out.append(f"[{'^/' if negate else ''}{body.replace(chr(92), chr(92) * 2)}]")
            i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.fullmatch("".join(out), path) is not None


_records: list[list[str]] = []
"""The lists of :func:`recording` blocks open now (the innermost last)."""


@contextmanager
def recording() -> Iterator[list[str]]:
    """Collect the outputs every :class:`Outputs` set commits while the block runs (their paths, in order): what a
    run has written when it ends early after a commit (the command line names them on an interrupt).

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> with recording() as written, Outputs() as out:
    ...     _ = out.stage(folder / "a.txt").write_text("hello")
    ...     out.commit()
    >>> [pathlib.Path(p).name for p in written]
    ['a.txt']
    """
    written: list[str] = []
    _records.append(written)
    try:
        yield written
    finally:
        _records.remove(written)


def _is_folder(path: Path | URI) -> bool:
    """An existing folder (not a link to one); a URI asks its file system, when bound."""
    if isinstance(path, URI):
        return path.fs is not None and path.is_dir()
    return path.is_dir() and not path.is_symlink()


LAYOUT_MARKER = "encoding.json"
"""The file that marks a folder this package wrote (an encoding's ``classes`` layout): such a folder may be replaced
with overwrite."""

_SPARK_NAMES = re.compile(r"\.?(part-.+|_SUCCESS)(\.crc)?|_(committed|started)_.+|_temporary")
"""The names Spark (Hadoop's committers) writes in a Parquet output folder: parts, ``_SUCCESS``, their hidden
``.crc`` checksums, the markers of the Databricks-style committers and a failed job's ``_temporary``."""


def _entries(folder: Path | URI) -> list[str]:
    """The names in `folder` (a URI's from its file system)."""
    if isinstance(folder, URI):
        assert folder.fs is not None  # _is_folder answered True: bound
        return folder.fs.names(str(folder))
    return [p.name for p in folder.iterdir()]


def _foreign_entry(folder: Path | URI) -> str | None:
    """None when `folder` is one a writer of this package may replace: one it marked (:data:`LAYOUT_MARKER`) or a
    Spark output (only Spark's names, at least one part or ``_SUCCESS``); else the first name that is not
    (quoted; ``nothing``: an empty folder).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _foreign_entry(folder)
    'nothing'
    >>> for name in ("part-00000-a.snappy.parquet", ".part-00000-a.snappy.parquet.crc", "_SUCCESS"):
    ...     _ = (folder / name).write_text("")
    >>> _foreign_entry(folder), (folder / "notes.txt").write_text(""), _foreign_entry(folder)
    (None, 0, "'notes.txt'")
    """
    names = sorted(_entries(folder))
    if LAYOUT_MARKER in names:
        return None
    foreign = [n for n in names if _SPARK_NAMES.fullmatch(n) is None]
    if foreign:
        return repr(foreign[0])
    return None if any(n.lstrip(".").startswith(("part-", "_SUCCESS")) for n in names) else "nothing"


def _remove(path: Path | URI) -> None:
    if isinstance(path, URI):
        if path.fs is not None:
            path.fs.delete(path)
        return
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
        return
    try:
        path.unlink(missing_ok=True)
    except NotADirectoryError:  # a parent is a file: nothing can exist there
        pass


def _check_name_length(final: Path | URI, what: str) -> None:
    """Refuse a local target whose file name is longer than :data:`_NAME_MAX` bytes (the file system's raw ``File name
    too long``, or, for a report named after a long output, that error once the table was made): one line naming it.

    >>> _check_name_length(Path("o") / ("L" * 250 + ".report.json"), "report")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: report 'o/LLL...L.report.json': its file name is 262 bytes, more than \
file systems take (255); give it a shorter name (a report, report page or encoding is named after the table it \
belongs to unless given a path of its own: shorten that table's name, or give this file its own path)
    >>> _check_name_length(as_location("s3://bucket/" + "L" * 300 + ".report.json"), "report")  # S3: 1,024 bytes
    """
    size = len(final.name.encode())
    if isinstance(final, Path) and size > _NAME_MAX:  # an object store's names are longer (S3, GCS: 1,024 bytes)
        raise InvalidParameterError(
            f"{what} {str(final)!r}: its file name is {size} bytes, more than file systems take ({_NAME_MAX}); give "
            "it a shorter name (a report, report page or encoding is named after the table it belongs to unless "
            "given a path of its own: shorten that table's name, or give this file its own path)"
        )


def _check_writable(final: Path, what: str) -> None:
    """Refuse `final` when the folder it goes in (or the nearest existing one, where the missing folders would be
    made) does not take a new file: read-only, no permission, immutable (``chattr +i``, which even root cannot
    write). Asked by creating and removing an empty hidden file there, the one test that holds for all of them;
    before any data is read, so an unwritable folder is one line instead of an error after the whole computation."""
    folder = next((p for p in [final.parent, *final.parent.parents] if p.exists()), None)
    if folder is None or not folder.is_dir():
        return  # a file on the way: stage names it
    probe = folder / _hidden_name(final.name, "probe")
    with _held_signals():  # never a probe left behind
        try:
            fd = os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except OSError as exc:
            raise OutputError(
                f"cannot write {what} {str(final)!r}: the folder {str(folder)!r} does not take new files "
                f"({exc.strerror}); give another path"
            ) from None
        os.close(fd)
        probe.unlink()


@contextmanager
def _held_signals() -> Iterator[None]:
    """Hold SIGINT/SIGTERM (delivered when the block ends) so a clean-up or commit runs whole."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class Outputs:
    """A set of outputs produced together (see the module docstring)."""

    def __init__(self, *, overwrite: bool = False, reads: Iterable[str | Path | URI | None] = ()) -> None:
        if not isinstance(overwrite, bool):
            raise InvalidParameterError(f"overwrite must be True or False, got {overwrite!r}")
        self.overwrite = overwrite
        self._reads: list[Path | URI] = []
        self.protect(*reads)
        self._staged: list[tuple[Path | URI, Path | URI]] = []
        self._named: list[tuple[str, Path | URI]] = []  # each staged target and what it is, as the user named it
        self._folders: list[Path | URI] = []  # targets staged with file=False: a folder may be replaced there
        self._created: list[Path | URI] = []
        self._committed = False
        self._handlers: dict[int, Any] = {}
        self._interrupted: str | bool = False

    # ------------------------------------------------------------------ staging
    def protect(self, *reads: str | Path | URI | None) -> None:
        """Refuse these paths as targets from now on, even with overwrite: the inputs the run reads (None: none)."""
        self._reads += [as_location(r) for r in reads if r is not None]

    def check(self, final: str | Path, *, file: bool = True, what: str = "output") -> Path | URI:
        """Refuse a target that is an input of the run (:meth:`protect`), that exists (unless overwrite) or that is a
        folder (even with overwrite: the user's folder is never replaced), unless ``file=False``: the caller writes a
        folder there and may replace one it wrote (Spark's output, an encoding's ``classes`` layout), never one that
        holds an input of the run. `what` names the
        target in the message (``"report"``, ...).

        A URI target must be bound to its file system (:meth:`polars_anon.locations.URI.on`), which answers."""
        final = as_location(final)
        _check_name_length(final, what)
        if any(_reads_into(final, r) for r in self._reads):
            raise InvalidParameterError(
                f"{what} {str(final)!r} is an input of this run; write it to another path (it would replace the "
                "data it is made from)"
            )
        held = next((r for r in self._reads if not file and _reads_into(r, final)), None)
        if held is not None:  # a folder replaced whole: the input inside it would be deleted
            raise InvalidParameterError(
                f"{what} {str(final)!r} is a folder that holds {str(held)!r}, an input of this run; write it to "
                "another path (replacing the folder would delete the input)"
            )
        if file and _is_folder(final):
            raise OutputError(
                f"{what} {str(final)!r} is an existing folder; give another path (the folder is left as it is)"
            )
        if not file and _is_folder(final) and (entry := _foreign_entry(final)) is not None:
            raise OutputError(
                f"{what} {str(final)!r} is a folder that is not a Spark output or one polars-anon wrote (it holds "
                f"{entry}); give another path (the folder is left as it is)"
            )
        if _exists(final) and not self.overwrite:  # a dangling link is there too: replaced only with overwrite
            message = output_exists(what, str(final), command_line=False)  # the CLI words it: cli._run
            raise OutputExistsError(message, what=what, target=str(final))
        if isinstance(final, Path):
            _check_writable(final, what)
        return final

    def stage(self, final: str | Path, *, file: bool = True, what: str = "output") -> Path | URI:
        """Reserve `final`; returns the temporary path to write to (nothing exists there yet). `file`, `what`: see
        :meth:`check` (checked again at :meth:`commit`)."""
        final = self.check(final, file=file, what=what)
        _refuse_clash(what, final, self._named)
        self._named.append((what, final))
        if not file:
            self._folders.append(final)
        if isinstance(final, URI):
            return self._stage_uri(final)
        missing = [p for p in [final.parent, *final.parent.parents] if not p.exists()]
        present = next((p for p in [final.parent, *final.parent.parents] if p.exists()), None)
        if present is not None and not present.is_dir():
            raise OutputError(f"cannot write {str(final)!r}: {str(present)!r} is a file, not a folder")
        for folder in reversed(missing):
            try:
                folder.mkdir()
            except OSError as exc:
                raise OutputError(f"cannot create the output folder {str(folder)!r}: {exc.strerror}") from exc
            self._created.append(folder)
        tmp = temporary_name(final)
        self._staged.append((tmp, final))
        return tmp

    def _stage_uri(self, final: URI) -> URI:
        """:meth:`stage` on the URI's own file system (folders made there are removed on rollback)."""
        missing: list[URI] = []
        folder = final.parent
        while not folder.exists():
            missing.append(folder)
            if folder.parent == folder:
                break
            folder = folder.parent
        else:
            if not folder.is_dir():
                raise OutputError(f"cannot write {str(final)!r}: {str(folder)!r} is a file, not a folder")
        for made in reversed(missing):
            try:
                assert made.fs is not None
                made.fs.mkdirs(made)
            except Exception as exc:
                raise OutputError(f"cannot create the output folder {str(made)!r}: {exc}") from exc
            self._created.append(made)
        tmp = temporary_name(final)
        assert isinstance(tmp, URI)
        self._staged.append((tmp, final))
        return tmp

    @contextmanager
    def writing(self, final: str | Path | URI) -> Iterator[None]:
        """Turn a full disk (or a file size limit) while writing `final` into :class:`OutputError`."""
        try:
            yield
        except AnonError:
            raise
        except Exception as exc:
            err = disk_error(exc, as_location(final)) or _refused(exc, as_location(final))
            if err is None:
                raise
            raise err from exc

    # ------------------------------------------------------------------ commit / rollback
    def commit(self) -> None:
        """Rename every staged output into place, all or none."""
        with _held_signals():
            for _, final in self._staged:
                self.check(final, file=not any(final is f for f in self._folders))
            moved: list[tuple[Path | URI, Path | URI]] = []
            placed: list[Path | URI] = []
            try:
                for tmp, final in self._staged:
                    if _exists(final):
                        aside = temporary_name(final)
                        _replace(final, aside)
                        moved.append((aside, final))
                    _replace(tmp, final)
                    placed.append(final)
            except BaseException:
                for final in placed:
                    _remove(final)
                for aside, final in moved:
                    _replace(aside, final)
                raise
            for aside, _ in moved:
                _remove(aside)
            self._committed = True
            for record in _records:
                record.extend(str(final) for _, final in self._staged)

    def rollback(self) -> None:
        """Remove every staged output and every folder this set created."""
        with _held_signals():
            for tmp, _ in self._staged:
                _remove(tmp)
            for folder in reversed(self._created):
                try:
                    if isinstance(folder, URI):
                        if folder.fs is not None:
                            folder.fs.delete(folder, recursive=False)  # made by this set: empty once its files went
                    else:
                        folder.rmdir()
                except OSError:
                    pass

    # ------------------------------------------------------------------ context
    @raises_on_signal  # an engine's long call (DuckDB) is interrupted for it: polars_anon.interrupts
    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self._interrupted or self._committed:
            return  # one signal is enough; and once every output is in place (a signal held during the commit
            # arrives right after it) the run is complete: "nothing was written" would be false
        self._interrupted = signal.Signals(signum).name
        raise Interrupted(f"interrupted by {self._interrupted}; nothing was written")

    def __enter__(self) -> Self:
        self._handlers = install_handler(self._on_signal)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        try:
            if not self._committed:
                self.rollback()
        finally:
            restore_handlers(self._handlers)
        if self._interrupted and exc is not None and not isinstance(exc, Interrupted):
            # an engine turned the signal into its own error (DuckDB: "Query interrupted"; Spark: a Py4J error), or
            # into a plain KeyboardInterrupt (polars_anon.interrupts): the run ends as interrupted by that signal
            raise Interrupted(f"interrupted by {self._interrupted}; nothing was written") from None


def staged_write(
    out: Outputs, final: Path | URI, write: Callable[[Any], Any], *, file: bool = True, what: str = "output"
) -> Any:
    """Stage `final` (`file`, `what`: see :meth:`Outputs.check`), run ``write(tmp)`` turning a full disk into
    :class:`OutputError`; returns its result."""
    tmp = out.stage(final, file=file, what=what)
    with out.writing(final):
        return write(tmp)


def check_apart(targets: Iterable[tuple[str, str | Path | URI]]) -> None:
    """Refuse, before any data is read, two targets of one run (each `what` and its path) that are one path, or one
    inside the other (a report inside Spark's folder of parts, or under the table's file name): the run would write
    one over the other, or make a folder where it writes a file. Each is named in one line.

    >>> check_apart([("output", Path("o/t.parquet")), ("report", Path("o/t.report.json"))])
    >>> check_apart([("output", Path("o/t.parquet")), ("report", Path("o/t.parquet/r.json"))])
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: report 'o/t.parquet/r.json' is inside the output 'o/t.parquet', which \
the run writes whole; give a path outside it
    """
    seen: list[tuple[str, Path | URI]] = []
    for what, given in targets:
        path = as_location(given)
        _refuse_clash(what, path, seen)
        seen.append((what, path))


def _refuse_clash(what: str, path: Path | URI, others: Iterable[tuple[str, Path | URI]]) -> None:
    """Refuse `path` (the `what`) where one of `others` (each `what` and its path) has that path, or one lies inside
    the other: the one check of :func:`check_apart` (before any data is read) and :meth:`Outputs.stage`."""
    for other, there in others:
        if _same(path, there):
            raise InvalidParameterError(
                f"{what} {str(path)!r} is named twice among the outputs (the {other} has that path too); give "
                "each output its own path"
            )
        for inner, w_in, outer, w_out in ((path, what, there, other), (there, other, path, what)):
            if _under(inner, outer):
                raise InvalidParameterError(
                    f"{w_in} {str(inner)!r} is inside the {w_out} {str(outer)!r}, which the run writes whole; "
                    "give a path outside it"
                )


def _under(inner: Path | URI, outer: Path | URI) -> bool:
    """Whether `inner` lies under `outer`, not at it (a ``file://`` URI as its local path; local paths resolved, URIs
    as written): the one inside-test of an output inside another (:func:`check_apart`) and of an output inside a folder
    the run reads (:func:`_reads_into`).

    >>> _under(Path("o/t.parquet/r.json"), Path("o/t.parquet")), _under(Path("o/t.parquet"), Path("o/t.parquet"))
    (True, False)
    """
    inner, outer = _local(inner), _local(outer)
    if isinstance(inner, URI) or isinstance(outer, URI):
        both = isinstance(inner, URI) and isinstance(outer, URI)
        return both and str(inner).startswith(str(outer).rstrip("/") + "/")
    return inner.resolve() != outer.resolve() and inner.resolve().is_relative_to(outer.resolve())
