"""benchmarks/dp_bench.py's ARX driver, benchmarks/peers/ArxSafePub.java: it compiles against ARX and releases a
table worked by hand (when javac and ARX_CP, the classpath of benchmarks/peers/build_arx.sh, are there)."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.benchmarks import BENCH


@pytest.mark.skipif(shutil.which("javac") is None, reason="needs javac (Java 17) to compile the ARX driver")
@pytest.mark.skipif(not os.environ.get("ARX_CP"), reason="needs ARX_CP, the classpath of benchmarks/peers/build_arx.sh")
def test_arx_safepub_driver_suppresses_a_table_smaller_than_its_k(tmp_path: Path) -> None:
    """Six rows, ε = ln 2 + 0.1 with 0.1 for the search: ARX's k and β come from ε' = ln 2 and δ = 1e-6.

    By hand: β = 1 - e^-ε' = 1/2 and γ = (e^ε' - 1 + β) / e^ε' = 3/4. ARX's δ(k) is the largest, over
    n >= ceil(k/γ - 1), of P[Binomial(n, β) > floor(γ n)]; for k = 6 that takes n = 7: P[X >= 6] = 8/128 = 0.0625,
    and a smaller k takes the largest over more n, so δ(k) >= 0.0625 > δ for every k <= 6: k >= 7. No class of
    six rows reaches it, so whatever the sample and the search, every row is suppressed (suppression limit 1):
    six outliers, every qid "*", and the column that is not a qid is published as "*" too.
    """
    cp = os.environ["ARX_CP"]
    subprocess.run(["javac", "-d", str(tmp_path), "-cp", cp, str(BENCH / "peers" / "ArxSafePub.java")], check=True)
    (tmp_path / "d.csv").write_text("a;b;c\n1;x;p\n2;x;q\n3;y;p\n4;y;q\n1;y;p\n2;y;q\n")
    (tmp_path / "ha.csv").write_text("1;1-2;*\n2;1-2;*\n3;3-4;*\n4;3-4;*\n")
    (tmp_path / "hb.csv").write_text("x;*\ny;*\n")
    epsilon = math.log(2) + 0.1
    args = ["d.csv", "o.csv", repr(epsilon), "1e-6", "0.1", "10", "a=ha.csv", "b=hb.csv"]
    java = ["java", "-cp", f"{tmp_path}{os.pathsep}{cp}", "ArxSafePub"]
    done = subprocess.run([*java, *args], cwd=tmp_path, capture_output=True, text=True, check=True)
    facts = json.loads(done.stdout.splitlines()[-1])
    assert facts["k"] >= 7
    assert facts["beta"] == pytest.approx(0.5, abs=1e-12)
    assert (facts["rows"], facts["outliers"]) == (6, 6)
    assert set(facts["levels"]) == {"a", "b"}
    assert (tmp_path / "o.csv").read_text().split() == ["a;b;c"] + ["*;*;*"] * 6


@pytest.mark.skipif(shutil.which("javac") is None, reason="needs javac (Java 17) to compile the ARX driver")
@pytest.mark.skipif(not os.environ.get("ARX_CP"), reason="needs ARX_CP, the classpath of benchmarks/peers/build_arx.sh")
def test_arx_safepub_driver_refuses_a_search_budget_above_epsilon(tmp_path: Path) -> None:
    cp = os.environ["ARX_CP"]
    subprocess.run(["javac", "-d", str(tmp_path), "-cp", cp, str(BENCH / "peers" / "ArxSafePub.java")], check=True)
    (tmp_path / "d.csv").write_text("a\n1\n")
    (tmp_path / "ha.csv").write_text("1;*\n")
    java = ["java", "-cp", f"{tmp_path}{os.pathsep}{cp}", "ArxSafePub"]
    args = ["d.csv", "o.csv", "1", "1e-6", "1.5", "10", "a=ha.csv"]
    done = subprocess.run([*java, *args], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert "search-budget must be a number in (0.0, 1.0), got '1.5'" in done.stderr
    assert not (tmp_path / "o.csv").exists()
