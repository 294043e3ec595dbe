"""What every corpus adapter is: its facts (:class:`CorpusInfo`), its rows (:class:`Row`) and :class:`Corpus`.

An adapter reads one distribution of one corpus (a local folder in the corpus' own layout, or a
Hub dataset at a pinned commit) and yields rows (:class:`Row`): a stable id shared by the
translations of one segment, a canonical language code (``deu_Latn``, through
:func:`evaluators.schema.langs.resolve_lang`), the text and the corpus' own metadata
(FLORES' split, WMT24++'s bad-source flag, BOUQuET's level, C4's document). Builders never
see the layout: they ask for :meth:`Corpus.pairs` (parallel text) or :meth:`Corpus.sentences`
(monolingual text) and pin :meth:`Corpus.input_record` (name, revision, license, citation).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluators.core.errors import LangCodeError, UsageError, did_you_mean
from evaluators.schema.langs import resolve_lang
from evaluators.schema.meta import InputRecord, ModelRecord


@dataclass(frozen=True)
class CorpusInfo:
    """The facts of one corpus that ``xlbench list corpora`` shows and the card records.

    Attributes:
        name: the ``--corpus`` name.
        title: the corpus' own name.
        arg: what follows ``NAME:`` (``DIR``, ``REPO[@REVISION]``), or ``None`` when nothing does.
        arg_required: ``NAME`` alone is refused (a local layout needs its folder).
        languages: the languages in words (``"English + 21 references"``).
        splits: the splits the corpus has; the first is the default.
        license: SPDX id of the text.
        citation: the reference to cite.
        token: reading it needs ``HF_TOKEN`` (a gated Hub dataset).
        internet: reading it needs the Hub.
        options: ``--corpus-opt`` keys this adapter takes -> what each does.
        source: where the layout or schema was checked (the docstring cites it in full).
    """

    name: str
    title: str
    arg: str | None
    arg_required: bool
    languages: str
    splits: tuple[str, ...]
    license: str
    citation: str
    token: bool = False
    internet: bool = False
    options: Mapping[str, str] = field(default_factory=dict)
    source: str = ""


@dataclass(frozen=True)
class Row:
    """One segment of a corpus in one language.

    Attributes:
        id: stable across runs and shared by the translations of one segment.
        lang: canonical ``xxx_Scrp`` code.
        text: the segment, stripped.
        meta: the corpus' own metadata for this segment (split, document, level, flags).
    """

    id: str
    lang: str
    text: str
    meta: Mapping[str, Any] = field(default_factory=dict)


#: Options every adapter takes.
COMMON_OPTIONS = {"split": "the split to read (default: the corpus' first split)"}


def parse_options(
    info: CorpusInfo, options: Sequence[str] | Mapping[str, str] | None
) -> dict[str, str]:
    """Return ``--corpus-opt KEY=VALUE`` items as a dict, refusing keys the adapter does not take.

    >>> info = CorpusInfo("x", "X", None, False, "", ("test",), "CC0-1.0", "", options={"keep_bad": ""})
    >>> parse_options(info, ["keep_bad=1", "split=test"])
    {'keep_bad': '1', 'split': 'test'}

    Raises:
        UsageError: an item without ``=`` or a key this corpus does not take.
    """
    if options is None:
        return {}
    items = options.items() if isinstance(options, Mapping) else [_split_item(o) for o in options]
    valid = {**COMMON_OPTIONS, **info.options}
    out: dict[str, str] = {}
    for key, value in items:
        if key not in valid:
            raise UsageError(
                f"--corpus-opt {key!r} is not an option of corpus {info.name}; valid: "
                f"{', '.join(sorted(valid))}.{did_you_mean(key, valid)}"
            )
        out[key] = str(value)
    return out


def _split_item(item: str) -> tuple[str, str]:
    key, eq, value = item.partition("=")
    if not eq or not key.strip():
        raise UsageError(
            f"--corpus-opt expects KEY=VALUE, got {item!r} (e.g. --corpus-opt split=dev)."
        )
    return key.strip(), value.strip()


def truthy(value: str | None) -> bool:
    """Return whether an option value means yes (``1``, ``true``, ``yes``, ``on``).

    >>> truthy("yes"), truthy("0"), truthy(None)
    (True, False, False)
    """
    return value is not None and value.strip().lower() in ("1", "true", "yes", "on")


class Corpus:
    """One opened corpus: an adapter's ``info``, its ``arg`` and ``options``.

    Subclasses implement :meth:`languages`, :meth:`rows` and :meth:`input_record`;
    multi-parallel corpora (one id = one segment in every language) get :meth:`pairs`
    for free, corpora whose pairs are separate files (Tatoeba) override it.
    """

    info: CorpusInfo

    def __init__(self, arg: str | None, options: Mapping[str, str]):
        """Keep the argument and the (checked) options; subclasses open their source here."""
        self.arg = arg
        self.options = dict(options)
        split = self.options.get("split", self.info.splits[0] if self.info.splits else "")
        if self.info.splits and split not in self.info.splits:
            raise UsageError(
                f"Corpus {self.info.name} has no split {split!r}; valid: {', '.join(self.info.splits)}."
            )
        self.split = split

    # -- what an adapter implements -------------------------------------------------------
    def languages(self) -> list[str]:
        """Return the canonical codes of the languages this corpus holds."""
        raise NotImplementedError

    def rows(self, lang: str) -> Iterator[Row]:
        """Yield the rows of one (canonical, checked) language in the chosen split, in corpus order."""
        raise NotImplementedError

    def input_record(self) -> InputRecord:
        """Return the pinned input (name, revision, license, citation) of what was read."""
        raise NotImplementedError

    # -- what builders call ---------------------------------------------------------------
    def check_lang(self, lang: str) -> str:
        """Return the canonical code of ``lang`` if the corpus holds it.

        Raises:
            LangCodeError: the corpus has no such language (the message lists the ones it has).
        """
        code = resolve_lang(lang)
        have = self.languages()
        if code not in have:
            shown = ", ".join(have[:30]) + (f" and {len(have) - 30} more" if len(have) > 30 else "")
            raise LangCodeError(
                f"Corpus {self.label()} has no {code}; it has {len(have)} languages: {shown}."
            )
        return code

    def sentences(self, lang: str) -> list[tuple[str, str]]:
        """Return ``(id, text)`` of one language (monolingual input), empty texts skipped."""
        code = self.check_lang(lang)
        return [(r.id, r.text) for r in self.rows(code) if r.text]

    def pairs(self, src: str, tgt: str) -> list[tuple[str, str, str]]:
        """Return ``(id, src text, tgt text)`` of the segments present in both languages, in source order.

        Raises:
            UsageError: the two languages share no segment.
        """
        a, b = self.check_lang(src), self.check_lang(tgt)
        target = {r.id: r.text for r in self.rows(b) if r.text}
        out = [(r.id, r.text, target[r.id]) for r in self.rows(a) if r.text and r.id in target]
        if not out:
            raise UsageError(
                f"Corpus {self.label()} has no segment in both {a} and {b} (split {self.split}); "
                f"pick another pair or split."
            )
        return out

    def label(self) -> str:
        """Return how messages name this corpus (``ntrex128:DIR``, ``hf:org/name``)."""
        return f"{self.info.name}:{self.arg}" if self.arg else self.info.name

    def pinned(self) -> str:
        """Return the corpus as the manifest's parameters name it: ``name[,key=value...]:split@revision``.

        The license and citation are on the input record (:meth:`input_record`), where the card lists them.
        """
        opts = "".join(f",{k}={v}" for k, v in sorted(self.options.items()) if k != "split")
        return f"{self.info.name}{opts}:{self.split}@{self.revision()}"

    def model_record(self) -> ModelRecord:
        """Return the corpus as the build signature spells it: ``corpus:<name>@<revision>``.

        Local revisions are shortened as the dictionaries' are (``sha256:`` + 16 hex digits);
        a Hub revision is the full commit sha.
        """
        rev = self.revision()
        short = rev[: len("sha256:") + 16] if rev.startswith("sha256:") else rev
        return ModelRecord("corpus", self.info.name, short)

    def revision(self) -> str:
        """Return the revision of what was read: a Hub commit sha or ``sha256:<digest>`` of local files."""
        return f"sha256:{self.input_record().sha256}"

    def describe(self) -> str:
        """Return the corpus in words for the card (``NTREX-128 (split test, sha256:1a2b3c4d5e6f)``)."""
        rev = self.revision()
        short = rev.split(":", 1)[0] + ":" + rev.split(":", 1)[1][:12] if ":" in rev else rev[:12]
        return f"{self.info.title} (split {self.split}, {short})"
