"""Every user-facing entry point: one clear sentence, exit code 2, nothing half-written."""

import json

import pytest

from builders.cli import main


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def parallel(tmp_path, src_lines, tgt_lines):
    src, tgt = tmp_path / "c.deu", tmp_path / "c.eng"
    src.write_text("".join(f"{s}\n" for s in src_lines), encoding="utf-8")
    tgt.write_text("".join(f"{t}\n" for t in tgt_lines), encoding="utf-8")
    return str(src), str(tgt)


def assert_one_sentence_error(code, err, *fragments):
    assert code == 2
    lines = [line for line in err.strip().splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_unknown_language(tmp_path, capsys):
    code, _, err = run(["build", "bucc", "--lang", "dxu-eng", "--out", str(tmp_path / "o")], capsys)
    assert_one_sentence_error(code, err, "Unknown language code 'dxu'", "Did you mean")
    assert not (tmp_path / "o").exists()


def test_missing_file(tmp_path, capsys):
    code, _, err = run(
        [
            "build",
            "bucc",
            "--lang",
            "deu-eng",
            "--parallel",
            str(tmp_path / "nope.de"),
            str(tmp_path / "nope.en"),
            "--out",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert_one_sentence_error(code, err, "does not exist")
    assert not (tmp_path / "o").exists()


def test_mismatched_parallel_files(tmp_path, capsys):
    src, tgt = parallel(tmp_path, ["a", "b", "c"], ["a", "b"])
    code, _, err = run(
        [
            "build",
            "bucc",
            "--lang",
            "deu-eng",
            "--parallel",
            src,
            tgt,
            "--out",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert_one_sentence_error(code, err, "has 3 lines but", "has 2")
    assert not (tmp_path / "o").exists()


def test_empty_corpus(tmp_path, capsys):
    src, tgt = parallel(tmp_path, [], [])
    code, _, err = run(
        [
            "build",
            "bucc",
            "--lang",
            "deu-eng",
            "--parallel",
            src,
            tgt,
            "--out",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert_one_sentence_error(code, err, "empty")
    assert not (tmp_path / "o").exists()


def test_unwritable_output(capsys):
    code, _, err = run(["build", "bucc", "--lang", "deu-eng", "--out", "/proc/xlbench/o"], capsys)
    assert_one_sentence_error(code, err, "Cannot write to '/proc'", "writable --out")


def test_existing_output_needs_overwrite(tmp_path, capsys):
    (tmp_path / "o").mkdir()
    argv = ["build", "bucc", "--lang", "deu-eng", "--out", str(tmp_path / "o")]
    code, _, err = run(argv, capsys)
    assert_one_sentence_error(code, err, "already exists; pass --overwrite")
    assert run([*argv, "--overwrite"], capsys)[0] == 0  # an empty folder
    code, _, err = run(argv, capsys)
    assert_one_sentence_error(code, err, "already exists; pass --overwrite")
    assert run([*argv, "--overwrite"], capsys)[0] == 0  # a dataset folder: rebuilt


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
def test_overwrite_never_deletes_a_folder_that_is_not_a_dataset(tmp_path, capsys, overwrite):
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "keep.txt").write_text("mine")
    (tmp_path / "o" / "README.md").write_text("my notes")
    argv = ["build", "bucc", "--lang", "deu-eng", "--out", str(tmp_path / "o"), *overwrite]
    code, _, err = run(argv, capsys)
    assert_one_sentence_error(code, err, "is not an xlbench dataset folder (it holds keep.txt)")
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["README.md", "keep.txt"]
    assert (tmp_path / "o" / "keep.txt").read_text() == "mine"


@pytest.mark.parametrize("family", ["cbd", "bucc", "silver", "alee"])
def test_corpus_options_without_a_corpus_are_refused(tmp_path, capsys, family):
    lang = (
        ["--langs", "deu"]
        if family == "alee"
        else ["--lang", "eng-deu" if family != "bucc" else "deu-eng"]
    )
    argv = ["build", family, *lang, "--corpus-opt", "split=dev", "--out", str(tmp_path / "o")]
    code, _, err = run(argv, capsys)
    assert_one_sentence_error(code, err, "--corpus-opt is an option of --corpus; add --corpus NAME")
    assert not (tmp_path / "o").exists()


def test_bad_version(tmp_path, capsys):
    code, _, err = run(
        ["build", "bucc", "--lang", "deu-eng", "--version", "v1", "--out", str(tmp_path / "o")],
        capsys,
    )
    assert_one_sentence_error(code, err, "semantic version like '1.0.0'")


def test_unknown_evaluator_and_family_are_usage_errors(capsys):
    for argv in (["eval", "word-retrival"], ["build", "buc"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        assert "invalid choice" in capsys.readouterr().err


def test_eval_on_missing_dataset(tmp_path, capsys):
    code, _, err = run(
        [
            "eval",
            "bucc",
            "--dataset",
            str(tmp_path / "nothing"),
            "--model",
            "random",
            "--out",
            str(tmp_path / "r"),
        ],
        capsys,
    )
    assert_one_sentence_error(code, err, "not a built xlbench dataset folder")
    assert not (tmp_path / "r").exists()


def test_list(capsys):
    code, out, _ = run(["list"], capsys)
    assert code == 0 and "bucc" in out and "word-retrieval" in out


def test_toy_build_end_to_end_is_loadable(tmp_path, capsys):
    """The smallest real build: a user parallel corpus into BUCC-style splits, loaded back."""
    from datasets import load_dataset

    src, tgt = parallel(
        tmp_path,
        [f"Satz Nummer {i} über das Thema {i % 7}." for i in range(200)],
        [f"Sentence number {i} about topic {i % 7}." for i in range(200)],
    )
    code, out, _ = run(
        [
            "build",
            "bucc",
            "--lang",
            "deu-eng",
            "--parallel",
            src,
            tgt,
            "--gold-pairs",
            "10",
            "--parallel-fraction",
            "0.2",
            "--out",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert code == 0, out
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    for config, splits in manifest["configs"].items():
        ds = load_dataset(str(tmp_path / "o"), config)
        assert {s: ds[s].num_rows for s in ds} == splits
