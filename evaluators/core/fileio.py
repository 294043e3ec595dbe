"""Atomic file and folder writes that follow the umask, and cleanup of what killed runs left behind.

- :func:`atomic_write_text` writes a file through a temporary sibling and
  ``os.replace``: readers see the old file or the new one, never half of one.
- :func:`make_temp_dir` makes a temporary folder whose name carries the PID of
  its owner, with the mode any ``mkdir`` would give (``tempfile.mkdtemp`` makes
  0700 folders and ``mkstemp`` 0600 files, which then end up as the published
  result: they must follow the umask like any other file).
- :func:`rename_noreplace` is the ONE "create or fail" step: it moves a finished
  folder into place only if nothing is there (``renameat2(RENAME_NOREPLACE)``
  on Linux, else a lock file around a check and a rename), and
  :func:`rename_exchange` swaps a finished folder with an existing one.
- :func:`clean_stale` removes temporary folders and files whose owning process
  is dead (``.X.tmp-<pid>-*``, ``.X.old-<pid>``, ``xlbench-publish-<pid>-*``);
  :func:`clean_stale_writes` those of :func:`atomic_write` in a folder of results.
- :func:`removed_if_failed` takes back the folders a failed block created, so
  a run that fails before its first file leaves no empty ``--out`` behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import re
import secrets
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
#: A temporary name made by this module: ``<prefix><pid>-<random>`` or ``<prefix><pid>``.
_PID_NAME = re.compile(r"(?P<pid>\d+)(?:-[0-9a-z]+)?$")
#: Temporary names without a PID (written by older versions) are removed once they are this old.
LEGACY_AGE_S = 6 * 3600
#: The temporary sibling of :func:`atomic_write`: ``.<name>.tmp-<pid>-<random>``.
ATOMIC_TEMP = re.compile(r"^\..+\.tmp-(?P<pid>\d+)-[0-9a-f]+$")
#: Temporary names of older versions' writers in a results folder (``mkstemp``: no PID).
_LEGACY_WRITES = (".tmp-", ".probe-")


def current_umask() -> int:
    """Return the process umask (without changing it where ``/proc`` can tell it)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def why_not_a_folder(path: str | os.PathLike) -> str:
    """What is wrong with a path that should be a folder, for a message: missing, or a file.

    >>> why_not_a_folder("/no/such/folder"), why_not_a_folder(__file__)
    ('does not exist', 'is a file, not a folder')
    """
    return "is a file, not a folder" if Path(path).exists() else "does not exist"


def folder_bytes(folder: str | os.PathLike) -> int:
    """Bytes of the files below ``folder`` (0 when it is gone; files removed meanwhile count 0)."""
    total = 0
    for path in Path(folder).rglob("*"):
        with contextlib.suppress(OSError):
            if path.is_file():
                total += path.stat().st_size
    return total


def temp_name(prefix: str) -> str:
    """Return ``<prefix><pid>-<random>``: a temporary name that says which process owns it.

    >>> temp_name(".x.tmp-").startswith(f".x.tmp-{os.getpid()}-")
    True
    """
    return f"{prefix}{os.getpid()}-{secrets.token_hex(4)}"


def make_temp_dir(prefix: str, parent: str | os.PathLike | None = None) -> Path:
    """Create an empty folder ``<parent>/<prefix><pid>-<random>`` with umask permissions; return it.

    ``parent`` defaults to the system temporary folder.
    """
    import tempfile

    root = Path(parent) if parent is not None else Path(tempfile.gettempdir())
    for _ in range(20):
        path = root / temp_name(prefix)
        try:
            os.mkdir(path, 0o777)  # the kernel applies the umask
            return path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(root / prefix))


def atomic_write(path: str | os.PathLike, write: Callable[[Path], object]) -> Path:
    """Write ``path`` atomically: ``write(tmp)`` fills a temporary sibling, then ``os.replace``.

    The sibling is named ``.<name>.tmp-<pid>-<random>`` (:data:`ATOMIC_TEMP`), so one
    left by a killed writer is removed by :func:`clean_stale_writes`; on any failure here
    (a full disk included) it is removed at once. Permissions follow the umask.

    Raises:
        OSError: the folder cannot be written (nothing is left behind).
    """
    final = Path(path)
    tmp = final.with_name(temp_name(f".{final.name}.tmp-"))
    try:
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        write(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, final)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return final


def atomic_write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (:func:`atomic_write`), with umask permissions.

    Raises:
        OSError: the folder cannot be written (the temporary file is removed).
    """
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding=encoding))


def _libc():
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = lib.renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_RENAMEAT2 = _libc()


def _renameat2(src: Path, dst: Path, flags: int) -> bool:
    """Call ``renameat2``; return ``False`` when the system or filesystem does not support the flag."""
    if _RENAMEAT2 is None:
        return False
    if _RENAMEAT2(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(dst))


@contextlib.contextmanager
def _lock(target: Path) -> Iterator[None]:
    """Hold ``.<name>.lock`` next to ``target`` (O_EXCL), for systems without ``renameat2``."""
    lock = target.with_name(f".{target.name}.lock")
    for _ in range(600):
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            owner = _read_pid(lock)
            if owner is not None and not pid_alive(owner):
                with contextlib.suppress(OSError):
                    os.unlink(lock)
                continue
            time.sleep(0.05)
    else:
        raise FileExistsError(errno.EEXIST, "locked by another process", str(lock))
    try:
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock)


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip() or "x")
    except (OSError, ValueError):
        return None


def rename_noreplace(src: str | os.PathLike, dst: str | os.PathLike) -> None:
    """Move ``src`` to ``dst`` only if nothing exists at ``dst``, atomically.

    Raises:
        FileExistsError: something exists at ``dst`` (it is left untouched).
        OSError: the rename failed otherwise.
    """
    src, dst = Path(src), Path(dst)
    if _renameat2(src, dst, _RENAME_NOREPLACE):
        return
    with _lock(dst):
        if os.path.lexists(dst):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(dst))
        os.rename(src, dst)


def rename_exchange(src: str | os.PathLike, dst: str | os.PathLike) -> None:
    """Swap ``src`` and ``dst`` atomically where supported (else: ``dst`` aside, ``src`` in, under a lock).

    Afterwards ``src`` holds what was at ``dst``; the caller removes it.

    Raises:
        FileNotFoundError: nothing exists at ``dst`` any more.
        OSError: the swap failed.
    """
    src, dst = Path(src), Path(dst)
    if _renameat2(src, dst, _RENAME_EXCHANGE):
        return
    aside = dst.with_name(temp_name(f".{dst.name}.old-"))
    with _lock(dst):
        os.rename(dst, aside)
        try:
            os.rename(src, dst)
        except OSError:
            os.rename(aside, dst)
            raise
        os.rename(aside, src)


def pid_alive(pid: int) -> bool:
    """Return whether a process with ``pid`` exists (a process we may not signal counts as alive).

    >>> pid_alive(os.getpid())
    True
    """
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _owner(name: str, prefixes: tuple[str, ...], pattern: re.Pattern[str] | None) -> int | None:
    """The PID in a temporary name (``-1``: a name of ours without one, ``None``: not ours)."""
    m = pattern.match(name) if pattern is not None else None
    if m:
        return int(m.group("pid"))
    prefix = next((p for p in prefixes if name.startswith(p)), None)
    if prefix is None:
        return None
    m = _PID_NAME.match(name[len(prefix) :])
    return int(m.group("pid")) if m else -1


def clean_stale(
    folder: str | os.PathLike,
    prefixes: tuple[str, ...],
    *,
    pattern: re.Pattern[str] | None = None,
) -> list[Path]:
    """Remove entries of ``folder`` named ``<prefix><pid>[-<random>]`` whose process is dead; return them.

    Entries of live processes (including this one) are kept. Entries with a
    prefix but no PID (older versions) are removed once older than
    :data:`LEGACY_AGE_S`. ``pattern`` (with a ``pid`` group) names more entries,
    e.g. :data:`ATOMIC_TEMP`. Nothing here raises: cleanup is best effort.
    """
    root = Path(folder)
    removed: list[Path] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        pid = _owner(entry.name, prefixes, pattern)
        if pid is None or pid == os.getpid() or (pid > 0 and pid_alive(pid)):
            continue
        if pid < 0:
            try:
                if now - entry.stat(follow_symlinks=False).st_mtime < LEGACY_AGE_S:
                    continue
            except OSError:
                continue
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink()
        if not os.path.lexists(path):
            removed.append(path)
    return removed


def clean_stale_writes(folder: str | os.PathLike) -> list[Path]:
    """Remove what killed writers left in ``folder``: :func:`atomic_write` siblings of dead processes.

    The writers of a results folder call it when they start (the folder's owner cleans it).
    """
    return clean_stale(folder, _LEGACY_WRITES, pattern=ATOMIC_TEMP)


@contextlib.contextmanager
def removed_if_failed(folder: str | os.PathLike | None) -> Iterator[None]:
    """Run a block; if it raises, remove the folders on ``folder``'s path it created that are still empty.

    A run that fails before writing its first file leaves no empty folder behind, and
    a folder that existed before, or holds anything, is never touched.
    """
    created: list[Path] = []
    probe = Path(folder) if folder else None
    while probe is not None and not os.path.lexists(probe) and probe != probe.parent:
        created.append(probe)
        probe = probe.parent
    try:
        yield
    except BaseException:
        for path in created:  # deepest first
            try:
                path.rmdir()
            except FileNotFoundError:
                continue  # never made (the failure came first)
            except OSError:
                break  # not empty: it holds something, so do its parents
        raise


__all__ = [
    "atomic_write",
    "atomic_write_text",
    "clean_stale",
    "clean_stale_writes",
    "current_umask",
    "make_temp_dir",
    "pid_alive",
    "rename_exchange",
    "removed_if_failed",
    "rename_noreplace",
    "temp_name",
]
