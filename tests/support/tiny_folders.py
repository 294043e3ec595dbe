"""Tiny built folders of all four families (written by the real writer), and folder surgery for tests.

``tiny_folder(family, out)`` writes a valid folder through
:func:`builders.release.artifact.write_dataset` in milliseconds (no builder run).
``edit_split(folder, config, split, edit)`` rewrites one parquet file in place;
``reseal(folder)`` then makes the card's and manifest's counts, sizes and digests agree with the
files again, so a test reaches the one defect it plants (a duplicate id, a null cell, a gold
pair naming a missing row) behind the digest check.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from builders.base import BuildResult
from builders.release.artifact import write_dataset
from evaluators.core.hashing import sha256_file_size
from evaluators.schema import get_family
from evaluators.schema.base import data_file
from evaluators.schema.meta import Manifest

PAIR = "eng_Latn-deu_Latn"
WORDS = ["haus", "baum", "hund", "katze", "maus", "vogel"]


def _cbd() -> dict:
    rows = []
    for i, w in enumerate(WORDS):
        en = f"the {w}x is here"
        de = f"das {w} ist hier"
        rows.append(
            {"id": f"{i}:4-{4 + len(w) + 1}", "sent_id": i, "src_sentence": en, "tgt_sentence": de,
             "src_word": f"{w}x", "tgt_word": w, "src_start": 4, "src_end": 5 + len(w),
             "tgt_start": 4, "tgt_end": 4 + len(w), "method": "dictionary"}
        )  # fmt: skip
    return {PAIR: {"test": rows}}


def _silver() -> dict:
    rows = [
        {"id": str(i), "src_text": f"the {w}", "tgt_text": f"das {w}", "src_tokens": ["the", w],
         "tgt_tokens": ["das", w], "sure": [[0, 0], [1, 1]], "possible": [[0, 0], [1, 1]]}
        for i, w in enumerate(WORDS)
    ]  # fmt: skip
    details = [
        {"id": str(i), "src_index": 1, "word": w, "alternatives": ["x"], "alt_translations": ["y"],
         "status": "kept", "reason": "kept", "n_valid": 1, "tgt_indices": [1]}
        for i, w in enumerate(WORDS)
    ]  # fmt: skip
    return {PAIR: {"test": rows}, f"{PAIR}-details": {"test": details}}


def _alee() -> dict:
    nli = {"entailment": 0.1, "neutral": 0.1, "contradiction": 0.8}
    rows = [
        {"id": f"{i}-PN", "lang": "deu_Latn", "en_orig": f"The {w} runs.", "en_foil": f"The {w} does not run.",
         "target_orig": f"Der {w} rennt.", "perturbation": "PN", "level": "sentence", "nli_orig_foil": nli,
         "nli_foil_orig": nli, "amr_orig": "", "amr_foil": "", "edit": "negation"}
        for i, w in enumerate(WORDS)
    ]  # fmt: skip
    return {PAIR: {"test": rows}}


def _bucc() -> dict:
    main: dict[str, list] = {}
    gold: dict[str, list] = {}
    for split, words in (("train", WORDS[:3]), ("test", WORDS[3:])):
        main[split] = [r for i, w in enumerate(words) for r in (
            {"id": f"eng-{split}-{i}", "side": "src", "text": f"the {w} sleeps"},
            {"id": f"deu-{split}-{i}", "side": "tgt", "text": f"der {w} schläft"},
        )]  # fmt: skip
        gold[split] = [
            {"src_id": f"eng-{split}-{i}", "tgt_id": f"deu-{split}-{i}"} for i in range(len(words))
        ]
    return {PAIR: main, f"{PAIR}-gold": gold}


TABLES: dict[str, Callable[[], dict]] = {
    "cbd": _cbd,
    "silver": _silver,
    "alee": _alee,
    "bucc": _bucc,
}
#: The config and split holding sentences, per family, and its text column.
TEXT = {
    "cbd": (PAIR, "test", "tgt_sentence"),
    "silver": (PAIR, "test", "tgt_text"),
    "alee": (PAIR, "test", "target_orig"),
    "bucc": (PAIR, "test", "text"),
}


def tiny_folder(family: str, out: Path) -> Path:
    """Write a small valid folder of ``family`` at ``out`` (the real writer, card and manifest)."""
    result = BuildResult(
        tables=TABLES[family](),
        parameters={"tiny": True},
        construction=["Hand-written rows for tests."],
        license="cc0-1.0",
        name=f"xlbench-{family}-tiny",
    )
    manifest = Manifest(
        name=result.name or family,
        family=family,
        version="1.0.0",
        builder="tests.tiny",
        seed=13,
        parameters=result.parameters,
        changelog=[{"version": "1.0.0", "date": "2026-12-01", "changes": "first release"}],
    )
    return write_dataset(out, get_family(family), result, manifest)


def parquet(folder: Path, config: str, split: str) -> Path:
    """The data file of one split."""
    return folder / data_file(config, split)


def edit_split(folder: Path, config: str, split: str, edit: Callable[[pa.Table], pa.Table]) -> None:
    """Rewrite one split's parquet file in place with ``edit(table)``."""
    path = parquet(folder, config, split)
    pq.write_table(edit(pq.read_table(path)), path)


def set_cell(column: str, value: object, row: int = 0) -> Callable[[pa.Table], pa.Table]:
    """An edit that puts ``value`` into ``column`` at ``row``."""

    def edit(table: pa.Table) -> pa.Table:
        values = table.column(column).to_pylist()
        values[row] = value
        i = table.schema.get_field_index(column)
        return table.set_column(
            i, table.schema.field(i), pa.array(values, table.schema.field(i).type)
        )

    return edit


def front(folder: Path) -> tuple[dict, str]:
    """The card's YAML front matter and its body."""
    text = (folder / "README.md").read_text(encoding="utf-8")
    end = text.find("\n---", 4)
    return yaml.safe_load(text[4:end]), text[end + 1 :]


def edit_card(folder: Path, edit: Callable[[dict], None]) -> None:
    """Edit the card's YAML front matter in place."""
    data, body = front(folder)
    edit(data)
    (folder / "README.md").write_text(
        "---\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True) + body, encoding="utf-8"
    )


def edit_manifest(folder: Path, edit: Callable[[dict], None]) -> None:
    """Edit ``manifest.json`` in place."""
    path = folder / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")


def reseal(folder: Path) -> None:
    """Make the card and manifest agree with the data files again (counts, sizes, digests)."""
    facts = {}
    for path in sorted((folder / "data").rglob("*.parquet")):
        rel = path.relative_to(folder).as_posix()
        sha, size = sha256_file_size(path)
        table = pq.read_table(path)
        facts[rel] = {
            "sha256": sha,
            "bytes": size,
            "num_bytes": table.nbytes,
            "rows": table.num_rows,
        }

    def fix_manifest(m: dict) -> None:
        m["files"] = {rel: {k: v for k, v in f.items() if k != "rows"} for rel, f in facts.items()}
        for config, splits in m["configs"].items():
            for split in splits:
                splits[split] = facts[data_file(config, split)]["rows"]

    def fix_card(card: dict) -> None:
        for info in card["dataset_info"]:
            files = [facts[data_file(info["config_name"], s["name"])] for s in info["splits"]]
            for s, f in zip(info["splits"], files, strict=True):
                s["num_examples"], s["num_bytes"] = f["rows"], f["num_bytes"]
            info["download_size"] = sum(f["bytes"] for f in files)
            info["dataset_size"] = sum(f["num_bytes"] for f in files)

    edit_manifest(folder, fix_manifest)
    edit_card(folder, fix_card)
