"""AMR and sentence adapters: missing-model messages, per-item failure reasons (fake amrlib models)."""

from __future__ import annotations

import pytest

from builders.adapters.amr import AmrGenerator, AmrParser, install_hint, model_dir
from builders.adapters.sentences import split_sentences
from evaluators.core.errors import EngineUnavailableError


def test_missing_parser_message_gives_commands(tmp_path):
    with pytest.raises(EngineUnavailableError) as err:
        model_dir("parse", tmp_path / "model_stog")
    msg = str(err.value)
    assert f"is not installed at '{tmp_path / 'model_stog'}'" in msg
    assert (
        "model_parse_xfm_bart_large-v0_1_0.tar.gz" in msg and "--amr-parser <model folder>" in msg
    )
    assert "offline, use --foils FILE" in msg


def test_missing_generator_message(tmp_path):
    with pytest.raises(
        EngineUnavailableError, match="AMR generator .graph-to-sentence. model is not installed"
    ):
        model_dir("generate", tmp_path / "nope")
    assert "model_generate_t5wtense-v0_1_0.tar.gz" in install_hint("generate", tmp_path)


def test_installed_model_folder_is_accepted(tmp_path):
    (tmp_path / "amrlib_meta.json").write_text('{"model_type": "stog", "version": "0.1.0"}')
    assert model_dir("parse", tmp_path) == tmp_path


class FakeStog:
    def parse_sents(self, sents, add_metadata=True, disable_progress=True):
        return [None, "(a / broken", "(r / rain-01)"][: len(sents)]


class FakeGtos:
    def generate(self, graphs, disable_progress=True):
        return ["It rains.", "", "It is raining and"], [False, False, True]


def test_parse_failures_are_recorded_not_raised():
    parser = AmrParser.__new__(AmrParser)
    parser.model = FakeStog()
    out = parser.parse(["Hello.", "Broken.", "It rains."])
    assert [(p.graph, p.reason) for p in out] == [
        (None, "parse-none"),
        (None, "deserialisation-error"),
        ("(r / rain-01)", "ok"),
    ]


def test_parser_crash_is_recorded_per_item():
    class Crashing:
        def parse_sents(self, *a, **k):
            raise RuntimeError("CUDA out of memory")

    parser = AmrParser.__new__(AmrParser)
    parser.model = Crashing()
    assert [p.reason for p in parser.parse(["a", "b"])] == ["parser-error:RuntimeError"] * 2


def test_generation_clips_and_empties_recorded():
    gen = AmrGenerator.__new__(AmrGenerator)
    gen.model = FakeGtos()
    out = gen.generate(["(r / rain-01)", "(x / x)", "(y / y)"])
    assert [(g.text, g.clipped, g.reason) for g in out] == [
        ("It rains.", False, "ok"),
        (None, False, "empty-generation"),
        ("It is raining and", True, "ok"),
    ]


def test_pysbd_splitting_keeps_abbreviations():
    assert split_sentences("Mr. Smith left at 5 p.m. sharp. He was late.") == [
        "Mr. Smith left at 5 p.m. sharp.",
        "He was late.",
    ]


def test_punkt_without_data_says_how_to_install():
    import nltk

    try:
        nltk.data.find("tokenizers/punkt_tab/english")
    except LookupError:
        with pytest.raises(
            EngineUnavailableError, match="nltk.downloader punkt_tab' or use --splitter pysbd"
        ):
            split_sentences("One. Two.", splitter="punkt")
    else:
        assert split_sentences("One. Two.", splitter="punkt") == ["One.", "Two."]
