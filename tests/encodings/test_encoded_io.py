"""Writing encodings to disk: the wide file and the normalized ``classes`` layout (rows + classes)."""

from __future__ import annotations

import json

import polars as pl
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_anon as pa
from polars_anon.cli import main
from polars_anon.encode import REPRESENTATIONS, encode
from polars_anon.encoded_io import CLASS_ID, scan_encoded, write_encoded
from polars_anon.errors import InputError, InvalidParameterError, OutputExistsError
from polars_anon.job import Job, build_hierarchies, run_job
from polars_anon.outputs import ROW_GROUP
from tests.encodings.test_encode_table_iii import TABLE_III
from tests.examples import ANIMAL_HIERARCHIES, GENDER, RACE, TABLE_I, TABLE_I_PARTITION, TABLE_IB, TABLE_III_COLUMNS


def test_classes_layout_holds_table_iii_once_per_class(tmp_path):
    """Paper 000 Table III stored normalized: two classes, rows point at them, the join gives Table III."""
    facts = write_encoded(TABLE_IB, ANIMAL_HIERARCHIES, tmp_path / "enc", original=TABLE_I, layout="classes")
    assert facts["rows"] == 6 and facts["classes"] == 2 and facts["columns"] == 15
    classes = pl.read_parquet(tmp_path / "enc" / "classes.parquet")
    rows = pl.read_parquet(tmp_path / "enc" / "rows.parquet")
    assert classes.columns == [CLASS_ID, *TABLE_III_COLUMNS] and classes.height == 2
    assert rows.columns == ["id", CLASS_ID]
    ids = rows[CLASS_ID].to_list()
    assert ids[0] == ids[1] == ids[2] != ids[3] == ids[4] == ids[5]
    by_id = {r[0]: list(r[1:]) for r in classes.rows()}
    for cid, want in zip(ids, TABLE_III, strict=True):
        assert by_id[cid] == pytest.approx(want, abs=1e-7)
    wide = scan_encoded(tmp_path / "enc").collect()
    assert wide.columns == ["id", *TABLE_III_COLUMNS] and wide["id"].to_list() == TABLE_I["id"].to_list()
    meta = json.loads((tmp_path / "enc" / "encoding.json").read_text())
    assert meta["key"] == [CLASS_ID] and meta["rows"] == 6 and meta["classes"] == 2


@pytest.mark.parametrize("rep", REPRESENTATIONS)
def test_both_layouts_read_back_as_encode(tmp_path, rep):
    want = encode(TABLE_IB, ANIMAL_HIERARCHIES, rep, original=TABLE_I).collect()
    write_encoded(TABLE_IB, ANIMAL_HIERARCHIES, tmp_path / "w.parquet", rep, original=TABLE_I)
    write_encoded(TABLE_IB, ANIMAL_HIERARCHIES, tmp_path / "c", rep, original=TABLE_I, layout="classes")
    assert scan_encoded(tmp_path / "w.parquet").collect().equals(want)
    assert scan_encoded(tmp_path / "c").collect().equals(want)


def test_classes_layout_keyed_by_class_col(tmp_path):
    """With class ids, a class is a class_col value: the original rows need not be aligned."""
    cls = pl.Series("cls", TABLE_I_PARTITION)
    pub, orig = TABLE_IB.with_columns(cls), TABLE_I.with_columns(cls).reverse()
    want = encode(pub, ANIMAL_HIERARCHIES, original=orig, class_col="cls").collect()
    facts = write_encoded(pub, ANIMAL_HIERARCHIES, tmp_path / "c", original=orig, class_col="cls", layout="classes")
    assert facts["classes"] == 2
    assert pl.read_parquet(tmp_path / "c" / "rows.parquet").columns == ["id", "cls"]
    assert pl.read_parquet(tmp_path / "c" / "classes.parquet")["cls"].to_list() == [0, 1]
    assert scan_encoded(tmp_path / "c").collect().equals(want)


def test_classes_layout_of_a_partition_frame(tmp_path):
    part = TABLE_I.with_columns(pl.Series("cls", TABLE_I_PARTITION))
    for rep in ["proportional", "fillparent"]:
        want = encode(part, ANIMAL_HIERARCHIES, rep, class_col="cls").collect()
        write_encoded(part, ANIMAL_HIERARCHIES, tmp_path / rep, rep, class_col="cls", layout="classes")
        assert scan_encoded(tmp_path / rep).collect().equals(want)


published_tables = st.lists(
    st.tuples(st.sampled_from(GENDER.labels), st.sampled_from(RACE.labels), st.integers(0, 3)), min_size=1, max_size=40
)


@settings(max_examples=30, deadline=None)
@given(published_tables)
def test_classes_layout_equals_wide_encoding(tmp_path_factory, rows):
    """Any published table: one class row per distinct tuple, equal tuples share an id, the join is the wide table."""
    pub = pl.DataFrame(rows, schema=["gender", "race", "y"], orient="row")
    path = tmp_path_factory.mktemp("enc") / "c"
    facts = write_encoded(pub, ANIMAL_HIERARCHIES, path, "fillchild", layout="classes")
    assert facts["classes"] == pub.select("gender", "race").n_unique()
    ids = pl.read_parquet(path / "rows.parquet")[CLASS_ID]
    pairs = pub.select("gender", "race").with_columns(ids).unique()
    assert pairs.height == facts["classes"]  # a tuple has one id, and ids differ between tuples
    assert scan_encoded(path).collect().equals(encode(pub, ANIMAL_HIERARCHIES, "fillchild").collect())


def test_classes_layout_refusals(tmp_path):
    with pytest.raises(InvalidParameterError, match=r"layout must be one of \['wide', 'classes'\], got 'long'"):
        write_encoded(TABLE_IB, ANIMAL_HIERARCHIES, tmp_path / "x", "oneclass", layout="long")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="'random' keeps one column per qid"):
        write_encoded(TABLE_IB, ANIMAL_HIERARCHIES, tmp_path / "x", "random", layout="classes")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(InputError, match="neither an encoded Parquet file nor a directory"):
        scan_encoded(tmp_path)


@pytest.mark.parametrize("rename", [{"id": CLASS_ID}, {"gender": CLASS_ID}], ids=["other column", "qid"])
def test_class_key_never_collides_with_a_column(tmp_path, rename):
    pub = TABLE_IB.rename(rename)
    hierarchies = {rename.get(q, q): h for q, h in ANIMAL_HIERARCHIES.items()}
    write_encoded(pub, hierarchies, tmp_path / "c", "oneclass", layout="classes")
    assert json.loads((tmp_path / "c" / "encoding.json").read_text())["key"] == [f"{CLASS_ID}_1"]
    assert scan_encoded(tmp_path / "c").collect().equals(encode(pub, hierarchies, "oneclass").collect())


@pytest.mark.parametrize("first, second", [("classes", "wide"), ("wide", "classes")])
def test_either_layout_replaces_the_other_only_with_overwrite(tmp_path, first, second):
    path = tmp_path / "enc"
    write_encoded(TABLE_IB, ANIMAL_HIERARCHIES, path, "oneclass", layout=first)
    with pytest.raises(OutputExistsError, match="exists"):
        write_encoded(TABLE_IB, ANIMAL_HIERARCHIES, path, "oneclass", layout=second)
    write_encoded(TABLE_IB, ANIMAL_HIERARCHIES, path, "oneclass", layout=second, overwrite=True)
    assert path.is_dir() == (second == "classes")
    assert scan_encoded(path).collect().equals(encode(TABLE_IB, ANIMAL_HIERARCHIES, "oneclass").collect())
    assert [p.name for p in tmp_path.iterdir()] == ["enc"]  # nothing set aside is left behind
    write_encoded(TABLE_IB, ANIMAL_HIERARCHIES, path, "random", overwrite=True)  # the streaming writer too
    assert path.is_file()


def test_classes_layout_never_overwrites_unless_asked(tmp_path):
    path = tmp_path / "c"
    write_encoded(TABLE_IB, ANIMAL_HIERARCHIES, path, "oneclass", layout="classes")
    with pytest.raises(OutputExistsError, match="exists"):
        write_encoded(TABLE_IB, ANIMAL_HIERARCHIES, path, "fillparent", layout="classes")
    assert json.loads((path / "encoding.json").read_text())["representation"] == "oneclass"
    write_encoded(TABLE_IB, ANIMAL_HIERARCHIES, path, "fillparent", layout="classes", overwrite=True)
    assert json.loads((path / "encoding.json").read_text())["representation"] == "fillparent"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c"]  # no temporary left behind


def test_cli_and_job_write_the_classes_layout(tmp_path, capsys):
    TABLE_I.write_parquet(tmp_path / "orig.parquet")
    TABLE_IB.write_parquet(tmp_path / "pub.parquet")
    race = "\n".join(f"{leaf};{RACE.label_of(int(RACE.parent[RACE.id_of(leaf)]))};mammals" for leaf in RACE.leaf_labels)
    (tmp_path / "race.csv").write_text(race + "\n")
    args = [
        "encode",
        str(tmp_path / "pub.parquet"),
        "--original",
        str(tmp_path / "orig.parquet"),
        "--layout",
        "classes",
        "--hierarchy",
        "gender=suppress",
        "--hierarchy",
        f"race={tmp_path / 'race.csv'}",
    ]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["classes"] == 2
    got = scan_encoded(tmp_path / "pub.proportional").collect()
    assert got.select(TABLE_III_COLUMNS).rows()[3] == pytest.approx(TABLE_III[3], abs=1e-7)

    job = Job.from_dict(
        {
            "input": "orig.parquet",
            "output": "out.parquet",
            "k": 3,
            "drop": ["id"],
            "encode": ["fillparent", "random"],
            "encode_layout": "classes",
            "qids": {"gender": {"hierarchy": "suppress"}, "race": {"hierarchy": "race.csv"}},
        },
        tmp_path,
    )
    report = run_job(job)
    assert report["encodings"] == {
        "fillparent": {"path": str(tmp_path / "out.fillparent"), "reads_originals": False},
        "random": {"path": str(tmp_path / "out.random.parquet"), "reads_originals": False},
    }
    published = pl.read_parquet(tmp_path / "out.parquet")
    hierarchies = build_hierarchies(pl.scan_parquet(tmp_path / "orig.parquet"), job.qids, tmp_path)
    want = encode(published, hierarchies, "fillparent").collect()
    assert scan_encoded(tmp_path / "out.fillparent").collect().equals(want)
    with pytest.raises(InvalidParameterError, match="encode_layout must be one of"):
        run_job(
            Job.from_dict(
                {
                    "input": "orig.parquet",
                    "output": "o2.parquet",
                    "k": 3,
                    "encode": ["oneclass"],
                    "encode_layout": "tall",
                    "qids": {"gender": {"hierarchy": "suppress"}},
                },
                tmp_path,
            )
        )
    assert not (tmp_path / "o2.parquet").exists()


def test_adult_classes_layout_equals_wide(adult, adult_hierarchies, tmp_path):
    """Adult, 10-anonymous (full-domain): the normalized layout reads back as the wide proportional table."""
    import polars_anon as pa

    published = pa.anonymize(adult, hierarchies=adult_hierarchies, k=10).collect()
    want = encode(published, adult_hierarchies, original=adult).collect()
    facts = write_encoded(published, adult_hierarchies, tmp_path / "c", original=adult, layout="classes")
    assert facts["classes"] == published.select(list(adult_hierarchies)).n_unique()
    assert scan_encoded(tmp_path / "c").collect().equals(want)


def test_wide_layout_warns_when_huge(tmp_path, monkeypatch):
    import polars_anon.encoded_io as eio

    monkeypatch.setattr(eio, "_WIDE_WARN_CELLS", 50)  # Table Ib: 6 rows x 15 columns = 90 cells
    with pytest.warns(UserWarning, match=r"6 rows x 15 columns .* layout='classes'"):
        write_encoded(TABLE_IB, ANIMAL_HIERARCHIES, tmp_path / "w.parquet", original=TABLE_I)


def test_classes_layout_without_a_tuple_code(tmp_path, monkeypatch):
    """When the tuple code would overflow Int64, classes are numbered in sorted order and joined."""
    import polars_anon.encoded_io as eio

    monkeypatch.setattr(eio, "tuple_key", lambda tuples, qids: None)
    write_encoded(TABLE_IB, ANIMAL_HIERARCHIES, tmp_path / "c", "fillParent", layout="classes")
    assert pl.read_parquet(tmp_path / "c" / "rows.parquet")[CLASS_ID].to_list() == [
        1,
        1,
        1,
        0,
        0,
        0,
    ]  # cetaceans < mammals
    assert scan_encoded(tmp_path / "c").collect().equals(encode(TABLE_IB, ANIMAL_HIERARCHIES, "fillparent").collect())
    assert json.loads((tmp_path / "c" / "encoding.json").read_text())["representation"] == "fillparent"


@pytest.mark.parametrize("layout", ["wide", "classes"])
def test_row_groups_have_one_fixed_size(tmp_path, layout):
    """Polars' default cuts a row group where the streaming engine's chunks end, and those follow the threads (a
    200,000-row ``statistical`` encoding had 100,000 + 31,072 + 68,928 rows with one thread, + 82,768 + 17,232 with
    four): every written part must hold ROW_GROUP rows but the last."""
    hierarchy = pa.Hierarchy.suppression(["a", "b", "c"])
    n = ROW_GROUP + 18_928
    frame = pl.DataFrame({"x": ["a", "b", "c", "*"] * (n // 4)})
    representation = "random" if layout == "wide" else "fillparent"
    write_encoded(frame, {"x": hierarchy}, tmp_path / "out", representation, layout=layout)
    files = [tmp_path / "out"] if layout == "wide" else [tmp_path / "out" / "rows.parquet"]
    for path in files:
        meta = pq.ParquetFile(path).metadata
        assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [ROW_GROUP, n - ROW_GROUP]
