"""The torch device a builder's models run on (``--device``: masked LM, ``hf:`` MT, NLI, AMR).

One resolution for every builder adapter that loads a model: the name is checked
as ``xlbench eval --device`` checks it, a device torch cannot use here is refused
in one sentence (rather than a CUDA traceback mid-build), and no ``--device`` means
cuda when torch sees one, else the CPU.
"""

from __future__ import annotations

from evaluators.run.runner import check_device, check_device_name


def resolve_device(device: str | None) -> str:
    """Return the device to load a model on: ``device`` once checked, or cuda when available, else cpu.

    Raises:
        UsageError: a malformed name, or cuda / cuda:<i> / mps that torch does not see here.
    """
    check_device(device)
    if device is not None:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def run_device(device: str | None, engine_name: str, runs_model: bool = True) -> str | None:
    """The device a build's models run on, for the manifest's ``run`` section; checked before any work.

    On the local engine the models load in this process, so the device is resolved (and
    refused) here; on another engine (Ray) each worker resolves it where its model loads.
    A build that runs no model (``runs_model=False``) only checks the name and returns ``None``.

    >>> run_device("cpu", "local"), run_device(None, "ray", runs_model=False)
    ('cpu', None)

    Raises:
        UsageError: see :func:`resolve_device` (local engine), or a malformed name.
    """
    if not runs_model:
        check_device_name(device)
        return None
    if engine_name == "local":
        return resolve_device(device)
    check_device_name(device)
    return device or "auto (each worker: cuda when available)"
