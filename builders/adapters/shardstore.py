"""A content-addressed translation store that many workers on many nodes can write at once.

SQLite on one disk is not safe across nodes, so workers of a distributed build
never touch the translation cache. Each worker writes the translations of the
batch it finished as one JSON **shard** under a shared folder::

    <root>/<engine>/<sha256(engine, version, pair)[:16]>/<sha256(keys)>.json

An entry's key is the sha256 of ``(engine, version, pair, texts)``: the texts of
one *unit* (a whole request for a stateful engine such as Apertium, whose output
depends on what the same call translated before; a single sentence otherwise).
A shard is written to a temporary name and renamed, so a killed worker leaves
nothing half-written; two workers writing the same batch write the same bytes.
A resumed run loads every shard first and re-translates nothing that finished.
At the end of a build the driver merges the translations into the local SQLite
cache (:class:`~builders.adapters.mt.TranslationCache`) through the ordinary
:class:`~builders.adapters.mt.CachedTranslator`, in input order, exactly as a
local build writes it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builders.adapters import mt
from evaluators.compute.engine import StageProgress
from evaluators.core.errors import EngineUnavailableError, OutputError

log = logging.getLogger("xlbench.mt")

#: Format version of a shard file.
SHARD_FORMAT = 1


def unit_key(engine: str, version: str, pair: str, texts: Sequence[str]) -> str:
    """Return the content address of one translation unit.

    >>> k = unit_key("apertium:eng-spa", "3.8+abc", "eng_Latn-spa_Latn", ["a dog", "a cat"])
    >>> k == unit_key("apertium:eng-spa", "3.8+abc", "eng_Latn-spa_Latn", ["a dog", "a cat"]), len(k)
    (True, 64)
    >>> k == unit_key("apertium:eng-spa", "3.8+abd", "eng_Latn-spa_Latn", ["a dog", "a cat"])
    False
    """
    payload = json.dumps(
        [engine, version, pair, list(texts)], ensure_ascii=False, separators=(",", ":")
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ShardStore:
    """Translation shards of one (engine, version, pair) under ``root``.

    Args:
        root: the shared folder (on a cluster: storage every node mounts at the same path).
        engine, version, pair: what the translations are of; each triple has its own folder.
    """

    def __init__(self, root: str | os.PathLike, engine: str, version: str, pair: str):
        self.root = Path(root).expanduser()
        self.engine, self.version, self.pair = engine, version, pair
        space = hashlib.sha256(json.dumps([engine, version, pair]).encode("utf-8")).hexdigest()[:16]
        self.folder = self.root / re.sub(r"[^A-Za-z0-9._-]+", "_", engine) / space

    def key(self, texts: Sequence[str]) -> str:
        """Return the key of a unit of this store's engine."""
        return unit_key(self.engine, self.version, self.pair, texts)

    def load(self) -> dict[str, list[str]]:
        """Return ``key -> translations`` of every complete shard (unreadable files are skipped with a warning)."""
        out: dict[str, list[str]] = {}
        if not self.folder.is_dir():
            return out
        for path in sorted(self.folder.glob("*.json")):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                entries = data["entries"] if data.get("format") == SHARD_FORMAT else None
            except (OSError, ValueError, KeyError, AttributeError) as err:
                log.warning("skipping the unreadable translation shard %s (%s)", path, err)
                continue
            if isinstance(entries, dict):
                out.update({k: list(v) for k, v in entries.items()})
        return out

    def write(self, entries: Mapping[str, Sequence[str]]) -> Path | None:
        """Write one shard atomically; return its path (``None`` for no entries).

        Raises:
            OutputError: the folder cannot be written.
        """
        if not entries:
            return None
        body = {"format": SHARD_FORMAT, "engine": self.engine, "version": self.version, "pair": self.pair,
                "entries": {k: list(entries[k]) for k in sorted(entries)}}  # fmt: skip
        text = json.dumps(body, ensure_ascii=False, sort_keys=True)
        name = hashlib.sha256("\n".join(sorted(entries)).encode("utf-8")).hexdigest()[:32] + ".json"
        path = self.folder / name
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except OSError as err:
            raise OutputError(
                f"Cannot write a translation shard under {str(self.folder)!r} ({err.strerror}); "
                f"pass a writable shared --mt-store."
            ) from err
        return path


# --- the distributed MT stage -------------------------------------------------------


@dataclass(frozen=True)
class MTStage:
    """Stage factory of distributed translation: the engine is rebuilt on each worker from its spec.

    Each item is one unit (a list of texts). A stateful engine translates each unit
    in its own call (as :class:`~builders.adapters.mt.CachedTranslator` does
    locally); others translate a batch's texts in one call. Finished batches go to
    the shard store before they are returned.

    Attributes:
        spec: the resolved engine name (``apertium:eng-spa``, ``bergamot``, ``hf:<id>``, ``google``).
        src, tgt: the pair.
        version: the engine version the driver saw; a worker whose engine differs refuses to run.
        store: the shard-store root (``None``: keep nothing).
        options: ``select_translator`` keyword options (rate, retries, batch_size, num_beams, revision).
    """

    spec: str
    src: str
    tgt: str
    version: str
    store: str | None = None
    options: tuple[tuple[str, Any], ...] = ()

    def open(self):
        """Build the engine on this worker; return ``units -> translations``."""
        # looked up on the module at call time, as before: tests replace mt.select_translator
        engine = mt.select_translator(self.spec, self.src, self.tgt, **dict(self.options))
        if engine.version != self.version:
            raise EngineUnavailableError(
                f"The MT engine {engine.name} on this worker is version {engine.version}, not {self.version} as on the "
                f"driver; install the same engine data on every node."
            )
        store = (
            ShardStore(self.store, engine.name, engine.version, "-".join(engine.pair))
            if self.store
            else None
        )
        return _MTRunner(engine, store)


class _MTRunner:
    def __init__(self, engine, store: ShardStore | None):
        self.engine, self.store = engine, store

    def __call__(self, units: list[list[str]]) -> list[list[str]]:
        if getattr(self.engine, "stateful", False):
            results = [list(self.engine.translate_batch(list(u))) for u in units]
        else:
            flat = [t for u in units for t in u]
            done = list(self.engine.translate_batch(flat))
            if len(done) != len(flat):
                raise EngineUnavailableError(
                    f"{self.engine.name} returned {len(done)} translations for {len(flat)} sentences."
                )
            results, cursor = [], 0
            for u in units:
                results.append(done[cursor : cursor + len(u)])
                cursor += len(u)
        for u, r in zip(units, results):
            if len(r) != len(u):
                raise EngineUnavailableError(
                    f"{self.engine.name} returned {len(r)} translations for {len(u)} sentences."
                )
        if self.store is not None:
            self.store.write({self.store.key(u): r for u, r in zip(units, results)})
        return results


class StoreEngine:
    """The driver's view of a distributed translation: an MT engine served from precomputed units.

    Wraps the real engine (same ``name``, ``version``, ``pair``, ``online``,
    ``stateful``) so that the ordinary :class:`~builders.adapters.mt.CachedTranslator`
    runs exactly as in a local build (same cache reads and writes, same counts);
    its engine calls are answered from ``units``. A call that was not planned (none
    should be) falls back to the real engine, with a warning.
    """

    def __init__(self, engine, units: Mapping[str, Sequence[str]]):
        self.engine = engine
        self.units = units
        self.name, self.version, self.pair = engine.name, engine.version, engine.pair
        self.online = getattr(engine, "online", False)
        self.stateful = getattr(engine, "stateful", False)
        self.fallbacks = 0
        self._pair = "-".join(engine.pair)

    def _key(self, texts: Sequence[str]) -> str:
        return unit_key(self.name, self.version, self._pair, texts)

    def translate_batch(self, texts: Sequence[str]) -> list[str]:
        """Return the planned translations of ``texts``."""
        if self.stateful:
            found = self.units.get(self._key(texts))
            if found is not None:
                return list(found)
            self.fallbacks += 1
            log.warning("translating an unplanned request of %d texts on the driver", len(texts))
            return list(self.engine.translate_batch(list(texts)))
        out: list[str | None] = [self.units.get(self._key([t]), [None])[0] for t in texts]
        missing = [t for t, o in zip(texts, out) if o is None]
        if missing:
            self.fallbacks += 1
            log.warning("translating %d unplanned sentences on the driver", len(missing))
            extra = iter(self.engine.translate_batch(missing))
            out = [o if o is not None else next(extra) for o in out]
        return out  # type: ignore[return-value]


def plan_units(
    requests: Iterable[Sequence[str]], cached: set[str], stateful: bool, batch_size: int
) -> list[list[str]]:
    """Return the distinct units a local build of ``requests`` may send its engine, in first-need order.

    Mirrors :meth:`~builders.adapters.mt.CachedTranslator.translate`: a stateful
    engine gets each ``batch_size`` slice of a request's distinct texts in one call
    unless all of the slice is cached; another engine gets each uncached text. A
    superset is fine (a slice cached by an earlier request in the same run is
    planned but never asked for).

    >>> plan_units([["a", "b", "a"], ["c"], ["a", "b"]], {"c"}, stateful=True, batch_size=10)
    [['a', 'b']]
    >>> plan_units([["a", "b", "c", "d"]], {"a", "b"}, stateful=True, batch_size=2)
    [['c', 'd']]
    >>> plan_units([["a", "b", "a"], ["c"], ["b", "d"]], {"c"}, stateful=False, batch_size=10)
    [['a'], ['b'], ['d']]
    """
    seen: set[tuple[str, ...]] = set()
    out: list[list[str]] = []
    size = max(batch_size, 1)
    for request in requests:
        unique = list(dict.fromkeys(request))
        if stateful:
            slices = [tuple(unique[i : i + size]) for i in range(0, len(unique), size)]
            units = [s for s in slices if not all(t in cached for t in s)]
        else:
            units = [(t,) for t in unique if t not in cached]
        for unit in units:
            if unit not in seen:
                seen.add(unit)
                out.append(list(unit))
    return out


def translate_units(engine, stage: MTStage, units: list[list[str]], store: ShardStore | None, batch_size: int,
                    driver_engine) -> dict[str, list[str]]:  # fmt: skip
    """Translate ``units`` on ``engine`` (an :mod:`evaluators.compute.engine` backend); return ``key -> translations``.

    Units already in ``store`` are not sent again (resume). The rest are cut into
    batches of about ``batch_size`` texts in plan order, a deterministic split.
    """
    pair = "-".join(driver_engine.pair)
    keys = [unit_key(driver_engine.name, driver_engine.version, pair, u) for u in units]
    done: dict[str, list[str]] = store.load() if store is not None else {}
    found = {k: done[k] for k in keys if k in done}
    todo = [u for u, k in zip(units, keys) if k not in found]
    if found and store is not None:
        log.info(
            "resume: %d of %d translation units are already in %s",
            len(found),
            len(units),
            store.folder,
        )
    batches: list[list[list[str]]] = []
    current: list[list[str]] = []
    size = 0
    for unit in todo:
        current.append(unit)
        size += len(unit)
        if size >= batch_size:
            batches.append(current)
            current, size = [], 0
    if current:
        batches.append(current)
    progress = StageProgress(
        f"translate ({driver_engine.name})", "texts", lambda batch: sum(len(u) for u in batch)
    )
    results = engine.map_batches(stage, batches, progress)
    for batch, res in zip(batches, results):
        for unit, tr in zip(batch, res):
            found[unit_key(driver_engine.name, driver_engine.version, pair, unit)] = list(tr)
    return found
