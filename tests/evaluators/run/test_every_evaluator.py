"""Issue 11's identity guarantees, checked for every registered evaluator (not only word-retrieval).

For each evaluator: two parameter variants into one ``--out`` leave two results; a different result
under an existing name is refused; ``--no-plots`` changes neither scores nor signature; where the
data clamps a parameter, the signature carries the clamped value.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import pytest

from builders.cli import main
from evaluators.core.errors import OutputError
from evaluators.run.results import save_result
from evaluators.run.runner import load_result
from evaluators.tasks import TASKS

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))
import make_results as mk  # noqa: E402  (the report tests' tiny offline datasets)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    work = tmp_path_factory.mktemp("every")
    d = {
        "cbd": mk._cbd(work),
        "bucc": mk._bucc(work),
        "alee": mk._alee(work),
        "silver": mk._silver(work),
    }
    gold, pred = work / "gold.txt", work / "pred.txt"
    gold.write_text("0-0 1-1 2-2\n0-1\n0-0 1-2 2-1\n", encoding="utf-8")
    pred.write_text("0-0 1-1 2-1\n0-0\n0-0 1-2\n", encoding="utf-8")
    d["gold"], d["pred"] = gold, pred
    return d


def argv_for(name: str, d: dict, variant: int) -> list[str]:
    """The command line of one evaluator; ``variant`` 0/1 differ in one signed parameter."""
    rnd = ["--model", "random", "--no-cache"]
    if name == "word-retrieval":
        return ["--dataset", str(d["cbd"]), *rnd, "--layers", "0", "--n", ("10", "20")[variant]]
    if name == "sentence-retrieval":
        return ["--dataset", str(d["cbd"]), *rnd, "--layers", "0", "--n", ("10", "20")[variant]]
    if name == "bucc":
        return ["--dataset", str(d["bucc"]), *rnd, "--k", ("4", "3")[variant]]
    if name == "bitext-retrieval":
        return ["--dataset", str(d["bucc"]), *rnd, "--k", ("4", "3")[variant]]
    if name == "tacc":
        return ["--dataset", str(d["alee"]), *rnd, "--sample", ("2", "3")[variant]]
    if name == "embedding-aligner":
        return [
            *rnd,
            "--silver",
            str(d["silver"]),
            "--layer",
            ("0", "1")[variant],
            "--method",
            "argmax",
        ]
    if name == "alignment":
        return [
            "--gold",
            str(d["gold"]),
            "--pred",
            str(d["pred"]),
            "--index-base",
            "0",
            *(["--reverse-pred"] if variant else []),
        ]
    raise KeyError(name)


# aligners trains statistical aligners (a build extra, seconds per run): it has its own tests.
EVALUATORS = [n for n in TASKS.names() if n != "aligners"]


def _np(name: str) -> list[str]:
    """``--no-plots`` for evaluators that plot (the others have no such flag)."""
    return ["--no-plots"] if TASKS.load(name).meta.plots else []


def _run(argv: list[str]) -> dict:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["eval", *argv, "--json"])
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())


def test_every_registered_evaluator_is_covered():
    assert set(EVALUATORS) | {"aligners"} == set(TASKS.names())


@pytest.mark.parametrize("name", EVALUATORS)
def test_two_variants_into_one_out_leave_two_results(name, data, tmp_path):
    out = tmp_path / "r"
    a = _run([name, *argv_for(name, data, 0), *_np(name), "--out", str(out)])
    b = _run([name, *argv_for(name, data, 1), *_np(name), "--out", str(out)])
    assert a["signature"] != b["signature"]
    assert len(list(out.glob(f"{name}__*.json"))) == 2


@pytest.mark.parametrize("name", EVALUATORS)
def test_a_different_result_under_the_same_name_is_refused(name, data, tmp_path):
    out = tmp_path / "r"
    first = _run([name, *argv_for(name, data, 0), *_np(name), "--out", str(out)])
    (path,) = out.glob(f"{name}__*.json")
    again = _run(
        [name, *argv_for(name, data, 0), *_np(name), "--out", str(out)]
    )  # same result: no-op
    assert again["scores"] == first["scores"]
    tampered = load_result(path)
    tampered.main_score = -1.0
    with pytest.raises(OutputError, match="different result"):
        save_result(tampered, out)
    assert json.loads(path.read_text())["main_score"] == first["main_score"]


@pytest.mark.parametrize("name", [n for n in EVALUATORS if TASKS.load(n).meta.plots])
def test_no_plots_changes_no_score(name, data, tmp_path):
    plotted = _run([name, *argv_for(name, data, 0), "--out", str(tmp_path / "a")])
    plain = _run([name, *argv_for(name, data, 0), *_np(name), "--out", str(tmp_path / "b")])
    assert plotted["scores"] == plain["scores"] and plotted["signature"] == plain["signature"]
    assert plotted["main_score"] == plain["main_score"]


@pytest.mark.parametrize(
    ("name", "flag", "asked"),
    [
        ("word-retrieval", "n", 100000),
        ("sentence-retrieval", "n", 100000),
        ("tacc", "sample", 100000),
    ],
)
def test_the_signature_carries_the_clamped_value(name, flag, asked, data, tmp_path):
    argv = argv_for(name, data, 0)
    argv[argv.index(f"--{flag}") + 1] = str(asked)
    res = _run([name, *argv, *_np(name), "--out", str(tmp_path / "r")])
    used = res["parameters"][flag]
    assert used < asked and f"|{flag}:{used}|" in res["signature"]
    assert res["requested_parameters"][flag] == asked


#: Fields the runner adds to the entry behind the main score (the bootstrap interval).
RUNNER_KEYS = {"ci_low", "ci_high", "ci_level", "ci_resamples"}


def _check_against_metadata(name: str, result: dict) -> None:
    """The result's splits and entry keys are the ones the evaluator's metadata declares."""
    meta = TASKS.load(name).meta
    assert result["evaluator"] == name
    assert result["scores"] and set(result["scores"]) <= set(meta.splits), (
        f"{name} wrote splits {sorted(result['scores'])}, declares {meta.splits}"
    )
    entries = [e for es in result["scores"].values() for e in es]
    assert entries and all("subset" in e for e in entries)
    seen = set().union(*(set(e) for e in entries))
    missing = set(meta.output_keys) - seen
    assert not missing, f"{name} declares output keys it never writes: {sorted(missing)}"
    assert meta.main_score in seen, f"{name}'s main score key {meta.main_score!r} is in no entry"
    assert set(meta.table) <= seen | set(meta.output_keys)
    # The keys every entry of the result carries are declared (the rest are per-entry details).
    common = set.intersection(*(set(e) for e in entries)) - {"subset", "main_score"} - RUNNER_KEYS
    assert common <= set(meta.output_keys), (
        f"{name}: keys in every entry but not in output_keys: {sorted(common - set(meta.output_keys))}"
    )


@pytest.mark.parametrize("name", EVALUATORS)
def test_every_evaluator_writes_the_splits_and_keys_its_metadata_declares(name, data):
    _check_against_metadata(name, _run([name, *argv_for(name, data, 0), *_np(name)]))


def test_aligners_writes_the_splits_and_keys_its_metadata_declares(tmp_path):
    pytest.importorskip("eflomal", reason="the statistical aligners are a build extra")
    mk._aligners(tmp_path, tmp_path / "r")
    (path,) = (tmp_path / "r").glob("aligners__*.json")
    _check_against_metadata("aligners", json.loads(path.read_text(encoding="utf-8")))
