"""Parsing of ``--pair`` specifications (``name=...,silver=DIR,gold_text=F,...``)."""

from __future__ import annotations

from pathlib import Path

from evaluators.core.errors import UsageError

PAIR_KEYS = (
    "name",
    "silver",
    "dataset",
    "config",
    "gold_text",
    "gold_links",
    "gold_reversed",
    "train_src",
    "train_tgt",
)


def parse_pair(spec: str) -> dict[str, str]:
    """Parse a ``--pair`` spec of ``key=value`` fields.

    >>> parse_pair("name=eng-fra,silver=/d/eng_fra")["silver"]
    '/d/eng_fra'

    Raises:
        UsageError: unknown or repeated key, missing ``=``, or neither ``silver`` nor ``dataset``.
    """
    out: dict[str, str] = {}
    for field in spec.split(","):
        key, eq, value = field.partition("=")
        key = key.strip()
        if not eq or key not in PAIR_KEYS:
            raise UsageError(
                f"Bad --pair field {field!r}; use comma-separated key=value with keys {', '.join(PAIR_KEYS)}."
            )
        if key in out:
            raise UsageError(
                f"--pair {spec!r} gives {key} twice ({out[key]!r} and {value.strip()!r}); give each key once."
            )
        out[key] = value.strip()
    if "silver" not in out and "dataset" not in out:
        raise UsageError(
            f"--pair {spec!r} needs silver=<SilverAlign folder> or dataset=<built silver dataset>."
        )
    if ("gold_text" in out) != ("gold_links" in out):
        raise UsageError(f"--pair {spec!r} needs both gold_text and gold_links (or neither).")
    if ("train_src" in out) != ("train_tgt" in out):
        raise UsageError(f"--pair {spec!r} needs both train_src and train_tgt (or neither).")
    out.setdefault("name", Path(out.get("silver") or out["dataset"]).name)
    return out


def parse_pairs(specs: list[str] | tuple[str, ...]) -> list[dict[str, str]]:
    """Parse every ``--pair``; two pairs of one name would overwrite each other's results.

    >>> [p["name"] for p in parse_pairs(["silver=/d/eng_fra", "name=b,silver=/d/eng_fra"])]
    ['eng_fra', 'b']

    Raises:
        UsageError: a bad spec (:func:`parse_pair`) or a name given to two pairs.
    """
    pairs = [parse_pair(spec) for spec in specs]
    names = [pair["name"] for pair in pairs]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise UsageError(
            f"Two --pair options are named {twice!r}; give each a distinct name=... (results are kept by name)."
        )
    return pairs
