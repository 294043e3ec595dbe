"""Any Hub dataset as a corpus: ``--corpus hf:<repo>[@revision]`` read through ``datasets`` at a pinned commit.

The revision (a tag, a branch or nothing for ``main``) is resolved to its commit sha first
(``HfApi.dataset_info``); the dataset is then loaded at exactly that sha and the sha is the
corpus' revision in the manifest and on the card. Where the text lies is said with options
(``--corpus-opt``), since a Hub dataset has no one layout:

- ``text=COLUMN`` and ``lang=CODE``: one language per row (monolingual text);
- ``fields=LANG:COLUMN,LANG:COLUMN``: one column per language (wide parallel tables);
- ``translation=COLUMN``: a ``{code: text}`` column (``datasets.Translation``, WMT-style);
- ``id=COLUMN``: the stable id (default: the row's position in the split);
- ``config=NAME``, ``split=NAME`` (default ``train``), ``streaming=1`` (never materialised),
  ``license=SPDX`` and ``citation=TEXT`` when the card lacks them.

Named adapters (:mod:`builders.corpora.named`) are this reader with a fixed repo and schema.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from builders.corpora.base import Corpus, CorpusInfo, Row, truthy
from evaluators.core.errors import LangCodeError, UsageError
from evaluators.data.hubclient import find_token, hub_errors
from evaluators.schema.langs import resolve_lang
from evaluators.schema.meta import InputRecord

GENERIC_OPTIONS = {
    "config": "the dataset's config (subset)",
    "text": "the text column (with lang=CODE)",
    "lang": "the language of text=COLUMN",
    "fields": "LANG:COLUMN,LANG:COLUMN: one text column per language",
    "translation": "a {code: text} column (datasets.Translation)",
    "id": "the column of stable ids (default: the row's position)",
    "streaming": "1: stream the split instead of downloading it",
    "license": "SPDX license of the text when the dataset card has none",
    "citation": "how to cite the dataset",
}


def split_repo(arg: str) -> tuple[str, str | None]:
    """Split ``org/name[@revision]``.

    >>> split_repo("org/x@v1.0.0"), split_repo("org/x")
    (('org/x', 'v1.0.0'), ('org/x', None))
    """
    repo, at, rev = arg.partition("@")
    return repo.strip(), (rev.strip() or None) if at else None


class HubCorpus(Corpus):
    """A Hub dataset at a pinned commit; subclasses fix ``repo`` and read rows their own way."""

    #: A named adapter's repo (``None``: the generic reader takes it from ``:ARG``).
    repo_id: str | None = None

    def __init__(self, arg: str | None, options: Mapping[str, str]):
        super().__init__(arg, options)
        if self.repo_id is not None:
            self.repo, self.requested = self.repo_id, self.options.get("revision")
        else:
            self.repo, self.requested = split_repo(arg or "")
        if self.info.token and not find_token():
            raise UsageError(
                f"{self.repo} is gated: accept its conditions on https://huggingface.co/datasets/{self.repo} "
                f"and set HF_TOKEN to that account's token."
            )
        self.sha, self.card_license = self._resolve()

    def _action(self) -> str:
        return f"reading corpus {self.label()}"

    def _resolve(self) -> tuple[str, str | None]:
        from huggingface_hub import HfApi  # core dependencies, imported on first use

        with hub_errors(self._action(), self.repo, self.requested):
            info = HfApi().dataset_info(self.repo, revision=self.requested)
        card = getattr(info, "card_data", None) or getattr(info, "cardData", None) or {}
        configs = card.get("configs") if hasattr(card, "get") else None
        #: The card's config names (public on the Hub even where the files are gated).
        self.card_configs = [c["config_name"] for c in configs or () if "config_name" in c]
        lic = card.get("license") if hasattr(card, "get") else None
        if isinstance(lic, list):
            lic = lic[0] if len(lic) == 1 else None
        return str(info.sha), lic

    def _check_access(self) -> None:
        """Ask for the card's file once: a gated repo refuses here, in its own words.

        ``datasets`` answers a refused download with the newest *cached* copy of another
        revision, when there is one; asking first keeps that from passing for this sha.
        """
        from huggingface_hub import get_hf_file_metadata, hf_hub_url
        from huggingface_hub.errors import EntryNotFoundError

        url = hf_hub_url(self.repo, "README.md", repo_type="dataset", revision=self.sha)
        with hub_errors(self._action(), self.repo, self.sha):
            try:
                get_hf_file_metadata(url)
            except EntryNotFoundError:
                pass  # a dataset without a card: nothing to ask for

    def load(self, config: str | None, split: str, streaming: bool = False) -> Any:
        """Return one split at the pinned sha (an ``IterableDataset`` when ``streaming``)."""
        import datasets

        if not getattr(self, "_access_checked", False):
            self._check_access()
            self._access_checked = True
        with hub_errors(self._action(), self.repo, self.sha):
            try:
                return datasets.load_dataset(
                    self.repo, config, split=split, revision=self.sha, streaming=streaming
                )
            except ValueError as err:
                # datasets names a wrong config or split in a ValueError ("Unknown split", "BuilderConfig ... not found").
                first = str(err).strip().splitlines()[0][:300]
                raise UsageError(
                    f"{self.repo}@{self.sha[:12]} has no config {config!r} / split {split!r} ({first}); "
                    f"check --corpus-opt config= and split=."
                ) from None

    def check_columns(self, columns: Iterable[str], needed: Iterable[str], where: str) -> None:
        """Refuse a column name the dataset does not have (one sentence listing the ones it has).

        Raises:
            UsageError: a needed column is missing.
        """
        have = list(columns)
        for name in needed:
            if name not in have:
                raise UsageError(
                    f"{self.repo} ({where}) has no column {name!r}; it has: {', '.join(have)}."
                )

    def revision(self) -> str:
        """Return the Hub commit sha the rows were read at."""
        return self.sha

    def input_record(self) -> InputRecord:
        """Return ``hub:<repo>@<sha>`` with the config and split in the digest, license and citation."""
        what = f"hub:{self.repo}@{self.sha}:{self.options.get('config') or ''}:{self.split}"
        return InputRecord(
            name=f"corpus:{self.info.name}",
            origin=f"hub:{self.repo}@{self.sha}",
            sha256=hashlib.sha256(what.encode()).hexdigest(),
            kind="hub",
            license=self.options.get("license")
            or self.info.license
            or self.card_license
            or "unknown",
            citation=self.options.get("citation") or self.info.citation or None,
        )

    def label(self) -> str:
        """Name the corpus as typed (``hf:org/name@rev``) or by its adapter name."""
        return super().label() if self.repo_id is None else self.info.name


class HubDataset(HubCorpus):
    """``hf:<repo>[@revision]``: any Hub dataset, its layout given by ``--corpus-opt``."""

    info = CorpusInfo(
        name="hf",
        title="Hub dataset",
        arg="REPO[@REVISION]",
        arg_required=True,
        languages="as the options declare (text+lang, fields, translation)",
        splits=(),
        license="",
        citation="",
        internet=True,
        options=GENERIC_OPTIONS,
        source="datasets.load_dataset at a commit sha (huggingface.co/docs/datasets)",
    )

    def __init__(self, arg: str | None, options: Mapping[str, str]):
        super().__init__(arg, options)
        self.split = self.options.get("split") or "train"
        modes = [k for k in ("text", "fields", "translation") if self.options.get(k)]
        if len(modes) != 1:
            raise UsageError(
                f"--corpus {self.label()} needs exactly one of --corpus-opt text=COLUMN (with lang=CODE), "
                f"fields=LANG:COLUMN,... or translation=COLUMN."
            )
        self.mode = modes[0]
        if self.mode == "text" and not self.options.get("lang"):
            raise UsageError(
                "--corpus-opt text=COLUMN needs lang=CODE (the language of that column)."
            )
        self.columns = self._columns()
        self._data: Any = None

    def _columns(self) -> dict[str, str]:
        """Return canonical language -> column of the ``text``/``fields`` modes."""
        if self.mode == "text":
            return {resolve_lang(self.options["lang"]): self.options["text"]}
        if self.mode == "translation":
            return {}
        out = {}
        for item in self.options["fields"].split(","):
            lang, colon, column = item.partition(":")
            if not colon or not column.strip():
                raise UsageError(
                    f"--corpus-opt fields expects LANG:COLUMN,LANG:COLUMN, got {item!r}."
                )
            out[resolve_lang(lang.strip())] = column.strip()
        return out

    def data(self) -> Any:
        """Load the split once and check that every named column exists."""
        if self._data is None:
            ds = self.load(
                self.options.get("config"), self.split, truthy(self.options.get("streaming"))
            )
            names = list(ds.features) if ds.features is not None else list(ds.column_names or ())
            where = f"config {self.options.get('config') or 'default'}, split {self.split}"
            needed = list(self.columns.values())
            needed += [self.options[k] for k in ("translation", "id") if self.options.get(k)]
            self.check_columns(names, needed, where)
            self._data = ds
        return self._data

    def languages(self) -> list[str]:
        """Return the languages the options declare (``translation``: the column's language keys)."""
        ds = self.data()  # a wrong column or split is named before any language is
        if self.mode != "translation":
            return sorted(self.columns)
        feature = ds.features[self.options["translation"]] if ds.features else None
        keys = list(
            getattr(feature, "languages", None) or next(iter(ds))[self.options["translation"]]
        )
        out = {}
        for key in keys:
            try:
                out[resolve_lang(key)] = key
            except LangCodeError:
                continue
        self.columns = out  # language -> key inside the translation column
        return sorted(out)

    def rows(self, lang: str) -> Iterator[Row]:
        """Yield one language's texts in dataset order, ids from ``id=`` or the row position."""
        ds = self.data()
        if self.mode == "translation" and not self.columns:
            self.languages()
        id_col = self.options.get("id")
        for i, record in enumerate(ds):
            if self.mode == "translation":
                text = (record[self.options["translation"]] or {}).get(self.columns[lang])
            else:
                text = record[self.columns[lang]]
            ident = str(record[id_col]) if id_col else str(i)
            yield Row(ident, lang, (text or "").strip(), {"split": self.split})
