"""Corpora in their distributions' own local layouts: NTREX-128, FLORES-200, Tatoeba (LASER).

Each reads a folder exactly as the corpus ships it, and pins the files it read
(:func:`builders.adapters.provenance.pin`): the revision is the sha256 over them.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from builders.adapters.provenance import pin
from builders.corpora.base import Corpus, CorpusInfo, Row
from evaluators.core.errors import InputFileError, LangCodeError, UsageError
from evaluators.data.textio import read_lines
from evaluators.schema.langs import resolve_lang
from evaluators.schema.meta import FileRecord, InputRecord, files_digest

log = logging.getLogger("xlbench")

NTREX_CITATION = (
    "Federmann, Kocmi and Xin (2022). NTREX-128 - News Test References for MT Evaluation of "
    "128 Languages. Proceedings of the First Workshop on Scaling Up Multilingual Evaluation (SUMEval)."
)
FLORES_CITATION = (
    "NLLB Team (2022). No Language Left Behind: Scaling Human-Centered Machine Translation. "
    "arXiv:2207.04672; Goyal et al. (2022). The FLORES-101 Evaluation Benchmark for Low-Resource "
    "and Multilingual Machine Translation. TACL 10."
)
TATOEBA_CITATION = (
    "Artetxe and Schwenk (2019). Massively Multilingual Sentence Embeddings for Zero-Shot "
    "Cross-Lingual Transfer and Beyond. TACL 7 (the Tatoeba similarity-search test set)."
)


class _LocalCorpus(Corpus):
    """A folder: ``arg`` is its path; ``_read`` collects the files read, for the input record."""

    def __init__(self, arg: str | None, options: Mapping[str, str]):
        super().__init__(arg, options)
        if not arg:
            raise UsageError(
                f"--corpus {self.info.name} needs its folder: --corpus {self.info.name}:{self.info.arg}."
            )
        self.root = Path(arg)
        if not self.root.is_dir():
            raise InputFileError(
                f"--corpus {self.info.name}:{arg}: {arg!r} is not a folder; pass the folder of the "
                f"{self.info.title} distribution."
            )
        self._read: dict[str, FileRecord] = {}

    def _lines(self, path: Path) -> list[str]:
        # Pinned when read, so that the revision is that of the bytes the rows came from.
        if str(path) not in self._read:
            (self._read[str(path)],) = pin(str(path), [path]).files
        return [line.strip() for line in read_lines(path)]

    def input_record(self) -> InputRecord:
        """Return the files read so far as one input: ``local:<name>``, sha256 over them, license, citation."""
        if not self._read:
            raise UsageError(f"Corpus {self.label()} was pinned before anything was read.")
        files = tuple(self._read[k] for k in sorted(self._read))
        return InputRecord(
            name=f"corpus:{self.info.name}",
            origin=f"local:{self.info.name}",
            sha256=files_digest(files),
            kind="file",
            files=files,
            license=self.info.license,
            citation=self.info.citation,
        )


def _canonical_map(codes: list[str]) -> dict[str, str]:
    """Map canonical codes to the corpus' own codes; a plain code wins over its regional variants.

    >>> _canonical_map(["fra-CA", "fra", "zho-CN", "qqq"])["fra_Latn"]
    'fra'
    """
    out: dict[str, str] = {}
    # Plain codes first, so that "fra" (France) and not "fra-CA" is fra_Latn.
    for code in sorted(codes, key=lambda c: (any(ch in c for ch in "-_"), c)):
        try:
            canon = resolve_lang(code)
        except LangCodeError:
            log.warning("corpus language %r is not a code xlbench can place; skipped", code)
            continue
        out.setdefault(canon, code)
    return out


class Ntrex128(_LocalCorpus):
    """NTREX-128: the WMT19 newstest English source and its references in 128 languages.

    Layout (MicrosoftTranslator/NTREX, folder ``NTREX-128/``; checked against the copy in
    ``shared/data/ntrex128``, NTREX@8561f6a6): ``newstest2019-src.eng.txt`` (1,997 English
    lines), one ``newstest2019-ref.<code>.txt`` per language, line-aligned with the source
    (codes are ISO 639-3 with an optional BCP-47 script or region: ``fra``, ``fra-CA``,
    ``srp-Latn``, ``zho-CN``), ``DOCUMENT_IDS.tsv`` (the document of each line) and
    ``LANGUAGES.tsv``. One split, ``test``. Ids are ``newstest2019-<line, 1-based, 4 digits>``;
    ``meta["document"]`` is the line's document id when ``DOCUMENT_IDS.tsv`` is present.
    A regional variant (``fra-CA``) whose plain language is present is not reachable by
    its canonical code (``fra_Latn`` is ``fra``).
    """

    info = CorpusInfo(
        name="ntrex128",
        title="NTREX-128",
        arg="DIR",
        arg_required=True,
        languages="English source + references in 128 languages",
        splits=("test",),
        license="CC-BY-SA-4.0",
        citation=NTREX_CITATION,
        source="github.com/MicrosoftTranslator/NTREX (NTREX-128/)",
    )

    _REF = re.compile(r"^newstest2019-ref\.(.+)\.txt$")
    _SRC = "newstest2019-src.eng.txt"

    def __init__(self, arg: str | None, options: Mapping[str, str]):
        super().__init__(arg, options)
        if not (self.root / self._SRC).exists() and (self.root / "NTREX-128" / self._SRC).exists():
            self.root = self.root / "NTREX-128"
        if not (self.root / self._SRC).exists():
            raise InputFileError(
                f"--corpus ntrex128:{arg}: no {self._SRC} in {arg!r}; pass the NTREX-128 folder of "
                f"github.com/MicrosoftTranslator/NTREX."
            )
        files = {"eng": self.root / self._SRC}
        for path in sorted(self.root.iterdir()):
            m = self._REF.match(path.name)
            if m and m.group(1) != "eng":
                files[m.group(1)] = path
        self._codes = _canonical_map(list(files))
        self._files = files

    def languages(self) -> list[str]:
        """Return the canonical codes of the files found."""
        return sorted(self._codes)

    def rows(self, lang: str) -> Iterator[Row]:
        """Yield one language's lines as rows (ids shared across languages)."""
        lines = self._lines(self._files[self._codes[lang]])
        docs_path = self.root / "DOCUMENT_IDS.tsv"
        docs = self._lines(docs_path) if docs_path.exists() else []
        for i, text in enumerate(lines):
            meta = {"split": "test", "document": docs[i].split("\t")[0]} if i < len(docs) else {}
            yield Row(f"newstest2019-{i + 1:04d}", lang, text, meta)


class Flores200(_LocalCorpus):
    """FLORES-200 as the NLLB release ships it.

    Layout (``flores200_dataset.tar.gz`` of facebookresearch/flores, README of
    ``flores200``): ``flores200_dataset/{dev,devtest}/<xxx_Xxxx>.{dev,devtest}``, one
    sentence per line, line-aligned across languages (997 dev, 1,012 devtest sentences);
    ``metadata_{dev,devtest}.tsv`` give URL, domain, topic, has_image, has_hyperlink.
    ``DIR`` may be the folder holding ``flores200_dataset/`` or that folder itself. Ids are
    ``<split>-<line, 1-based, 4 digits>``; ``meta`` has the split and, with the metadata
    file, the domain and topic (the alee paper's alee-F200 reads ``devtest``).
    """

    info = CorpusInfo(
        name="flores200",
        title="FLORES-200",
        arg="DIR",
        arg_required=True,
        languages="204 language varieties (xxx_Xxxx)",
        splits=("devtest", "dev"),
        license="CC-BY-SA-4.0",
        citation=FLORES_CITATION,
        source="github.com/facebookresearch/flores (flores200/README.md)",
    )

    def __init__(self, arg: str | None, options: Mapping[str, str]):
        super().__init__(arg, options)
        for cand in (self.root / "flores200_dataset", self.root):
            if (cand / self.split).is_dir():
                self.root = cand
                break
        else:
            raise InputFileError(
                f"--corpus flores200:{arg}: no {self.split}/ folder in {arg!r} or its flores200_dataset/; "
                f"pass the folder of the unpacked flores200_dataset.tar.gz."
            )
        files = {
            p.name[: -len(self.split) - 1]: p
            for p in (self.root / self.split).glob(f"*.{self.split}")
        }
        self._codes = _canonical_map(list(files))
        self._files = files

    def languages(self) -> list[str]:
        """Return the canonical codes of the files found."""
        return sorted(self._codes)

    def rows(self, lang: str) -> Iterator[Row]:
        """Yield one language's lines as rows (ids shared across languages)."""
        lines = self._lines(self._files[self._codes[lang]])
        meta_path = self.root / f"metadata_{self.split}.tsv"
        metadata: list[dict[str, str]] = []
        if meta_path.exists():
            header, *body = self._lines(meta_path)
            names = header.split("\t")
            metadata = [dict(zip(names, line.split("\t"))) for line in body]
        for i, text in enumerate(lines):
            meta = {"split": self.split}
            if i < len(metadata):
                meta.update({k: metadata[i][k] for k in ("domain", "topic") if k in metadata[i]})
            yield Row(f"{self.split}-{i + 1:04d}", lang, text, meta)


class Tatoeba(_LocalCorpus):
    """The Tatoeba similarity-search test set of LASER (one English side per pair).

    Layout (facebookresearch/LASER ``data/tatoeba/v1``; checked against ``shared/data/tatoeba_v1``):
    ``tatoeba.<xxx>-eng.<xxx>`` and ``tatoeba.<xxx>-eng.eng``, line i translating line i (at
    most 1,000 pairs per language). The English sides differ between pairs, so a pair is
    always ``xxx``-``eng`` (either order); English alone reads every pair's English side. Ids
    are ``<xxx>-eng-<line, 1-based, 4 digits>``; one split, ``test``.
    """

    info = CorpusInfo(
        name="tatoeba",
        title="Tatoeba (LASER similarity search, v1)",
        arg="DIR",
        arg_required=True,
        languages="112 languages, each paired with English",
        splits=("test",),
        license="CC-BY-2.0-FR",
        citation=TATOEBA_CITATION,
        source="github.com/facebookresearch/LASER (data/tatoeba/v1)",
    )

    _FILE = re.compile(r"^tatoeba\.([a-z]{3})-eng\.([a-z]{3})$")

    def __init__(self, arg: str | None, options: Mapping[str, str]):
        super().__init__(arg, options)
        codes = sorted({m.group(1) for p in self.root.iterdir() if (m := self._FILE.match(p.name))})
        if not codes:
            raise InputFileError(
                f"--corpus tatoeba:{arg}: no tatoeba.<xxx>-eng.<xxx> files in {arg!r}; pass LASER's data/tatoeba/v1 folder."
            )
        self._codes = _canonical_map(codes)
        self._eng = resolve_lang("eng")

    def languages(self) -> list[str]:
        """Return the canonical codes of the files found."""
        return sorted({*self._codes, self._eng})

    def _side(self, code: str, side: str) -> list[str]:
        return self._lines(self.root / f"tatoeba.{code}-eng.{side}")

    def rows(self, lang: str) -> Iterator[Row]:
        """Yield one language's lines as rows (ids shared across languages)."""
        codes = sorted(self._codes.values()) if lang == self._eng else [self._codes[lang]]
        for code in codes:
            side = "eng" if lang == self._eng else code
            for i, text in enumerate(self._side(code, side)):
                yield Row(
                    f"{code}-eng-{i + 1:04d}", lang, text, {"split": "test", "pair": f"{code}-eng"}
                )

    def pairs(self, src: str, tgt: str) -> list[tuple[str, str, str]]:
        """Return the pairs of one ``tatoeba.xxx-eng`` file pair, in the order asked for."""
        a, b = self.check_lang(src), self.check_lang(tgt)
        if self._eng not in (a, b) or a == b:
            raise UsageError(
                f"Tatoeba pairs every language with English only; {a}-{b} is not one of its pairs."
            )
        other = b if a == self._eng else a
        code = self._codes[other]
        xs, en = self._side(code, code), self._side(code, "eng")
        if len(xs) != len(en):
            raise InputFileError(
                f"tatoeba.{code}-eng.{code} has {len(xs)} lines but tatoeba.{code}-eng.eng has {len(en)}; "
                f"the files must be line-aligned."
            )
        out = []
        for i, (x, e) in enumerate(zip(xs, en)):
            if x and e:
                s, t = (e, x) if a == self._eng else (x, e)
                out.append((f"{code}-eng-{i + 1:04d}", s, t))
        return out
