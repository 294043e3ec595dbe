"""Dataset metadata and the build manifest.

:class:`DatasetMeta` is what a card says about a version; :class:`Manifest` is
the full record of how a folder was built (``manifest.json``), written so that
two builds with the same inputs, parameters and seed differ only in timestamps.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from evaluators.errors import SchemaError

_SEMVER = re.compile(r"^\d+\.\d+\.\d+$")
#: Manifest keys that legitimately change between two identical builds.
VOLATILE_KEYS = ("started_at", "finished_at", "git_commit", "xlbench_version")


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
class InputRecord:
    """One pinned input: a file, a package resource or a Hub repo at a commit."""

    name: str
    origin: str
    sha256: str


@dataclass(frozen=True)
class ModelRecord:
    """One model or engine used by a build: MT, MLM, NLI, AMR, aligner, dictionary."""

    role: str
    id: str
    revision: str


@dataclass
class Manifest:
    """How a dataset folder was built (``manifest.json``)."""

    name: str
    family: str
    version: str
    builder: str
    seed: int
    xlbench_version: str = ""
    git_commit: str | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    inputs: list[InputRecord] = field(default_factory=list)
    models: list[ModelRecord] = field(default_factory=list)
    #: stage -> {"in": n, "kept": n, "dropped": {reason: n}} or any plain counts.
    counts: dict[str, Any] = field(default_factory=dict)
    #: config -> split -> rows.
    configs: dict[str, dict[str, int]] = field(default_factory=dict)
    changelog: list[dict[str, Any]] = field(default_factory=list)
    started_at: str = ""
    finished_at: str = ""

    def build_signature(self) -> str:
        """Return the sacreBLEU-style one-line build signature.

        >>> m = Manifest("cbd", "cbd", "1.0.0", "cbd", 13,
        ...              models=[ModelRecord("dict", "freedict-eng-deu", "2020.11.23")])
        >>> m.build_signature()
        'cbd|dict:freedict-eng-deu@2020.11.23|seed:13|v:1.0.0'
        """
        parts = [self.family]
        parts += [f"{m.role}:{m.id}@{m.revision}" for m in self.models]
        parts += [f"seed:{self.seed}", f"v:{self.version}"]
        return "|".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict with the build signature included."""
        out = asdict(self)
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
            raise SchemaError(f"manifest.json has unknown keys {unknown}; expected only {sorted(known)}.")
        required = ("name", "family", "version", "builder", "seed")
        missing = [k for k in required if k not in data]
        if missing:
            raise SchemaError(f"manifest.json lacks {missing}; rebuild the dataset with xlbench build.")
        data["inputs"] = [InputRecord(**i) for i in data.get("inputs", [])]
        data["models"] = [ModelRecord(**m) for m in data.get("models", [])]
        return cls(**data)


@dataclass(frozen=True)
class DatasetMeta:
    """What the card states about one dataset version."""

    name: str
    family: str
    version: str
    license: str
    langs: tuple[str, ...]
    build_signature: str
    hub_repo: str | None = None
    hub_revision: str | None = None
    superseded_by: str | None = None
