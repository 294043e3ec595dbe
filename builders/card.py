"""Render a dataset card (README.md): Hub YAML front matter + a body from ``cards/``.

Pure: takes the manifest, the per-config statistics and the family's prose, and
returns text. The template and prose are data under ``cards/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
import yaml

from evaluators.schema import FamilySchema, languages
from evaluators.schema.langs import language_name, to_card_language
from evaluators.schema.meta import Manifest

CARDS_DIR = Path(__file__).resolve().parent.parent / "cards"
_SIZE_BINS = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")]


def size_category(n: int) -> str:
    """Return the Hub ``size_categories`` bin of ``n`` rows.

    >>> size_category(999), size_category(1000), size_category(5_000_000)
    ('n<1K', '1K<n<10K', '1M<n<10M')
    """
    for limit, label in _SIZE_BINS:
        if n < limit:
            return label
    return "n>10M"


def split_file(config: str, split: str) -> str:
    """Return the path of a split's parquet file inside the folder.

    >>> split_file("eng_Latn-deu_Latn", "test")
    'data/eng_Latn-deu_Latn/test-00000-of-00001.parquet'
    """
    return f"data/{config}/{split}-00000-of-00001.parquet"


def card_yaml(
    family: FamilySchema,
    manifest: Manifest,
    stats: dict[str, dict[str, dict[str, int]]],
    license_id: str,
    superseded_by: str | None = None,
) -> dict[str, Any]:
    """Return the card's YAML front matter as a dict.

    Args:
        family: the family schema.
        manifest: the build manifest (version, signature).
        stats: ``config -> split -> {"num_examples", "num_bytes"}``.
        license_id: the Hub license id.
        superseded_by: the version that replaces this one, if any.
    """
    langs: list[str] = []
    configs, infos = [], []
    for i, config in enumerate(sorted(stats)):
        subset, table = family.split_config(config)
        for lang in languages(subset):
            code = to_card_language(lang)
            if code not in langs:
                langs.append(code)
        entry: dict[str, Any] = {
            "config_name": config,
            "data_files": [{"split": s, "path": split_file(config, s)} for s in sorted(stats[config])],
        }
        if i == 0:
            entry["default"] = True
        configs.append(entry)
        splits = [
            {"name": s, "num_bytes": v["num_bytes"], "num_examples": v["num_examples"]}
            for s, v in sorted(stats[config].items())
        ]
        size = sum(v["num_bytes"] for v in stats[config].values())
        infos.append(
            {
                "config_name": config,
                "features": table.features._to_yaml_list(),
                "splits": splits,
                "download_size": sum(v.get("file_bytes", 0) for v in stats[config].values()),
                "dataset_size": size,
            }
        )
    total = max(
        (sum(v["num_examples"] for v in splits.values()) for splits in stats.values()), default=0
    )
    return {
        "pretty_name": family.pretty_name,
        "license": license_id,
        "language": langs,
        "task_categories": list(family.task_categories),
        "size_categories": [size_category(total)],
        "tags": list(family.tags),
        "configs": configs,
        "dataset_info": infos,
        "xlbench": {
            "name": manifest.name,
            "family": family.name,
            "version": manifest.version,
            "build_signature": manifest.build_signature(),
            "superseded_by": superseded_by,
        },
    }


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


def render_card(
    family: FamilySchema,
    manifest: Manifest,
    stats: dict[str, dict[str, dict[str, int]]],
    license_id: str,
    construction: list[str],
    limitations: list[str],
    repo_id: str | None = None,
    superseded_by: str | None = None,
) -> str:
    """Return the full README.md text of a built dataset."""
    front = card_yaml(family, manifest, stats, license_id, superseded_by)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(CARDS_DIR / "templates")),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    rows = []
    for config in sorted(stats):
        subset, table = family.split_config(config)
        names = " → ".join(language_name(lang) for lang in languages(subset))
        for split, v in sorted(stats[config].items()):
            rows.append({"config": config, "languages": names, "split": split, "rows": v["num_examples"]})
    body = env.get_template("dataset.md.j2").render(
        family=family,
        manifest=manifest,
        signature=manifest.build_signature(),
        prose=_prose(family.name),
        rows=rows,
        construction=construction,
        limitations=limitations,
        repo_id=repo_id or f"<org>/{manifest.name}",
        first_config=sorted(stats)[0] if stats else "",
        first_split=_example_split(family, sorted(stats)[0], stats) if stats else "",
        changelog=manifest.changelog,
        superseded_by=superseded_by,
    )
    head = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{head}---\n{body}"
