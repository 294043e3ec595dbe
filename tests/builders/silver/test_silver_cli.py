"""``xlbench build silver`` end to end with the synthetic translator, and its error messages."""

from __future__ import annotations

import argparse
import json

import pytest
from datasets import load_dataset

from builders.cli import main
from builders.silver import build as silver_build
from evaluators.schema.meta import stable_manifest


@pytest.fixture
def fake_adapters(monkeypatch, synthetic):
    """Route the builder to the synthetic translator and the fixed substitute table."""
    import builders.adapters.mt as mt

    engines = []

    def select_translator(spec, src, tgt, **kwargs):
        engines.append(synthetic["engine"](pair=(src, tgt)))
        return engines[-1]

    monkeypatch.setattr(mt, "select_translator", select_translator)
    monkeypatch.setattr(silver_build, "_generator", lambda args, src: synthetic["generator"]())
    return engines


def _src_file(tmp_path, synthetic, sep=False):
    path = tmp_path / "src.txt"
    lines = [f"{s} ||| whatever" if sep else s for s, _, _ in synthetic["cases"]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_build_large_from_file_with_export(tmp_path, synthetic, fake_adapters, capsys):
    src = _src_file(tmp_path, synthetic)
    out = tmp_path / "ds"
    code = main(["build", "silver", "--lang", "eng-spa", "--src", str(src), "--out", str(out),
                 "--export", str(tmp_path / "export"), "--mt-cache", str(tmp_path / "c.sqlite")])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    rows = load_dataset(str(out), "eng_Latn-spa_Latn", split="test")
    assert rows["sure"] == [links for _, _, links in synthetic["cases"]]
    assert rows["id"] == ["0", "1", "2", "3", "4"]
    details = load_dataset(str(out), "eng_Latn-spa_Latn-details", split="test")
    assert len(details) == sum(len(s.split()) for s, _, _ in synthetic["cases"])
    manifest = json.loads((out / "manifest.json").read_text())
    assert (
        manifest["parameters"]["subset"] == "large"
        and manifest["parameters"]["substitutes"] == "fixed"
    )
    assert manifest["run"]["mt"]["translated"] == len(fake_adapters[0].texts)
    assert manifest["run"]["mt"]["cached"] == 0 and "mt" not in manifest["counts"]
    # Punctuation is substituted too (the authors' default): 19 words + 5 punctuation tokens tried.
    assert manifest["counts"]["words"]["kept"] == 17 and manifest["counts"]["yield"] == round(
        17 / 24, 4
    )
    assert manifest["build_signature"].startswith(
        "silver|mt:synthetic@1|substitutes:fixed-table@1|alternatives:5|min-valid:4|max-targets:1|seed:13|v:1.0.0|h:"
    )
    exported = (tmp_path / "export" / "eng_Latn-spa_Latn.src-tgt").read_text().splitlines()
    assert exported[0] == "the dog eats fish . ||| el perro come pez ."
    assert (tmp_path / "export" / "eng_Latn-spa_Latn.align").read_text().splitlines()[
        2
    ] == "0-0 1-1 2-2 3-2"
    assert (tmp_path / "export" / "eng_Latn-spa_Latn.ids").read_text().split() == [
        "0",
        "1",
        "2",
        "3",
        "4",
    ]
    cold, cold_data = manifest, {p.name: p.read_bytes() for p in (out / "data").rglob("*.parquet")}
    # A rebuild hits the cache for every sentence and never calls the engine.
    code = main(["build", "silver", "--lang", "eng-spa", "--src", str(src), "--out", str(out), "--overwrite",
                 "--mt-cache", str(tmp_path / "c.sqlite")])  # fmt: skip
    assert code == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["run"]["mt"]["translated"] == 0 and fake_adapters[1].calls == 0
    assert manifest["run"]["mt"]["cached"] == len(fake_adapters[0].texts)
    # Same content: the warm rebuild's stable manifest and parquet bytes equal the cold build's.
    assert stable_manifest(manifest) == stable_manifest(cold)
    assert manifest["build_signature"] == cold["build_signature"]
    assert {p.name: p.read_bytes() for p in (out / "data").rglob("*.parquet")} == cold_data


def test_build_small_uses_small_configs_and_line_ids(tmp_path, synthetic, fake_adapters):
    src = _src_file(tmp_path, synthetic, sep=True)
    with src.open("a", encoding="utf-8") as fh:
        fh.write(
            "the dog eats fish.\n"
        )  # pre-tokenised gold text: source tokens are kept as they are
    out = tmp_path / "small"
    assert (
        main(
            [
                "build",
                "silver",
                "--lang",
                "eng-spa",
                "--small-src",
                str(src),
                "--out",
                str(out),
                "--no-mt-cache",
            ]
        )
        == 0
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(manifest["configs"]) == [
        "eng_Latn-spa_Latn-small",
        "eng_Latn-spa_Latn-small-details",
    ]
    rows = load_dataset(str(out), "eng_Latn-spa_Latn-small", split="test")
    assert rows["src_text"][0] == "the dog eats fish ."  # the left side of 'src ||| tgt'
    assert rows["id"] == ["0", "1", "2", "3", "4", "5"]
    assert rows["src_tokens"][5] == ["the", "dog", "eats", "fish."]
    assert rows["tgt_tokens"][5] == ["el", "perro", "come", "fish", "."]
    assert rows["sure"][5] == [[0, 0], [1, 1], [2, 2]]
    assert manifest["parameters"]["subset"] == "small"
    assert (
        manifest["parameters"]["src_tokenizer"] == "whitespace"
        and manifest["parameters"]["tokenizer"] == "punct"
    )


def test_default_out():
    ns = argparse.Namespace(lang="eng-spa", small_src=None)
    assert silver_build.default_out(ns) == "out/silver-eng_Latn-spa_Latn"
    ns.small_src = "gold.src"
    assert silver_build.default_out(ns) == "out/silver-eng_Latn-spa_Latn-small"


def test_offline_eng_deu_fails_at_once_with_the_offline_pairs(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XLBENCH_OFFLINE", "1")
    code = main(["build", "silver", "--lang", "eng-deu", "--out", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(
        "error: No offline MT system translates eng_Latn-deu_Latn and online ones are unreachable; pairs that work offline:"
    )
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--min-valid", "6"],
            "error: --min-valid must be between 1 and --alternatives (5), got 6.",
        ),
        (["--max-targets", "0"], "error: --max-targets must be at least 1, got 0."),
        (
            ["--src", "a.txt", "--small-src", "b.txt"],
            "error: Pass either --src (Silver_Large) or --small-src (Silver_Small), not both",
        ),
        (
            ["--src", "missing.txt"],
            "error: Input file 'missing.txt' does not exist; check the path.",
        ),
        (
            ["--export", "a-file.txt"],
            "error: --export 'a-file.txt' is a file, not a folder; name a folder for the export",
        ),
        (["--mt-beams", "4"], "error: --mt-beams applies to hf: MT models, not "),
        (["--mt-revision", "abc"], "error: --mt-revision applies to hf: MT models, not "),
    ],
)
def test_usage_errors(tmp_path, monkeypatch, capsys, fake_adapters, extra, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file.txt").write_text("mine\n")
    code = main(["build", "silver", "--lang", "eng-spa", "--out", str(tmp_path / "x"), *extra])
    assert code == 2
    assert capsys.readouterr().err.startswith(message)
    assert not (tmp_path / "x").exists() and (tmp_path / "a-file.txt").read_text() == "mine\n"


def test_empty_source_file_message(tmp_path, capsys, fake_adapters):
    src = tmp_path / "empty.txt"
    src.write_text("\n\n", encoding="utf-8")
    assert (
        main(
            [
                "build",
                "silver",
                "--lang",
                "eng-spa",
                "--src",
                str(src),
                "--out",
                str(tmp_path / "x"),
            ]
        )
        == 2
    )
    assert "has no sentences; pass a file with one sentence per line." in capsys.readouterr().err


def test_wordnet_needs_an_english_source(tmp_path, monkeypatch, capsys, synthetic):
    import builders.adapters.mt as mt

    monkeypatch.setattr(
        mt, "select_translator", lambda *a, **k: synthetic["engine"](pair=("deu_Latn", "eng_Latn"))
    )
    assert main(["build", "silver", "--lang", "deu-eng", "--out", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err.startswith(
        "error: --substitutes wordnet works for English sources only, got deu_Latn; use --substitutes mlm"
    )


def test_no_substitute_punctuation_leaves_punctuation_unaligned(
    tmp_path, synthetic, fake_adapters, capsys
):
    src = _src_file(tmp_path, synthetic)
    builds = {}
    for name, extra in (("default", []), ("nopunct", ["--no-substitute-punctuation"])):
        out = tmp_path / name
        code = main(
            [
                "build",
                "silver",
                "--lang",
                "eng-spa",
                "--src",
                str(src),
                "--out",
                str(out),
                "--no-mt-cache",
                *extra,
            ]
        )
        assert code == 0, capsys.readouterr().err
        builds[name] = (
            json.loads((out / "manifest.json").read_text()),
            load_dataset(str(out), "eng_Latn-spa_Latn", split="test"),
        )
    (m_default, rows_default), (m_off, rows_off) = builds["default"], builds["nopunct"]
    assert m_default["parameters"]["substitute_punctuation"] is True
    assert m_off["parameters"]["substitute_punctuation"] is False
    assert m_off["build_signature"] != m_default["build_signature"]
    # Default: the five final '.' are substituted (tried) like words; with the option they are skipped unread.
    n_punct = len(synthetic["cases"])
    assert m_default["counts"]["words"]["in"] == m_off["counts"]["words"]["in"] + n_punct == 24
    assert (
        m_default["counts"]["tokens"]["punctuation"],
        m_off["counts"]["tokens"]["punctuation"],
    ) == (0, n_punct)
    # The toy engine never lets '.' be aligned, so the links themselves agree.
    assert rows_off["sure"] == rows_default["sure"]


def test_mlm_search_and_count_original_reach_the_generator(tmp_path, monkeypatch):
    import builders.adapters.mlm as mlm

    seen = {}

    class Recorder:
        def __init__(self, name, **kwargs):
            seen.update(kwargs, name=name)

        def load(self):
            return self

    monkeypatch.setattr(mlm, "MLMSubstitutes", Recorder)
    from evaluators.core.params import add_param_arguments, params_from_namespace

    Params = silver_build.spec.Params
    parser = argparse.ArgumentParser()
    add_param_arguments(parser, Params)
    args = parser.parse_args(["--lang", "eng-spa", "--substitutes", "mlm"])
    silver_build._generator(params_from_namespace(Params, args), "eng_Latn")
    assert (
        (seen["search"], seen["count_original"]) == (mlm.SEARCH, mlm.COUNT_ORIGINAL) == (10, True)
    )
    args = parser.parse_args(
        ["--lang", "eng-spa", "--substitutes", "mlm", "--mlm-search", "50", "--no-count-original"]
    )
    params = params_from_namespace(Params, args)
    silver_build._generator(params, "eng_Latn")
    assert (seen["search"], seen["count_original"]) == (50, False)
    # Both are parameters of the build (manifest + signature hash), not speed settings.
    from builders.base import signature_params

    sig = signature_params(params)
    assert (sig["mlm_search"], sig["no_count_original"], sig["no_substitute_punctuation"]) == (
        50,
        True,
        False,
    )
    assert silver_build.spec.MLM_SEARCH == mlm.SEARCH


def test_device_is_recorded_in_run_not_in_content(tmp_path, synthetic, fake_adapters, monkeypatch):
    """--device (issue #26 item 8): checked, recorded in the manifest's run section, outside the content id."""
    import torch

    from evaluators.data.dsref import content_id

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # the fake models never touch it
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    src = _src_file(tmp_path, synthetic)
    built = {}
    for device in ("cpu", "cuda"):
        out = tmp_path / device
        argv = ["build", "silver", "--lang", "eng-spa", "--src", str(src), "--out", str(out),
                "--no-mt-cache", "--substitutes", "mlm", "--device", device]  # fmt: skip
        assert main(argv) == 0
        built[device] = (json.loads((out / "manifest.json").read_text()), content_id(out))
    (m_cpu, id_cpu), (m_cuda, id_cuda) = built["cpu"], built["cuda"]
    assert (m_cpu["run"]["device"], m_cuda["run"]["device"]) == ("cpu", "cuda")
    assert id_cpu == id_cuda and m_cpu["build_signature"] == m_cuda["build_signature"]
    assert stable_manifest(m_cpu) == stable_manifest(m_cuda) and "device" not in m_cpu["parameters"]
