"""Prompt SIGINT/SIGTERM inside an engine's own long call (issue 27).

Python runs a signal handler on the main thread between two bytecodes, so while the
main thread waits inside one long DuckDB query (C++ code, the GIL released) the
handler waits for the query's end. :func:`interruptible` closes that gap: for the
duration of a call it points :func:`signal.set_wakeup_fd` at a pipe (Python's C-level
handler writes the signal's number there at once) and a watcher thread reading that
pipe calls the engine's ``interrupt`` (DuckDB: ``connection.interrupt()``). The engine
then returns with its own error, and the Python handler, which runs right after,
raises as usual: :class:`polars_anon.outputs.Interrupted` inside an output set (the
command line's 130/143 and one line), :class:`KeyboardInterrupt` from Python's default
SIGINT handler.

The engine is interrupted only when the signal's current Python handler raises
(Python's :func:`signal.default_int_handler`, or a handler marked with
:func:`raises_on_signal`): a program whose own handler only notes the signal keeps its
query. Bytes for a wakeup fd set before (asyncio's) are passed on to it, and that fd
is restored afterwards. On a thread other than the main thread nothing is installed
(Python delivers signals to the main thread only, and only it may set the wakeup fd):
the call runs as before.

>>> import duckdb
>>> con = duckdb.connect()
>>> with interruptible(con.interrupt):
...     con.sql("SELECT 42").fetchall()
[(42,)]
>>> signal.set_wakeup_fd(-1)  # restored: none was set before
-1
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = [
    "NOTHING_WRITTEN",
    "exit_on_signal_while_starting",
    "install_handler",
    "interruptible",
    "raises_on_signal",
    "restore_handlers",
]

_SIGNALS = {int(signal.SIGINT), int(signal.SIGTERM)}
_MARK = "__polars_anon_raises_on_signal__"
_active = threading.local()

F = TypeVar("F", bound=Callable[..., Any])


def install_handler(handler: Callable[[int, Any], object]) -> dict[int, Any]:
    """`handler` for SIGINT and SIGTERM, on the main thread only (elsewhere Python allows none); a signal the process
    was started ignoring stays ignored (a shell's background job ignores SIGINT: a Ctrl-C meant for the
    foreground). Returns the handlers replaced, for :func:`restore_handlers`.

    >>> previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    >>> sorted(install_handler(lambda s, f: None)) == [int(signal.SIGTERM)]
    True
    >>> signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    True
    >>> _ = signal.signal(signal.SIGINT, previous)
    """
    replaced: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(sig) is not signal.SIG_IGN:
                replaced[int(sig)] = signal.signal(sig, handler)
    return replaced


NOTHING_WRITTEN = "polars-anon: interrupted; nothing was written"
"""The command line's one line for a signal before it wrote anything (exit 130 for SIGINT, 143 for SIGTERM)."""


def started_as_cli(argv: list[str] | None = None, orig_argv: list[str] | None = None) -> bool:
    """Whether this process is the command line: the console script ``polars-anon`` (its ``-script.py`` and ``.exe``
    forms too) or ``python -m polars_anon.cli`` (while the package is imported ``sys.argv[0]`` is still ``-m``).

    >>> started_as_cli(["/usr/bin/polars-anon", "check"], [])
    True
    >>> started_as_cli(["-m"], ["python", "-m", "polars_anon.cli", "check"])
    True
    >>> started_as_cli(["app.py"], ["python", "app.py"])
    False
    """
    argv = sys.argv if argv is None else argv
    orig = getattr(sys, "orig_argv", []) if orig_argv is None else orig_argv
    script = os.path.basename(argv[0]) if argv else ""
    if script.split(".")[0] in ("polars-anon", "polars-anon-script"):
        return True
    return any(a == "-m" and b == "polars_anon.cli" for a, b in zip(orig, orig[1:]))


def exit_on_signal_while_starting() -> None:
    """On the command line only (:func:`started_as_cli`; a program importing the library keeps its handlers): from the
    package's first line until ``main`` installs the command's own handlers, SIGINT or SIGTERM ends the process with
    :data:`NOTHING_WRITTEN` and 130 or 143, as the command does, not with a traceback from inside an import (a signal
    the process was started ignoring stays ignored)."""
    if started_as_cli():
        install_handler(_exit_while_starting)


def _exit_while_starting(signum: int, frame: object) -> None:
    for sig in _SIGNALS:  # one line: a second signal while the process ends does nothing
        signal.signal(sig, signal.SIG_IGN)
    os.write(2, f"{NOTHING_WRITTEN}\n".encode())
    # at once, not by raising: the handler may run inside code that swallows its exception (the compiler, while Python
    # compiles a module), and the job then went on to write everything and exit 0. Nothing is written at start-up and
    # standard output holds nothing yet, so nothing is lost by skipping the interpreter's clean-up.
    os._exit(143 if signum == signal.SIGTERM else 130)


def restore_handlers(replaced: dict[int, Any]) -> None:
    """Put back the handlers :func:`install_handler` replaced."""
    for sig, previous in replaced.items():
        signal.signal(sig, previous)


def raises_on_signal(handler: F) -> F:
    """Mark a signal handler that raises (so an engine's long call may be interrupted for it); returns it."""
    setattr(handler, _MARK, True)
    return handler


def _raises(signum: int) -> bool:
    handler = signal.getsignal(signum)
    return handler is signal.default_int_handler or bool(getattr(handler, _MARK, False))


class _Watcher(threading.Thread):
    """Reads the signal numbers the C handler writes; interrupts the engine for each one whose handler raises. Ends
    when the write end is closed (every byte read), so after :meth:`join` ``signals`` holds every signal seen."""

    def __init__(self, read_fd: int, forward: int, interrupt: Callable[[], object]) -> None:
        super().__init__(name="polars_anon-interrupt", daemon=True)
        self.read_fd, self.forward, self.interrupt = read_fd, forward, interrupt
        self.signals: list[int] = []

    def run(self) -> None:
        try:
            while data := os.read(self.read_fd, 64):
                if self.forward != -1:
                    try:
                        os.write(self.forward, data)
                    except OSError:
                        pass  # the earlier owner's buffer is full or closed: as with a wakeup fd of its own
                raising = [b for b in data if b in _SIGNALS and _raises(b)]
                if raising:
                    self.signals.extend(raising)
                    try:
                        self.interrupt()
                    except Exception:  # noqa: BLE001 (the call already ended, its connection closed: nothing to stop)
                        pass
        finally:
            os.close(self.read_fd)


@contextmanager
def interruptible(interrupt: Callable[[], object]) -> Iterator[None]:
    """Run the block so that SIGINT/SIGTERM calls `interrupt` at once (see the module docstring).

    The signal's Python handler then raises as usual. An engine may also run that handler
    itself while it waits (DuckDB's client does) and turn the handler's exception into an
    error of its own ("Query interrupted"): an error that leaves the block after such a
    signal is raised as :class:`KeyboardInterrupt`. Re-entrant (an inner block on the
    same thread adds nothing); on a thread other than the main thread it does nothing.
    """
    if threading.current_thread() is not threading.main_thread() or getattr(_active, "on", False):
        yield
        return
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)  # set_wakeup_fd requires it
    try:
        previous = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except (ValueError, OSError):  # no wakeup fd here (an embedded interpreter): run as before
        os.close(read_fd)
        os.close(write_fd)
        yield
        return
    watcher = _Watcher(read_fd, previous, interrupt)
    watcher.start()
    _active.on = True
    try:
        yield
    except Exception:
        _stop(previous, write_fd, watcher)
        if watcher.signals:  # the engine's own error for the interrupt (its handler's exception swallowed)
            raise KeyboardInterrupt from None
        raise
    finally:
        _stop(previous, write_fd, watcher)


def _stop(previous: int, write_fd: int, watcher: _Watcher) -> None:
    """Restore the earlier wakeup fd, close the pipe's write end and wait for the watcher to read the rest."""
    if not _active.on:
        return
    _active.on = False
    signal.set_wakeup_fd(previous)  # first: a signal from now on reaches the earlier fd, none the closed one
    os.close(write_fd)  # the watcher reads the end of the pipe, closes its end and ends
    watcher.join(5)
