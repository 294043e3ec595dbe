"""The bounded float16 embedding cache: agreement with float32, LRU cap, bit-identical hits, info/clear."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from evaluators.core.errors import InputFileError, UsageError
from evaluators.encoders.cache import (
    DB_NAME,
    LOW_WATERMARK,
    EmbeddingCache,
    cache_clear,
    cache_info,
    compact,
    format_cache_info,
    pack,
    parse_size,
    unpack,
)
from evaluators.encoders.cached import with_cache
from evaluators.encoders.hf import HFEncoder

#: The v1 cache's tables (evaluators/encoders/cache.py before f707a7c).
V1_ENTRIES = "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, data BLOB NOT NULL)"
V1_MODEL = "CREATE TABLE IF NOT EXISTS model (model_id TEXT, revision TEXT)"

TEXTS = [
    "the cat sat on the mat",
    "hello world",
    "the cat",
    "unbelievable hello",
    "cat sat",
    "the mat hello",
]


def _cached(path, cache_dir=None, **options):
    """An ``hf`` encoder behind the embedding cache in ``cache_dir`` (as ``load_encoder`` builds it)."""
    return with_cache(HFEncoder(path, **options), cache_dir)


def _spans(texts):
    return [[(m.start(), m.end()) for m in re.finditer(r"\S+", t)] for t in texts]


def test_float16_agreement_with_float32(tiny_bert, tmp_path):
    exact = HFEncoder(tiny_bert)
    cached = _cached(tiny_bert, tmp_path)
    a = exact.word_vectors(TEXTS, _spans(TEXTS), None).vectors
    b = cached.word_vectors(TEXTS, _spans(TEXTS), None).vectors
    assert not np.array_equal(a, b)  # the cache really stores float16
    # documented bounds: relative error <= 2**-11 per component, cosine > 0.99999
    assert np.all(np.abs(a - b) <= np.abs(a) * 2.0**-11 + 1e-7)
    cos = (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
    assert cos.min() > 0.99999


def test_a_hit_is_bit_identical_to_what_the_writing_run_returned(tiny_bert, tmp_path):
    first = _cached(tiny_bert, tmp_path, batch_size=3)
    wv = first.word_vectors(TEXTS, _spans(TEXTS), None)
    sent = first.embed_sentences(TEXTS, layers=[0, -1], poolings=["mean", "cls"])
    again = _cached(tiny_bert, tmp_path, batch_size=3)
    np.testing.assert_array_equal(
        again.word_vectors(TEXTS, _spans(TEXTS), None).vectors, wv.vectors
    )
    grid = again.embed_sentences(TEXTS, layers=[0, -1], poolings=["mean", "cls"])
    for key, matrix in sent.items():
        np.testing.assert_array_equal(grid[key], matrix)
    assert again.forward_calls == 0
    stats = again.cache_stats()
    assert stats.hit_rate == 1.0 and stats.misses == 0 and "100% hits" in stats.line()
    # another batch size pads differently, so it is another entry (the key includes it)
    other = _cached(tiny_bert, tmp_path, batch_size=32)
    other.word_vectors(TEXTS, _spans(TEXTS), None)
    assert other.forward_calls == 1 and other.cache_stats().hits == 0


def test_truncation_survives_the_cache(tmp_path, tiny_builders):
    path = tiny_builders["bert"](tmp_path / "short", max_length=8)
    text = "the cat sat on the mat hello world"
    spans = _spans([text])
    first = _cached(path, tmp_path / "c").word_vectors([text], spans, [0])
    hit = _cached(path, tmp_path / "c")
    second = hit.word_vectors([text], spans, [0])
    assert hit.forward_calls == 0
    assert second.truncated_texts == first.truncated_texts == 1
    assert second.found.tolist() == first.found.tolist() == [True] * 6 + [False] * 2


@pytest.mark.slow
def test_small_run_writes_under_50_kb_per_sentence(tiny_bert, tmp_path):
    enc = _cached(tiny_bert, tmp_path)
    texts = [f"{t} {i}" for i, t in enumerate(TEXTS * 10)]
    enc.word_vectors(texts, [s[:2] for s in _spans(texts)], None)
    enc.embed_sentences(texts, layers=[0, 1, 2], poolings=["mean", "cls"])
    stats = enc.cache_stats()
    assert 0 < stats.written_bytes / len(texts) < 50_000
    assert stats.size_bytes == stats.written_bytes


def test_lru_eviction_keeps_the_cache_under_its_cap(tmp_path, monkeypatch):
    import evaluators.encoders.cache as cache_mod

    monkeypatch.setattr(cache_mod, "_TOUCH_NS", 0)  # every read refreshes (normally: once a minute)
    row = np.ones(256, np.float32)
    entry = len(pack(row)) + 16  # payload + 16-byte key digest
    cache = EmbeddingCache(tmp_path, "m", "r", max_bytes=10 * entry)
    cache.put_many((f"k{i:03d}", pack(row)) for i in range(8))
    cache.get_many(["k000"])  # recently used: survives
    cache.put_many((f"k{i:03d}", pack(row)) for i in range(8, 12))
    stats = cache.stats()
    # 12 rows over a cap of 10: down to the low watermark, 9 rows
    assert stats.size_bytes <= int(10 * entry * LOW_WATERMARK) and stats.evicted == 3
    kept = cache.get_many([f"k{i:03d}" for i in range(12)])
    assert "k000" in kept and {"k001", "k002", "k003"}.isdisjoint(kept) and "k011" in kept


def test_cap_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("XLBENCH_CACHE_MAX", "3M")
    assert EmbeddingCache(tmp_path, "m", "r").max_bytes == 3 * 1024**2
    assert parse_size("1.5k") == 1536
    with pytest.raises(UsageError, match="is not a size"):
        parse_size("lots")


def test_pack_round_trip_and_large_values():
    a = np.array([[0.1, -2.5, np.nan]], np.float32)
    back, flags = unpack(pack(a, flags=1))
    assert flags == 1 and np.array_equal(back, compact(a), equal_nan=True)
    big = np.array([1e6, 1.0], np.float32)  # beyond float16: stored as float32, exactly
    assert np.array_equal(unpack(pack(big))[0][0], big)
    assert len(pack(np.zeros(384, np.float32))) == 12 + 2 * 384


def _sqlite(path, *tables: str) -> None:
    db = sqlite3.connect(path)
    for t in tables:
        db.execute(t)
    db.commit()
    db.close()


def test_info_and_clear_remove_only_what_the_cache_wrote(tiny_bert, tmp_path, monkeypatch):
    # other caches (the silver MT cache of other tests) live elsewhere: this folder's files only
    monkeypatch.setenv("XLBENCH_CACHE", str(tmp_path / "elsewhere"))
    enc = _cached(tiny_bert, tmp_path)
    enc.sentence_embeddings(TEXTS)
    enc.cache.close()
    # a file the v1 cache wrote (its name pattern and exactly its two tables) ...
    v1 = tmp_path / "old@v1.sqlite"
    _sqlite(v1, V1_ENTRIES, V1_MODEL)
    # ... and files it never wrote: the silver MT cache, a user's databases, a look-alike name
    others = {
        "mt-cache.sqlite": ("CREATE TABLE mt (k TEXT PRIMARY KEY, v TEXT)",),
        "mine.sqlite": ("CREATE TABLE t (x)",),
        "not@ours.sqlite": ("CREATE TABLE entries (key TEXT, data BLOB)",),
    }
    for name, tables in others.items():
        _sqlite(tmp_path / name, *tables)
    (tmp_path / "notes.sqlite-journal").write_text("keep")
    info = cache_info(tmp_path)
    assert info["models"][0]["entries"] == len(TEXTS) and info["size_bytes"] > 0
    assert info["stale_v1_files"] == [str(v1)]
    text = format_cache_info(info)
    assert "entries" in text and "mt-cache" not in text and "1 old v1 embedding file" in text
    assert cache_clear(tmp_path) > 0
    assert cache_info(tmp_path)["models"] == []
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([*others, "notes.sqlite-journal"])


def test_info_names_a_corrupt_database_and_clear_removes_it(tmp_path):
    (tmp_path / DB_NAME).write_bytes(b"not a database " * 200)
    with pytest.raises(InputFileError, match="not a usable SQLite database.*cache clear"):
        cache_info(tmp_path)
    assert cache_clear(tmp_path) == 3000 and not (tmp_path / DB_NAME).exists()


def test_clear_on_a_read_only_filesystem_is_one_sentence(tmp_path, monkeypatch, capsys):
    from builders.cli import main

    _sqlite(tmp_path / DB_NAME, "CREATE TABLE entries (x)")

    def read_only(self, missing_ok=False):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))

    monkeypatch.setattr(Path, "unlink", read_only)
    assert main(["cache", "clear", "--cache-dir", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    (line,) = captured.err.strip().splitlines()
    assert "Read-only file system" in line and "cannot be removed" in line
    assert (tmp_path / DB_NAME).is_file()


def test_cli_cache_info_and_clear(tiny_bert, tmp_path, monkeypatch, capsys):
    from builders.cli import main

    monkeypatch.setenv("XLBENCH_CACHE", str(tmp_path))
    _cached(tiny_bert).sentence_embeddings(TEXTS[:2])
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert "2 entries" in out and "of cap 2.0 GB" in out
    assert main(["cache", "clear"]) == 0
    assert "freed" in capsys.readouterr().out
    assert cache_info()["models"] == []


def _export(root: Path, key: str, model: str, nbytes: int, export_version: str = "1") -> Path:
    from evaluators.encoders import onnxrt

    folder = root / "onnx" / key
    folder.mkdir(parents=True)
    (folder / "model.onnx").write_bytes(b"x" * nbytes)
    record = {"model_id": model, "export_version": export_version, **onnxrt.exporter_versions()}
    (folder / "export.json").write_text(json.dumps(record))
    return folder


def test_info_lists_the_onnx_exports_and_other_caches_and_clear_onnx_removes_only_exports(
    tmp_path, monkeypatch, capsys
):
    from builders.cli import main

    monkeypatch.setenv("XLBENCH_CACHE", str(tmp_path))
    from evaluators.encoders.onnxrt import EXPORT_VERSION

    small = _export(tmp_path, "a" * 32, "small-model", 1_000, EXPORT_VERSION)
    big = _export(tmp_path, "b" * 32, "big-model", 5_000)  # an older export format
    running = tmp_path / "onnx" / f".{'c' * 32}.tmp-123-host"  # an export in progress
    running.mkdir()
    (running / "model.onnx").write_bytes(b"x" * 10)
    (tmp_path / "models" / "rebuilt").mkdir(parents=True)
    (tmp_path / "models" / "rebuilt" / "w.bin").write_bytes(b"x" * 300)
    (tmp_path / "mt-cache.sqlite").write_bytes(b"x" * 200)
    info = cache_info()
    assert [(e["model"], e["path"]) for e in info["onnx_exports"]] == [
        ("big-model", str(big)),
        ("small-model", str(small)),
    ]
    assert info["onnx_exports"][0]["made_with"].startswith("torch ")
    assert info["onnx_exports"][0]["stale"] == f"export format 1, not {EXPORT_VERSION}"
    assert info["onnx_exports"][1]["stale"] is None
    odd = _export(tmp_path, "d" * 32, "odd", 10)
    (odd / "export.json").write_text("[1]")  # a record that is not an object
    (listed,) = [e for e in cache_info()["onnx_exports"] if e["path"] == str(odd)]
    assert listed["model"] == "?" and listed["stale"].startswith("export format ?, not ")
    shutil.rmtree(odd)
    assert info["onnx_exports"][0]["bytes"] > 5_000  # the model and its record
    assert [(Path(c["path"]).name, c["bytes"]) for c in info["other_caches"]] == [
        ("models", 300),
        ("mt-cache.sqlite", 200),
    ]
    text = format_cache_info(info)
    assert "ONNX Runtime exports: " in text and "cache clear --onnx deletes them" in text
    assert text.index("big-model") < text.index("small-model")
    assert f"(stale, never used again: export format 1, not {EXPORT_VERSION})" in text
    assert text.count("(stale, never used again") == 1
    assert "other xlbench caches (cache clear leaves them):" in text and "mt-cache.sqlite" in text
    assert main(["cache", "info", "--onnx"]) == 2
    assert "--onnx goes with clear" in capsys.readouterr().err
    assert main(["cache", "clear"]) == 0  # the embedding cache only
    assert "ONNX" not in capsys.readouterr().out and big.is_dir()
    kept = EmbeddingCache(tmp_path / "embeddings", "m", "r")
    kept.put_many([("k", pack(np.ones(4, np.float32)))])
    kept.close()
    assert main(["cache", "clear", "--onnx", "stale"]) == 0  # the older format only
    out = capsys.readouterr().out
    assert "stale ONNX Runtime exports cleared: " in out and "embedding cache" not in out
    assert not big.exists() and small.is_dir()
    assert main(["cache", "clear", "--onnx", "--cache-dir", str(tmp_path / "embeddings")]) == 2
    assert "--cache-dir names the embedding cache" in capsys.readouterr().err and small.is_dir()
    assert main(["cache", "clear", "--onnx"]) == 0
    out = capsys.readouterr().out
    assert "ONNX Runtime exports cleared: " in out
    assert not small.exists() and not big.exists()
    assert len(EmbeddingCache(tmp_path / "embeddings", "m", "r")) == 1  # its vectors kept
    assert running.is_dir() and (tmp_path / "models" / "rebuilt" / "w.bin").is_file()
    assert (tmp_path / "mt-cache.sqlite").is_file()
    assert cache_info()["onnx_exports"] == []


def test_an_export_that_cannot_be_removed_is_one_sentence(tmp_path, monkeypatch, capsys):
    from builders.cli import main

    monkeypatch.setenv("XLBENCH_CACHE", str(tmp_path))
    folder = _export(tmp_path, "a" * 32, "m", 10)

    def read_only(path, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

    monkeypatch.setattr(shutil, "rmtree", read_only)
    assert main(["cache", "clear", "--onnx"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "Cannot clear the ONNX exports" in line and "Read-only file system" in line
    assert folder.is_dir()


# ------------------------------------------------- running total and eviction at scale (issue #28)


def _sum(path) -> int:
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT COALESCE(SUM(nbytes), 0) FROM entries").fetchone()[0]
    finally:
        db.close()


def _blob(i: int) -> bytes:
    return pack(np.full(8 + i % 5, i, np.float32))  # rows of different sizes


def test_running_total_equals_the_sum_after_puts_overwrites_and_evictions(tmp_path):
    from evaluators.encoders.cache import stored_bytes

    cache = EmbeddingCache(tmp_path, "m", "r", max_bytes=0)
    cache.put_many((f"k{i}", _blob(i)) for i in range(50))
    assert stored_bytes(cache._db) == _sum(cache.path) > 0
    cache.put_many((f"k{i}", _blob(i + 1)) for i in range(0, 50, 3))  # overwrites: other sizes
    assert stored_bytes(cache._db) == _sum(cache.path)
    other = EmbeddingCache(tmp_path, "other-model", "r", max_bytes=_sum(cache.path) // 2)
    other.put_many((f"k{i}", _blob(i)) for i in range(20))  # another model's rows, evicting
    assert other.evicted > 0
    assert stored_bytes(cache._db) == stored_bytes(other._db) == _sum(cache.path)
    assert _sum(cache.path) <= other.max_bytes
    assert cache.stats().size_bytes == _sum(cache.path)


def test_a_missing_or_corrupt_total_is_recounted_on_open(tmp_path):
    from evaluators.encoders.cache import stored_bytes

    cache = EmbeddingCache(tmp_path, "m", "r", max_bytes=0)
    cache.put_many((f"k{i}", _blob(i)) for i in range(30))
    cache.close()
    for damage in ("DELETE FROM meta", "UPDATE meta SET total = -7", "DROP TABLE meta"):
        db = sqlite3.connect(tmp_path / DB_NAME)
        db.execute(damage)
        db.commit()
        db.close()
        again = EmbeddingCache(tmp_path, "m", "r", max_bytes=0)
        assert stored_bytes(again._db) == _sum(tmp_path / DB_NAME) > 0, damage
        again.close()


def _killed_mid_write(folder: str) -> None:
    """Write rows and die inside the transaction (no commit, no rollback, no close)."""
    cache = EmbeddingCache(folder, "m", "r", max_bytes=0)
    cache._db.execute("BEGIN IMMEDIATE")
    cache._db.executemany(
        "INSERT INTO entries (k, model, data, nbytes, used) VALUES (?, ?, ?, ?, ?)",
        [(bytes([i]) * 16, 1, b"x" * 100, 116, i) for i in range(10)],
    )
    os._exit(0)


def _killed_mid_eviction(folder: str) -> None:
    """Fold the log and delete rows inside one transaction, then die (no commit, no rollback, no close)."""
    from evaluators.encoders.cache import _fold

    cache = EmbeddingCache(folder, "m", "r", max_bytes=0)
    cache._db.execute("BEGIN IMMEDIATE")
    _fold(cache._db)
    cache._db.execute(
        "DELETE FROM entries WHERE id IN (SELECT id FROM entries ORDER BY used LIMIT 5)"
    )
    os._exit(0)


@pytest.mark.parametrize("killed", [_killed_mid_write, _killed_mid_eviction])
def test_the_total_survives_a_process_killed_mid_write(tmp_path, monkeypatch, killed):
    import multiprocessing

    import evaluators.encoders.cache as cache_mod
    from evaluators.encoders.cache import stored_bytes

    monkeypatch.setattr(cache_mod, "_TOUCH_NS", 0)
    cache = EmbeddingCache(tmp_path, "m", "r", max_bytes=0)
    cache.put_many((f"k{i}", pack(np.full(256, i, np.float32))) for i in range(20))
    cache.get_many(["k1", "k2"])
    before = _sum(cache.path)
    rows = _recency(cache)
    log = _log(cache)
    assert len(log) == 2
    cache.close()
    proc = multiprocessing.get_context("fork").Process(target=killed, args=(str(tmp_path),))
    proc.start()
    proc.join(60)
    again = EmbeddingCache(tmp_path, "m", "r", max_bytes=0)
    assert _sum(again.path) == before == stored_bytes(again._db)
    # nothing but the transaction is lost: the rows, their recency and the log as they were
    assert _recency(again) == rows
    assert _log(again) == log
    again.put_many([("after", _blob(3))])
    assert stored_bytes(again._db) == _sum(again.path)


def _ten_rows_rewritten(folder, *statements: str) -> tuple[np.ndarray, int]:
    """A cache file of ten rows k0-k9 as an older xlbench left it (``statements`` run on it); ``(row, entry bytes)``."""
    row = np.ones(16, np.float32)
    cache = EmbeddingCache(folder, "m", "r", max_bytes=0)
    cache.put_many((f"k{i}", pack(row)) for i in range(10))
    cache.close()
    db = sqlite3.connect(folder / DB_NAME)
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()
    return row, len(pack(row)) + 16


def test_a_file_from_before_the_log_is_migrated_in_place(tmp_path, monkeypatch):
    import evaluators.encoders.cache as cache_mod

    monkeypatch.setattr(cache_mod, "_TOUCH_NS", 0)
    row, entry = _ten_rows_rewritten(tmp_path, "DROP TABLE touches")
    again = EmbeddingCache(tmp_path, "m", "r", max_bytes=10 * entry)
    assert len(again) == 10 and _log(again) == []
    again.get_many(["k0"])
    again.put_many([("new", pack(row))])  # 11 rows over a cap of 10: down to 9, k1 and k2 go
    assert _held(again, [f"k{i}" for i in range(10)]) == {"k0"} | {f"k{i}" for i in range(3, 10)}


#: An older xlbench's fold of a read of the row with this id into entries.used.
_OLD_FOLD = "UPDATE entries SET used = (SELECT MAX(used) FROM entries) + 1 WHERE id = {}"


def test_a_file_from_before_the_lru_table_keeps_its_recency(tmp_path, monkeypatch):
    """Opening such a file moves each row's recency into lru; an older xlbench's fold still reaches it."""
    import evaluators.encoders.cache as cache_mod

    monkeypatch.setattr(cache_mod, "_TOUCH_NS", 0)
    row, entry = _ten_rows_rewritten(
        tmp_path,
        *(f"DROP TRIGGER lru_{name}" for name in ("insert", "delete", "bytes", "touch")),
        "DROP TABLE lru",
        "CREATE INDEX entries_used ON entries (used)",
        _OLD_FOLD.format(1),  # k0 read
    )
    again = EmbeddingCache(tmp_path, "m", "r", max_bytes=10 * entry)
    assert again._db.execute("SELECT id, used, nbytes FROM lru ORDER BY id").fetchall() == (
        again._db.execute("SELECT id, used, nbytes FROM entries ORDER BY id").fetchall()
    )
    assert not again._db.execute(
        "SELECT 1 FROM sqlite_master WHERE name = 'entries_used'"
    ).fetchone()
    # an older xlbench sharing the file folds a read of k1 into entries.used: lru sees it
    again._db.execute(_OLD_FOLD.format(2))
    again._db.commit()
    again.put_many([("new", pack(row))])  # 11 rows over a cap of 10: down to 9, k2 and k3 go
    assert _held(again, [f"k{i}" for i in range(10)]) == {f"k{i}" for i in (0, 1, *range(4, 10))}


def _recency(cache) -> list[tuple[int, int]]:
    return cache._db.execute("SELECT id, used FROM lru ORDER BY id").fetchall()


def _held(cache, keys) -> set[str]:
    """The keys among ``keys`` that ``cache`` holds, looked up without touching them."""
    from evaluators.encoders.cache import _digest

    held = {_digest(cache.model, k): k for k in keys}
    rows = cache._db.execute("SELECT k FROM entries").fetchall()
    return {held[k] for (k,) in rows if k in held}


def _log(cache) -> list[tuple[int, int]]:
    return cache._db.execute("SELECT id, used FROM touches ORDER BY seq").fetchall()


def test_eviction_takes_least_recently_used_rows_first(tmp_path, monkeypatch):
    import evaluators.encoders.cache as cache_mod

    monkeypatch.setattr(cache_mod, "_TOUCH_NS", 0)
    monkeypatch.setattr(cache_mod, "_FOLD_SHARE", 1.0)  # only the eviction folds the log here
    row = np.ones(16, np.float32)
    entry = len(pack(row)) + 16
    cache = EmbeddingCache(tmp_path, "m", "r", max_bytes=20 * entry)
    every = [f"{p}{i}" for p in "abcd" for i in range(10)]
    cache.put_many((f"a{i}", pack(row)) for i in range(10))
    cache.put_many((f"b{i}", pack(row)) for i in range(10))
    cache.get_many([f"a{i}" for i in range(0, 10, 2)])  # the even a rows become the newest
    assert len(_log(cache)) == 5  # logged, not yet in lru.used
    # 27 rows over a cap of 20: down to the watermark, 18 rows; 9 go: odd a rows, then b0-b3
    cache.put_many((f"c{i}", pack(row)) for i in range(7))
    assert cache.evicted == 9 and _log(cache) == []
    gone = {f"a{i}" for i in range(1, 10, 2)} | {"b0", "b1", "b2", "b3"}
    assert _held(cache, every) == {f"a{i}" for i in range(0, 10, 2)} | {
        f"b{i}" for i in range(4, 10)
    } | {f"c{i}" for i in range(7)}
    assert gone.isdisjoint(_held(cache, every))
    # the next cycle sees the folded reads: b4-b9 (older than the reads), then the even a rows
    # (read at one time: by row id), never the c rows written after the read
    cache.put_many((f"d{i}", pack(row)) for i in range(9))
    assert cache.evicted == 18
    assert _held(cache, every) == {"a6", "a8"} | {f"c{i}" for i in range(7)} | {
        f"d{i}" for i in range(9)
    }


def test_a_read_appends_to_the_log_and_the_eviction_folds_and_empties_it(tmp_path, monkeypatch):
    import evaluators.encoders.cache as cache_mod

    monkeypatch.setattr(cache_mod, "_TOUCH_NS", 0)
    row = np.ones(256, np.float32)
    entry = len(pack(row)) + 16
    cache = EmbeddingCache(tmp_path, "m", "r", max_bytes=100 * entry)
    cache.put_many((f"k{i}", pack(row)) for i in range(50))
    inserted = dict(cache._db.execute("SELECT id, used FROM entries").fetchall())
    before = dict(_recency(cache))
    assert before == inserted
    seen: list[str] = []
    cache._db.set_trace_callback(seen.append)
    cache.get_many(["k3", "k7"])
    cache.get_many(["k7"])
    cache._db.set_trace_callback(None)
    # a read is an append to the log: it rewrites no row
    assert not [s for s in seen if "UPDATE" in s.upper()]
    assert dict(_recency(cache)) == before
    log = _log(cache)
    assert len(log) == 3 and all(used > before[rowid] for rowid, used in log)
    cache.put_many((f"n{i}", pack(row)) for i in range(51))  # 101 rows: over the cap
    assert _log(cache) == []
    folded = dict(_recency(cache))
    for rowid in {r for r, _ in log}:  # the latest logged read of each row
        assert folded[rowid] == max(used for r, used in log if r == rowid)
    # the fold wrote lru only: the payload rows that survived keep their insert time
    kept = dict(cache._db.execute("SELECT id, used FROM entries").fetchall())
    assert {r: inserted[r] for r in kept if r in inserted} == {
        r: kept[r] for r in kept if r in inserted
    }


def test_a_row_read_again_within_the_minute_is_not_logged_again(tmp_path):
    cache = EmbeddingCache(tmp_path, "m", "r", max_bytes=0)
    cache.put_many((f"k{i}", pack(np.ones(256, np.float32))) for i in range(5))
    cache._db.execute("UPDATE entries SET used = 0")  # written long ago
    cache._db.commit()
    cache.get_many(["k1", "k2"])
    cache.get_many(["k1", "k2", "k3"])  # k1, k2: logged by this process within the minute
    assert len(_log(cache)) == 3


def test_the_watermark_evicts_once_per_tenth_of_the_cap(tmp_path):
    from evaluators.encoders.cache import stored_bytes

    row = np.ones(16, np.float32)
    entry = len(pack(row)) + 16
    cap = 100 * entry
    cache = EmbeddingCache(tmp_path, "m", "r", max_bytes=cap)
    cache.put_many((f"a{i}", pack(row)) for i in range(100))  # at the cap, not over: no eviction
    assert cache.evicted == 0 and stored_bytes(cache._db) == cap
    cache.put_many([("b0", pack(row))])  # over: down to the low watermark
    assert cache.evicted == 11 and stored_bytes(cache._db) == int(cap * LOW_WATERMARK)
    for i in range(1, 11):  # back up to the cap, one row a put: no eviction on the way
        cache.put_many([(f"b{i}", pack(row))])
        assert cache.evicted == 11 and stored_bytes(cache._db) <= cap
    cache.put_many([("c0", pack(row))])
    assert cache.evicted == 22 and stored_bytes(cache._db) == int(cap * LOW_WATERMARK)
    assert stored_bytes(cache._db) == _sum(cache.path)


def test_an_eviction_does_not_shred_what_it_deletes(tmp_path):
    """A SQLite built with SECURE_DELETE (Debian's) zeroes what it deletes, in extra page writes; the cache turns it off."""
    from evaluators.encoders.cache import stored_bytes

    row = pack(np.ones(384, np.float32))  # a model's width: several rows a page
    frames = {}
    for shred in (False, True):
        cache = EmbeddingCache(tmp_path / str(shred), "m", "r", max_bytes=1000 * (len(row) + 16))
        cache.put_many((f"a{i}", row) for i in range(1000))
        if shred:
            cache._db.execute("PRAGMA secure_delete=ON")
        cache._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        cache.put_many([("b", row)])  # over the cap: evicts 101 rows, whole pages of them
        frames[shred] = cache._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]
        assert cache.evicted == 101 and stored_bytes(cache._db) == _sum(cache.path)
        assert len(cache.get_many([f"a{i}" for i in range(1000)])) == 899
    assert frames[False] < frames[True]


def test_a_read_folds_a_log_grown_past_its_share_of_the_payload(tmp_path, monkeypatch):
    import evaluators.encoders.cache as cache_mod
    from evaluators.encoders.cache import _FOLD_SHARE, _TOUCH_BYTES, stored_bytes

    monkeypatch.setattr(cache_mod, "_TOUCH_NS", 0)
    cache = EmbeddingCache(tmp_path, "m", "r", max_bytes=0)  # unbounded: never evicts
    cache.put_many((f"k{i}", _blob(i)) for i in range(10))
    limit = int(_FOLD_SHARE * stored_bytes(cache._db) / _TOUCH_BYTES)  # touches the log may hold
    for n in range(1, limit + 1):
        cache.get_many(["k4"])
        assert len(_log(cache)) == n
    cache.get_many(["k4"])  # one more: folded and emptied
    assert _log(cache) == [] and stored_bytes(cache._db) == _sum(cache.path)


def test_eviction_and_touches_do_not_scan_the_table(tmp_path, monkeypatch):
    """Under the cap a put reads the running total; the LRU walk uses the index (query plans)."""
    import evaluators.encoders.cache as cache_mod

    monkeypatch.setattr(cache_mod, "_TOUCH_NS", 0)
    cache = EmbeddingCache(tmp_path, "m", "r", max_bytes=10**9)
    seen: list[str] = []
    cache._db.set_trace_callback(seen.append)
    cache.put_many((f"k{i}", _blob(i)) for i in range(5))
    cache.get_many(["k1", "k2"])
    cache._db.set_trace_callback(None)
    assert not [s for s in seen if "SUM(" in s.upper()]
    plan = cache._db.execute(
        "EXPLAIN QUERY PLAN SELECT id, nbytes FROM lru ORDER BY used, id"
    ).fetchall()
    assert any("COVERING INDEX lru_used" in str(row) for row in plan) and not any(
        "TEMP B-TREE" in str(row) for row in plan
    )


def _writer(folder: str, who: int, cap: int) -> None:
    cache = EmbeddingCache(folder, f"model-{who % 2}", "r", max_bytes=cap)
    for batch in range(15):
        keys = [f"w{who}-{batch}-{i}" for i in range(20)]
        cache.put_many((k, _blob(i)) for i, k in enumerate(keys))
        cache.get_many(keys[:10] + [f"w{(who + 1) % 3}-{batch}-{i}" for i in range(10)])
    cache.close()
    os._exit(0)


def test_concurrent_writers_keep_the_total_and_the_cap(tmp_path, monkeypatch):
    import multiprocessing

    import evaluators.encoders.cache as cache_mod
    from evaluators.encoders.cache import stored_bytes

    monkeypatch.setattr(cache_mod, "_TOUCH_NS", 0)
    cap = 120 * (len(_blob(0)) + 16)
    EmbeddingCache(tmp_path, "m", "r", max_bytes=cap).close()  # the schema exists before the race
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), who, cap)) for who in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    cache = EmbeddingCache(tmp_path, "m", "r", max_bytes=cap)
    assert cache._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert stored_bytes(cache._db) == _sum(cache.path)
    assert 0 < _sum(cache.path) <= cap
