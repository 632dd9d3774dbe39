"""The encode entry points: lf.anon.encode / df.anon.encode, `polars-anon encode`, and the job's encode key."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import polars as pl
import pytest

from polars_anon.cli import main
from polars_anon.errors import InvalidParameterError
from polars_anon.job import Job, encoding_path, run_job
from tests.examples import ANIMAL_HIERARCHIES, TABLE_I, TABLE_IB

RACE_CSV = "\n".join(
    f"{leaf};{mid};mammals"
    for mid, leaves in {
        "felidae": ["cat", "lion", "tiger"],
        "canine": ["dog", "wolf"],
        "cetaceans": ["dolphin", "whale"],
    }.items()
    for leaf in leaves
)


def test_namespace_matches_function():
    want = [1 / 3, 2 / 3, 1.0]
    lazy = TABLE_IB.lazy().anon.encode(ANIMAL_HIERARCHIES, original=TABLE_I).collect()
    eager = TABLE_IB.anon.encode(ANIMAL_HIERARCHIES, "proportional", original=TABLE_I)
    assert lazy.equals(eager)
    assert eager.select("gender_M", "gender_F", "gender_*").row(0) == pytest.approx(want)
    assert TABLE_IB.anon.encode(ANIMAL_HIERARCHIES, "oneclass")["race_cetaceans"].to_list() == [0, 0, 0, 1, 1, 1]


@pytest.fixture
def files(tmp_path):
    TABLE_I.write_parquet(tmp_path / "orig.parquet")
    TABLE_IB.write_parquet(tmp_path / "pub.parquet")
    (tmp_path / "race.csv").write_text(RACE_CSV + "\n")
    return tmp_path


def test_cli_encode_writes_table_iii(files, capsys):
    args = [
        "encode",
        str(files / "pub.parquet"),
        "--original",
        str(files / "orig.parquet"),
        "--hierarchy",
        "gender=suppress",
        "--hierarchy",
        f"race={files / 'race.csv'}",
    ]
    assert main(args) == 0
    out = pl.read_parquet(files / "pub.proportional.parquet")
    assert json.loads(capsys.readouterr().out)["columns"] == 15
    assert out.select("race_felidae", "race_canine", "race_mammals").row(0) == pytest.approx([2 / 3, 1 / 3, 1])
    assert main(args) == 2  # exists: refused, file unchanged
    assert "exists" in capsys.readouterr().err
    assert pl.read_parquet(files / "pub.proportional.parquet").equals(out)


def test_cli_encode_errors(files, capsys):
    assert main(["encode", str(files / "pub.parquet"), "--hierarchy", "gender"]) == 2
    assert "expected NAME=SPEC" in capsys.readouterr().err
    assert main(["encode", str(files / "pub.parquet")]) == 2
    assert "name the hierarchies" in capsys.readouterr().err
    assert main(["encode", str(files / "pub.parquet"), "--hierarchy", "gender=suppress", "--encoding", "x"]) == 2
    assert "encoding must be one of" in capsys.readouterr().err
    args = ["encode", str(files / "pub.parquet"), "--hierarchy", f"race={files / 'race.csv'}"]
    assert main(args) == 2  # proportional without --original
    assert "needs the original values: pass --original FILE" in capsys.readouterr().err  # the CLI's flag (review31)
    assert not (files / "pub.proportional.parquet").exists()


def test_job_encode_key_writes_beside_output(files):
    job = Job.from_dict(
        {
            "input": "orig.parquet",
            "output": "out/t.parquet",
            "k": 3,
            "method": "fulldomain",
            "drop": ["id"],
            "encode": ["proportional", "fillParent"],
            "qids": {"gender": {"hierarchy": "suppress"}, "race": {"hierarchy": "race.csv"}},
        },
        files,
    )
    report = run_job(job)
    prop = pl.read_parquet(encoding_path(job.output, "proportional"))
    fill = pl.read_parquet(encoding_path(job.output, "fillparent"))
    assert set(report["encodings"]) == {"proportional", "fillparent"}
    assert json.loads((files / "out" / "t.report.json").read_text())["encodings"] == report["encodings"]
    assert prop.height == fill.height == 6 and prop.columns == fill.columns
    # every level of every attribute sums to 1 [paper 000 §III-B]
    assert prop.select(pl.sum_horizontal("gender_M", "gender_F")).to_series().to_list() == pytest.approx([1.0] * 6)
    with pytest.raises(Exception, match="exists"):
        run_job(job)


def test_job_unknown_encoding_writes_nothing(files):
    with pytest.raises(InvalidParameterError, match="encoding must be one of"):  # refused when the job file is read
        Job.from_dict(
            {
                "input": "orig.parquet",
                "output": "o.parquet",
                "k": 3,
                "encode": ["onehot"],
                "qids": {"gender": {"hierarchy": "suppress"}},
            },
            files,
        )
    assert not (files / "o.parquet").exists()


def test_job_encode_refused_when_rows_were_suppressed(tmp_path):
    TABLE_I.with_columns(pl.Series("x", ["a"] * 5 + ["b"])).write_parquet(tmp_path / "o.parquet")
    job = Job.from_dict(
        {
            "input": "o.parquet",
            "output": "p.parquet",
            "k": 5,
            "max_suppressed": 1,
            "encode": ["proportional"],
            "drop": "id",
            "qids": {"x": {"hierarchy": "suppress"}},
        },
        tmp_path,
    )
    with pytest.raises(InvalidParameterError, match="1 rows are suppressed"):
        run_job(job)
    assert not (tmp_path / "p.parquet").exists()


def test_job_encode_with_suppressed_rows_writes_what_the_guide_says(tmp_path):
    """The encodings guide: after the run, proportional with suppressed rows refuses the whole job (fillparent beside
    it is not written either); fillparent alone, which reads only the published values, is written."""
    TABLE_I.with_columns(pl.Series("x", ["a"] * 5 + ["b"])).write_parquet(tmp_path / "o.parquet")
    raw = {"input": "o.parquet", "k": 5, "max_suppressed": 1, "drop": "id", "qids": {"x": {"hierarchy": "suppress"}}}
    both = Job.from_dict({**raw, "output": "p.parquet", "encode": ["proportional", "fillparent"]}, tmp_path)
    with pytest.raises(InvalidParameterError, match=r"encode \['proportional'\] needs .* 1 rows are suppressed"):
        run_job(both)
    assert not any(tmp_path.glob("p.*"))
    run_job(Job.from_dict({**raw, "output": "q.parquet", "encode": ["fillparent"]}, tmp_path))
    assert (tmp_path / "q.fillparent.parquet").exists() and pl.read_parquet(tmp_path / "q.parquet").height == 5


def test_job_encode_of_null_qids_published_as_roots(tmp_path):
    # null="suppress" publishes a null qid as its hierarchy's root, never as a null: the map's join keeps every row and
    # the row is encoded as the root node (local_suppression publishes nulls: its blanks are encoded as the root too,
    # test_job_encode_of_a_local_suppression_release_equals_the_cli)
    pl.DataFrame({"x": ["a", "a", "b", "b", None, None], "y": [1, 2, 3, 4, 5, 6]}).write_parquet(tmp_path / "i.parquet")
    raw = {
        "input": "i.parquet",
        "k": 2,
        "null": "suppress",
        "insensitive": ["y"],
        "qids": {"x": {"hierarchy": "suppress"}},
    }
    job = Job.from_dict({**raw, "output": "p.parquet", "encode": ["oneclass"]}, tmp_path)
    run_job(job)
    assert pl.read_parquet(tmp_path / "p.parquet")["x"].to_list() == ["a", "a", "b", "b", "*", "*"]
    oneclass = pl.read_parquet(encoding_path(job.output, "oneclass"))
    assert oneclass.columns == ["x_a", "x_b", "x_*", "y"]
    assert oneclass.rows() == [(1, 0, 0, 1), (1, 0, 0, 2), (0, 1, 0, 3), (0, 1, 0, 4), (0, 0, 1, 5), (0, 0, 1, 6)]
    job = Job.from_dict({**raw, "output": "q.parquet", "encode": ["proportional"]}, tmp_path)
    with pytest.raises(InvalidParameterError, match="2 rows hold nulls in a qid"):  # proportional reads the originals
        run_job(job)
    assert not (tmp_path / "q.parquet").exists()


def test_the_encodings_reading_originals_are_flagged_and_warned_of(tmp_path, capsys):
    """review23 item 1: proportional and statistical read each class's original values, so they show what the
    published node hides: three 23-year-olds published as "20-29" (3-anonymous) encode as age_23 = 1.0 and as '23'
    (paper 000's definition, kept). The report flags each such file and the CLI warns of them in one line."""
    import jsonschema

    import polars_anon as pa
    from polars_anon.report import schema

    h = {"age": pa.Hierarchy.from_dict({"*": {"20-29": ["21", "23", "27"], "30-39": ["31", "35"]}})}
    orig = pl.DataFrame({"age": ["23", "23", "23", "31", "35", "35"]})
    pub = pa.anonymize(orig, hierarchies=h, k=3, method="fulldomain").collect()
    assert pub["age"].to_list()[:3] == ["20-29"] * 3  # only "20-29" is published of these rows
    assert pa.encode(pub, h, "proportional", original=orig).collect()["age_23"].to_list()[:3] == [1.0] * 3
    assert pa.encode(pub, h, "statistical", original=orig, seed=1).collect()["age"].to_list()[:3] == ["23"] * 3
    orig.write_parquet(tmp_path / "orig.parquet")
    h["age"].to_csv(tmp_path / "age.csv")
    (tmp_path / "job.toml").write_text(
        'input = "orig.parquet"\noutput = "out/pub.parquet"\nk = 3\nmethod = "fulldomain"\n'
        'encode = ["proportional", "statistical", "fillparent"]\n[qids.age]\nhierarchy = "age.csv"\n'
    )
    assert main(["anonymize", str(tmp_path / "job.toml"), "--json"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    jsonschema.Draft202012Validator(schema()).validate(report)
    out_dir = tmp_path / "out"
    assert report["encodings"] == {
        "proportional": {"path": str(out_dir / "pub.proportional.parquet"), "reads_originals": True},
        "statistical": {"path": str(out_dir / "pub.statistical.parquet"), "reads_originals": True},
        "fillparent": {"path": str(out_dir / "pub.fillparent.parquet"), "reads_originals": False},
    }
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "outside the k-anonymity guarantee" in warnings[0]
    assert str(out_dir / "pub.proportional.parquet") in warnings[0] and "pub.statistical.parquet" in warnings[0]
    assert "fillparent" not in warnings[0]


def test_a_mask_built_from_generalized_values_is_refused(tmp_path, capsys) -> None:
    """hunt33: ``--hierarchy zip=mask:5`` on a published file made its ``021**`` leaves (setbinary: 3 columns where the
    input's zips give 6); one line, exit 2. With --original it is built from the input; a column of leaves alone
    (nothing generalized) still builds from the published values."""
    zips = ["02134", "02139", "02141", "02177", "10001", "10002"]
    pl.DataFrame({"zip": zips}).write_parquet(tmp_path / "in.parquet")
    pl.DataFrame({"zip": ["021**"] * 4 + ["1000*"] * 2}).write_parquet(tmp_path / "pub.parquet")
    common = ["--hierarchy", "zip=mask:5", "--encoding", "setbinary", "--overwrite", "-q"]
    assert main(["encode", str(tmp_path / "pub.parquet"), *common, "--output", str(tmp_path / "a.parquet")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--hierarchy zip=mask:5 is built from the column's values" in err
    orig = ["--original", str(tmp_path / "in.parquet")]
    assert main(["encode", str(tmp_path / "pub.parquet"), *common, *orig, "--output", str(tmp_path / "b.parquet")]) == 0
    assert pl.read_parquet(tmp_path / "b.parquet").select(pl.col(f"zip_{z}") for z in zips).row(0) == (1, 1, 1, 1, 0, 0)
    assert main(["encode", str(tmp_path / "in.parquet"), *common, "--output", str(tmp_path / "c.parquet")]) == 0


@pytest.mark.parametrize("spec", ["age=suppress", "age=ordered:5,2", "age={ ordered = [2] }"])
def test_any_hierarchy_built_from_generalized_labels_is_refused(tmp_path, capsys, spec: str) -> None:
    """hunt45: ``--hierarchy age=suppress`` (or ``ordered:5,2``) on a release whose ages are bands (``50-54``, no
    ``*``) built its hierarchy from the bands (setbinary: 15 ``age_*`` columns): refused for every kind built from
    values when the report beside the release says the column was generalized, or a cell holds an ordered group's
    label; one line naming the column, exit 2. With --original the hierarchy is built from the input."""
    ages = [18, 19, 52, 54, 71, 73]
    pl.DataFrame({"age": ages}).write_parquet(tmp_path / "in.parquet")
    pl.DataFrame({"age": ["15-19", "15-19", "50-54", "50-54", "70-74", "70-74"]}).write_parquet(
        tmp_path / "pub.parquet"
    )
    report = {"generalization": {"age": {"level": 1, "unchanged": 0.0, "root": 0.0}}}
    (tmp_path / "pub.report.json").write_text(json.dumps(report))
    pl.DataFrame({"age": ["[18..19]"] * 2 + ["[52..73]"] * 4}).write_parquet(tmp_path / "groups.parquet")
    common = ["--hierarchy", spec, "--encoding", "setbinary", "--overwrite", "-q"]
    for name in ("pub", "groups"):
        assert (
            main(["encode", str(tmp_path / f"{name}.parquet"), *common, "--output", str(tmp_path / "a.parquet")]) == 2
        )
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"--hierarchy {spec} is built from the column's values" in err
        assert "published column 'age' holds generalized labels" in err and "--original" in err
    orig = ["--original", str(tmp_path / "in.parquet")]  # built from the input: the bands are no nodes of it
    assert main(["encode", str(tmp_path / "pub.parquet"), *common, *orig, "--output", str(tmp_path / "b.parquet")]) == 2
    assert "3 distinct values are not nodes of its hierarchy" in capsys.readouterr().err
    assert main(["encode", str(tmp_path / "in.parquet"), *common, "--output", str(tmp_path / "c.parquet")]) == 0


CITY_AGE = {"city": ["Oslo"] * 4 + ["Bergen"] * 3 + ["Molde"], "age": [30, 9, 30, 9, 41, 41, 10, 10], "n": range(8)}


def _local_suppression_job(tmp_path, rows, qids_and_encode: str):
    """A local-suppression job (k=2, ``n`` insensitive) over `rows` written as in.parquet; its TOML ends with
    `qids_and_encode`. Returns the job file."""
    pl.DataFrame(rows).write_parquet(tmp_path / "in.parquet")
    job = tmp_path / "job.toml"
    job.write_text(
        'input = "in.parquet"\noutput = "out.parquet"\nk = 2\nmethod = "local_suppression"\ninsensitive = ["n"]\n'
        + qids_and_encode
    )
    return job


def test_cli_encode_of_a_local_suppression_release_reads_blanks_as_roots(tmp_path, capsys):
    """mend46: ``encode --job`` on a local-suppression release refused its blanks ('has null values; ... anonymize
    with null='suppress'', advice that does not apply). A blank is a suppressed cell, encoded as its qid's root (as
    ``metrics --job`` reads it), and a qid the job declares without a hierarchy as suppression only (fails before:
    exit 2)."""
    rows = {"city": ["Oslo"] * 4 + ["Bergen"] * 3 + ["Molde"], "sex": ["F", "M"] * 4, "n": list(range(8))}
    job = _local_suppression_job(tmp_path, rows, "qids = { city = {}, sex = {} }\n")
    assert main(["anonymize", str(job), "--quiet"]) == 0
    published = pl.read_parquet(tmp_path / "out.parquet")
    blank = published["city"].is_null() | published["sex"].is_null()
    assert blank.any()
    out = tmp_path / "e.parquet"
    argv = ["encode", str(tmp_path / "out.parquet"), "--job", str(job), "--output", str(out), "--quiet"]
    assert main([*argv, "--encoding", "oneclass"]) == 0, capsys.readouterr().err
    encoded = pl.read_parquet(out)
    for q in ("city", "sex"):
        roots = encoded[f"{q}_*"].cast(pl.Boolean)
        assert roots.equals(published[q].is_null().alias(f"{q}_*"))  # a blank, and only a blank, is the root
    kept = published.filter(~blank)
    assert all(encoded.filter(~blank)[f"city_{c}"][i] == 1 for i, c in enumerate(kept["city"]))
    assert main([*argv, "--encoding", "proportional", "--original", str(tmp_path / "in.parquet"), "--overwrite"]) == 0
    assert pl.read_parquet(out).height == 8


@pytest.mark.parametrize("encoding", ["oneclass", "fillparent", "proportional"])
def test_job_encode_of_a_local_suppression_release_equals_the_cli(tmp_path, capsys, encoding):
    """mend47: a job file with ``method = "local_suppression"`` and ``encode`` was refused when read, while
    ``polars-anon encode OUTPUT --job JOB`` encoded the same release (a blank as its qid's root). The job's encode
    step now writes the encodings, equal to the CLI's on the same release (fails before: the job is refused)."""
    qids = "qids = { city = {}, age = { hierarchy = { intervals = [10] } } }\n"
    job = _local_suppression_job(tmp_path, CITY_AGE, f'encode = ["{encoding}"]\n' + qids)
    assert main(["anonymize", str(job), "--quiet"]) == 0, capsys.readouterr().err
    published = pl.read_parquet(tmp_path / "out.parquet")
    assert (published["city"].is_null() | published["age"].is_null()).any()
    by_job = pl.read_parquet(encoding_path(tmp_path / "out.parquet", encoding))
    argv = ["encode", str(tmp_path / "out.parquet"), "--job", str(job), "--encoding", encoding, "--quiet"]
    original = ["--original", str(tmp_path / "in.parquet")] if encoding == "proportional" else []
    assert main([*argv, *original, "--output", str(tmp_path / "cli.parquet")]) == 0, capsys.readouterr().err
    by_cli = pl.read_parquet(tmp_path / "cli.parquet")
    assert by_job.columns == by_cli.columns and "city_*" in by_job.columns
    assert by_job.equals(by_cli)
    if encoding == "oneclass":  # a blank, and only a blank, is the root
        assert by_job["city_*"].cast(pl.Boolean).equals(published["city"].is_null().alias("city_*"))


def test_a_job_encoding_a_local_suppression_release_reads_the_input_once_for_its_hierarchies(tmp_path, monkeypatch):
    """mend57: with encode and a method that blanks cells, the job built the suppression hierarchy of a qid declared
    without one after the run, in a pass of its own over the input (two passes for the hierarchies' values: the tuple
    pass and that one; fails before). Built from the one tuple pass now, which the road reuses."""
    import polars_anon.job as job_module

    passes: list[str] = []
    for name in ("collect_apart", "count_tuples"):
        real = getattr(job_module, name)
        monkeypatch.setattr(job_module, name, lambda *a, _r=real, _n=name, **kw: passes.append(_n) or _r(*a, **kw))
    qids = "qids = { city = {}, age = { hierarchy = { intervals = [10] } } }\n"
    job = _local_suppression_job(tmp_path, CITY_AGE, 'encode = ["oneclass"]\n' + qids)
    assert main(["anonymize", str(job), "--quiet"]) == 0
    assert passes == ["count_tuples"]
    assert "city_*" in pl.read_parquet(encoding_path(tmp_path / "out.parquet", "oneclass")).columns


SDC_JOB = """input = "in.parquet"
output = "out.parquet"
k = 3
insensitive = ["inc"]
encode = ["oneclass", "proportional"]
[qids.age]
hierarchy = "suppress"
[qids.g]
hierarchy = "suppress"
[sdc]
{seed}
[[sdc.protect]]
step = "noise"
columns = ["age"]
noise = 50
method = "additive"
"""


def test_encode_job_with_sdc_steps_matches_the_jobs_encodings(tmp_path, capsys) -> None:
    """mend52 (review34): the job's encode key encodes its release with hierarchies built from the rows its [sdc]
    steps perturbed; `encode --job` built them from the raw input, so its oneclass had other columns (33 against 65,
    the noised ages). It now applies the steps as the job did (its [sdc] seed) to the values and the original: the
    same files; without a seed the steps cannot be made again, and it refuses in one line."""
    import numpy as np

    rng = np.random.default_rng(0)
    frame = pl.DataFrame({"age": rng.integers(20, 60, 60), "g": rng.choice(["F", "M"], 60), "inc": range(60)})
    frame.write_parquet(tmp_path / "in.parquet")
    job = tmp_path / "job.toml"
    job.write_text(SDC_JOB.format(seed="seed = 7"))
    assert main(["anonymize", str(job), "-q"]) == 0
    for encoding, extra in (("oneclass", []), ("proportional", ["--original", str(tmp_path / "in.parquet")])):
        cli = tmp_path / f"cli_{encoding}.parquet"
        args = ["encode", str(tmp_path / "out.parquet"), "--encoding", encoding, "--job", str(job), "-q"]
        assert main([*args, "--output", str(cli), *extra]) == 0
        written = pl.read_parquet(tmp_path / f"out.{encoding}.parquet")
        assert written.columns == pl.read_parquet(cli).columns and written.equals(pl.read_parquet(cli)), encoding
    capsys.readouterr()
    job.write_text(SDC_JOB.format(seed=""))
    args = ["encode", str(tmp_path / "out.parquet"), "--encoding", "oneclass", "--job", str(job), "-q"]
    assert main([*args, "--output", str(tmp_path / "unseeded.parquet")]) == 2
    err = capsys.readouterr().err
    assert "encode --job: the job's [sdc] protect steps change qids ['age']" in err and "[sdc] seed" in err
    assert err.count("\n") == 1 and not (tmp_path / "unseeded.parquet").exists()


def test_encode_job_seedless_sdc_steps_refused_only_where_read(tmp_path, capsys) -> None:
    """review35 #2: a seedless [sdc] rank swap of a qid was refused by `encode --job` though nothing it rebuilds
    reads the swapped values: a rank swap keeps the column's distinct values (its hierarchy's leaves) and fillparent
    reads no originals. It now encodes as the job did; an encoding that reads the originals row by row is refused."""
    import numpy as np

    rng = np.random.default_rng(0)
    frame = pl.DataFrame({"age": rng.integers(20, 60, 60), "g": rng.choice(["F", "M"], 60), "inc": range(60)})
    frame.write_parquet(tmp_path / "in.parquet")
    job = tmp_path / "job.toml"
    swap = 'step = "rank_swap"\ncolumns = ["age"]\np = 10\n'
    text = SDC_JOB.replace('"oneclass", "proportional"', '"fillparent"').format(seed="")
    job.write_text(text[: text.index('step = "noise"')] + swap)
    assert main(["anonymize", str(job), "-q"]) == 0
    args = ["encode", str(tmp_path / "out.parquet"), "--job", str(job), "-q"]
    cli = tmp_path / "cli.parquet"
    assert main([*args, "--encoding", "fillparent", "--output", str(cli)]) == 0, capsys.readouterr().err
    assert pl.read_parquet(tmp_path / "out.fillparent.parquet").equals(pl.read_parquet(cli))
    capsys.readouterr()
    original = ["--original", str(tmp_path / "in.parquet")]
    assert main([*args, "--encoding", "proportional", *original, "--output", str(tmp_path / "p.parquet")]) == 2
    assert "encode --job: the job's [sdc] protect steps change qids ['age']" in capsys.readouterr().err


@pytest.mark.parametrize(("code", "raised"), [(errno.EACCES, True), (errno.ENAMETOOLONG, False)])
def test_a_layout_folder_the_system_cannot_read_is_not_taken_for_none(
    monkeypatch: pytest.MonkeyPatch, code: int, raised: bool
) -> None:
    """review36: is_layout_folder answered False for any OSError (meant for a name too long to look up), so a
    permission error on a real layout folder read as 'not a layout folder' and the user met a less clear error later:
    only a name too long is no folder (the outputs' check names it); any other error is raised (fails before: False)."""
    from polars_anon.encoded_io import is_layout_folder

    def refused(self: Path) -> bool:
        raise OSError(code, os.strerror(code), str(self))

    monkeypatch.setattr(Path, "is_dir", refused)
    if raised:
        with pytest.raises(PermissionError):
            is_layout_folder("enc")
    else:
        assert is_layout_folder("enc") is False
