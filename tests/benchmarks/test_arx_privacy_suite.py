"""benchmarks/arx_privacy_suite.py: a driver line is matched to its case; its ARX driver,
benchmarks/peers/ArxSuiteCase.java, runs the n-th Adult case of a JUnit test class and judges it as the test does
(on a test class and table worked by hand, when javac and ARX_CP with ARX's test classes are there)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.benchmarks import BENCH, script

suite = script("arx_privacy_suite")


def test_a_driver_line_is_its_case_only_with_the_case_s_expected_value_and_limit() -> None:
    case = suite.Case("KMap[3]", 0.04, "loss", None, [], None, 0.16069456, None)
    assert suite.same_case(case, {"expected": 0.16069456, "limit": 0.04})
    assert not suite.same_case(case, {"expected": 0.17, "limit": 0.04})
    assert not suite.same_case(case, {"expected": 0.16069456, "limit": 0.0})
    assert not suite.same_case(case, {"expected": None, "limit": 0.04})
    infeasible = suite.Case("LDiversity[1]", 0.04, "entropy", True, [], "occupation", None, None)
    assert suite.same_case(infeasible, {"expected": None, "limit": 0.04})
    assert not suite.same_case(infeasible, {"expected": 1.0, "limit": 0.04})


TINY_TEST = """package org.deidentifier.arx.test;

import java.util.Arrays;
import java.util.Collection;

import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.criteria.DistinctLDiversity;
import org.deidentifier.arx.criteria.KAnonymity;
import org.deidentifier.arx.metric.Metric;
import org.junit.runners.Parameterized.Parameters;

public class TestAnonymizationTiny extends AbstractAnonymizationTest {
    @Parameters
    public static Collection<Object[]> cases() {
        return Arrays.asList(new Object[][] {
            { new ARXAnonymizationTestCase(ARXConfiguration.create(0d, Metric.createAECSMetric())
                .addPrivacyModel(new KAnonymity(2)), "s", "./data/other.csv", 9d, new int[] { 0, 0 }, false) },
            { new ARXAnonymizationTestCase(ARXConfiguration.create(0d, Metric.createAECSMetric())
                .addPrivacyModel(new KAnonymity(2)), "s", "./data/adult.csv", 2d, new int[] { 1, 0 }, false) },
            { new ARXAnonymizationTestCase(ARXConfiguration.create(0d, Metric.createAECSMetric())
                .addPrivacyModel(new DistinctLDiversity("s", 2)), "s", "./data/adult.csv", 0d, null, false) },
            { new ARXAnonymizationTestCase(ARXConfiguration.create(0.5d, Metric.createAECSMetric())
                .addPrivacyModel(new KAnonymity(2)), "s", "./data/adult.csv", 3d, new int[] { 2, 0 }, false) },
        });
    }

    public TestAnonymizationTiny(ARXAnonymizationTestCase testCase) {
        super(testCase);
    }
}
"""


def _has_arx_tests(cp: str) -> bool:
    return any((Path(p) / "org/deidentifier/arx/test/AbstractAnonymizationTest.class").exists() for p in cp.split(":"))


@pytest.mark.skipif(shutil.which("javac") is None, reason="needs javac (Java 17) to compile the ARX driver")
@pytest.mark.skipif(
    not _has_arx_tests(os.environ.get("ARX_CP", "")),
    reason="needs ARX_CP, the classpath of benchmarks/peers/build_arx.sh, with ARX's test classes",
)
def test_arx_suite_case_driver_runs_the_nth_adult_case_and_judges_it_as_junit(tmp_path: Path) -> None:
    """A test class of four cases, the first on another file; its "adult.csv" the six rows of ArxLocal's test.

    By hand (a: 1,2 -> 1-2; 3,4 -> 3-4 -> *, b: x,y -> *; rows (1,x) (2,x) (3,y) (4,y) (1,y) (2,y)), with no
    suppression: (0,0) and (0,1) leave single rows, (1,0) gives three classes of 2, so AECS 6/3 = 2.0 at [1, 0]
    (the coarser (2,0), (1,1), (2,1) give 3, 3 and 6). Adult case 0 expects that: a match. Adult case 1 asks
    for k = 7 of six rows: no solution, as the case expects (no transformation). Adult case 2 (limit 0.5)
    expects 3.0 at [2, 0]; with up to 3 rows suppressed (0,0) is still out (6 single rows), (0,1) keeps
    classes of 2 and 2 and suppresses 2 rows (AECS 2 or 3 however ARX counts the suppressed), so the
    optimum is 2.0 again: no match.
    """
    cp = os.environ["ARX_CP"]
    source = tmp_path / "src" / "TestAnonymizationTiny.java"
    source.parent.mkdir()
    source.write_text(TINY_TEST)
    classes = tmp_path / "classes"
    driver = BENCH / "peers" / "ArxSuiteCase.java"
    subprocess.run(["javac", "-d", str(classes), "-cp", cp, str(source), str(driver)], check=True)
    data = tmp_path / "data"
    data.mkdir()
    (data / "adult.csv").write_text("a;b;s\n1;x;z\n2;x;z\n3;y;z\n4;y;z\n1;y;z\n2;y;z\n")
    (data / "adult_hierarchy_a.csv").write_text("1;1-2;*\n2;1-2;*\n3;3-4;*\n4;3-4;*\n")
    (data / "adult_hierarchy_b.csv").write_text("x;*\ny;*\n")
    (data / "adult_hierarchy_s.csv").write_text("z;*\n")  # the sensitive attribute's, as ARX's data folder has
    java = ["java", "-cp", f"{classes}{os.pathsep}{cp}", "ArxSuiteCase", "Tiny"]

    def run(index: int) -> dict:
        done = subprocess.run([*java, str(index)], cwd=tmp_path, capture_output=True, text=True, check=True)
        return json.loads(done.stdout.splitlines()[-1])

    first, none, wrong = run(0), run(1), run(2)
    assert (first["case"], first["limit"], first["loss"], first["expected"]) == ("Tiny[0]", 0.0, 2.0, 2.0)
    assert first["matches_junit"] is True and first["transformation"] == [1, 0]
    assert (none["loss"], none["expected"], none["matches_junit"], none["transformation"]) == (None, None, True, None)
    assert (wrong["limit"], wrong["loss"], wrong["expected"], wrong["matches_junit"]) == (0.5, 2.0, 3.0, False)
    beyond = subprocess.run([*java, "3"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert beyond.returncode == 2
    assert "Tiny lists 3 cases on ./data/adult.csv, no index 3" in beyond.stderr
