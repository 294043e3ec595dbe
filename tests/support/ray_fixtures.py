"""A real Ray cluster on 127.0.0.1 for the whole test session (2 CPUs), and worker-killing helpers."""

from __future__ import annotations

import os
import signal
import threading
import time
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
    yield ray
    ray.shutdown()


def ray_worker_pids(title: str) -> list[int]:
    """Return the pids of Ray worker processes whose title starts with ``ray::<title>``."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if cmd.startswith(f"ray::{title}"):
            out.append(int(proc.name))
    return sorted(out)


class Killer(threading.Thread):
    """Kill one Ray worker (SIGKILL) once ``ready()`` is true; records the pid it killed."""

    def __init__(self, title: str, ready, timeout: float = 120.0):
        super().__init__(daemon=True)
        self.title, self.ready, self.timeout = title, ready, timeout
        self.killed: int | None = None

    def run(self) -> None:
        end = time.monotonic() + self.timeout
        while time.monotonic() < end and self.killed is None:
            if self.ready():
                pids = ray_worker_pids(self.title)
                if pids:
                    os.kill(pids[0], signal.SIGKILL)
                    self.killed = pids[0]
                    return
            time.sleep(0.05)


@pytest.fixture
def killer():
    """Build a :class:`Killer` (started by the test)."""
    return Killer
