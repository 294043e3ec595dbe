"""Mixed-language sentences for the encoder benchmarks.

NTREX-128's newstest2019 in several scripts, round-robin, when the shared evaluation data is
on this machine; the packaged public-domain Bible verses otherwise (so a fresh clone runs too).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Where the machines keep the read-only evaluation data.
DATA_DIRS = (
    REPO / "shared" / "data",
    REPO.parent / "shared" / "data",
    REPO.parents[1] / "shared" / "data",
)
BIBLE_LANGS = ("eng_Latn", "deu_Latn", "fra_Latn", "rus_Cyrl", "arb_Arab", "vie_Latn")


def ntrex_dir() -> Path | None:
    """The NTREX-128 folder of the first data directory that has one."""
    return next((d / "ntrex128" for d in DATA_DIRS if (d / "ntrex128").is_dir()), None)


def load_sentences(
    n: int, ntrex_langs: Sequence[str], source: str = "auto"
) -> tuple[list[str], str]:
    """Return ``n`` sentences, one language after the other, and where they came from.

    Args:
        n: how many sentences.
        ntrex_langs: NTREX file stems (``src.eng``, ``ref.fra``, ...) to interleave.
        source: ``auto`` (NTREX when present, else the Bible), ``ntrex`` or ``bible``.
    """
    ntrex = ntrex_dir() if source in ("auto", "ntrex") else None
    if ntrex is not None:
        columns = [
            (ntrex / f"newstest2019-{lang}.txt").read_text(encoding="utf-8").splitlines()
            for lang in ntrex_langs
        ]
        out = [
            col[i].strip()
            for i in range(max(len(c) for c in columns))
            for col in columns
            if i < len(col) and col[i].strip()
        ]
        return out[:n], f"NTREX-128 newstest2019 ({', '.join(ntrex_langs)}), round-robin"
    if source == "ntrex":
        raise SystemExit(
            f"no ntrex128 folder under {', '.join(map(str, DATA_DIRS))}; use --source bible"
        )
    sys.path.insert(0, str(REPO))
    from builders.adapters import bible

    columns = [[t for _, t in bible.verses(bible.translation_for(lang))] for lang in BIBLE_LANGS]
    out = [columns[i % len(columns)][i] for i in range(n)]
    return out, f"packaged Bible verses ({', '.join(BIBLE_LANGS)}), round-robin"


def load_texts(
    n: int, ntrex_langs: Sequence[str], source: str = "auto", path: str | None = None
) -> tuple[list[str], str]:
    """The first ``n`` non-blank lines of the UTF-8 file ``path``, else :func:`load_sentences`."""
    if path is None:
        return load_sentences(n, ntrex_langs, source)
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [t for t in lines if t.strip()][:n], path


def add_text_arguments(parser: argparse.ArgumentParser, n: int) -> None:
    """The options :func:`load_texts` reads: ``--n`` (default ``n``), ``--source`` and ``--texts``."""
    parser.add_argument("--n", type=int, default=n, help=f"sentences (default {n})")
    parser.add_argument("--source", choices=("auto", "ntrex", "bible"), default="auto")
    parser.add_argument(
        "--texts", help="a UTF-8 file of sentences, one per line (instead of --source)"
    )
