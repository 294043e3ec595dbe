"""WordNet 3.0 read with nltk from Debian's ``wordnet-base`` files (the loader and its pins).

Debian ships the Princeton database files (``/usr/share/wordnet``: ``data.*``,
``index.*``, ``*.exc``, ``cntlist.rev``) but not the ``lexnames`` file nltk's
reader opens first, and nltk's own downloader needs the internet. So
:func:`load_wordnet` copies the files (nltk refuses symlinks and hard links) into ``<cache>/nltk_data/corpora/wordnet/``
(``XLBENCH_CACHE`` or ``~/.cache/xlbench``), writes ``lexnames`` (the 45 standard
lexicographer files of WordNet 3.0) and returns an nltk ``WordNetCorpusReader``.

The substitute policy built on it (which alternatives SilverAlign tries for a
word) is dataset logic and lives in :mod:`builders.silver.substitutes`.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import warnings
from pathlib import Path

from builders.adapters.provenance import pin
from evaluators.core.cache_dir import xlbench_cache_root
from evaluators.core.errors import EngineUnavailableError

#: Where Debian's ``wordnet-base`` puts the database; ``XLBENCH_WORDNET_DIR`` overrides it.
DEBIAN_WORDNET = "/usr/share/wordnet"
_FILES = (
    "data.adj", "data.adv", "data.noun", "data.verb",
    "index.adj", "index.adv", "index.noun", "index.verb", "index.sense",
    "adj.exc", "adv.exc", "noun.exc", "verb.exc", "cntlist.rev",
)  # fmt: skip
_REQUIRED = (
    "data.noun",
    "index.noun",
    "data.verb",
    "index.verb",
    "data.adj",
    "index.adj",
    "data.adv",
    "index.adv",
)

#: The lexicographer files of WordNet 3.0 (``lexnames(5WN)``): number, name, syntactic category.
LEXNAMES = (
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
    "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event",
    "noun.feeling", "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object",
    "noun.person", "noun.phenomenon", "noun.plant", "noun.possession", "noun.process",
    "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time",
    "verb.body", "verb.change", "verb.cognition", "verb.communication", "verb.competition",
    "verb.consumption", "verb.contact", "verb.creation", "verb.emotion", "verb.motion",
    "verb.perception", "verb.possession", "verb.social", "verb.stative", "verb.weather", "adj.ppl",
)  # fmt: skip
_SYNCAT = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}


def lexnames_text() -> str:
    r"""Return the content of WordNet 3.0's ``lexnames`` file.

    >>> lines = lexnames_text().splitlines()
    >>> len(lines), lines[0], lines[44]
    (45, '00\tadj.all\t3', '44\tadj.ppl\t3')
    """
    return "".join(
        f"{i:02d}\t{name}\t{_SYNCAT[name.split('.')[0]]}\n" for i, name in enumerate(LEXNAMES)
    )


def _source_dir() -> Path:
    return Path(os.environ.get("XLBENCH_WORDNET_DIR") or DEBIAN_WORDNET)


def prepare_wordnet_dir(
    source: str | os.PathLike | None = None, target: str | os.PathLike | None = None
) -> Path:
    """Link the Debian WordNet files into an nltk corpus folder and write ``lexnames``; return it.

    Raises:
        EngineUnavailableError: the WordNet database files are not installed.
    """
    src = Path(source) if source else _source_dir()
    missing = [f for f in _REQUIRED if not (src / f).is_file()]
    if missing:
        raise EngineUnavailableError(
            f"WordNet 3.0 database files are missing from {str(src)!r} ({', '.join(missing[:3])}...); "
            f"install them with 'apt-get install wordnet-base wordnet-sense-index' or set XLBENCH_WORDNET_DIR."
        )
    root = Path(target) if target else xlbench_cache_root() / "nltk_data" / "corpora" / "wordnet"
    root.mkdir(parents=True, exist_ok=True)
    for name in _FILES:
        path, dest = src / name, root / name
        if not path.is_file():
            continue
        if (
            dest.is_file()
            and not dest.is_symlink()
            and dest.stat().st_nlink == 1
            and dest.stat().st_size == path.stat().st_size
        ):
            continue
        # nltk (nltk.pathsec) refuses symlinks out of its corpus root and multiply-linked
        # files, so the database is copied (~36 MB, once per cache), atomically so that
        # concurrent builds never read a half-written file.
        tmp = root / f".{name}.{os.getpid()}.tmp"
        shutil.copyfile(path, tmp)
        os.replace(tmp, dest)
    lexnames = root / "lexnames"
    if not lexnames.is_file() or lexnames.read_text(encoding="utf-8") != lexnames_text():
        tmp = root / f".lexnames.{os.getpid()}.tmp"
        tmp.write_text(lexnames_text(), encoding="utf-8")
        os.replace(tmp, lexnames)
    return root


def _reader_class():
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class DebianWordNet(WordNetCorpusReader):
        """nltk's reader with two speed-ups that change no result for WordNet 3.0."""

        def map_wn(self, version="wordnet"):
            # nltk compares "3.0" with "wordnet" and builds an identity 3.0 -> 3.0 sense map
            # (seconds, only used by the Open Multilingual Wordnet, which is absent offline).
            if self.get_version() == "3.0":
                return None
            return super().map_wn(version)

        def lemma_count(self, lemma):
            # nltk binary-searches cntlist.rev on every call; read it once into a dict.
            if lemma._lang != "eng":
                return 0
            if getattr(self, "_counts", None) is None:
                counts: dict[str, int] = {}
                with self.open("cntlist.rev") as fh:
                    for line in fh:
                        key, _, count = line.rstrip("\n").rpartition(" ")
                        counts[key.rsplit(" ", 1)[0]] = int(count)
                self._counts = counts
            return self._counts.get(lemma._key, 0)

    return DebianWordNet


@functools.lru_cache(maxsize=2)
def _load(root: str):
    import nltk

    # nltk only opens files under its data path (nltk.pathsec): register our nltk_data folder.
    data_dir = str(Path(root).parent.parent)
    if data_dir not in nltk.data.path:
        nltk.data.path.append(data_dir)
    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore"
        )  # "multilingual functions are not available" (no OMW offline)
        return _reader_class()(root, None)


def load_wordnet(source: str | os.PathLike | None = None):
    """Return an nltk ``WordNetCorpusReader`` over WordNet 3.0 (Debian files, offline).

    Raises:
        EngineUnavailableError: the WordNet database files are not installed.
    """
    return _load(str(prepare_wordnet_dir(source)))


def wordnet_revision(source: str | os.PathLike | None = None) -> str:
    """Return ``3.0@<sha256 of data.noun, first 12>`` pinning the database files used."""
    src = Path(source) if source else _source_dir()
    digest = hashlib.sha256()
    for name in ("data.noun", "data.verb", "data.adj", "data.adv"):
        digest.update((src / name).read_bytes())
    return f"3.0@{digest.hexdigest()[:12]}"


def wordnet_input(source: str | os.PathLike | None = None):
    """Pin every WordNet database file the reader opens (Debian package, version and license).

    Raises:
        EngineUnavailableError: the WordNet database files are not installed.
    """
    src = Path(source) if source else _source_dir()
    files = [src / name for name in _FILES if (src / name).is_file()]
    if not all((src / f).is_file() for f in _REQUIRED):
        prepare_wordnet_dir(source)  # raises the "install wordnet-base" message
    return pin(
        "wordnet-3.0",
        files,
        citation="George A. Miller (1995). WordNet: A Lexical Database for English. Communications of the ACM "
        "38(11): 39-41. Princeton University, WordNet 3.0.",
    )
