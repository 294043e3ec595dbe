"""Apertium (Debian pairs, offline): one ``apertium`` process per batch in null-flush mode."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evaluators.core.errors import (
    EngineUnavailableError,
    truncate,
)
from evaluators.schema.langs import resolve_lang

log = logging.getLogger("xlbench.mt")


# --- Apertium ------------------------------------------------------------------------

APERTIUM_DATADIR = "/usr/share/apertium"
# Characters that are markup in Apertium's stream format; ``apertium-destxt`` escapes them.
_APERTIUM_SPECIAL = set("\\[]^$/<>@{}*#+~|")
_APERTIUM_MARKS = re.compile(r"(?<![\\\w])[*#@](?=\w)")
_SUPERBLANK = re.compile(r"(?<!\\)\[([^\]]*)(?<!\\)\]")
_UNESCAPE = re.compile(r"\\(.)")


def apertium_datadir() -> Path:
    """Return Apertium's data folder (``APERTIUM_DATADIR`` or ``/usr/share/apertium``)."""
    return Path(os.environ.get("APERTIUM_DATADIR") or APERTIUM_DATADIR)


def apertium_modes(datadir: str | os.PathLike | None = None) -> dict[tuple[str, str], str]:
    """Return ``(src, tgt) -> mode`` for every installed Apertium pair with known languages.

    Variant modes (``eng-cat_valencia``) are left out: name them with ``--mt apertium:<mode>``.
    """
    modes_dir = Path(datadir or apertium_datadir()) / "modes"
    if not modes_dir.is_dir() or shutil.which("apertium") is None:
        return {}
    out: dict[tuple[str, str], str] = {}
    for path in sorted(modes_dir.glob("*.mode")):
        pair = _mode_pair(path.stem)
        if pair is not None:
            out.setdefault(pair, path.stem)
    return out


def _mode_pair(mode: str) -> tuple[str, str] | None:
    parts = mode.split("-")
    if len(parts) != 2 or "_" in mode:
        return None
    try:
        return resolve_lang(parts[0]), resolve_lang(parts[1])
    except Exception:  # noqa: BLE001 - modes of unknown languages are simply not offered
        return None


def apertium_escape(text: str) -> str:
    r"""Escape Apertium stream-format markup, as ``apertium-destxt`` does.

    >>> apertium_escape("a [b] $5")
    'a \\[b\\] \\$5'
    """
    return "".join("\\" + ch if ch in _APERTIUM_SPECIAL else ch for ch in text)


def apertium_unformat(segment: str) -> str:
    r"""Turn one output segment back into plain text, as ``apertium-retxt`` does.

    Drops the sentence-end marker ``.[]`` that :func:`apertium_escape`'s caller
    appends, superblank brackets, unknown-word marks (``*``, ``#``, ``@``) and
    backslash escapes.

    >>> apertium_unformat(" Quiero pizza..[]"), apertium_unformat("Pancarta.[]")
    ('Quiero pizza.', 'Pancarta')
    >>> apertium_unformat("un \\[x\\] #casa *foo..[]")
    'un [x] casa foo.'
    """
    seg = segment
    if seg.endswith(".[]"):
        seg = seg[:-3]
    elif seg.endswith("[]"):
        seg = seg[:-2]
    seg = _APERTIUM_MARKS.sub("", seg)
    seg = _SUPERBLANK.sub(lambda m: m.group(1), seg)
    seg = _UNESCAPE.sub(lambda m: m.group(1), seg)
    return re.sub(r"\s+", " ", seg).strip()


@dataclass
class ApertiumTranslator:
    """An installed Apertium pair, run as ``apertium -u -z -f none <mode>`` over many sentences.

    Null-flush segments are *not* fully independent: ``apertium-tagger`` keeps some
    state across NUL boundaries (after "... by lying with him." the next segments'
    "saw" is tagged as a noun: "Sierra" instead of "Vio"), so a sentence's translation
    can depend on what the same process translated before. The translator is therefore
    ``stateful``: :class:`CachedTranslator` sends each request (one source sentence and
    its alternatives) to a fresh process as a whole, which makes every translation a
    function of its request only, identical in cold and resumed builds.
    """

    mode: str
    pair: tuple[str, str]
    datadir: str = field(default_factory=lambda: str(apertium_datadir()))
    chunk: int = 2000
    online: bool = False
    stateful: bool = True

    @property
    def name(self) -> str:
        """``apertium:<mode>``."""
        return f"apertium:{self.mode}"

    @property
    def version(self) -> str:
        """Apertium's version + sha256 of the mode file and every data file it names."""
        if not hasattr(self, "_version"):
            mode_file = Path(self.datadir) / "modes" / f"{self.mode}.mode"
            text = mode_file.read_text(encoding="utf-8")
            digest = hashlib.sha256(text.encode("utf-8"))
            for path in sorted(set(re.findall(r"'(/[^']+)'", text))):
                with contextlib.suppress(OSError):
                    digest.update(Path(path).read_bytes())
            try:
                v = subprocess.run(
                    ["apertium", "-V"], capture_output=True, text=True, timeout=30
                ).stdout.strip()
            except (OSError, subprocess.SubprocessError):
                v = "unknown"
            self._version = f"{v or 'apertium'}+{digest.hexdigest()[:12]}"
        return self._version

    @property
    def input_files(self) -> list[str]:
        """The mode file and every existing data file it names (what ``apertium`` reads), for pinning."""
        mode_file = Path(self.datadir) / "modes" / f"{self.mode}.mode"
        named = sorted(set(re.findall(r"'(/[^']+)'", mode_file.read_text(encoding="utf-8"))))
        return [str(mode_file)] + [p for p in named if Path(p).is_file()]

    def translate_batch(self, texts: Sequence[str]) -> list[str]:
        """Translate many sentences with one process per ``chunk`` sentences.

        Raises:
            EngineUnavailableError: the ``apertium`` command failed or returned a different
                number of segments than it was given.
        """
        out: list[str] = []
        for start in range(0, len(texts), self.chunk):
            out += self._run(texts[start : start + self.chunk])
        return out

    def _run(self, texts: Sequence[str]) -> list[str]:
        # One NUL-terminated segment per sentence; ".[]" is the end-of-text marker destxt adds.
        payload = "".join(
            apertium_escape(" ".join(t.replace("\0", " ").split())) + ".[]\0" for t in texts
        ).encode("utf-8")
        cmd = ["apertium", "-d", self.datadir, "-u", "-z", "-f", "none", self.mode]
        env = dict(os.environ, LC_ALL="C.UTF-8")
        try:
            proc = subprocess.run(
                cmd, input=payload, capture_output=True, timeout=600 + len(texts), env=env
            )
        except (OSError, subprocess.SubprocessError) as err:
            raise EngineUnavailableError(
                f"Apertium failed to run ({truncate(str(err), 120)}); check 'apertium -l'."
            ) from err
        if proc.returncode != 0:
            raise EngineUnavailableError(
                f"Apertium mode {self.mode!r} failed (exit {proc.returncode}: "
                f"{truncate(proc.stderr.decode('utf-8', 'replace').strip(), 160)}); check 'apertium -l'."
            )
        segments = proc.stdout.decode("utf-8", "replace").split("\0")
        segments = segments[: len(texts)]
        if len(segments) != len(texts) or any(not s.endswith("[]") for s in segments):
            raise EngineUnavailableError(
                f"Apertium returned {len(segments)} segments for {len(texts)} sentences; "
                f"the null-flush protocol broke (report this with the input)."
            )
        return [apertium_unformat(s) for s in segments]
