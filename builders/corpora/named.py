"""The papers' Hub corpora, each the generic Hub reader (:mod:`builders.corpora.hub`) with its real schema.

Every adapter states the configs, splits, columns and language codes it relies on, with the
source they were checked against; the tests host a loopback copy with exactly those names
and types (tests/builders/corpora/test_hub_named.py).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from builders.corpora.base import CorpusInfo, Row, truthy
from builders.corpora.hub import HubCorpus
from evaluators.core.errors import LangCodeError, UsageError
from evaluators.schema.langs import resolve_lang

log = logging.getLogger("xlbench")

_REVISION = {"revision": "Hub revision: tag, branch or sha (default main; the sha is recorded)"}


def _placeable(names: list[str], key=lambda n: n) -> dict[str, str]:
    """Map canonical codes to the dataset's own names (the first name wins; unplaceable ones are skipped)."""
    out: dict[str, str] = {}
    for name in sorted(names):
        try:
            out.setdefault(resolve_lang(key(name)), name)
        except LangCodeError:
            log.debug("corpus language %r is not a code xlbench can place; skipped", name)
    return out


def _config_names(corpus: HubCorpus) -> list[str]:
    """The dataset's configs: the card's ``configs`` block, else what ``datasets`` lists."""
    if corpus.card_configs:
        return list(corpus.card_configs)
    import datasets

    from evaluators.data.hubclient import hub_errors

    with hub_errors(f"reading corpus {corpus.label()}", corpus.repo, corpus.sha):
        return list(datasets.get_dataset_config_names(corpus.repo, revision=corpus.sha))


class FloresPlus(HubCorpus):
    """FLORES+ (OLDI), the maintained FLORES-200: ``openlanguagedata/flores_plus`` (gated).

    Schema (dataset card of openlanguagedata/flores_plus and OLDI's loaders, read with the
    search tool): one config per language variety, named ``<iso_639_3>_<iso_15924>``
    (``eng_Latn``, ``deu_Latn``, ``cmn_Hans``), splits ``dev`` (997 rows) and ``devtest``
    (1,012), columns ``id`` (int, shared across languages), ``iso_639_3``, ``iso_15924``,
    ``glottocode``, ``text``, ``url``, ``domain``, ``topic``, ``has_image``, ``has_hyperlink``,
    ``last_updated``. Access is gated: the terms must be accepted on the Hub and
    ``HF_TOKEN`` set. Ids here are ``<split>-<id>``; ``meta`` keeps split, domain and topic.
    ``--corpus flores200`` without a folder reads this dataset.
    """

    repo_id = "openlanguagedata/flores_plus"
    info = CorpusInfo(
        name="flores_plus",
        title="FLORES+",
        arg=None,
        arg_required=False,
        languages="220+ language varieties (xxx_Xxxx configs)",
        splits=("devtest", "dev"),
        license="CC-BY-SA-4.0",
        citation="NLLB Team (2022). No Language Left Behind: Scaling Human-Centered Machine Translation. "
        "arXiv:2207.04672 (FLORES+ maintained by the Open Language Data Initiative).",
        token=True,
        internet=True,
        options=_REVISION,
        source="huggingface.co/datasets/openlanguagedata/flores_plus (card)",
    )

    def languages(self) -> list[str]:
        """Return the canonical codes of the dataset's configs."""
        if not hasattr(self, "_configs"):
            self._configs = _placeable(_config_names(self))
        return sorted(self._configs)

    def rows(self, lang: str) -> Iterator[Row]:
        """Yield one language's sentences of the split, ids ``<split>-<id>``."""
        self.languages()
        ds = self.load(self._configs[lang], self.split)
        self.check_columns(
            ds.column_names, ("id", "text"), f"config {self._configs[lang]}, split {self.split}"
        )
        for rec in ds:
            meta = {"split": self.split, **{k: rec[k] for k in ("domain", "topic") if k in rec}}
            yield Row(f"{self.split}-{rec['id']}", lang, (rec["text"] or "").strip(), meta)


class Wmt24pp(HubCorpus):
    """WMT24++: the WMT24 English source translated into 55 languages and dialects (``google/wmt24pp``).

    Schema (dataset card of google/wmt24pp and code that loads it, read with the search tool):
    one config per pair, ``en-<lang>_<REGION>`` (``en-de_DE``, ``en-ar_EG``, ``en-pt_BR``), one
    split ``train`` (998 segments per pair) read from ``en-<xx_YY>.jsonl``; columns ``lp``,
    ``domain`` (literary, news, social, speech), ``document_id``, ``segment_id``,
    ``is_bad_source`` (bool; the 180 sources the authors flag, which alee excludes),
    ``source`` (English), ``target`` (post-edited reference), ``original_target``. Segments of
    the literary and social domains are paragraphs. Bad sources are left out unless
    ``--corpus-opt keep_bad=1``; ``config=en-xx_YY`` picks one of two regional variants of a
    language (``ar_EG`` / ``ar_SA``; default: the first in sorted order). Ids are
    ``<document_id>:<segment_id>``; ``meta`` keeps domain, document and the flag.
    """

    repo_id = "google/wmt24pp"
    info = CorpusInfo(
        name="wmt24pp",
        title="WMT24++",
        arg=None,
        arg_required=False,
        languages="English + 55 languages and dialects (en-xx_YY configs)",
        splits=("train",),
        license="Apache-2.0",
        citation="Deutsch et al. (2025). WMT24++: Expanding the Language Coverage of WMT24 to 55 "
        "Languages & Dialects. arXiv:2502.12404.",
        internet=True,
        options={
            **_REVISION,
            "keep_bad": "1: keep the segments flagged is_bad_source (left out by default, as alee)",
            "config": "the en-xx_YY config of a language with two regional variants",
        },
        source="huggingface.co/datasets/google/wmt24pp (card)",
    )
    _COLUMNS = ("document_id", "segment_id", "is_bad_source", "source", "target", "domain")

    def languages(self) -> list[str]:
        """Return English and the canonical codes of every ``en-xx_YY`` config."""
        if not hasattr(self, "_configs"):
            names = [c for c in _config_names(self) if c.startswith("en-")]
            self._configs = _placeable(names, key=lambda c: c[3:])
            if self.options.get("config"):
                config = self.options["config"]
                if config not in names:
                    raise UsageError(
                        f"{self.repo} has no config {config!r}; valid: {', '.join(names)}."
                    )
                self._configs[resolve_lang(config[3:])] = config
        return sorted({*self._configs, "eng_Latn"})

    def _segments(self, lang: str) -> Iterator[dict[str, Any]]:
        config = self._configs[lang]
        ds = self.load(config, self.split)
        self.check_columns(ds.column_names, self._COLUMNS, f"config {config}, split {self.split}")
        keep_bad = truthy(self.options.get("keep_bad"))
        for rec in ds:
            if keep_bad or not rec["is_bad_source"]:
                yield rec

    def _row(self, rec: Mapping[str, Any], lang: str, column: str) -> Row:
        meta = {
            "split": self.split,
            "domain": rec["domain"],
            "document": rec["document_id"],
            "is_bad_source": bool(rec["is_bad_source"]),
        }
        ident = f"{rec['document_id']}:{rec['segment_id']}"
        return Row(ident, lang, (rec[column] or "").strip(), meta)

    def rows(self, lang: str) -> Iterator[Row]:
        """Yield a language's targets; English: the source side of the first (or ``config=``) pair."""
        self.languages()
        if lang == "eng_Latn":
            first = self.options.get("config") or min(self._configs.values())
            other = resolve_lang(first[3:])
            for rec in self._segments(other):
                yield self._row(rec, lang, "source")
            return
        for rec in self._segments(lang):
            yield self._row(rec, lang, "target")

    def pairs(self, src: str, tgt: str) -> list[tuple[str, str, str]]:
        """Return English-X pairs of one config (either order); WMT24++ has no X-Y pairs."""
        a, b = self.check_lang(src), self.check_lang(tgt)
        if "eng_Latn" not in (a, b) or a == b:
            raise UsageError(
                f"WMT24++ pairs English with one language; {a}-{b} is not one of its pairs."
            )
        other = b if a == "eng_Latn" else a
        out = []
        for rec in self._segments(other):
            en, xx = (rec["source"] or "").strip(), (rec["target"] or "").strip()
            if en and xx:
                s, t = (en, xx) if a == "eng_Latn" else (xx, en)
                out.append((f"{rec['document_id']}:{rec['segment_id']}", s, t))
        return out


class Bouquet(HubCorpus):
    """BOUQuET: sentences and paragraphs in 275 language varieties (``facebook/bouquet``).

    Schema (the facebook/bouquet dataset card and its Space's loader ``data_samples.py``, read
    with the search tool): configs ``sentence_level`` and ``paragraph_level``, splits ``dev``
    and ``test``, one long table per config (files ``data/<level>/<split>/<lang>.parquet``)
    with columns ``uniq_id`` (``P001`` for a paragraph, ``P001-S1`` for its sentences),
    ``par_id``, ``src_lang`` (``eng_Latn``; some varieties carry a suffix), ``src_text``,
    ``tgt_lang`` (always ``eng_Latn``), ``tgt_text`` (the English), ``orig_text``, ``domain``,
    ``register``, ``tags``. Rows of a language are those whose ``src_lang`` is it; ids are
    ``uniq_id``; ``meta["level"]`` is ``sentence`` or ``paragraph`` (the TACC length/level
    breakdown reads it). ``--corpus-opt level=sentence|paragraph|both`` (default both).
    """

    repo_id = "facebook/bouquet"
    info = CorpusInfo(
        name="bouquet",
        title="BOUQuET",
        arg=None,
        arg_required=False,
        languages="275 language varieties (src_lang codes)",
        splits=("dev", "test"),
        license="CC-BY-SA-4.0",
        citation="Omnilingual MT team, Andrews et al. (2025). BOUQuET: dataset, Benchmark and Open "
        "initiative for Universal Quality Evaluation in Translation. arXiv:2502.04314.",
        internet=True,
        options={**_REVISION, "level": "sentence, paragraph or both (default both)"},
        source="huggingface.co/datasets/facebook/bouquet (card; Space data_samples.py)",
    )
    _COLUMNS = ("uniq_id", "par_id", "src_lang", "src_text", "domain")
    LEVELS = {"sentence": ("sentence_level",), "paragraph": ("paragraph_level",)}

    def _levels(self) -> tuple[str, ...]:
        level = self.options.get("level", "both")
        if level == "both":
            return ("paragraph_level", "sentence_level")
        if level not in self.LEVELS:
            raise UsageError(
                f"--corpus-opt level must be sentence, paragraph or both, got {level!r}."
            )
        return self.LEVELS[level]

    def _tables(self) -> list[tuple[str, Any]]:
        if not hasattr(self, "_data"):
            self._data = []
            for config in self._levels():
                ds = self.load(config, self.split)
                self.check_columns(
                    ds.column_names, self._COLUMNS, f"config {config}, split {self.split}"
                )
                self._data.append((config.split("_")[0], ds))
        return self._data

    def languages(self) -> list[str]:
        """Return the canonical codes of the ``src_lang`` values."""
        if not hasattr(self, "_codes"):
            names = sorted({code for _, ds in self._tables() for code in ds.unique("src_lang")})
            self._codes = _placeable(names)
        return sorted(self._codes)

    def rows(self, lang: str) -> Iterator[Row]:
        """Yield one variety's paragraphs then sentences, ids ``uniq_id``."""
        self.languages()
        code = self._codes[lang]
        for level, ds in self._tables():
            for rec in ds:
                if rec["src_lang"] == code:
                    meta = {
                        "split": self.split,
                        "level": level,
                        "paragraph": rec["par_id"],
                        "domain": rec["domain"],
                    }
                    yield Row(str(rec["uniq_id"]), lang, (rec["src_text"] or "").strip(), meta)


class C4(HubCorpus):
    """C4 (``allenai/c4``) streamed: a seeded sample of English sentences, never downloaded whole.

    Schema (the allenai/c4 dataset card): configs ``en``, ``en.noblocklist``, ``realnewslike``,
    ``en.noclean``, ``multilingual``; splits ``train`` and ``validation`` from gzipped JSON
    lines (``realnewslike/c4-train.00000-of-00512.json.gz``); columns ``text``, ``timestamp``,
    ``url``. ``:ARG`` is the config (default ``realnewslike``, SilverAlign's Silver_Large).
    The stream is shuffled with ``seed`` (datasets' shard order + a ``buffer``-row buffer) and
    one sentence per document (pysbd, the project's splitter) is drawn with a generator seeded
    by ``(seed, document index)``, until ``n`` sentences: the same ids on every run, others
    with another seed. Ids are ``<url>#<sentence index>``; ``meta["document"]`` is the url.
    """

    repo_id = "allenai/c4"
    info = CorpusInfo(
        name="c4",
        title="C4",
        arg="CONFIG",
        arg_required=False,
        languages="English (the en* and realnewslike configs)",
        splits=("train", "validation"),
        license="ODC-BY-1.0",
        citation="Raffel et al. (2020). Exploring the Limits of Transfer Learning with a Unified "
        "Text-to-Text Transformer. JMLR 21; Dodge et al. (2021). Documenting Large Webtext Corpora. EMNLP.",
        internet=True,
        options={
            **_REVISION,
            "n": "sentences to sample (default 50000, Silver_Large)",
            "seed": "the sample's seed (default 13)",
            "buffer": "rows in the shuffle buffer (default 10000)",
        },
        source="huggingface.co/datasets/allenai/c4 (card)",
    )

    def __init__(self, arg: str | None, options: Mapping[str, str]):
        self.config = arg or "realnewslike"  # named in messages from the first Hub call on
        super().__init__(arg, options)
        try:
            self.n, self.seed, self.buffer = (
                int(self.options.get(k, d))
                for k, d in (("n", 50000), ("seed", 13), ("buffer", 10000))
            )
        except ValueError:
            raise UsageError(
                "--corpus-opt n, seed and buffer take whole numbers (e.g. n=50000)."
            ) from None
        # Recorded with the corpus (manifest parameters, input digest): they decide the sample.
        self.options.update(config=self.config, n=str(self.n), seed=str(self.seed))

    def label(self) -> str:
        """Name the corpus with its config (``c4:realnewslike``)."""
        return f"c4:{self.config}"

    def languages(self) -> list[str]:
        """English only (the multilingual config is not sampled here)."""
        return ["eng_Latn"]

    def stream(self) -> Any:
        """Return the shuffled ``IterableDataset`` of the config's split (never materialised)."""
        ds = self.load(self.config, self.split, streaming=True)
        self.check_columns(
            list(ds.features or ()), ("text", "url"), f"config {self.config}, split {self.split}"
        )
        return ds.shuffle(seed=self.seed, buffer_size=self.buffer)

    def rows(self, lang: str) -> Iterator[Row]:
        """Yield ``n`` sampled sentences, one per document, in stream order."""
        from builders.adapters.sentences import split_sentences

        taken = 0
        for doc, rec in enumerate(self.stream()):
            if taken >= self.n:
                break
            sentences = split_sentences(rec["text"] or "")
            if not sentences:
                continue
            k = int(np.random.default_rng([self.seed, doc]).integers(len(sentences)))
            meta = {"split": self.split, "document": rec["url"], "timestamp": rec.get("timestamp")}
            yield Row(f"{rec['url']}#{k}", lang, sentences[k], meta)
            taken += 1
