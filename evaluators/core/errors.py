"""The one exception tree of xlbench.

Every error a user can cause derives from :class:`XlbenchError`; the CLIs print
its message as one sentence and exit with :attr:`XlbenchError.exit_code`.
Messages say what was expected, what arrived (truncated) and how to fix it.
"""

from __future__ import annotations

import difflib
import errno
from collections.abc import Iterable


class XlbenchError(Exception):
    """Base class of every user-facing xlbench error."""

    #: Exit code the CLI uses: 2 is a usage/input error, 1 a failed check.
    exit_code = 2


class UsageError(XlbenchError):
    """An option or argument is invalid."""


class ConfigError(UsageError):
    """The configs to score cannot be chosen: a ``--config`` the dataset lacks, or none to score.

    The one error of :func:`evaluators.data.source.select_configs`, the one selection.
    """


class InputFileError(XlbenchError):
    """An input file is missing, unreadable or malformed."""


class LangCodeError(XlbenchError):
    """A language code or pair is not known."""


class SchemaError(XlbenchError):
    """Rows, features or a built folder do not follow the dataset contract."""


class RevisionError(XlbenchError):
    """A dataset or model revision cannot be resolved to an exact commit or hash."""


class OutputError(XlbenchError):
    """The output location cannot be written."""


class EngineUnavailableError(XlbenchError):
    """A model, MT engine or resource needed for the job is not installed or reachable."""


class ModelError(XlbenchError):
    """A model's output is not usable (NaN, wrong shape or type) or the model's own code failed."""


class ValidationError(XlbenchError):
    """A built dataset failed a validation check."""

    exit_code = 1


class RemoteError(XlbenchError):
    """A remote service (the Hub, an online MT engine) refused or failed the request."""

    exit_code = 1


def truncate(value: object, limit: int = 80) -> str:
    """Return ``repr(value)`` cut to ``limit`` characters, for error messages.

    >>> truncate("x" * 100, limit=10)
    "'xxxxxx..."
    """
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def did_you_mean(name: str, choices: Iterable[str], n: int = 3, cutoff: float = 0.6) -> str:
    """Return ``" Did you mean a, b?"`` for the choices close to ``name``, or ``""``.

    >>> did_you_mean("bucc-minig", ["bucc-mining", "cbd"])
    ' Did you mean bucc-mining?'
    >>> did_you_mean("zzz", ["bucc-mining", "cbd"])
    ''
    """
    close = difflib.get_close_matches(name, list(choices), n=n, cutoff=cutoff)
    return f" Did you mean {', '.join(close)}?" if close else ""


def cannot_write(target: str, err: OSError, fix: str) -> str:
    """The one sentence for a write that failed, naming its cause and the fix.

    "free some space" is offered only when the disk or quota is full, not for a folder the user
    may not write to.

    >>> cannot_write("results to 'r'", OSError(errno.ENOSPC, "No space left on device"), "pass a writable --out")
    "Cannot write results to 'r' (No space left on device); free some space or pass a writable --out."
    >>> cannot_write("results to 'r'", PermissionError(errno.EACCES, "Permission denied"), "pass a writable --out")
    "Cannot write results to 'r' (Permission denied); pass a writable --out."
    """
    space = "free some space or " if err.errno in (errno.ENOSPC, errno.EDQUOT) else ""
    return f"Cannot write {target} ({err.strerror or err}); {space}{fix}."


def permission_sentence(err: PermissionError) -> str:
    """The one sentence for a ``PermissionError`` no reader turned into an :class:`XlbenchError`.

    A folder without search (x) permission makes even ``Path.exists()`` raise; the CLIs catch
    what escapes and print this instead of a traceback.

    >>> permission_sentence(PermissionError(13, "Permission denied", "/srv/x"))
    "Permission denied on '/srv/x' (or a folder above it); give your user read and search (x) permission on the path, or use a readable copy."
    """
    where = f" on {str(err.filename)!r} (or a folder above it)" if err.filename else ""
    return (
        f"Permission denied{where}; give your user read and search (x) permission on the path, "
        f"or use a readable copy."
    )
