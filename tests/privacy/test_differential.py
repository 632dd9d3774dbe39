"""(ε, δ)-differential privacy by sampling, full-domain generalization and suppression (SafePub).

Golden values: ARX's ``org.deidentifier.arx.dp.ParameterCalculation`` (ARX built from source, run by a
one-line driver outside the repo) printed β and k for these (ε, δ); ARX's loop returns one more than the
smallest k whose δ is below the target (its counter is incremented once more after the test), so its k
is ours + 1 in every case. Our k is checked to be the smallest with d(k) <= δ by a brute-force sum.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import jsonschema
import numpy as np
import polars as pl
import pytest
from scipy.special import gammaln

import polars_anon as pa
from polars_anon import cli
from polars_anon._types import EngineName
from polars_anon.algorithms.dpsearch import exponential_mechanism
from polars_anon.errors import InfeasibleError, InvalidParameterError, ValueNotInHierarchyError
from polars_anon.job import Job
from polars_anon.privacy.differential import (
    MAX_K,
    SEED_GIVEN,
    SEED_NOT_GIVEN,
    delta_of,
    gamma_of,
    keep_mask,
    keep_threshold,
    minimal_k,
    sample_frame,
    sampling_probability,
    search_epsilon_on_sample,
)
from polars_anon.report import schema

ARX = [  # (epsilon, delta, ARX's beta, ARX's k) from ParameterCalculation(epsilon, delta)
    (0.1, 1e-6, 0.09516258196404025, 61),
    (0.09, 1e-6, 0.08606881472877169, 61),
    (0.5, 1e-6, 0.3934693402873664, 64),
    (0.45, 1e-6, 0.3623718483782265, 65),
    (1.0, 1e-6, 0.6321205588285574, 75),
    (0.9, 1e-6, 0.5934303402594007, 74),
    (2.0, 1e-6, 0.8646647167633871, 132),
    (1.8, 1e-6, 0.8347011117784133, 118),
    (1.0, 1e-5, 0.6321205588285574, 62),
    (0.5, 1e-5, 0.3934693402873664, 52),
]


def brute_delta(k: int, epsilon: float, beta: float, last: int = 2500) -> float:
    """d(k, β, ε) of Li, Qardaji and Su (Thm. 5) by direct summation of the binomial terms (log-gamma, not
    scipy's incomplete beta), n up to `last` (the Chernoff bound makes later terms negligible here)."""
    gamma = gamma_of(epsilon, beta)
    n_m = max(math.ceil(k / gamma - 1), 0)
    best = 0.0
    for n in range(n_m, last + 1):
        j = np.arange(math.floor(gamma * n) + 1, n + 1, dtype=np.float64)
        if len(j) == 0:
            continue
        logs = gammaln(n + 1) - gammaln(j + 1) - gammaln(n - j + 1) + j * math.log(beta) + (n - j) * math.log1p(-beta)
        best = max(best, float(np.exp(logs).sum()))
    return best


@pytest.mark.parametrize(("epsilon", "delta", "beta", "k_arx"), ARX)
def test_beta_and_k_agree_with_arx(epsilon: float, delta: float, beta: float, k_arx: int) -> None:
    assert sampling_probability(epsilon) == pytest.approx(beta, rel=1e-14)
    assert minimal_k(epsilon, delta) == k_arx - 1


@pytest.mark.parametrize(
    ("epsilon", "delta", "last"), [(1.0, 1e-6, 2500), (0.5, 1e-5, 2500), (2.0, 0.1, 2500), (5.0, 1e-6, 5000)]
)
def test_k_is_the_smallest_whose_delta_is_below_by_brute_force(epsilon: float, delta: float, last: int) -> None:
    beta = sampling_probability(epsilon)
    k = minimal_k(epsilon, delta)
    assert brute_delta(k, epsilon, beta, last) <= delta < brute_delta(k - 1, epsilon, beta, last)
    assert delta_of(k, epsilon, beta) == pytest.approx(brute_delta(k, epsilon, beta), rel=1e-9)


@pytest.mark.parametrize(("epsilon", "beta"), [(0.1, None), (1.0, None), (5.0, None), (1.0, 0.5), (3.0, 0.2)])
def test_the_tail_bound_holds_by_direct_summation(epsilon: float, beta: float | None) -> None:
    """The range of minimal_k ends where exp(-n D(γ‖β)) < δ/2 (Hoeffding's bound, D the relative entropy of
    γ to β): every term a(n) = P(Binomial(n, β) > γ n), summed directly in log-gamma, is at most the bound."""
    beta = sampling_probability(epsilon) if beta is None else beta
    gamma = gamma_of(epsilon, beta)
    d = gamma * math.log(gamma / beta) + (1 - gamma) * math.log((1 - gamma) / (1 - beta))
    for n in range(1, 3000, 7):
        j = np.arange(math.floor(gamma * n) + 1, n + 1, dtype=np.float64)
        logs = gammaln(n + 1) - gammaln(j + 1) - gammaln(n - j + 1) + j * math.log(beta) + (n - j) * math.log1p(-beta)
        assert float(np.exp(logs).sum()) <= math.exp(-n * d) * (1 + 1e-9)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"epsilon": 50.0}, r"beta rounds to 1: nothing is left to sample\); lower epsilon"),
        ({"epsilon": 25.0}, "beta rounds to 1"),
        ({"epsilon": 1e6}, "beta rounds to 1"),
        ({"epsilon": 15.0, "transformation": {"age": 0}}, "a binomial tail over 47,"),
        ({"epsilon": 1e-9, "transformation": {"age": 0}}, "a binomial tail over 35,506,.* rows; raise epsilon, or"),
        ({"epsilon": 1.0, "budget_for_search": 0.999999999}, "raise epsilon, .*give the search a smaller budget_for"),
        ({"epsilon": 20.0, "budget_for_search": 0.1}, "lower epsilon .*give the search a larger budget_for_search"),
    ],
)
def test_parameters_outside_the_working_range_are_refused_before_the_tail_is_computed(
    kwargs: dict, words: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """review23 item 4: ε = 50 raised ZeroDivisionError (β rounds to 1), 25 ValueError, 1e6 OverflowError, 1e-9 and a
    search budget of 0.999999999 a MemoryError (265 GiB); ε = 7 and 8 allocated 35M and 258M entries. The size of
    the tail is known from ε and δ before anything is allocated: refused there, in one message saying what to change."""
    from polars_anon.privacy import differential

    def never(*_: object) -> None:
        raise AssertionError("the binomial tail was computed")

    monkeypatch.setattr(differential, "_tail", never)
    with pytest.raises(
        InvalidParameterError, match="differential-privacy: epsilon=.*outside the working range.*" + words
    ):
        pa.DifferentialPrivacy(delta=1e-6, **kwargs)


def test_a_k_beyond_max_k_is_refused_and_the_range_ends_are_usable() -> None:
    with pytest.raises(InvalidParameterError, match=r"they need k=(1,[0-9]{3},[0-9]{3}); lower epsilon") as caught:
        pa.DifferentialPrivacy(11.5, 1e-6, transformation={"age": 0})
    assert int(re.search(r"k=([\d,]+)", str(caught.value))[1].replace(",", "")) > MAX_K  # type: ignore[index]
    for epsilon in (7.0, 8.0, 2e-5):  # inside the range: k by the tail, each within MAX_K
        model = pa.DifferentialPrivacy(epsilon, 1e-6, transformation={"age": 0})
        beta = model.beta
        assert delta_of(model.k, epsilon, beta) <= 1e-6 < delta_of(model.k - 1, epsilon, beta)


def test_the_cli_refuses_an_epsilon_out_of_range_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table().write_parquet(tmp_path / "t.parquet")
    for q, h in H.items():
        h.to_csv(tmp_path / f"{q}.csv")
    qids = "".join(f'[qids.{q}]\nhierarchy = "{q}.csv"\n' for q in ("age", "sex", "zip"))
    (tmp_path / "job.toml").write_text(
        'input = "t.parquet"\noutput = "out/t.parquet"\nk = 1\n'
        '[[privacy]]\nmodel = "differential-privacy"\nepsilon = 50\ndelta = 1e-6\n' + qids
    )
    assert cli.main(["anonymize", str(tmp_path / "job.toml"), "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "outside the working range" in err and not (tmp_path / "out").exists()


def test_the_refusal_of_a_small_table_says_what_lowers_k() -> None:
    """review23 item 5: ε = 5 on 100 rows said "choose k <= 100; raise epsilon": k comes from ε and δ, not the k
    asked, and at ε = 5 raising ε raises k (k(5) > k(4) by delta_of, the bound's own definition)."""
    beta5, beta4 = sampling_probability(5.0), sampling_probability(4.0)
    assert delta_of(minimal_k(4.0, 1e-6), 4.0, beta4) <= 1e-6 < delta_of(minimal_k(4.0, 1e-6), 5.0, beta5)
    hs = {"sex": pa.Hierarchy.suppression(["F", "M"])}
    df = pl.DataFrame({"sex": ["F", "M"] * 50})
    for how in ({"transformation": {"sex": 0}}, {}):
        model = pa.DifferentialPrivacy(5.0, 1e-6, seed=1, **how)
        with pytest.raises(InfeasibleError) as caught:
            pa.anonymize(df, hierarchies=hs, k=1, privacy=[model]).collect()
        text = str(caught.value)
        assert "choose k" not in text and "raise epsilon" not in text
        assert "not from the k asked, and rises with epsilon here" in text and "lower epsilon" in text
        assert ("larger budget_for_search" in text) == ("transformation" not in how)
    small = pa.DifferentialPrivacy(0.5, 1e-6, seed=1, transformation={"sex": 0})
    with pytest.raises(InfeasibleError, match="raise epsilon .*, raise delta, or use a table with more rows"):
        pa.anonymize(df, hierarchies=hs, k=1, privacy=[small]).collect()


@pytest.mark.parametrize(("rows", "k"), [(100, 60), (50, 40)])
def test_the_refusal_names_the_k_asked_when_it_binds(rows: int, k: int) -> None:
    """hunt35 F2: eps = 1, delta = 0.2 needs k = 4 only; with k=60 (k=40) asked, the k asked is enforced, and the
    refusal said "k comes from epsilon and delta, not from the k asked: raise epsilon ..., raise delta": raising
    delta does nothing then. It names the k asked and the model's, and advises lowering the k asked."""
    model = pa.DifferentialPrivacy(1.0, 0.2, seed=1, transformation={"sex": 0})
    assert model.k == 4  # minimal_k(1, 0.2): the model's own k, below the one asked
    df = pl.DataFrame({"sex": ["F", "M"] * (rows // 2)})
    with pytest.raises(InfeasibleError) as caught:
        pa.anonymize(df, hierarchies={"sex": pa.Hierarchy.suppression(["F", "M"])}, k=k, privacy=[model]).collect()
    text = str(caught.value)
    assert "not from the k asked" not in text and "raise delta" not in text
    assert f"the k asked (k={k}) binds, above the model's own k=4" in text and "lower k" in text


def test_k_decreases_as_epsilon_or_delta_grows_at_a_fixed_beta() -> None:
    """At a fixed β, more ε or more δ never needs a larger k. (With β = 1 - e^-ε tied to ε, k grows with ε:
    the sample holds more of the table, see ARX's values above.)"""
    for beta in (0.2, 0.5):
        epsilons = [e for e in (0.3, 0.5, 1.0, 2.0, 4.0) if e >= -math.log1p(-beta)]
        ks = [minimal_k(e, 1e-6, beta) for e in epsilons]
        assert ks == sorted(ks, reverse=True) and ks[0] > ks[-1]
    ks = [minimal_k(1.0, d) for d in (1e-8, 1e-6, 1e-4, 1e-2)]
    assert ks == sorted(ks, reverse=True) and ks[0] > ks[-1]


def test_the_budget_is_split_and_never_overspent() -> None:
    m = pa.DifferentialPrivacy(2.0, 1e-6, budget_for_search=0.25)
    assert m.epsilon_search + m.epsilon_anonymization == pytest.approx(2.0)
    assert m.epsilon_search == pytest.approx(0.5)
    given = pa.DifferentialPrivacy(2.0, 1e-6, transformation={"age": 1})
    assert given.epsilon_search == 0 and given.epsilon_anonymization == 2.0
    assert -math.log1p(-m.beta) <= m.epsilon_anonymization  # ε_anon >= -ln(1 - β) as Theorem 5 asks


def test_exponential_mechanism_probabilities() -> None:
    """P(t) ∝ exp(ε u(t) / 2Δ) (scores are u / Δ): exact ratios, and the draws follow them."""
    scores = np.array([0.0, 1.0, 3.0, -2.0])
    rng = np.random.default_rng(7)
    _, p = exponential_mechanism(scores, 0.8, rng)
    want = np.exp(0.4 * scores) / np.exp(0.4 * scores).sum()
    np.testing.assert_allclose(p, want, rtol=1e-12)
    draws = np.bincount([exponential_mechanism(scores, 0.8, rng)[0] for _ in range(5000)], minlength=4) / 5000
    np.testing.assert_allclose(draws, want, atol=0.03)


def test_sampling_hash_in_polars_is_the_reference_and_keeps_beta() -> None:
    key, t = (0x1234567, 0xDEADBEEF, 42), keep_threshold(0.3)
    n = 1 << 17
    want = keep_mask(n, key, t)
    got = sample_frame(pl.LazyFrame({"r": range(n)}), key, t).collect()["r"].to_numpy()
    assert (got == np.nonzero(want)[0]).all()
    share, sd = want.mean(), math.sqrt(0.3 * 0.7 / n)
    assert abs(share - t / 2**32) < 5 * sd
    high = keep_mask(1000, key, t, start=(1 << 32) + 5)  # rows beyond 2^32 use the high word
    assert high.any() and not (high == keep_mask(1000, key, t, start=5)).all()


# ---------------------------------------------------------------------------------------------- the release
AGES = list(range(20, 60))
H = {
    "age": pa.Hierarchy.intervals(AGES, [5, 10, 20]),
    "sex": pa.Hierarchy.suppression(["F", "M"]),
    "zip": pa.Hierarchy.masking([f"{z:03d}" for z in range(100, 140)]),
}


def table(n: int = 600) -> pl.DataFrame:
    rng = np.random.default_rng(3)
    return pl.DataFrame(
        {
            "age": rng.choice(AGES, n).tolist(),
            "sex": rng.choice(["F", "M"], n).tolist(),
            "zip": [f"{z:03d}" for z in rng.integers(100, 140, n)],
        }
    )


def reference(df: pl.DataFrame, model: pa.DifferentialPrivacy, levels: dict[str, int]) -> pl.DataFrame:
    """The mechanism by hand: rows kept by the keyed hash, each qid at its level, classes below k removed."""
    dp = model.prepared(df.height, model.k)
    assert dp.release is not None
    kept = df.filter(pl.Series(keep_mask(df.height, dp.release.key, dp.release.threshold)))
    maps = {
        q: {v: h.label_of(int(h.generalize_ids(levels[q])[h.id_of(v)])) for v in h.leaf_labels} for q, h in H.items()
    }
    out = kept.with_columns(
        pl.col(q).cast(pl.String).replace_strict(m, return_dtype=pl.String) for q, m in maps.items()
    )
    return out.filter(pl.len().over(list(H)) >= dp.release.k)


def test_data_independent_release_is_the_mechanism_by_hand() -> None:
    df = table()
    levels = {"age": 2, "sex": 0, "zip": 2}
    model = pa.DifferentialPrivacy(1.0, 0.1, transformation=levels, seed=11)
    res = pa.anonymize(df, hierarchies=H, k=1, privacy=[model])
    out = res.collect()
    want = reference(df, model, levels)
    assert out.equals(want.select(out.columns).sort(out.columns))
    dp = res.report["details"]["differential_privacy"]
    assert dp["k"] == model.k == minimal_k(1.0, 0.1, model.beta)
    assert dp["published_rows"] == out.height and dp["n_rows"] == df.height
    assert dp["sampled_rows"] == dp["published_rows"] + dp["suppressed_rows"]
    assert out.group_by(list(H)).len()["len"].min() >= dp["k"]
    assert dp["epsilon_search"] == 0 and not dp["data_dependent"]
    # n_rows, sampled_rows, ... are exact figures of the input: the report is outside the guarantee (review4 #6)
    assert "every column of which is a quasi-identifier" in dp["guarantee"] and out.columns == list(H)
    assert "this report is for the data holder" in dp["guarantee"]
    assert "not covered by epsilon" in dp["guarantee"] and "must not be published with the table" in dp["guarantee"]


def test_the_report_keeps_the_k_asked_apart_from_the_k_the_release_enforced(tmp_path: Path) -> None:
    """hunt42: "Asked for" showed the enforced k (the k asked recorded nowhere) and max_suppressed 0 beside the rows
    the release suppressed; the "input (before)" risk column held the sample's figures, unlabelled."""
    levels = {"age": 2, "sex": 0, "zip": 1}  # classes of the sample below the model's k = 9: some rows suppressed
    model = pa.DifferentialPrivacy(1.0, 0.1, transformation=levels, seed=11)
    res = pa.anonymize(table(), hierarchies=H, k=2, privacy=[model])
    report = res.sink_parquet(tmp_path / "o.parquet")
    dp = report["details"]["differential_privacy"]
    assert model.k > 2 and dp["k_asked"] == 2 and report["k"] == dp["k"] == model.k  # the model's k binds
    assert "max_suppressed" not in report["options"] and dp["suppressed_rows"] > 0
    jsonschema.Draft202012Validator(schema()).validate(report)
    page = (tmp_path / "o.report.html").read_text()
    asked = page[page.index("<h3>Asked for</h3>") : page.index("<h3>Derived by the differential-privacy step</h3>")]
    assert "<th scope=row>k</th><td>2</td>" in asked and "max_suppressed" not in asked
    assert f"every class of the sample below k = {model.k} rows ({dp['suppressed_rows']} rows)" in page
    assert ">sampled rows (before)</th>" in page and ">input (before)</th>" not in page
    assert "input (the sampled rows)" in page
    assert f"k-anonymity, k = {model.k} (the release's; 2 asked)" in res._repr_html_()
    assert repr(res).startswith(f"Anonymized(fulldomain, k={model.k} (the release's; 2 asked), engine=polars: ")


def test_search_release_is_reproducible_with_a_seed_and_verified() -> None:
    df = table()
    model = pa.DifferentialPrivacy(2.0, 0.1, seed=5, steps=20)
    a = pa.anonymize(df, hierarchies=H, k=1, privacy=[model])
    out = a.collect()
    b = pa.anonymize(df, hierarchies=H, k=1, privacy=[model]).collect()
    assert out.equals(b)
    dp = a.report["details"]["differential_privacy"]
    assert dp["epsilon_search_spent"] <= dp["epsilon_search"] + 1e-12
    assert dp["epsilon_search"] + dp["epsilon_anonymization"] == pytest.approx(2.0)
    assert out.group_by(list(H)).len()["len"].min() >= dp["k"]
    assert out.equals(reference(df, model, dp["transformation"]).select(out.columns).sort(out.columns))
    status = a.report["privacy"][0]
    assert status["model"] == "differential-privacy" and status["satisfied"] and status["min_measure"] >= dp["k"]
    # the search drew once over the whole lattice (5 x 2 x 4 vectors), on its own sample, with the amplified budget
    assert dp["draw"] == "lattice" and dp["evaluated_vectors"] == 40 and dp["search_sample"] == "independent"
    assert dp["epsilon_search_on_sample"] == pytest.approx(search_epsilon_on_sample(dp["epsilon_search"], dp["beta"]))


def test_only_the_loss_is_amplified_by_its_sample() -> None:
    """Discernibility weighs n, the input's rows, against the sample: its draw is not a function of the sample
    alone, so it spends ε_search unamplified."""
    model = pa.DifferentialPrivacy(2.0, 0.1, seed=5, utility="discernibility")
    dp = pa.anonymize(table(), hierarchies=H, k=1, privacy=[model]).report["details"]["differential_privacy"]
    assert dp["search_sample"] == "independent"
    assert dp["epsilon_search_on_sample"] == dp["epsilon_search_spent"] == pytest.approx(dp["epsilon_search"])


def test_a_large_lattice_is_walked_and_spends_at_most_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    from polars_anon.algorithms import dpsearch

    monkeypatch.setattr(dpsearch, "LATTICE_DRAW_MAX", 10)  # the test's 40 vectors count as a large lattice
    res = pa.anonymize(table(), hierarchies=H, k=1, privacy=[pa.DifferentialPrivacy(2.0, 0.1, seed=5, steps=3)])
    dp = res.report["details"]["differential_privacy"]
    assert dp["draw"] == "walk" and dp["steps"] == 3 and dp["steps_taken"] == 3
    on_sample = dp["epsilon_final"] + dp["steps_taken"] * dp["epsilon_per_step"]
    assert on_sample == pytest.approx(dp["epsilon_search_on_sample"])
    assert dp["epsilon_search_spent"] == pytest.approx(math.log1p(dp["beta"] * math.expm1(on_sample)))
    assert dp["epsilon_search_spent"] <= dp["epsilon_search"] + 1e-12


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_the_published_order_is_a_function_of_the_published_rows(engine: EngineName) -> None:
    """Where a row sat in the input must not show (review10 dp_order.py: the last published row was the added
    person's class more often under D' than under D): the rows come sorted by the published columns, so two
    inputs that publish the same multiset publish the same table. The mechanism by hand (rows kept in input
    order) is not sorted here: the test fails on a release that keeps the input's order."""
    df = table()
    levels = {"age": 1, "sex": 0, "zip": 1}
    model = pa.DifferentialPrivacy(1.0, 0.1, transformation=levels, seed=11)
    out = pa.anonymize(df, hierarchies=H, k=1, privacy=[model], engine=engine).collect()
    assert out.height > 0 and out.equals(out.sort(out.columns))
    want = reference(df, model, levels)  # the mechanism by hand, in input order
    assert out.equals(want.sort(out.columns)) and not want.equals(want.sort(out.columns))


def test_without_a_seed_the_keys_come_from_the_os() -> None:
    df = table()
    model = pa.DifferentialPrivacy(1.0, 0.1, transformation={"age": 3, "sex": 1, "zip": 3})
    a, b = (pa.anonymize(df, hierarchies=H, k=1, privacy=[model]) for _ in range(2))
    a.collect()
    assert a.report["details"]["differential_privacy"]["seed"] == SEED_NOT_GIVEN
    assert a.report["details"]["differential_privacy"]["sampled_rows"] != b.report["details"]["differential_privacy"][
        "sampled_rows"
    ] or not a.collect().equals(b.collect())


def _never_read(s: pl.Series) -> pl.Series:
    raise AssertionError("a row was read")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"method": "greedy"}, "proven for full-domain generalization only"),
        ({"max_suppressed": 3}, "max_suppressed is not taken"),
        ({"metric": "ncp"}, "metric='ncp' is not taken"),
        ({"extra": [pa.KMap(k=2, population_size=1000)]}, "cannot be combined with other privacy models"),
        ({"extra": [pa.DifferentialPrivacy(0.5, 1e-6)]}, "differential-privacy is given 2 times; give one model"),
    ],
)
def test_refusals_before_any_read(kwargs: dict, match: str) -> None:
    extra = kwargs.pop("extra", [])
    lf = table().lazy().with_columns(pl.col("age").map_batches(_never_read, return_dtype=pl.Int64))
    with pytest.raises(InvalidParameterError, match=match):
        pa.anonymize(lf, hierarchies=H, k=2, privacy=[pa.DifferentialPrivacy(1.0, 1e-6), *extra], **kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [{"insensitive": ["income"]}, {"sensitive": "income"}, {"drop": ["note"]}, {}],
)
def test_a_column_published_as_it_is_is_refused_before_any_read(kwargs: dict) -> None:
    """The theorem covers the whole published row: a column that is not a qid would be published raw (one added
    person's unique income shows whenever their row is sampled), so any such column is refused, named, whichever
    way it is declared (review10: insensitive and sensitive columns were published raw)."""
    lf = (
        table()
        .lazy()
        .with_columns(pl.col("age").map_batches(_never_read, return_dtype=pl.Int64), income=pl.lit(7), note=pl.lit("x"))
    )
    raw = ["income"] if "drop" in kwargs else ["income", "note"]
    with pytest.raises(InvalidParameterError, match=re.escape(f"whole published row: columns {raw} are not quasi")):
        pa.anonymize(lf, hierarchies=H, k=1, privacy=[pa.DifferentialPrivacy(1.0, 0.1, seed=1)], **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"epsilon": 0}, "epsilon"),
        ({"delta": 1.0}, "delta"),
        ({"transformation": {"age": 1}, "budget_for_search": 0.2}, "spends no budget"),
        ({"transformation": {"age": -1}}, "level >= 0"),
        ({"utility": "ncp"}, "utility must be one of"),
        ({"seed": -1}, "seed must be an integer >= 0 or None, got -1"),  # the methods' seed check
    ],
)
def test_model_parameters_are_checked(kwargs: dict, match: str) -> None:
    args = {"epsilon": 1.0, "delta": 1e-6} | kwargs
    with pytest.raises(InvalidParameterError, match=match):
        pa.DifferentialPrivacy(**args)


def test_a_transformation_must_name_every_qid_with_a_valid_level() -> None:
    """Refused before any row is read (the capability table)."""
    lf = table().lazy().with_columns(pl.col("age").map_batches(_never_read, return_dtype=pl.Int64))
    partial = pa.DifferentialPrivacy(1.0, 0.1, transformation={"age": 1, "sex": 0})
    with pytest.raises(InvalidParameterError, match="missing \\['zip'\\]"):
        pa.anonymize(lf, hierarchies=H, k=1, privacy=[partial])
    misspelled = pa.DifferentialPrivacy(1.0, 0.1, transformation={"age": 1, "sex": 0, "zp": 0})
    with pytest.raises(InvalidParameterError, match="missing \\['zip'\\]; not quasi-identifiers: \\['zp'\\]"):
        pa.anonymize(lf, hierarchies=H, k=1, privacy=[misspelled])
    high = pa.DifferentialPrivacy(1.0, 0.1, transformation={"age": 1, "sex": 5, "zip": 0})
    with pytest.raises(InvalidParameterError, match="transformation\\['sex'\\]: level 5 is outside"):
        pa.anonymize(lf, hierarchies=H, k=1, privacy=[high])


def test_namespace_job_file_and_cli(tmp_path: Path) -> None:
    """The namespace, a job file's [[privacy]] table and the CLI publish what pa.anonymize publishes (one seed)."""
    df = table()
    levels = {"age": 2, "sex": 0, "zip": 2}
    model = pa.DifferentialPrivacy(1.0, 0.1, transformation=levels, seed=7)
    want = pa.anonymize(df, hierarchies=H, k=1, privacy=[model]).collect()
    assert df.lazy().anon.k_anonymize(hierarchies=H, k=1, privacy=[model]).collect().equals(want)
    df.write_parquet(tmp_path / "t.parquet")
    for q, h in H.items():
        h.to_csv(tmp_path / f"{q}.csv")
    qids = "".join(f'[qids.{q}]\nhierarchy = "{q}.csv"\n' for q in ("age", "sex", "zip"))
    (tmp_path / "job.toml").write_text(
        'input = "t.parquet"\noutput = "out/t.parquet"\nk = 1\n'
        '[[privacy]]\nmodel = "differential-privacy"\nepsilon = 1\ndelta = 0.1\nseed = 7\n'
        "transformation = { age = 2, sex = 0, zip = 2 }\n" + qids
    )
    assert cli.main(["anonymize", str(tmp_path / "job.toml"), "-q"]) == 0
    got = pl.read_parquet(tmp_path / "out" / "t.parquet")
    assert got.equals(want)
    report = json.loads((tmp_path / "out" / "t.report.json").read_text())
    assert report["details"]["differential_privacy"]["seed"] == SEED_GIVEN and report["metric"] is None
    jsonschema.Draft202012Validator(schema()).validate(report)


def test_the_seed_is_never_written_and_still_fixes_the_bytes(tmp_path: Path) -> None:
    """The seed fixes which rows were sampled (their secrecy is part of the amplification): the report says a seed
    was given, never its value, as the [sdc] section does (review10: details.differential_privacy.seed and the
    model's summary wrote it in clear); the same input, parameters and seed still give the same bytes."""
    seed = 987_654_321
    model = pa.DifferentialPrivacy(1.0, 0.1, transformation={"age": 2, "sex": 0, "zip": 2}, seed=seed)
    report = pa.anonymize(table(), hierarchies=H, k=1, privacy=[model]).sink_parquet(tmp_path / "0.parquet")
    text = (tmp_path / "0.report.json").read_text() + (tmp_path / "0.report.html").read_text()
    assert str(seed) not in text and str(seed) not in json.dumps(report)
    assert report["details"]["differential_privacy"]["seed"] == report["privacy"][0]["seed"] == SEED_GIVEN
    again = pa.anonymize(table(), hierarchies=H, k=1, privacy=[model])
    again.sink_parquet(tmp_path / "1.parquet", report_html=False)
    assert (tmp_path / "0.parquet").read_bytes() == (tmp_path / "1.parquet").read_bytes()


@pytest.mark.parametrize(
    ("spec", "kind"),
    [
        ('"suppress"', "suppress"),
        ("{ mask = 2 }", "mask"),
        ("{ intervals = [5, 10] }", "intervals"),
        ('{ dates = ["month"] }', "dates"),
        ("{ ordered = [2] }", "ordered"),
    ],
)
def test_a_job_refuses_hierarchies_built_from_the_data(tmp_path: Path, spec: str, kind: str) -> None:
    """Every built-in kind of a job file takes its leaves from the column's values, so its labels, levels and leaf
    counts (the search's cell loss) depend on other people's rows (review10: ``{ ordered = [2] }`` on two
    neighbouring tables published labels that never overlap). Refused when the job file is read (the input
    does not even exist here), naming the qid and the kind; a hierarchy file is taken."""
    job = (
        'input = "absent.parquet"\noutput = "out.parquet"\nk = 1\n'
        '[[privacy]]\nmodel = "differential-privacy"\nepsilon = 1\ndelta = 0.1\n'
        f'[qids.age]\nhierarchy = "age.csv"\n[qids.v]\nhierarchy = {spec}\n'
    )
    (tmp_path / "job.toml").write_text(job)
    with pytest.raises(InvalidParameterError, match=re.escape(f"but the job would build those of 'v' ({kind}) from")):
        Job.load(tmp_path / "job.toml")
    (tmp_path / "job.toml").write_text(job.replace(f"hierarchy = {spec}", 'hierarchy = "v.csv"'))
    assert list(Job.load(tmp_path / "job.toml").qids) == ["age", "v"]
    dp = '[[privacy]]\nmodel = "differential-privacy"\nepsilon = 1\ndelta = 0.1\n'
    (tmp_path / "job.toml").write_text(job.replace(dp, ""))  # without differential privacy: built from the data
    assert list(Job.load(tmp_path / "job.toml").qids) == ["age", "v"]


def test_a_job_refuses_encodings_of_the_original_values(tmp_path: Path) -> None:
    """The proportional encoding and the statistical mapping are computed from each class's original values (and
    need the published rows lined up with the sample's, which a sorted release does not keep): outside the
    guarantee, refused when the job file is read; an encoding of the published table alone is taken."""
    job = (
        'input = "absent.parquet"\noutput = "out.parquet"\nk = 1\nencode = ["fillParent", "proportional"]\n'
        '[[privacy]]\nmodel = "differential-privacy"\nepsilon = 1\ndelta = 0.1\n[qids.age]\nhierarchy = "age.csv"\n'
    )
    (tmp_path / "job.toml").write_text(job)
    with pytest.raises(InvalidParameterError, match=re.escape("job file: encode ['proportional'] is computed from")):
        Job.load(tmp_path / "job.toml")
    (tmp_path / "job.toml").write_text(job.replace(', "proportional"', ""))
    assert Job.load(tmp_path / "job.toml").encode == ["fillparent"]


def test_a_value_outside_a_given_hierarchy_is_refused() -> None:
    """A hierarchy given (not built from the data) need not cover a value of the input: refused when sampled, never
    published under another label."""
    model = pa.DifferentialPrivacy(5.0, 0.05, transformation={"age": 3, "sex": 1, "zip": 3}, seed=0)
    df = pl.concat([table(), pl.DataFrame({"age": [99], "sex": ["F"], "zip": ["100"]})])
    with pytest.raises(ValueNotInHierarchyError, match=r"column 'age': '99' is not a leaf"):
        pa.anonymize(df, hierarchies=H, k=1, privacy=[model]).collect()


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("search", [False, True])
def test_the_whole_input_is_checked_not_the_sample(engine: EngineName, search: bool) -> None:
    """review23 item 3: the value outside the hierarchy ('X', one row of 601) was refused with seed 1 and published
    past with seed 2 (385 rows), as only the sample was checked; the null count was the sample's (64 of 100)."""
    hs = {"sex": pa.Hierarchy.suppression(["F", "M"])}
    bad = pl.DataFrame({"sex": ["F", "M"] * 300 + ["X"]})
    for seed in range(6):
        how = {} if search else {"transformation": {"sex": 0}}
        model = pa.DifferentialPrivacy(1.0, 1e-6, seed=seed, **how)
        with pytest.raises(ValueNotInHierarchyError, match="'X'"):
            pa.anonymize(bad, hierarchies=hs, k=1, privacy=[model], engine=engine).collect()
    nulls = pl.DataFrame({"sex": ["F", None] * 100})  # 100 nulls in the input
    for seed in (1, 2):
        model = pa.DifferentialPrivacy(1.0, 1e-6, transformation={"sex": 0}, seed=seed)
        with pytest.raises(pa.errors.NullValueError, match="column 'sex' has 100 null values"):
            pa.anonymize(nulls, hierarchies=hs, k=1, privacy=[model], engine=engine).collect()


def test_explore_refuses_a_differentially_private_grid() -> None:
    with pytest.raises(InvalidParameterError, match="explore: differential-privacy is refused"):
        pa.explore(table(), hierarchies=H, k=[2, 5], privacy=[pa.DifferentialPrivacy(1.0, 0.1)])


def test_check_and_risk_refuse_a_differential_privacy_model(tmp_path: Path) -> None:
    """A table whose classes hold the release's k rows was reported 'satisfied' by check: DP is no property of a
    table. Refused by pa.check, pa.risk and the CLI (one line, exit 2)."""
    model = pa.DifferentialPrivacy(1.0, 0.1)
    big = pl.concat([table()] * 200)
    with pytest.raises(InvalidParameterError, match="differential-privacy is a property of how a table is released"):
        pa.check(big, ["age", "sex"], [model])
    with pytest.raises(InvalidParameterError, match="differential-privacy is a property of how a table is released"):
        pa.risk(big, ["age", "sex"], models=[model])
    big.write_parquet(tmp_path / "t.parquet")
    args = ["check", str(tmp_path / "t.parquet"), "--qids", "age,sex", "--k", "2"]
    assert cli.main([*args, "--model", '{model = "differential-privacy", epsilon = 1.0, delta = 0.1}']) == 2


def _utilities(rows: pl.DataFrame, n_rows: int, utility: str, k: int) -> tuple[dict[tuple[int, ...], float], float]:
    from polars_anon.algorithms import Task
    from polars_anon.algorithms.dpsearch import Scorer

    small = {"age": pa.Hierarchy.intervals(range(20, 30), [5]), "sex": H["sex"]}
    aggregates = (
        rows.with_columns(pl.col("age").cast(pl.String))
        .group_by(["age", "sex"])
        .agg(pl.len().cast(pl.UInt32).alias("size"))
        .sort(["age", "sex"])
    )
    scorer = Scorer(Task(aggregates, ["age", "sex"], small, k), utility, k, n_rows)
    vectors = [(a, s) for a in range(small["age"].height) for s in range(small["sex"].height)]
    return {v: scorer.raw(v) for v in vectors}, scorer.sensitivity


@pytest.mark.parametrize("utility", ["loss", "discernibility", "classes"])
def test_utility_sensitivities_hold_by_brute_force(utility: str) -> None:
    """Add one row to the input (sampled or not): the vectors' utilities move by amounts whose spread
    (max - min over the vectors) is at most 2 Δu, what the exponential mechanism's proof uses; discernibility
    and classes also move by at most their Δu each, and the loss by -1 .. (k - 1) / r (module docstring)."""
    rng = np.random.default_rng(1)
    for _ in range(25):
        n, k = int(rng.integers(3, 25)), int(rng.integers(1, 9))
        ages, sexes = rng.integers(20, 30, n).tolist(), rng.choice(["F", "M"], n).tolist()
        sampled = rng.random(n) < 0.6
        d = pl.DataFrame({"age": ages, "sex": sexes}).filter(pl.Series(sampled))
        new = pl.DataFrame({"age": [int(rng.integers(20, 30))], "sex": [str(rng.choice(["F", "M"]))]})
        before, delta_u = _utilities(d, n, utility, k)
        for after_rows in (d, pl.concat([d, new])):  # the new row not sampled, or sampled
            after, delta_after = _utilities(after_rows, n + 1, utility, k)
            cal = max(delta_u, delta_after)  # discernibility's Δu grows with n
            moved = [after[v] - before[v] for v in before]
            assert max(moved) - min(moved) <= 2 * cal + 1e-9, (utility, n, k, moved)
            if utility == "loss":
                r = max((k - 1) / 2, 1.0)
                assert min(moved) >= -1 - 1e-9 and max(moved) <= (k - 1) / r + 1e-9, (n, k, moved)
            else:
                assert max(abs(m) for m in moved) <= cal + 1e-9, (utility, n, k, moved)


def test_search_epsilon_on_sample_is_li_qardaji_su_theorem_1_solved() -> None:
    """ε_search = ln(1 + β (e^ε1 - 1)) for the ε1 returned; ε1 grows as β shrinks and is ε_search at β = 1."""
    for eps, beta in ((0.01, 0.0861), (0.2, 0.8347), (1.0, 0.3)):
        e1 = search_epsilon_on_sample(eps, beta)
        assert math.log1p(beta * math.expm1(e1)) == pytest.approx(eps, rel=1e-12)
        assert e1 > eps
    assert search_epsilon_on_sample(0.3, 1.0) == pytest.approx(0.3)
    assert search_epsilon_on_sample(0.0, 0.5) == 0.0


def _draw_distribution(rows: list[tuple[int, str]], n_rows: int, k: int, epsilon1: float, beta: float) -> np.ndarray:
    """The exact distribution of the lattice draw on a β-sample of `rows`: every subset weighed by its probability."""
    from polars_anon.algorithms import Task
    from polars_anon.algorithms.dpsearch import Scorer, exponential_mechanism

    small = {"age": pa.Hierarchy.intervals(range(20, 28), [4]), "sex": H["sex"]}
    vectors = [(a, s) for a in range(small["age"].height) for s in range(small["sex"].height)]
    out = np.zeros(len(vectors))
    seen: dict[tuple[tuple[int, str], ...], np.ndarray] = {}
    for mask in range(1 << len(rows)):
        chosen = sorted(row for i, row in enumerate(rows) if mask >> i & 1)
        weight = beta ** len(chosen) * (1 - beta) ** (len(rows) - len(chosen))
        if tuple(chosen) in seen:
            out += weight * seen[tuple(chosen)]
            continue
        agg = (
            pl.DataFrame({"age": [str(a) for a, _ in chosen], "sex": [s for _, s in chosen]}, schema=AGG_SCHEMA)
            .group_by(["age", "sex"])
            .agg(pl.len().cast(pl.UInt32).alias("size"))
            .sort(["age", "sex"])
        )
        scorer = Scorer(Task(agg, ["age", "sex"], small, k), "loss", k, n_rows)
        _, p = exponential_mechanism(np.array([scorer.score(v) for v in vectors]), epsilon1, np.random.default_rng(0))
        seen[tuple(chosen)] = p
        out += weight * p
    return out


AGG_SCHEMA = {"age": pl.String, "sex": pl.String}


def test_the_lattice_draw_on_its_own_sample_costs_epsilon_search_by_exact_enumeration() -> None:
    """The whole search (a β-sample, then one draw over the lattice with ε1 = search_epsilon_on_sample) on two
    neighbouring tables, its output distribution computed exactly: no vector's probability moves by more than
    e^ε_search (the sampling amplification and the loss's calibration together). Random tables, and one built
    to move the draw most (a class just below k that the added row completes), where three times ε1 would
    already break the bound: the test has teeth."""
    eps_search = 0.3
    rng = np.random.default_rng(4)
    cases = []
    for _ in range(2):
        rows = [(int(rng.integers(20, 24)), str(rng.choice(["F", "M"]))) for _ in range(7)]
        cases.append((rows, (int(rng.integers(20, 24)), str(rng.choice(["F", "M"]))), int(rng.integers(2, 5)), 0.4))
    worst_case = ([(20, "F")] * 7, (20, "F"), 8, 0.9)
    for rows, extra, k, beta in [*cases, worst_case]:
        e1 = search_epsilon_on_sample(eps_search, beta)
        p = _draw_distribution(rows, len(rows), k, e1, beta)
        q = _draw_distribution([*rows, extra], len(rows) + 1, k, e1, beta)
        assert float(np.abs(np.log(p / q)).max()) <= eps_search + 1e-9, (rows, extra, k, beta)
    rows, extra, k, beta = worst_case
    e3 = 3 * search_epsilon_on_sample(eps_search, beta)
    p, q = (_draw_distribution(r, len(r), k, e3, beta) for r in (rows, [*rows, extra]))
    assert float(np.abs(np.log(p / q)).max()) > eps_search


def test_a_sample_smaller_than_k_is_refused_naming_the_model() -> None:
    with pytest.raises(
        InfeasibleError, match=r"differential-privacy \(epsilon=1.0, delta=1e-06\) needs classes of k=75"
    ):
        pa.anonymize(table(40), hierarchies=H, k=1, privacy=[pa.DifferentialPrivacy(1.0, 1e-6)]).collect()


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_an_empty_sample_is_refused_as_a_sample_not_as_an_empty_input(engine: str) -> None:
    """hunt45: at epsilon 0.01 (beta 0.0095) the sample of 50 rows came out empty and the refusal said the input has
    no rows; it says the sample is empty, with the input's rows, beta and the model's advice."""
    sex = pl.DataFrame({"sex": ["F", "M"] * 25})
    model = pa.DifferentialPrivacy(0.01, 1e-6, seed=1)
    with pytest.raises(InfeasibleError) as info:
        pa.anonymize(
            sex, hierarchies={"sex": pa.Hierarchy.suppression(["F", "M"])}, k=1, privacy=[model], engine=engine
        )
    text = str(info.value)
    assert text.startswith("differential-privacy (epsilon=0.01, delta=1e-06) needs classes of k=")
    assert "the sample of the input's 50 rows (each row kept with probability 0.0095) is empty" in text
    assert "raise epsilon" in text and "no rows" not in text


def test_the_keys_of_a_run_never_show() -> None:
    model = pa.DifferentialPrivacy(1.0, 1e-6).prepared(1000, 80)
    assert model.release is not None
    key = str(model.release.key[0])
    assert model.describe() == "differential-privacy (epsilon=1.0, delta=1e-06)"
    assert key not in repr(model) and key not in json.dumps(model.summary())


DOC_EPSILONS = (0.01, 0.5, 1, 2, 5, 6, 7, 8, 10, 11)


def k_table() -> str:
    """The concept page's epsilon_anon -> k table at delta 1e-6, generated from the code's k (from the rounded beta
    the run samples with): ``python -c "from tests.privacy.test_differential import k_table; print(k_table())"``."""
    ks = [pa.DifferentialPrivacy(e, 1e-6, transformation={"a": 0}).k for e in DOC_EPSILONS]
    return "\n".join(
        [
            "| ε_anon (δ = 1e-6) | " + " | ".join(f"{e:g}" for e in DOC_EPSILONS) + " |",
            "| --- |" + " --- |" * len(DOC_EPSILONS),
            "| k | " + " | ".join(f"{k:,}" for k in ks) + " |",
        ]
    )


def test_the_concept_page_gives_the_k_the_code_gives() -> None:
    """hunt45: its table gave 304,300 and 827,185 at epsilon 10 and 11, the k of the exact beta, where the page
    says (and the code takes) k from the rounded beta: 304,299 and 827,177. The table is :func:`k_table`'s."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "concepts" / "differential-privacy.md").read_text()
    assert k_table() in page
    largest = pa.DifferentialPrivacy(11, 1e-6, transformation={"a": 0}).k
    assert f"(k = 60 to {largest:,} at ε_anon = 11)" in page
