"""The persistent translation cache (SQLite) and the translator wrapper that counts translator calls and hits."""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from builders.adapters.mt.base import Translator
from evaluators.core.errors import (
    EngineUnavailableError,
    InputFileError,
    OutputError,
    UsageError,
)
from evaluators.core.progress import Progress, scoped

log = logging.getLogger("xlbench.mt")


# --- cache ---------------------------------------------------------------------------


class TranslationCache:
    """A persistent SQLite cache of translations keyed by (translator, version, pair, text).

    Writes are committed after every translator batch, so an interrupted build keeps
    everything but the batch in flight. Before a batch goes to the translator its
    texts are recorded (committed) as *pending*; the batch's translations replace
    that record in one transaction. A rerun therefore knows exactly which texts
    an interrupted run lost, and :class:`CachedTranslator` reports them as
    re-translated.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path).expanduser()
        shown = repr(str(self.path))
        if self.path.is_dir():
            raise UsageError(
                f"The translation cache {shown} is a directory, expected a file; pass --mt-cache FILE.sqlite."
            )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._con = sqlite3.connect(str(self.path))
        except (OSError, sqlite3.Error) as err:
            raise OutputError(
                f"Cannot create the translation cache {shown} ({err}); pass a writable --mt-cache or --no-mt-cache."
            ) from err
        # The column is still called ``engine`` (the translator's name): renaming it would orphan
        # every existing cache file.
        try:
            self._con.execute(
                "CREATE TABLE IF NOT EXISTS translations (engine TEXT, version TEXT, pair TEXT, text TEXT, "
                "translation TEXT, PRIMARY KEY (engine, version, pair, text))"
            )
            self._con.execute(
                "CREATE TABLE IF NOT EXISTS pending (engine TEXT, version TEXT, pair TEXT, text TEXT, "
                "PRIMARY KEY (engine, version, pair, text))"
            )
            self._con.commit()
        except sqlite3.DatabaseError as err:
            self._con.close()
            if isinstance(err, sqlite3.OperationalError) and (
                "readonly" in str(err) or "unable to open" in str(err)
            ):
                raise OutputError(
                    f"Cannot write the translation cache {shown} ({err}); pass a writable --mt-cache or --no-mt-cache."
                ) from err
            raise InputFileError(
                f"The translation cache {shown} is not a usable SQLite database ({err}); delete it (it only "
                f"saves time) or pass another --mt-cache."
            ) from err

    def get_many(
        self, translator: str, version: str, pair: str, texts: Iterable[str]
    ) -> dict[str, str]:
        """Return ``text -> translation`` for the texts already cached."""
        return dict(
            self._select("translations", "text, translation", translator, version, pair, texts)
        )

    def pending_among(
        self, translator: str, version: str, pair: str, texts: Iterable[str]
    ) -> set[str]:
        """Return the texts an interrupted run had sent to the translator without storing the result."""
        return {row[0] for row in self._select("pending", "text", translator, version, pair, texts)}

    def _select(
        self,
        table: str,
        columns: str,
        translator: str,
        version: str,
        pair: str,
        texts: Iterable[str],
    ) -> list:
        texts = list(dict.fromkeys(texts))
        out: list = []
        for start in range(0, len(texts), 500):
            chunk = texts[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._execute(
                f"SELECT {columns} FROM {table} WHERE engine=? AND version=? AND pair=? AND text IN ({marks})",
                (translator, version, pair, *chunk),
            )
            out += rows.fetchall()
        return out

    def _execute(self, sql: str, params: tuple = ()):
        try:
            return self._con.execute(sql, params)
        except sqlite3.DatabaseError as err:
            raise InputFileError(
                f"The translation cache {str(self.path)!r} cannot be read ({err}); delete it or pass another --mt-cache."
            ) from err

    def mark_pending(self, translator: str, version: str, pair: str, texts: Sequence[str]) -> None:
        """Record (and commit) that ``texts`` are about to be sent to the translator."""
        self._write(
            "INSERT OR IGNORE INTO pending VALUES (?, ?, ?, ?)",
            [(translator, version, pair, t) for t in texts],
        )

    def put_many(self, translator: str, version: str, pair: str, items: dict[str, str]) -> None:
        """Store translations, clear their pending record and commit, in one transaction."""
        try:
            with self._con:
                self._con.executemany(
                    "INSERT OR REPLACE INTO translations VALUES (?, ?, ?, ?, ?)",
                    [(translator, version, pair, t, tr) for t, tr in items.items()],
                )
                self._con.executemany(
                    "DELETE FROM pending WHERE engine=? AND version=? AND pair=? AND text=?",
                    [(translator, version, pair, t) for t in items],
                )
        except sqlite3.DatabaseError as err:
            raise OutputError(
                f"Cannot write the translation cache {str(self.path)!r} ({err}); pass a writable --mt-cache."
            ) from err

    def _write(self, sql: str, rows: list[tuple]) -> None:
        try:
            with self._con:
                self._con.executemany(sql, rows)
        except sqlite3.DatabaseError as err:
            raise OutputError(
                f"Cannot write the translation cache {str(self.path)!r} ({err}); pass a writable --mt-cache."
            ) from err

    def __len__(self) -> int:
        return self._con.execute("SELECT COUNT(*) FROM translations").fetchone()[0]

    def close(self) -> None:
        """Close the database."""
        self._con.close()


@dataclass
class CachedTranslator:
    """Translate through the cache, in translator batches of ``batch_size`` texts.

    Each batch is committed to the cache as soon as the translator returns it, so a
    killed build loses at most the batch in flight. For a ``stateful`` translator
    (whose output for a text may depend on the texts sent before it in the same
    call, like Apertium's tagger) a request is cut into batches by position in
    the request alone, and each batch is atomic: served from the cache only when
    every text in it is cached, otherwise all its texts are translated again in
    one translator call. Batches are thus the same in cold and resumed builds.

    Attributes:
        requested: texts asked for (duplicates included).
        cached: distinct texts served from the cache.
        translated: distinct texts sent to the translator.
        retranslated: texts sent to the translator again: lost in flight by an
            interrupted earlier run, or cached but inside an incomplete stateful batch.
        batches: translator calls.
    """

    translator: Translator
    cache: TranslationCache | None
    batch_size: int = 512
    requested: int = 0
    cached: int = 0
    translated: int = 0
    retranslated: int = 0
    batches: int = 0

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise UsageError(f"--mt-batch-size must be at least 1, got {self.batch_size}.")

    @property
    def pair_key(self) -> str:
        """The pair part of the cache key."""
        return "-".join(self.translator.pair)

    def translate(self, texts: Sequence[str]) -> list[str]:
        """Translate ``texts`` (order kept); each distinct text is translated at most once, ever."""
        self.requested += len(texts)
        unique = list(dict.fromkeys(texts))
        name, version, key = self.translator.name, self.translator.version, self.pair_key
        done = self.cache.get_many(name, version, key, unique) if self.cache is not None else {}
        size = max(self.batch_size, 1)
        if getattr(self.translator, "stateful", False):
            batches = [unique[i : i + size] for i in range(0, len(unique), size)]
            batches = [b for b in batches if not all(t in done for t in b)]
            redo = sum(1 for b in batches for t in b if t in done)
            for b in batches:
                for t in b:
                    done.pop(t, None)
        else:
            todo = [t for t in unique if t not in done]
            batches = [todo[i : i + size] for i in range(0, len(todo), size)]
            redo = 0
        self.cached += len(done)
        todo_all = [t for b in batches for t in b]
        if self.cache is not None and todo_all:
            redo += len(self.cache.pending_among(name, version, key, todo_all))
        self.retranslated += redo
        if redo:
            log.info(
                "%s: re-translating %d segments (lost by an interrupted run or in an incomplete batch)",
                name,
                redo,
            )
        if not todo_all:
            return [done[t] for t in texts]
        # silent for the one-sentence requests of a silver build (its own line counts those)
        label = scoped(f"translate ({name})")
        with Progress(len(todo_all), label, unit="texts", quiet_if_short=True) as bar:
            for chunk in batches:
                if self.cache is not None:
                    self.cache.mark_pending(name, version, key, chunk)
                result = self.translator.translate_batch(chunk)
                if len(result) != len(chunk):
                    raise EngineUnavailableError(
                        f"{name} returned {len(result)} translations for {len(chunk)} sentences; the translator is broken."
                    )
                new = dict(zip(chunk, result))
                if self.cache is not None:
                    self.cache.put_many(name, version, key, new)
                done.update(new)
                self.translated += len(chunk)
                self.batches += 1
                bar.update(len(chunk))
        return [done[t] for t in texts]

    def counts(self) -> dict[str, int]:
        """Counters for the manifest."""
        return {
            "requested": self.requested,
            "cached": self.cached,
            "translated": self.translated,
            "retranslated": self.retranslated,
            "engine_batches": self.batches,  # manifest key (run.mt): kept, or manifests would change
        }
