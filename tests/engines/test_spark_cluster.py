"""A real Spark cluster on this machine (issue 32): a standalone master and a worker started by the test, a job run
by the command line with ``--master spark://...`` on ``file://`` URIs, its two executors in their own JVMs running
greedy's blocks (polars_anon's code in Spark tasks, after the executor check), the rows compared with Polars'.

Skips without pyspark or Java. One cluster per module, a 12-row table: the cost is the JVMs' start-up, so one worker
JVM with two cores starts both executors (one core each) instead of two worker JVMs with one core each."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

import polars_anon as pa
from polars_anon import cli

REPO = Path(__file__).resolve().parents[2]
JOB = """input = "{input}"
output = "{output}"
k = 2
insensitive = "id"
method = "greedy"
{extra}
[qids.age]
hierarchy = {{intervals = [5, 10], bottom = 30, top = 40}}
[qids.sex]
hierarchy = "suppress"
"""

CLUSTER = """engine = "spark"
driver_tuples = 1
[spark]
master = "{master}"
[spark.config]
"spark.executor.memory" = "512m"
"spark.executor.cores" = 1
"spark.cores.max" = 2
"spark.sql.shuffle.partitions" = 2
"spark.ui.enabled" = false
"spark.pyspark.python" = "{python}"
"spark.executorEnv.PYTHONPATH" = "{repo}"
"spark.driver.extraJavaOptions" = "{quick}"
"spark.executor.extraJavaOptions" = "{quick}"
"""
QUICK = (
    "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xss4m -XX:MetaspaceSize=256m "
    "-XX:+UnlockDiagnosticVMOptions -XX:-BytecodeVerificationRemote"
)
"""JVM options for the test's five short-lived JVMs (master, worker, driver, two executors): the C1 compiler only and
one GC thread; no full collection for the class metadata's growth (a JVM's first threshold is ~21 MB, the driver loads
~20,000 classes, ~120 MB: JFR counted 4 full collections in the driver and 6 in an executor, all "Metadata GC
Threshold"); and the classpath's bytecode (Spark's own jars) not verified at load. Less CPU spent starting them and
loading classes, the cluster's and the job's behaviour the same (a user's JVMs verify and grow as they do)."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A standalone master and one worker (two cores, 1 GB: two executors of one core, 512 MB) on 127.0.0.1; its
    master URL and the worker's folder (one subfolder per application, in it one per executor)."""
    pyspark = pytest.importorskip("pyspark", reason='needs pyspark (pip install -e ".[spark]")')
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("needs a Java 17+ runtime for pyspark (no java on PATH, no JAVA_HOME)")
    home = Path(pyspark.__file__).parent
    folder = tmp_path_factory.mktemp("spark_cluster")
    port = _free_port()
    master = f"spark://127.0.0.1:{port}"
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(folder),
        "SPARK_DAEMON_JAVA_OPTS": QUICK,
        "SPARK_DAEMON_MEMORY": "256m",
    }
    settings = folder / "spark.conf"
    settings.write_text("spark.master.rest.enabled false\nspark.worker.cleanup.enabled false\n")
    common = ["--host", "127.0.0.1", "--properties-file", str(settings)]
    commands = [
        ["org.apache.spark.deploy.master.Master", "--port", str(port), "--webui-port", str(_free_port()), *common],
        [
            "org.apache.spark.deploy.worker.Worker",
            master,
            "--cores",
            "2",
            "--memory",
            "1g",
            "--webui-port",
            str(_free_port()),
            "--work-dir",
            str(folder / "work"),
            *common,
        ],
    ]
    started: list[subprocess.Popen[bytes]] = []
    logs = [folder / name for name in ("master.log", "worker.log")]
    try:
        for command, log in zip(commands, logs):
            with log.open("wb") as out:
                started.append(
                    subprocess.Popen([str(home / "bin" / "spark-class"), *command], env=env, stdout=out, stderr=out)
                )
        deadline = time.monotonic() + 180
        while "Registering worker" not in logs[0].read_text(errors="replace"):
            if time.monotonic() > deadline or any(p.poll() is not None for p in started):
                tails = {log.name: log.read_text(errors="replace")[-600:] for log in logs}
                pytest.fail(f"the test cluster did not start: {tails}")
            time.sleep(0.2)
        yield master, folder / "work"
    finally:
        for process in started:
            process.terminate()
        for process in started:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def test_a_job_on_a_standalone_cluster_publishes_the_rows_of_polars(cluster: tuple[str, Path], tmp_path: Path) -> None:
    master, work = cluster
    people = pl.DataFrame({"id": list(range(12)), "age": [31, 33, 38, 36, 31, 33] * 2, "sex": ["F", "M"] * 6})
    people.write_parquet(tmp_path / "people.parquet")
    reference = tmp_path / "polars.toml"
    reference.write_text(JOB.format(input="people.parquet", output="polars/anon.parquet", extra=""))
    assert cli.main(["anonymize", str(reference), "-q"]) == 0
    expected = pl.read_parquet(tmp_path / "polars" / "anon.parquet")  # in input order, as every engine publishes

    uri = f"file://{tmp_path}"
    extra = CLUSTER.format(master=master, python=sys.executable, repo=REPO, quick=QUICK)
    job = tmp_path / "cluster.toml"
    job.write_text(JOB.format(input=f"{uri}/people.parquet", output=f"{uri}/cluster/anon.parquet", extra=extra))
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "polars_anon.cli", "anonymize", str(job), "-q"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["engine"] == "spark" and report["details"]["distributed"]["driver_tuples"] == 1  # greedy's blocks
    assert report["output"] == f"{uri}/cluster/anon.parquet"
    assert pl.read_parquet(tmp_path / "cluster" / "anon.parquet").equals(expected)
    assert sorted(p.name for p in (tmp_path / "cluster").iterdir()) == [
        "anon.parquet",
        "anon.report.html",
        "anon.report.json",
    ]
    # the job's executors, each in its own JVM: two at a time (one core each); under load the master may replace one
    # that missed its heartbeats, which leaves another folder (mend19 saw 4 once), so at least two
    assert len(list(work.glob("app-*/*/stderr"))) >= 2


def test_a_bad_spark_config_value_is_one_line() -> None:
    """``[spark.config]`` with a value Spark rejects: one line naming the setting (was: a JVM stack trace at the first
    query). A stand-in session raising Spark's error: a real one would be the test worker's shared session."""
    from types import SimpleNamespace

    from polars_anon.engines.spark import check_config

    spark_error = (
        "Error while instantiating 'org.apache.spark.sql.internal.SessionStateBuilder':\nCaused by: "
        "org.apache.spark.SparkIllegalArgumentException: [INVALID_CONF_VALUE.TYPE_MISMATCH] The value 'abc' in the "
        "config \"spark.sql.shuffle.partitions\" is invalid. It should be a/an 'int' value. SQLSTATE: 22022\n\tat ..."
    )

    def fails(key: str) -> str:
        raise RuntimeError(spark_error)

    with pytest.raises(pa.InvalidParameterError) as info:
        check_config(SimpleNamespace(conf=SimpleNamespace(get=fails)))
    assert str(info.value) == (
        "Spark config: [INVALID_CONF_VALUE.TYPE_MISMATCH] The value 'abc' in the config "
        "\"spark.sql.shuffle.partitions\" is invalid. It should be a/an 'int' value."
    )
