"""amrlib sentence-to-graph (parse) and graph-to-sentence (generate) models, batched.

The models are not pip-installable: they are tarballs from the amrlib-models
releases, unpacked into amrlib's data folder (or any folder passed as
``--amr-parser`` / ``--amr-generator``). A missing model raises
:class:`EngineUnavailableError` with the exact commands to install it.
Failures of single items are recorded with a reason, never raised.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builders.adapters.device import resolve_device
from evaluators.core import optional
from evaluators.core.errors import EngineUnavailableError

_RELEASES = "https://github.com/bjascob/amrlib-models/releases/download"
#: role -> (link name in amrlib's data folder, default release): parse_xfm BART-large
#: (alee paper's parser) and the T5 "with tense" generator.
MODELS = {
    "parse": ("model_stog", "parse_xfm_bart_large-v0_1_0"),
    "generate": ("model_gtos", "generate_t5wtense-v0_1_0"),
}


def amrlib_data_dir() -> Path:
    """Return amrlib's default model folder (``<site-packages>/amrlib/data``) without importing torch."""
    import importlib.util

    spec = importlib.util.find_spec("amrlib")
    if spec is None or not spec.origin:
        raise EngineUnavailableError(
            f"amrlib is not installed; install it with {optional.install_hint(optional.extra_of('amrlib') or 'build')}."
        )
    return Path(spec.origin).parent / "data"


def install_hint(role: str, data_dir: Path | None = None) -> str:
    """Return the shell commands that install the default model of ``role`` (``parse`` or ``generate``).

    >>> print(install_hint("parse", Path("/x/amrlib/data")))
    mkdir -p /x/amrlib/data && cd /x/amrlib/data && wget https://github.com/bjascob/amrlib-models/releases/download/parse_xfm_bart_large-v0_1_0/model_parse_xfm_bart_large-v0_1_0.tar.gz && tar xzf model_parse_xfm_bart_large-v0_1_0.tar.gz && ln -sfn model_parse_xfm_bart_large-v0_1_0 model_stog
    """
    link, release = MODELS[role]
    data_dir = data_dir or amrlib_data_dir()
    tar = f"model_{release}.tar.gz"
    return (
        f"mkdir -p {data_dir} && cd {data_dir} && wget {_RELEASES}/{release}/{tar} && "
        f"tar xzf {tar} && ln -sfn model_{release} {link}"
    )


def model_dir(role: str, path: str | os.PathLike | None = None) -> Path:
    """Return the model folder of ``role``, checking it holds an amrlib model.

    Raises:
        EngineUnavailableError: the folder is missing or has no ``amrlib_meta.json``;
            the message gives the install commands.
    """
    link, _ = MODELS[role]
    folder = Path(path) if path else amrlib_data_dir() / link
    if not (folder / "amrlib_meta.json").is_file():
        what = (
            "AMR parser (sentence-to-graph)"
            if role == "parse"
            else "AMR generator (graph-to-sentence)"
        )
        raise EngineUnavailableError(
            f"The amrlib {what} model is not installed at {str(folder)!r}; install it with: "
            f"{install_hint(role, folder.parent if path else None)} "
            f"(or pass --amr-{'parser' if role == 'parse' else 'generator'} <model folder>; offline, use --foils FILE)."
        )
    return folder


def load_amrlib_model(role: str, folder: Path, **kwargs):
    """Load an amrlib model; an import failure inside amrlib becomes one clear error.

    amrlib imports ``unidecode`` and ``word2number`` (and, per model, more) without
    declaring them, so a plain ``pip install amrlib`` fails only here.

    Raises:
        EngineUnavailableError: amrlib or a module it imports is not installed.
    """
    try:  # amrlib imports some of its undeclared dependencies (unidecode ...) only when loading
        import amrlib

        load = amrlib.load_stog_model if role == "parse" else amrlib.load_gtos_model
        return load(model_dir=str(folder), **kwargs)
    except ImportError as err:
        missing = getattr(err, "name", None) or str(err)
        raise EngineUnavailableError(
            f"amrlib cannot load the {role} model because the Python module {missing!r} is missing; install "
            f"the amrlib models/extras with {optional.install_hint(optional.extra_of('amrlib') or 'build')} (it adds unidecode and word2number)."
        ) from err


def model_revision(folder: Path) -> str:
    """Return ``<model_fn>@<version>`` from the folder's ``amrlib_meta.json``."""
    meta = json.loads((folder / "amrlib_meta.json").read_text(encoding="utf-8"))
    return f"{meta.get('version', 'unknown')}"


def model_identity(role: str, path: str | os.PathLike | None = None) -> tuple[str, str]:
    """Return ``(model id, revision)`` of the ``role`` model without loading it (a driver that runs no model).

    Raises:
        EngineUnavailableError: the model is not installed (see :func:`model_dir`).
    """
    folder = model_dir(role, path)
    return folder.resolve().name, model_revision(folder)


@dataclass(frozen=True)
class Parsed:
    """One parse: the PENMAN text or ``None`` with a failure reason."""

    graph: str | None
    reason: str = "ok"


@dataclass(frozen=True)
class Generated:
    """One generation: the sentence (``None`` if failed) and whether it was clipped."""

    text: str | None
    clipped: bool = False
    reason: str = "ok"


class AmrParser:
    """amrlib sentence-to-graph model (default: parse_xfm BART-large)."""

    def __init__(
        self, path: str | os.PathLike | None = None, batch_size: int = 16, device: str | None = None
    ):
        self.folder = model_dir("parse", path)
        self.model_id, self.revision = model_identity("parse", path)
        kwargs: dict[str, Any] = {"batch_size": batch_size, "device": resolve_device(device)}
        self.device = kwargs["device"]
        self.model = load_amrlib_model("parse", self.folder, **kwargs)

    def parse(self, sentences: Sequence[str]) -> list[Parsed]:
        """Parse sentences; a failed item is ``Parsed(None, reason)``."""
        import penman

        try:
            graphs = self.model.parse_sents(
                list(sentences), add_metadata=False, disable_progress=True
            )
        except Exception as err:  # noqa: BLE001 - a batch failure is recorded per item
            return [Parsed(None, f"parser-error:{type(err).__name__}") for _ in sentences]
        out = []
        for g in graphs:
            if g is None:
                out.append(Parsed(None, "parse-none"))
                continue
            try:
                penman.decode(g)
            except Exception:  # noqa: BLE001
                out.append(Parsed(None, "deserialisation-error"))
                continue
            out.append(Parsed(g))
        return out


class AmrGenerator:
    """amrlib graph-to-sentence model (default: T5 with tense)."""

    def __init__(
        self, path: str | os.PathLike | None = None, batch_size: int = 16, device: str | None = None
    ):
        self.folder = model_dir("generate", path)
        self.model_id, self.revision = model_identity("generate", path)
        kwargs: dict[str, Any] = {"batch_size": batch_size, "device": resolve_device(device)}
        self.device = kwargs["device"]
        self.model = load_amrlib_model("generate", self.folder, **kwargs)

    def generate(self, graphs: Sequence[str]) -> list[Generated]:
        """Generate one sentence per PENMAN graph; clipped inputs are flagged."""
        try:
            sents, clips = self.model.generate(list(graphs), disable_progress=True)
        except Exception as err:  # noqa: BLE001
            return [Generated(None, False, f"generator-error:{type(err).__name__}") for _ in graphs]
        return [
            Generated(s if s else None, bool(c), "ok" if s else "empty-generation")
            for s, c in zip(sents, clips)
        ]
