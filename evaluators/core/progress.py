"""Progress people can see: tqdm on a terminal, periodic log lines otherwise.

A long run under ``nohup``, CI or a job scheduler writes to a file, where a tqdm bar
is one ever-growing line of carriage returns, or nothing. :class:`Progress` prints
``<label>: 1200/5000 items (24%), 310.2 items/s, ETA 12s`` every ``interval``
seconds to stderr instead, and a final line when done.
:func:`quiet_libraries` turns off the ``datasets``/``transformers`` bars unless verbose.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import IO, Any

#: Seconds between two progress lines when stderr is not a terminal.
DEFAULT_INTERVAL = 30.0


def format_line(label: str, done: int, total: int | None, elapsed: float) -> str:
    """Return one progress line.

    >>> format_line("encode", 50, 200, 10.0)
    'encode: 50/200 items (25%), 5.0 items/s, ETA 30s'
    >>> format_line("mine", 7, None, 0.0)
    'mine: 7 items'
    """
    rate = done / elapsed if elapsed > 0 else None
    head = (
        f"{label}: {done}/{total} items ({100 * done / total:.0f}%)"
        if total
        else f"{label}: {done} items"
    )
    if rate is None:
        return head
    eta = f", ETA {_duration((total - done) / rate)}" if total and rate > 0 else ""
    return f"{head}, {rate:.1f} items/s{eta}"


def _duration(seconds: float) -> str:
    """Format seconds as ``12s``, ``3m05s`` or ``1h02m``.

    >>> _duration(12.4), _duration(185), _duration(3725)
    ('12s', '3m05s', '1h02m')
    """
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


class Progress:
    """Count items and report progress; use as a context manager.

    Args:
        total: items expected (``None`` when unknown).
        label: what is being done ("encoding deu_Latn").
        stream: where lines go (default ``sys.stderr``).
        interval: seconds between lines when not on a terminal.
        tty: force terminal (tqdm) or line mode; default: ``stream.isatty()``.
        clock: time source (tests pass a fake one).
    """

    def __init__(
        self,
        total: int | None,
        label: str,
        stream: IO[str] | None = None,
        interval: float = DEFAULT_INTERVAL,
        tty: bool | None = None,
        clock=time.monotonic,
    ) -> None:
        self.total, self.label, self.interval, self._clock = total, label, interval, clock
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)()) if tty is None else tty
        self.done = 0
        self._start = self._last = clock()
        self._bar: Any = None
        if self.tty:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=label, file=self.stream, unit="item", leave=False)

    def update(self, n: int = 1) -> None:
        """Record ``n`` more items done; print a line if ``interval`` has passed."""
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
            return
        now = self._clock()
        if now - self._last >= self.interval:
            self._last = now
            self._emit(now)

    def _emit(self, now: float) -> None:
        print(
            format_line(self.label, self.done, self.total, now - self._start),
            file=self.stream,
            flush=True,
        )

    def close(self) -> None:
        """Finish: close the bar, or print the final line (always, so a log shows the rate)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
            return
        self._emit(self._clock())

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Loggers of libraries that narrate at INFO (httpx: one line per HTTP request); WARNING unless verbose.
CHATTY_LOGGERS = (
    "httpx",
    "httpcore",
    "huggingface_hub",
    "urllib3",
    "filelock",
    "fsspec",
    "sentence_transformers",
)
#: The same choice for libraries imported later: each reads these when it is first imported.
#: Set only where the user has not (their value wins).
QUIET_ENV = {
    "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
    # datasets logs a failed read (damaged parquet) before raising it; xlbench says it in one sentence.
    "DATASETS_VERBOSITY": "critical",
    "TRANSFORMERS_VERBOSITY": "error",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
}


def quiet_libraries(verbose: bool = False) -> None:
    """Keep library logs, load reports and progress bars off stderr unless ``verbose`` (``-v``).

    The one place that decides it, for the command line (:func:`evaluators.cli.configure_logging`)
    and the Python API (:func:`evaluators.run.runner.run_grid`). Libraries already imported are
    told now; ``datasets`` and ``transformers`` imported later read :data:`QUIET_ENV`, so nothing
    heavy is imported here.
    """
    if verbose:
        return
    for name in CHATTY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    for var, value in QUIET_ENV.items():
        os.environ.setdefault(var, value)
    hub = sys.modules.get("huggingface_hub.utils")
    if hub is not None:
        hub.disable_progress_bars()
    datasets = sys.modules.get("datasets")
    if datasets is not None:
        datasets.disable_progress_bars()
        datasets.logging.set_verbosity(logging.CRITICAL)
    tlog = sys.modules.get("transformers.utils.logging")  # the encoders extra
    if tlog is not None:
        tlog.disable_progress_bar()
        tlog.set_verbosity_error()
