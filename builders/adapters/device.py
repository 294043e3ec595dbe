"""The torch device a builder's models run on (``--device``: masked LM, ``hf:`` MT, NLI, AMR).

One resolution for every builder adapter that loads a model: the name is checked
as ``xlbench eval --device`` checks it, a device torch cannot use here is refused
in one sentence (rather than a CUDA traceback mid-build), and no ``--device`` means
cuda when torch sees one, else the CPU.
"""

from __future__ import annotations

from evaluators.core.errors import UsageError


def check_device_name(device: str | None) -> None:
    """Refuse a device name torch would not accept (no torch import).

    >>> check_device_name("cuda:1"), check_device_name(None)
    (None, None)
    """
    from evaluators.run.runner import check_device

    check_device(device)


def resolve_device(device: str | None) -> str:
    """Return the device to load a model on: ``device`` once checked, or cuda when available, else cpu.

    Raises:
        UsageError: a malformed name, or cuda / cuda:<i> / mps that torch does not see here.
    """
    check_device_name(device)
    import torch

    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda"):
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = int(device.split(":", 1)[1]) if ":" in device else 0
        if index >= count:
            raise UsageError(
                f"--device {device} was asked for, but torch sees {count} CUDA device(s) on this machine; "
                f"pass --device cpu, or leave --device out to use cuda only when there is one."
            )
    elif device == "mps" and not torch.backends.mps.is_available():
        raise UsageError(
            "--device mps was asked for, but torch sees no MPS device on this machine; "
            "pass --device cpu, or leave --device out."
        )
    return device


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
