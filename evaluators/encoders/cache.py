"""Disk cache of embeddings, so that re-running an evaluator does not re-encode.

One SQLite file per (model id, revision) under ``$XLBENCH_CACHE/embeddings``
(default ``~/.cache/xlbench/embeddings``). A key names everything that changes
the stored vector: the kind of entry, the prompt prefix, the maximum length,
the layer, the pooling and the sha256 of the text. Arrays are stored exactly
(float32 ``.npy`` bytes), so a cache hit returns the same numbers as a fresh
forward pass.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import sqlite3
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from evaluators.cache_dir import xlbench_cache_root


def default_embedding_dir() -> Path:
    """Return the default embedding cache folder (``<xlbench cache>/embeddings``)."""
    return xlbench_cache_root() / "embeddings"


def text_hash(text: str) -> str:
    """Return the sha256 hex digest of ``text`` (UTF-8).

    >>> text_hash("abc")[:12]
    'ba7816bf8f01'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def make_key(kind: str, text: str, **params) -> str:
    """Return the cache key of one entry: kind, sorted parameters and the text hash.

    >>> make_key("sent", "abc", layer=12, pooling="mean")[:30]
    'sent|layer=12|pooling=mean|ba7'
    """
    parts = [kind] + [f"{k}={params[k]}" for k in sorted(params)] + [text_hash(text)]
    return "|".join(parts)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80] or "model"


def array_to_bytes(array: np.ndarray) -> bytes:
    """Serialise an array exactly (``.npy`` format)."""
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    return buf.getvalue()


def bytes_to_array(data: bytes) -> np.ndarray:
    """Inverse of :func:`array_to_bytes`."""
    return np.load(io.BytesIO(data), allow_pickle=False)


class EmbeddingCache:
    """Key -> bytes store for one model revision (an SQLite file)."""

    def __init__(self, folder: str | os.PathLike | None, model_id: str, revision: str):
        folder = Path(folder).expanduser() if folder else default_embedding_dir()
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{_slug(model_id)}@{_slug(revision)[:40]}.sqlite"
        self._db = sqlite3.connect(self.path, timeout=60)
        self._db.execute("CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, data BLOB NOT NULL)")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS model (model_id TEXT, revision TEXT)"
        )
        if not self._db.execute("SELECT 1 FROM model").fetchone():
            self._db.execute("INSERT INTO model VALUES (?, ?)", (model_id, revision))
        self._db.commit()
        self.hits = 0
        self.misses = 0

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        """Return the stored entries among ``keys``."""
        out: dict[str, bytes] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            rows = self._db.execute(
                f"SELECT key, data FROM entries WHERE key IN ({','.join('?' * len(chunk))})", chunk
            ).fetchall()
            out.update(rows)
        self.hits += len(out)
        self.misses += len(keys) - len(out)
        return out

    def put_many(self, items: Iterable[tuple[str, bytes]]) -> None:
        """Store entries (replacing equal keys) in one transaction."""
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?)", list(items))

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]

    def close(self) -> None:
        """Close the database."""
        self._db.close()


def meta_to_bytes(meta: dict) -> bytes:
    """Serialise token metadata (offsets, tokens, truncation) as JSON."""
    return json.dumps(meta, ensure_ascii=False).encode("utf-8")


def bytes_to_meta(data: bytes) -> dict:
    """Inverse of :func:`meta_to_bytes`."""
    return json.loads(data.decode("utf-8"))
