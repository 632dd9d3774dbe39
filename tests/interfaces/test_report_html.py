"""The HTML report: written with the table (all or nothing), rendered from the JSON alone, shown by a browser."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_anon as pa
from polars_anon import cli
from polars_anon.job import Job, run_job
from polars_anon.report.page import fmt

QIDS5 = ["sex", "age", "race", "marital-status", "education"]
SECTIONS = ["summary", "published", "privacy", "utility", "lattice", "parameters"]


def _job(tmp_path: Path, adult_dir: Path, extra: str = "") -> Path:
    qids = "\n".join(f'[qids.{q}]\nhierarchy = "{adult_dir}/adult_hierarchy_{q}.csv"' for q in QIDS5)
    job = tmp_path / "job.toml"
    job.write_text(
        f'input = "{adult_dir}/adult.csv"\nseparator = ";"\noutput = "out/adult_k10.parquet"\nk = 10\n'
        f'sensitive = "salary-class"\nmax_suppressed = 100\n{extra}\n{qids}\n'
    )
    return job


@pytest.fixture(scope="module")
def adult_run(tmp_path_factory: pytest.TempPathFactory, adult_dir: Path) -> tuple[Path, dict, str]:
    """A fulldomain job on Adult (5 qids, k=10): its output folder, report JSON and HTML."""
    tmp = tmp_path_factory.mktemp("adult_report")
    run_job(Job.load(_job(tmp, adult_dir)))
    out = tmp / "out"
    return out, json.loads((out / "adult_k10.report.json").read_text()), (out / "adult_k10.report.html").read_text()


def _images(html: str) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', html)]


def test_sections_and_figures_match_the_json(adult_run: tuple[Path, dict, str]) -> None:
    _, report, html = adult_run
    for ident in SECTIONS:
        assert f'<section id="{ident}">' in html
    for key in ("n_rows", "n_classes", "min_class_size", "suppressed"):  # the headline cards show the JSON's figures
        card = re.search(rf'data-figure="{key}"><span>[^<]*</span><b>([^<]*)</b>', html)
        assert card is not None and card.group(1) == fmt(report[key])
    for column in pl.read_csv(Path(report["input"]), separator=";", n_rows=1).columns:
        assert f"<td>{column}</td>" in html
    embedded = re.search(r'<script type="application/json" id="report-json">\n(.*)\n</script>', html, re.DOTALL)
    assert embedded is not None and json.loads(embedded.group(1).replace("<\\/", "</")) == report
    levels = report["details"]["levels"]
    assert f"<b>{', '.join(f'{q} {v}' for q, v in levels.items())}</b>" in html  # the chosen lattice node


def test_every_paper_cited_is_named_once_at_the_end(adult_run: tuple[Path, dict, str]) -> None:
    """The page cites definitions as "paper 001 §4"; its last section names each cited paper once, by authors, title
    and venue (docs/papers.md shows the same table: both are written from PAPERS). Paper 001 by hand."""
    _, _, html = adult_run
    page, papers = html.split('<section id="papers">')
    cited = sorted(set(re.findall(r"paper (\d{3}) §", page)))
    assert "001" in cited  # the metrics' definitions
    named = dict(re.findall(r"<li>paper (\d{3}): ([^<]+)</li>", papers))
    assert sorted(named) == cited and papers.count("<li>") == len(cited)
    assert named["001"] == "Mauger et al., Modeling and Evaluation of k-anonymization Metrics, AAAI PPAI 2020"


def test_plots_are_inline_svg_and_nothing_is_fetched(adult_run: tuple[Path, dict, str]) -> None:
    _, _, html = adult_run
    images = _images(html)
    assert len(images) == 3  # class sizes, loss per qid, lattice neighbours
    for svg in images:
        root = ET.fromstring(svg)
        assert root.tag.endswith("svg") and float(root.get("width", "0").rstrip("pt")) > 100
    assert not re.findall(r'(?:src|href)="(?!data:|#)[^"]*"', html)  # no link, script or image is fetched
    assert "<link" not in html and "@import" not in html


def test_histogram_counts_the_published_and_input_classes(
    adult_run: tuple[Path, dict, str], adult: pl.DataFrame
) -> None:
    out, report, _ = adult_run
    published = pl.read_parquet(out / "adult_k10.parquet").group_by(QIDS5).len()["len"].to_numpy()
    original = adult.group_by(QIDS5).len()["len"].to_numpy()
    for name, sizes in (("published", published), ("input", original)):
        hist = report["class_sizes"][name]
        assert (hist["n_classes"], hist["n_rows"], hist["min"], hist["max"]) == (
            len(sizes),
            sizes.sum(),
            sizes.min(),
            sizes.max(),
        )
        for b in hist["bins"]:  # each bin, counted by hand from the table's own class sizes
            inside = (sizes >= b["low"]) & (sizes <= (b["high"] if b["high"] is not None else np.inf))
            assert (b["classes"], b["rows"]) == (int(inside.sum()), int(sizes[inside].sum()))
    assert [b["low"] for b in report["class_sizes"]["input"]["bins"]] == [
        b["low"] for b in report["class_sizes"]["published"]["bins"]
    ]
    assert 10 in [b["low"] for b in report["class_sizes"]["published"]["bins"]]  # k is a bin edge


def test_generalization_and_neighbours_are_hand_checkable(
    adult_run: tuple[Path, dict, str], adult: pl.DataFrame, adult_hierarchies: dict[str, pa.Hierarchy]
) -> None:
    out, report, _ = adult_run
    published = pl.read_parquet(out / "adult_k10.parquet")
    n, levels = adult.height, report["details"]["levels"]
    for q, g in report["generalization"].items():
        counts = published[q].value_counts().sort(["count", q], descending=[True, False])
        assert g["n_values"] == counts.height and g["top"] == [list(r) for r in counts.head(5).iter_rows()]
        assert g["root"] == pytest.approx((published[q] == "*").sum() / n)
        assert g["level"] == levels[q] and g["unchanged"] == pytest.approx(
            published.height / n if levels[q] == 0 else 0.0
        )
    heights = {q: adult_hierarchies[q].height for q in QIDS5}
    expected = sum(1 for q in QIDS5 for step in (-1, 1) if 0 <= levels[q] + step < heights[q])
    assert len(report["details"]["neighbours"]) == expected
    chosen = np.array([levels[q] for q in QIDS5])
    for nb in report["details"]["neighbours"]:
        diff = np.array([nb["levels"][q] for q in QIDS5]) - chosen
        assert sorted(np.abs(diff)) == [0] * (len(QIDS5) - 1) + [1]
        assert nb["feasible"] == (nb["suppressed"] <= 100)
        assert nb["loss"] >= report["loss"] - 1e-12 or not nb["feasible"]  # the chosen vector is the feasible optimum


def test_report_command_renders_the_same_page(adult_run: tuple[Path, dict, str], tmp_path: Path) -> None:
    out, _, html = adult_run
    target = tmp_path / "again.html"
    assert cli.main(["report", str(out / "adult_k10.report.json"), "--output", str(target)]) == 0
    assert target.read_text() == html  # rendered from the JSON alone, deterministically
    assert cli.main(["report", str(out / "adult_k10.report.json"), "--output", str(target)]) == 2  # exists
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    assert cli.main(["report", str(bad)]) == 2


def test_report_command_never_replaces_the_table_it_describes(
    adult_run: tuple[Path, dict, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``report X.report.json --output <its table> --overwrite`` replaced the verified table with an HTML page
    (hunt48): refused in one line, the table as it was."""
    out, _, _ = adult_run
    table = out / "adult_k10.parquet"
    before = table.read_bytes()
    assert cli.main(["report", str(out / "adult_k10.report.json"), "--output", str(table), "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--output '{table}' names a table or a report (.parquet)" in err
    assert table.read_bytes() == before


def test_report_html_switches(tmp_path: Path, adult_dir: Path) -> None:
    run_job(Job.load(_job(tmp_path, adult_dir, "report_html = false")))
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["adult_k10.parquet", "adult_k10.report.json"]
    df = pl.DataFrame({"age": [31, 33, 38, 36], "sex": ["F", "M", "F", "M"]})
    H = {"age": pa.Hierarchy.intervals(range(30, 40), [5, 10]), "sex": pa.Hierarchy.suppression(["F", "M"])}
    pa.anonymize(df, hierarchies=H, k=2).sink_parquet(tmp_path / "t.parquet", report_html=False)
    assert not (tmp_path / "t.report.html").exists() and (tmp_path / "t.report.json").exists()
    pa.anonymize(df, hierarchies=H, k=2).sink_parquet(tmp_path / "u.parquet")
    assert "<!DOCTYPE html>" in (tmp_path / "u.report.html").read_text()
    with pytest.raises(pa.InvalidParameterError, match="key 'report_html' must be true or false, got 'no'"):
        Job.from_dict({"input": "a", "output": "b", "k": 2, "qids": {"x": {}}, "report_html": "no"})


def test_a_failing_page_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from polars_anon.report import html as html_module

    def boom(report: dict) -> str:
        raise pa.OutputError("cannot render")

    monkeypatch.setattr(html_module, "render_html", boom)
    df = pl.DataFrame({"sex": ["F", "M", "F", "M"]})
    with pytest.raises(pa.OutputError, match="cannot render"):
        pa.anonymize(df, hierarchies={"sex": pa.Hierarchy.suppression(["F", "M"])}, k=2).sink_parquet(
            tmp_path / "t.parquet"
        )
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------- in a real browser
_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]
_PROBE = (
    "<img id=broken alt=broken src=\"data:image/svg+xml;base64,AAAA\"><script>window.addEventListener('load', () => "
    "{ document.body.dataset.images = JSON.stringify(Array.from(document.images, i => [i.alt, "
    "i.complete, i.naturalWidth])); "
    "});</script></body>"
)


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if found is None:
        pytest.skip("needs a Chromium browser (Debian package 'chromium'; .ci/run installs it); none on PATH")
    return found


def _browse(browser: str, page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [browser, *_FLAGS, f"--user-data-dir={profile}", *args, page.as_uri()],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
    except (subprocess.TimeoutExpired, subprocess.CalledProcessError) as exc:
        pytest.skip(f"Chromium could not run headless here: {str(exc)[:200]}")


def test_the_page_renders_in_chromium(adult_run: tuple[Path, dict, str], tmp_path: Path) -> None:
    """Every plot decodes and the page is not blank.

    naturalWidth > 0; a deliberately broken image shows the probe can fail.
    """
    from PIL import Image

    browser = _chromium()
    out, _, html = adult_run
    probe = tmp_path / "probe.html"
    probe.write_text(html.replace("</body>", _PROBE))
    dom = _browse(browser, probe, tmp_path / "profile1", "--dump-dom").stdout
    found = re.search(r'data-images="([^"]*)"', dom)
    assert found is not None, "the load event did not run"
    images = json.loads(found.group(1).replace("&quot;", '"'))
    plots = [i for i in images if i[0] != "broken"]
    assert len(plots) == 3 and all(complete and width > 0 for _, complete, width in plots)
    assert [i[2] for i in images if i[0] == "broken"] == [0]
    shot = tmp_path / "page.png"
    _browse(
        browser, out / "adult_k10.report.html", tmp_path / "profile2", "--window-size=1280,2400", f"--screenshot={shot}"
    )
    pixels = np.asarray(Image.open(shot).convert("L"), dtype=np.float64)
    assert pixels.shape == (2400, 1280)
    assert pixels.std() > 20 and (pixels < 128).mean() > 0.01  # text and plots, not a blank or uniform page


def test_import_polars_anon_does_not_load_the_plotting_library() -> None:
    code = "import sys, polars_anon; print('matplotlib' in sys.modules, 'sklearn' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path(__file__).parents[2]
    )
    assert out.stdout.split() == ["False", "False"]


def test_dp_report_says_the_figures_are_of_the_sample_and_k_is_enforced() -> None:
    """hunt35 F3: with differential privacy ``n_input_rows`` and ``suppressed`` count the sampled rows and ``k`` is
    the k the release enforces (the model's 4 here, 1 asked); the schema said "the requested k" and "rows of the
    input", the CLI "suppressed s of n input rows", the HTML pages "of the input". The figures stay, the words say
    what they are."""
    from polars_anon.report.html import render_html
    from polars_anon.report.notebook import anonymized_html

    df = pl.DataFrame({"g": ["a", "b"] * 100 + ["c"] * 3})
    model = pa.DifferentialPrivacy(1.0, 0.2, transformation={"g": 0}, seed=1)
    result = pa.anonymize(df, hierarchies={"g": pa.Hierarchy.suppression(["a", "b", "c"])}, k=1, privacy=[model])
    published = result.collect()
    rep = result.report
    dp = rep["details"]["differential_privacy"]
    sampled, suppressed = dp["sampled_rows"], rep["suppressed"]
    assert rep["k"] == dp["k"] == model.k == 4 and dp["n_rows"] == 203
    assert rep["n_input_rows"] == sampled == published.height + suppressed and suppressed > 0 and sampled < 203
    summary = cli.terminal_summary(rep, "r.json", None)
    assert f"suppressed {suppressed:,} of {sampled:,} sampled rows (a sample of 203 input rows)" in summary
    page = render_html(rep)
    summary_cards = page.split('id="summary"')[1].split("</section>")[0]
    assert f"of {fmt(sampled)} sampled rows" in summary_cards and "k = 4 enforced" in summary_cards
    assert "of the input" not in summary_cards and "requested" not in summary_cards
    assert f"of {fmt(sampled)} sampled rows were published" in page and "% of the sampled rows).</p>" in page
    assert "Average over the sampled rows of each cell" in page and "over the input rows" not in page
    assert "of the input" not in anonymized_html(rep) and "of the sampled rows" in anonymized_html(rep)
    schema = json.loads((Path(pa.__file__).parent / "report" / "schema.json").read_text())["properties"]
    assert "differential privacy" in schema["k"]["description"]
    assert all("sampled rows" in schema[key]["description"] for key in ("n_input_rows", "suppressed"))
