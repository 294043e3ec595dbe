"""A real Ray cluster on 127.0.0.1 per test module (2 CPUs), and killing a worker mid-batch."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def ray_cluster():
    """Start Ray on loopback with 2 CPUs for one test module; shut it down after it.

    Per module, not per session: no other test then runs beside a live Ray driver, where a
    process it forks (a local engine's pool, a subprocess) could break the driver's link to
    the cluster (see ``evaluators.compute.engine._start_method``).
    """
    ray = pytest.importorskip(
        "ray", reason="ray is not installed (pip install 'xlbench[ray]'); Ray tests skipped"
    )
    os.environ.setdefault(
        "RAY_AUTH_MODE", "disabled"
    )  # a loopback test cluster: no token written to ~/.ray
    if not ray.is_initialized():
        ray.init(
            num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False
        )
    # the workers cannot import this file (loaded by path): KillGate travels by value
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield ray
    ray.shutdown()


def _is_ray_worker(pid: int | str = "self") -> bool:
    """Whether process ``pid`` is a Ray worker (its title starts with ``ray::``)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::")
    except OSError:  # gone already
        return False


@dataclass(frozen=True)
class KillGate:
    """Handed to a stage: its first pass through :meth:`wait` in a Ray worker waits to be killed.

    The worker writes ``running-<pid>`` into ``folder`` and blocks until ``killed`` exists, so
    the :class:`Killer` lands in the middle of a batch whatever the machine's load (a kill
    timed on progress files can come after the last batch). Its retry on the restarted
    worker finds ``killed`` and goes on.
    """

    folder: str

    def wait(self) -> None:
        """Block here until killed, the first time a Ray worker passes; elsewhere return at once."""
        if Path(self.folder, "killed").exists() or not _is_ray_worker():
            return
        Path(self.folder, f"running-{os.getpid()}").write_text("1")
        end = time.monotonic() + 300
        while not Path(self.folder, "killed").exists() and time.monotonic() < end:
            time.sleep(0.05)


class Killer(threading.Thread):
    """SIGKILL the Ray worker that waits at a :class:`KillGate` in ``folder``, then release the gate.

    ``killed`` is the pid it killed (``None`` if no worker reached the gate in time).
    """

    def __init__(self, folder: str | Path, timeout: float = 300.0):
        super().__init__(daemon=True)
        self.folder, self.timeout = Path(folder), timeout
        self.killed: int | None = None

    def run(self) -> None:
        end = time.monotonic() + self.timeout
        while time.monotonic() < end:
            for mark in sorted(self.folder.glob("running-*")):
                pid = int(mark.name.split("-", 1)[1])
                # only ever a Ray worker: never this process or a local build's
                if _is_ray_worker(pid):
                    os.kill(pid, signal.SIGKILL)
                    self.killed = pid
                    Path(self.folder, "killed").write_text(str(pid))
                    return
            time.sleep(0.05)


@pytest.fixture
def killer(tmp_path):
    """A started :class:`Killer` and the :class:`KillGate` to hand to the stage it kills."""
    gate = tmp_path / "kill-gate"
    gate.mkdir()
    k = Killer(gate)
    k.start()
    yield k, KillGate(str(gate))
    k.join(timeout=1)
