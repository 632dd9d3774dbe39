"""Interrupts, a full disk and a failing report writer leave nothing behind (issue 12).

A CLI job on a generated voter register is signalled (SIGINT, SIGTERM) while it
writes: it must exit 130/143 with one line and leave its output folder exactly as
it was, without the hidden temporary file. A full disk is a small tmpfs mounted in
a private mount namespace when the test may (root and ``unshare``), and a file size
limit (``RLIMIT_FSIZE``) otherwise; both are run where possible, each skipped with
its reason where not.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from polars_anon import cli
from polars_anon.demo import write_rows
from polars_anon.outputs import Outputs, staged_write
from tests.conftest import REPO, SHORT_JVM
from tests.reliability.snapshot import snapshot, unchanged

BIG_ROWS = 2_500_000
JOB = """input = "{input}"
output = "{output}"
k = 10
drop = ["voter_id", "name"]
sensitive = "party"
[qids.gender]
hierarchy = "suppress"
[qids.race]
hierarchy = "suppress"
"""
ENV = dict(os.environ, PYTHONPATH=str(REPO))


@pytest.fixture(scope="session")
def voters(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated register large enough for its write to be caught (about 1 s of writing)."""
    return write_rows(tmp_path_factory.mktemp("voters") / "voters.parquet", BIG_ROWS, seed=0)


def _job(folder: Path, input_: Path, output: str = "out/anon.parquet") -> Path:
    path = folder / "job.toml"
    path.write_text(JOB.format(input=input_, output=output))
    return path


def _signals_as_in_a_shell() -> None:
    """In the child: SIGINT and SIGTERM at their defaults and unblocked, as a shell starts a command (a
    pytest-xdist worker may ignore or block them, and a child inherits that)."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


@dataclass
class Signalled:
    """What a signalled run did: its exit code and output, whether it was seen ready, seconds from signal to exit."""

    code: int
    stdout: str
    stderr: str
    ready: bool
    seconds: float


def _signalled(
    args: list[str],
    cwd: Path,
    sig: signal.Signals,
    ready: Callable[[], bool],
    *,
    after: float = 0.0,
    wait: float = 120,
    env: dict[str, str] | None = None,
) -> Signalled:
    """Start `args` as a shell would (in `env`, default :data:`ENV`), poll until `ready()`, send `sig` `after` seconds
    later, and collect the run.

    Bounded: a run not ready within `wait` seconds is signalled anyway, and one still running `wait` seconds after the
    signal is killed and the test fails (a time-out, never a hang)."""
    proc = subprocess.Popen(
        args,
        cwd=cwd,
        env=ENV if env is None else env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_signals_as_in_a_shell,
    )
    deadline = time.monotonic() + wait
    while not (seen := ready()) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.001)
    if seen:
        time.sleep(after)
    sent = time.monotonic()
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        stdout, stderr = proc.communicate(timeout=wait)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
        pytest.fail(f"still running {wait} s after {sig.name} (killed): {stderr[-2000:]}")
    return Signalled(proc.returncode, stdout, stderr, seen, time.monotonic() - sent)


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_signal_while_writing_leaves_nothing(
    sig: signal.Signals, code: int, engine: str, voters: Path, tmp_path: Path
) -> None:
    """On DuckDB too (issue 27): DuckDB turns the signal into "Query interrupted"; the same line and code."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("an earlier file")
    job = _job(tmp_path, voters)
    if engine != "polars":
        job.write_text(f'engine = "{engine}"\n' + job.read_text())
    before = snapshot(tmp_path)

    def writing() -> bool:
        return any(p.name.startswith(".anon.parquet.") and p.name.endswith(".tmp") for p in out.iterdir())

    run = _signalled([sys.executable, "-m", "polars_anon.cli", "anonymize", str(job)], tmp_path, sig, writing)
    assert run.ready, f"the job ended (exit {run.code}) before its temporary file was seen: {run.stderr}"
    assert run.code == code, run.stderr
    assert run.stderr.splitlines() == ["polars-anon: interrupted; nothing was written"] and run.stdout == ""
    assert snapshot(tmp_path) == before  # the hidden temporary file is gone, nothing new, nothing touched


@pytest.fixture(scope="module")
def medium(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A register whose published table is several MB: more than the full disks below hold."""
    return write_rows(tmp_path_factory.mktemp("medium") / "voters.parquet", 400_000, seed=1)


def _tmpfs_run(folder: Path, job: Path) -> dict[str, Any]:
    """Run the job with its output folder on a 1 MB tmpfs in a private mount namespace; the facts, as JSON."""
    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root and unshare(1); the file size limit case covers a full disk")
    driver = folder / "driver.py"
    driver.write_text(
        "import json, subprocess, sys\n"
        "from pathlib import Path\n"
        "from tests.reliability.snapshot import snapshot\n"
        "disk = Path(sys.argv[1])\n"
        "(disk / 'anon.parquet').write_bytes(b'an earlier output')\n"
        "before = snapshot(disk)\n"
        "p = subprocess.run([sys.executable, '-m', 'polars_anon.cli', 'anonymize', sys.argv[2], '--overwrite'],"
        " capture_output=True, text=True)\n"
        "same = snapshot(disk) == before\n"
        "print(json.dumps({'code': p.returncode, 'stderr': p.stderr, 'same': same,"
        " 'kept': (disk / 'anon.parquet').read_bytes().decode()}))\n"
    )
    disk = folder / "disk"
    disk.mkdir()
    script = f'mount -t tmpfs -o size=1m tmpfs "{disk}" && exec "{sys.executable}" "{driver}" "{disk}" "{job}"'
    proc = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=folder,
        timeout=300,
        check=False,
    )
    if proc.returncode != 0 and not proc.stdout:
        pytest.skip(f"cannot mount a tmpfs here ({proc.stderr.strip()}); the file size limit case covers a full disk")
    assert list(disk.iterdir()) == []  # the mount was private: nothing reached the real folder
    return json.loads(proc.stdout)


def _limit_run(folder: Path, job: Path) -> dict[str, Any]:
    """Run the job with a 1 MB file size limit (writes past it fail with EFBIG); the facts."""
    disk = folder / "disk"
    disk.mkdir()
    (disk / "anon.parquet").write_bytes(b"an earlier output")
    before = snapshot(disk)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    proc = subprocess.run(
        [sys.executable, "-m", "polars_anon.cli", "anonymize", str(job), "--overwrite"],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=folder,
        preexec_fn=limit,
        timeout=300,
        check=False,
    )
    same = snapshot(disk) == before
    return {"code": proc.returncode, "stderr": proc.stderr, "same": same, "kept": (disk / "anon.parquet").read_text()}


@pytest.mark.parametrize("disk", ["tmpfs", "file-size-limit"])
def test_full_disk_leaves_nothing(disk: str, medium: Path, tmp_path: Path) -> None:
    job = _job(tmp_path, medium, "disk/anon.parquet")
    facts = (_tmpfs_run if disk == "tmpfs" else _limit_run)(tmp_path, job)
    lines = facts["stderr"].splitlines()
    assert facts["code"] == 2 and len(lines) == 1, facts["stderr"]
    assert lines[0].startswith("polars-anon: error: no space left") and "anon.parquet" in lines[0]
    assert facts["same"] and facts["kept"] == "an earlier output"


def _failing_report(out: Outputs, report: dict[str, Any], path: Path, **kwargs: Any) -> None:
    def write(tmp: Path) -> None:
        tmp.write_text("{")  # a partial report, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")

    staged_write(out, path, write)


def test_report_failure_leaves_nothing_and_the_rerun_works(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table is written and verified, then the report fails: neither remains, and the rerun is not refused."""
    table = pl.DataFrame({"id": list(range(12)), "age": [31, 33, 38, 36] * 3, "sex": ["F", "M"] * 6})
    table.write_parquet(tmp_path / "t.parquet")
    job = tmp_path / "job.toml"
    job.write_text(
        'input = "t.parquet"\noutput = "out/anon.parquet"\nk = 2\ninsensitive = "id"\nencode = ["fillparent"]\n'
        '[qids.age]\nhierarchy = { intervals = [5, 10], bottom = 30, top = 40 }\n[qids.sex]\nhierarchy = "suppress"\n'
    )
    monkeypatch.setattr("polars_anon.job.write_report", _failing_report)
    with unchanged(tmp_path):
        assert cli.main(["anonymize", str(job)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "no space left" in err[0] and "anon.report.json" in err[0]
    monkeypatch.undo()
    assert cli.main(["anonymize", str(job)]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "anon.fillparent.parquet",
        "anon.parquet",
        "anon.report.html",
        "anon.report.json",
    ]


def test_report_failure_in_sink_parquet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import polars_anon as pa

    table = pl.DataFrame({"sex": ["F", "M"] * 3})
    res = pa.anonymize(table, hierarchies={"sex": pa.Hierarchy.suppression(["F", "M"])}, k=3)
    monkeypatch.setattr(sys.modules["polars_anon.pipeline.result"], "write_report", _failing_report)
    with unchanged(tmp_path), pytest.raises(pa.OutputError, match=r"no space left .*t\.report\.json"):
        res.sink_parquet(tmp_path / "t.parquet")
    monkeypatch.undo()
    res.sink_parquet(tmp_path / "t.parquet")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet", "t.report.html", "t.report.json"]


LONG_QUERY = "SELECT sum(a.range * b.range) AS s FROM range(1000000) a, range(1000000) b"
"""One DuckDB query of 10^12 rows (hours): it ends early only if interrupted."""

LONG_DRIVER = f"""
import sys
from pathlib import Path
from polars_anon import cli
from polars_anon.engines.duckdb import DuckDBEngine
fetch = DuckDBEngine._fetch
def slow(self, relation, query):  # the engine's first query is preceded by one long query, run as the engine runs one
    if not Path(sys.argv[1]).exists():
        Path(sys.argv[1]).write_text("started")
        fetch(self, relation, {LONG_QUERY!r})
    return fetch(self, relation, query)
DuckDBEngine._fetch = slow
sys.exit(cli.main(sys.argv[2:]))
"""


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_signal_inside_one_long_duckdb_query(sig: signal.Signals, code: int, tmp_path: Path) -> None:
    """issue 27: a signal inside one long DuckDB query (before anything is written) interrupts it at once: 130/143
    and the one line, the folder untouched. A run that waits for the query's end is killed by the time-out."""
    pl.DataFrame({"id": list(range(12)), "sex": ["F", "M"] * 6}).write_parquet(tmp_path / "t.parquet")
    (tmp_path / "job.toml").write_text(
        'input = "t.parquet"\noutput = "out/anon.parquet"\nk = 2\nengine = "duckdb"\ninsensitive = "id"\n'
        '[qids.sex]\nhierarchy = "suppress"\n'
    )
    (tmp_path / "driver.py").write_text(LONG_DRIVER)
    marker = tmp_path / "started"
    before = snapshot(tmp_path)
    args = [sys.executable, str(tmp_path / "driver.py"), str(marker), "anonymize", str(tmp_path / "job.toml")]
    run = _signalled(args, tmp_path, sig, marker.exists, after=0.3, wait=30)
    assert run.ready and run.code == code, run.stderr
    assert run.stderr.splitlines() == ["polars-anon: interrupted; nothing was written"] and run.stdout == ""
    assert run.seconds < 10  # interrupted, not run to its end
    marker.unlink()
    assert snapshot(tmp_path) == before


@contextmanager
def _sigint_raises() -> Iterator[None]:
    """Python's own SIGINT handler, unblocked, as in a user's interpreter (a pytest-xdist worker ignores SIGINT)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _long_query(engine: Any) -> pl.DataFrame:
    """LONG_QUERY as the engine runs a query, a SIGINT 0.3 s in; bounded by a watchdog interrupting it at 20 s."""
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
    watchdog = threading.Timer(20, engine.con.interrupt)
    watchdog.start()
    try:
        return engine.to_polars(engine.con.sql(LONG_QUERY))
    finally:
        watchdog.cancel()


def test_sink_parquet_on_duckdb_raises_keyboard_interrupt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 27: from Python, Ctrl-C inside one long DuckDB query of the write is KeyboardInterrupt at once (not
    DuckDB's error, not at the query's end); nothing written, handlers and wakeup fd as before."""
    import polars_anon as pa
    from polars_anon.engines.duckdb import DuckDBEngine

    write = DuckDBEngine.write

    def slow(self: DuckDBEngine, *args: Any, **kwargs: Any) -> Any:
        _long_query(self)
        return write(self, *args, **kwargs)

    table = pl.DataFrame({"sex": ["F", "M"] * 3})
    res = pa.anonymize(table, hierarchies={"sex": pa.Hierarchy.suppression(["F", "M"])}, k=3, engine="duckdb")
    monkeypatch.setattr(DuckDBEngine, "write", slow)
    with _sigint_raises():
        start = time.monotonic()
        with unchanged(tmp_path), pytest.raises(KeyboardInterrupt, match="interrupted by SIGINT; nothing was written"):
            res.sink_parquet(tmp_path / "t.parquet")
        assert time.monotonic() - start < 10
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.set_wakeup_fd(-1) == -1  # none was set before, none is left


def test_duckdb_query_outside_any_output_and_off_the_main_thread() -> None:
    """Python's default handler: KeyboardInterrupt at once. On another thread nothing is installed (the wakeup fd
    stays the caller's) and queries run as before."""
    from polars_anon.engines.duckdb import DuckDBEngine

    engine = DuckDBEngine.own()
    with _sigint_raises():
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            _long_query(engine)
        assert time.monotonic() - start < 10
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    signal.set_wakeup_fd(write_fd)
    try:
        seen: list[Any] = []
        thread = threading.Thread(target=lambda: seen.append(engine.to_polars(engine.con.sql("SELECT 42 AS x"))))
        thread.start()
        thread.join(30)
        assert seen[0].item() == 42
    finally:
        assert signal.set_wakeup_fd(-1) == write_fd
        os.close(read_fd)
        os.close(write_fd)


def test_an_engine_error_for_the_signal_is_keyboard_interrupt() -> None:
    """An engine that runs the handler itself while it waits and raises its own error instead (DuckDB's client:
    "Query interrupted"): KeyboardInterrupt leaves the block; an error without a signal stays what it is."""
    from polars_anon.interrupts import interruptible

    def engine_call() -> None:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler raises here, inside the "engine"
        except KeyboardInterrupt:
            raise RuntimeError("Query interrupted") from None

    calls: list[int] = []
    with _sigint_raises():
        with pytest.raises(KeyboardInterrupt), interruptible(lambda: calls.append(1)):
            engine_call()
        with pytest.raises(RuntimeError, match="a real error"), interruptible(lambda: calls.append(1)):
            raise RuntimeError("a real error")
    assert calls == [1]  # the engine was asked to stop once, for the one signal


def test_signal_on_spark_is_one_line(tmp_path: Path) -> None:
    """issue 27: SIGINT inside one long Spark job: exit 130 and the one line at once; no pyspark traceback, no JVM
    log on stderr. (The driver waits for the JVM in a socket read, which a signal interrupts: no watcher needed.) The
    JVM's log, in the process's temporary folder while it ran, is removed when it exits. The long job sums
    ``id % 2``: it summed ``id * id``, which overflows (ANSI) after some 3 million ids, so under load the job failed
    before the signal came (exit 1; seen once, on four test workers)."""
    pytest.importorskip("pyspark")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("needs a Java runtime for pyspark")
    pl.DataFrame({"id": list(range(12)), "sex": ["F", "M"] * 6}).write_parquet(tmp_path / "t.parquet")
    (tmp_path / "job.toml").write_text(
        'input = "t.parquet"\noutput = "out/anon.parquet"\nk = 2\nengine = "spark"\ninsensitive = "id"\n'
        '[spark]\nmaster = "local[1]"\n[spark.config]\n"spark.ui.enabled" = false\n'
        f'"spark.driver.extraJavaOptions" = "{SHORT_JVM}"\n[qids.sex]\nhierarchy = "suppress"\n'
    )  # the JVM options of the tests' Spark session: a JVM that starts on less CPU
    driver = tmp_path / "driver.py"
    driver.write_text(
        "import sys\nfrom pathlib import Path\nfrom polars_anon import cli\nfrom polars_anon.engines import spark\n"
        "read = spark.SparkEngine.read_parquet\n"
        "def slow(self, path):  # the session is up: mark it (the JVM's pid), then a long Spark job\n"
        "    jvm = self.spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()\n"
        "    Path(sys.argv[1]).write_text(str(jvm))\n"
        "    self.spark.range(0, 10**12, 1, 2).selectExpr('sum(id % 2)').collect()\n"  # runs till the signal
        "    return read(self, path)\n"
        "spark.SparkEngine.read_parquet = slow\n"
        "sys.exit(cli.main(sys.argv[2:]))\n"
    )
    marker = tmp_path / "started"
    args = [sys.executable, str(driver), str(marker), "anonymize", str(tmp_path / "job.toml")]
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = {**ENV, "TMPDIR": str(temporary)}
    run = _signalled(args, tmp_path, signal.SIGINT, marker.exists, after=1.0, wait=180, env=env)
    assert run.ready and run.code == 130, run.stderr
    assert run.stderr.splitlines() == ["polars-anon: interrupted; nothing was written"] and run.stdout == ""
    assert not (tmp_path / "out" / "anon.parquet").exists()
    assert [p.name for p in temporary.iterdir() if p.name.startswith("polars_anon_")] == []
    assert _ends(int(marker.read_text()), within=30), "the Spark JVM outlived the interrupted command"


def _ends(pid: int, within: float) -> bool:
    """Whether process `pid` ends (gone, or a zombie nobody has reaped yet) within `within` seconds (mend58: a JVM
    left running after a Ctrl-C; pyspark's JVM exits when its driver's pipe closes)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z":
            return True
        time.sleep(0.2)
    return False


SELF_SIGNAL = """
import os, signal, sys
from polars_anon import cli
name, times, *argv = sys.argv[1:]
real = getattr(cli, name)
def signalled(*args, **kwargs):  # a signal (or several) at this point of the command, then it goes on
    for sig in times.split(","):
        os.kill(os.getpid(), getattr(signal, sig))
    return real(*args, **kwargs)
setattr(cli, name, signalled)
sys.exit(cli.main(argv))
"""


def _self_signalled(tmp_path: Path, at: str, signals: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """Run the command with `signals` (``"SIGINT,SIGINT"``) sent by the command to itself when it calls ``cli.<at>``:
    at an exact point of its run, with no timing."""
    driver = tmp_path / "driver.py"
    driver.write_text(SELF_SIGNAL)
    return subprocess.run(
        [sys.executable, str(driver), at, signals, *argv],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_signals_as_in_a_shell,
        check=False,
    )


def _small_job(tmp_path: Path) -> Path:
    pl.DataFrame({"id": list(range(12)), "sex": ["F", "M"] * 6}).write_parquet(tmp_path / "t.parquet")
    job = tmp_path / "job.toml"
    job.write_text(
        'input = "t.parquet"\noutput = "out/anon.parquet"\nk = 2\ninsensitive = "id"\n[qids.sex]\nhierarchy = '
        '"suppress"\n'
    )
    return job


@pytest.mark.parametrize(("sig", "code"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_signal_while_printing_after_the_commit_names_the_outputs(sig: str, code: int, tmp_path: Path) -> None:
    """review20 item 5: the outputs are in place when the report is printed; a signal then says so, naming them
    (it used to say "nothing was written")."""
    _small_job(tmp_path)
    run = _self_signalled(tmp_path, "summary_line", sig, "anonymize", "job.toml")
    written = ["out/anon.parquet", "out/anon.report.json", "out/anon.report.html"]
    assert run.returncode == code, run.stderr
    assert run.stderr.splitlines() == [f"polars-anon: interrupted after the outputs were written: {', '.join(written)}"]
    assert all((tmp_path / p).is_file() for p in written)


def test_signal_after_the_demo_commit_names_its_outputs(tmp_path: Path) -> None:
    """review20 item 5, ``demo``: its four files are named (it used to die of the signal, with no line)."""
    run = _self_signalled(tmp_path, "_explain", "SIGINT", "demo", "--rows", "2000", "--out", "d", "-q")
    names = ["d/voters.parquet", "d/anonymized.parquet", "d/report.json", "d/report.html"]
    assert run.returncode == 130, run.stderr
    assert run.stderr.splitlines()[-1] == f"polars-anon: interrupted after the outputs were written: {', '.join(names)}"
    assert "Traceback" not in run.stderr and all((tmp_path / p).is_file() for p in names)


@pytest.mark.parametrize(("sig", "code"), [("SIGINT", 130), ("SIGTERM", 143), ("SIGINT,SIGINT", 130)])
def test_signal_in_a_command_without_outputs_is_one_line(sig: str, code: int, tmp_path: Path) -> None:
    """review20 item 9: ``check`` reads outside any output set: a signal (a second one too) is one line and 130/143
    (it was two chained tracebacks; SIGTERM killed it without a line)."""
    _small_job(tmp_path)
    run = _self_signalled(tmp_path, "k_summary", sig, "check", "t.parquet", "--qids", "sex", "--k", "2")
    assert run.returncode == code, run.stderr
    assert run.stderr.splitlines() == ["polars-anon: interrupted; nothing was written"] and run.stdout == ""


def test_a_closed_pipe_is_no_traceback(tmp_path: Path) -> None:
    """review20 item 10: ``anonymize job.toml | head -1``: the reader gone, the run ends as a Unix tool does on
    SIGPIPE (141, no message) and its outputs stay committed."""
    job = _small_job(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "polars_anon.cli", "anonymize", str(job)],
        cwd=tmp_path,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_signals_as_in_a_shell,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader goes before the report is printed
    stderr = proc.stderr.read()
    assert proc.wait(timeout=120) == 141, stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr
    assert (tmp_path / "out" / "anon.parquet").is_file()


def test_a_signal_the_command_was_started_ignoring_stays_ignored() -> None:
    """review22: main's handlers replaced an inherited SIG_IGN, so ``polars-anon ... &`` from a script (a background
    job ignores SIGINT) died on a Ctrl-C meant for the script's foreground command; SIGTERM is still handled."""
    from polars_anon.cli import _Signals

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN), signal.getsignal(signal.SIGTERM)
    try:
        signals = _Signals()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) == signals.on_signal
        signals.restore()
        assert signal.getsignal(signal.SIGTERM) == previous[1]
        with Outputs():  # an output set's handlers alike (one place: interrupts.install_handler)
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) not in (previous[1], signal.SIG_IGN)
        assert signal.getsignal(signal.SIGTERM) == previous[1]
    finally:
        signal.signal(signal.SIGINT, previous[0])
        signal.signal(signal.SIGTERM, previous[1])


# a sitecustomize that sends the signal from inside the package's import (when it first imports its metrics: after
# its first line, before main runs) instead of a hand on the keyboard; and the console script as pip writes it
_SIGNAL_ON_IMPORT = """
import os, signal, sys
class SignalOnImport:
    def find_spec(self, name, path, target=None):
        if name == "polars_anon.metrics":
            os.kill(os.getpid(), signal.{sig})
        return None
sys.meta_path.insert(0, SignalOnImport())
"""
_CONSOLE_SCRIPT = "import sys\nfrom polars_anon.cli import main\nsys.exit(main())\n"


def _started_beside_sitecustomize(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Python run with `args` in `tmp_path`, whose sitecustomize.py it imports first (the package from this checkout),
    its signals as a shell starts a command; its output captured. No bytecode is written: the tests list what the
    run left in `tmp_path`, where sitecustomize.py's own ``__pycache__`` would be the only thing."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=tmp_path,
        env={**ENV, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}", "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_signals_as_in_a_shell,
    )


@pytest.mark.parametrize(("sig", "code"), [("SIGINT", 130), ("SIGTERM", 143)])
@pytest.mark.parametrize("started", [["polars-anon"], ["-m", "polars_anon.cli"]], ids=["script", "module"])
def test_a_signal_while_the_command_line_imports_the_package_is_one_line(
    sig: str, code: int, started: list[str], tmp_path: Path
) -> None:
    """mend17: the command's handlers are installed when main runs; a signal while Python imported the package (the
    first second of every run) ended in a KeyboardInterrupt traceback from inside an import (SIGINT) or killed the
    process without a line (SIGTERM). The package's first line installs the command line's own now."""
    (tmp_path / "sitecustomize.py").write_text(_SIGNAL_ON_IMPORT.format(sig=sig))
    (tmp_path / "polars-anon").write_text(_CONSOLE_SCRIPT)
    run = _started_beside_sitecustomize([*started, "check", "t.parquet", "--qids", "sex", "--k", "2"], tmp_path)
    assert run.returncode == code, run.stderr
    assert run.stderr.splitlines() == ["polars-anon: interrupted; nothing was written"] and run.stdout == ""


# the same signal, its handler run inside code that swallows the handler's exception, as Python's compiler does when
# the signal arrives while it compiles one of the package's modules (hunt41: 1 run in 36 at load 7)
_SIGNAL_SWALLOWED_ON_IMPORT = """
import os, signal, sys, time
class SignalSwallowedOnImport:
    def find_spec(self, name, path, target=None):
        if name == "polars_anon.metrics":
            try:
                os.kill(os.getpid(), signal.{sig})
                time.sleep(0.01)  # the handler runs here, at the latest
            except BaseException:
                pass
        return None
sys.meta_path.insert(0, SignalSwallowedOnImport())
"""


@pytest.mark.parametrize(("sig", "code"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_at_start_up_ends_the_process_even_where_its_exception_is_swallowed(
    sig: str, code: int, tmp_path: Path
) -> None:
    """mend24: the start-up handler raised SystemExit; raised inside the compiler it was lost, the line printed, the
    signals left ignored, and the job wrote its outputs and exited 0. It ends the process at once now."""
    pl.DataFrame({"id": list(range(12)), "sex": ["F", "M"] * 6}).write_parquet(tmp_path / "t.parquet")
    (tmp_path / "job.toml").write_text(
        'input = "t.parquet"\noutput = "out/anon.parquet"\nk = 2\ninsensitive = "id"\n'
        '[qids.sex]\nhierarchy = "suppress"\n'
    )
    (tmp_path / "sitecustomize.py").write_text(_SIGNAL_SWALLOWED_ON_IMPORT.format(sig=sig))
    run = _started_beside_sitecustomize(["-m", "polars_anon.cli", "anonymize", "job.toml"], tmp_path)
    assert run.returncode == code, run.stderr
    assert run.stderr.splitlines() == ["polars-anon: interrupted; nothing was written"] and run.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job.toml", "sitecustomize.py", "t.parquet"]


def test_importing_the_library_changes_no_signal_handler() -> None:
    """A program importing polars_anon keeps its handlers: only the command line installs its own at the start."""
    code = (
        "import signal; before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM); "
        "import polars_anon; assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before"
    )
    subprocess.run([sys.executable, "-c", code], env=ENV, check=True, timeout=120, preexec_fn=_signals_as_in_a_shell)


def test_a_new_spark_context_keeps_the_sigint_handler_in_place() -> None:
    """hunt48 #5: pyspark's SparkContext installs its own SIGINT handler over an output set's; a Ctrl-C while Spark
    streamed a result to Arrow then ended in 170+ lines of Py4JJavaError, exit 1 (2 runs of 4). Starting a session
    puts back the handler that was in place."""
    from polars_anon.engines import spark

    class Builder:
        def getOrCreate(self) -> str:  # what SparkContext._do_init does on the main thread
            signal.signal(signal.SIGINT, lambda signum, frame: None)
            return "session"

    def ours(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, ours)
    try:
        assert spark._started(Builder()) == "session"
        assert signal.getsignal(signal.SIGINT) is ours
    finally:
        signal.signal(signal.SIGINT, previous)
