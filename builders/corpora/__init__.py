"""The corpus layer: one registry of corpus adapters behind one option, ``--corpus NAME[:ARG]``.

Every builder that reads parallel or monolingual text declares the two fields with
:func:`corpus_param` and :func:`corpus_options_param` and opens the corpus with
:func:`open_corpus`; the adapter (:mod:`builders.corpora.local`, :mod:`builders.corpora.hub`)
yields rows with stable ids and canonical language codes and pins what it read. Both fields
are ``sig=False``: what the rows depend on (the corpus' files or Hub commit, the options) is
in the input record and in the manifest's ``parameters["corpus"]``, so builds without
``--corpus`` keep their content ids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from builders.corpora.base import Corpus, CorpusInfo, parse_options
from evaluators.core.errors import UsageError
from evaluators.core.params import param
from evaluators.core.registry import Registry

#: ``--corpus`` name -> adapter class (imported on first use).
CORPORA = Registry("corpus", "--corpus")
CORPORA.register("ntrex128", "builders.corpora.local:Ntrex128", "NTREX-128 (local folder)")
CORPORA.register("flores200", "builders.corpora.local:Flores200", "FLORES-200 (local folder)")
CORPORA.register(
    "tatoeba", "builders.corpora.local:Tatoeba", "Tatoeba, LASER's test set (local folder)"
)
CORPORA.register("hf", "builders.corpora.hub:HubDataset", "any Hub dataset at a pinned revision")
CORPORA.register("flores_plus", "builders.corpora.named:FloresPlus", "FLORES+ on the Hub (gated)")
CORPORA.register("wmt24pp", "builders.corpora.named:Wmt24pp", "WMT24++ on the Hub")
CORPORA.register("bouquet", "builders.corpora.named:Bouquet", "BOUQuET on the Hub")
CORPORA.register("c4", "builders.corpora.named:C4", "C4, streamed and sampled")

#: A local layout read from the Hub when no folder is given (``--corpus flores200`` = FLORES+).
HUB_TWINS = {"flores200": "flores_plus"}


#: The ``--help`` section of the two options, unless a builder lists them with its other sources.
SECTION = "corpus (xlbench list corpora)"


def corpus_param(what: str, section: str = SECTION) -> Any:
    """Declare a builder's ``corpus`` field (one declaration for every builder; ``what`` it reads)."""
    return param(
        None,
        f"read {what} from a corpus: {', '.join(CORPORA.names())} (NAME[:ARG], e.g. ntrex128:DIR, "
        "hf:org/name@sha; `xlbench list corpora`)",
        metavar="NAME[:ARG]",
        sig=False,
        section=section,
    )


def corpus_options_param(section: str = SECTION) -> Any:
    """Declare a builder's ``corpus_opt`` field: the adapter's ``KEY=VALUE`` options (repeatable)."""
    return param(
        (),
        "an option of --corpus, KEY=VALUE (repeatable): split=dev, config=..., text=COLUMN ...",
        action="append",
        metavar="KEY=VALUE",
        sig=False,
        section=section,
    )


def split_spec(spec: str) -> tuple[str, str | None]:
    """Split ``NAME[:ARG]``.

    >>> split_spec("hf:org/x@main"), split_spec("flores200")
    (('hf', 'org/x@main'), ('flores200', None))
    """
    name, colon, arg = spec.strip().partition(":")
    return name.strip().lower(), (arg.strip() or None) if colon else None


def corpus_class(name: str) -> type[Corpus]:
    """Return the adapter class of ``name``.

    Raises:
        UsageError: unknown name (the message lists the valid ones).
    """
    return CORPORA.load(name)


def open_corpus(spec: str, options: Sequence[str] | Mapping[str, str] | None = ()) -> Corpus:
    """Open ``--corpus NAME[:ARG]`` with its ``--corpus-opt`` items.

    Raises:
        UsageError: unknown corpus, a missing or unexpected ``:ARG``, an unknown option.
        InputFileError: a local folder without the corpus' layout.
    """
    name, arg = split_spec(spec)
    if arg is None and name in HUB_TWINS:
        name = HUB_TWINS[name]
    cls = corpus_class(name)
    info: CorpusInfo = cls.info
    if arg is None and info.arg_required:
        raise UsageError(f"--corpus {name} needs {info.arg}: --corpus {name}:{info.arg}.")
    if arg is not None and info.arg is None:
        raise UsageError(f"--corpus {name} takes no ':{arg}'; pass --corpus {name}.")
    return cls(arg, parse_options(info, options))


def check_corpus_alone(corpus: str | None, others: Mapping[str, Any]) -> None:
    """Refuse ``--corpus`` together with a builder's other text inputs (``others``: flag -> value).

    Raises:
        UsageError: one of ``others`` is set as well.
    """
    if corpus is None:
        return
    given = [flag for flag, value in others.items() if value]
    if given:
        raise UsageError(
            f"Pass either --corpus or {given[0]}, not both: --corpus is the text this build reads."
        )


def infos() -> list[CorpusInfo]:
    """Return every registered corpus' facts, in registry order (``xlbench list corpora``)."""
    return [corpus_class(name).info for name in CORPORA.names()]


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def corpora_rows() -> list[dict[str, str]]:
    """Return one row per corpus for ``xlbench list corpora``: name, languages, splits, license, citation, access."""
    rows = []
    for info in infos():
        spec = f"{info.name}:{info.arg}" if info.arg and info.arg_required else info.name
        if info.arg and not info.arg_required:
            spec += f"[:{info.arg}]"
        twin = next((local for local, hub in HUB_TWINS.items() if hub == info.name), None)
        rows.append(
            {
                "corpus": spec + (f" (= {twin} without DIR)" if twin else ""),
                "title": info.title,
                "languages": info.languages,
                "splits": ", ".join(info.splits) or "any (split=)",
                "license": info.license or "from the dataset card (license=)",
                "citation": info.citation or "citation= option",
                "token": _yes(info.token),
                "internet": _yes(info.internet),
            }
        )
    return rows


def corpora_markdown() -> str:
    """Return the corpora as a Markdown table (docs/registry.md)."""
    rows = corpora_rows()
    keys = ("corpus", "title", "languages", "splits", "license", "token", "internet", "citation")
    lines = ["| " + " | ".join(keys) + " |", "| " + " | ".join("---" for _ in keys) + " |"]
    lines += ["| " + " | ".join(r[k].replace("|", "\\|") for k in keys) + " |" for r in rows]
    return "\n".join(lines)


def corpora_text() -> str:
    """Return the corpora for a terminal: one block per corpus."""
    blocks = []
    for r in corpora_rows():
        access = (
            "HF_TOKEN + internet"
            if r["token"] == "yes"
            else "internet"
            if r["internet"] == "yes"
            else "offline"
        )
        blocks.append(
            f"{r['corpus']}: {r['title']} ({access})\n"
            f"  languages: {r['languages']}\n  splits: {r['splits']}\n"
            f"  license: {r['license']}\n  cite: {r['citation']}"
        )
    return "\n".join(blocks)
