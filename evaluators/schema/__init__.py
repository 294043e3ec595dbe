"""The dataset contract shared by every builder and evaluator."""

from __future__ import annotations

from evaluators.core.errors import SchemaError, did_you_mean
from evaluators.schema import alee, bucc, cbd, silver
from evaluators.schema.base import FamilySchema, TableSchema, languages
from evaluators.schema.langs import check_lang, pair_config, resolve_lang, resolve_pair


def _registry(*schemas: FamilySchema) -> dict[str, FamilySchema]:
    out: dict[str, FamilySchema] = {}
    for schema in schemas:
        if schema.name in out:
            raise RuntimeError(f"duplicate family name {schema.name!r}")
        out[schema.name] = schema
    return out


#: Every dataset family's schema by name (the columns are declared without ``datasets``,
#: which loads only when a table's ``features`` are first asked for).
FAMILIES: dict[str, FamilySchema] = _registry(cbd.SCHEMA, silver.SCHEMA, alee.SCHEMA, bucc.SCHEMA)


def get_family(name: str) -> FamilySchema:
    """Return a family's schema by name.

    >>> get_family("bucc").tables[1].suffix
    'gold'

    Raises:
        SchemaError: unknown family; the message suggests close names.
    """
    if name not in FAMILIES:
        raise SchemaError(
            f"Unknown dataset family {name!r}; known: {', '.join(FAMILIES)}.{did_you_mean(name, FAMILIES)}"
        )
    return FAMILIES[name]


__all__ = [
    "FAMILIES",
    "alee",
    "bucc",
    "cbd",
    "silver",
    "FamilySchema",
    "TableSchema",
    "check_lang",
    "get_family",
    "languages",
    "pair_config",
    "resolve_lang",
    "resolve_pair",
]
