"""The dataset contract shared by every builder and evaluator."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evaluators.core.errors import SchemaError, did_you_mean
from evaluators.schema.langs import check_lang, pair_config, resolve_lang, resolve_pair

if TYPE_CHECKING:
    from evaluators.schema.base import FamilySchema, TableSchema, languages

# The family schemas import ``datasets`` (slow): they load on first use, so that
# ``evaluators.schema.langs`` (used by ``xlbench list``) stays light.
_LAZY = {
    "FamilySchema": "base",
    "TableSchema": "base",
    "languages": "base",
    "alee": None,
    "bucc": None,
    "cbd": None,
    "silver": None,
}


def __getattr__(name: str) -> Any:
    import importlib

    if name == "FAMILIES":
        from evaluators.schema import alee, bucc, cbd, silver

        families = _registry(cbd.SCHEMA, silver.SCHEMA, alee.SCHEMA, bucc.SCHEMA)
        globals()["FAMILIES"] = families
        return families
    if name in _LAZY:
        module = importlib.import_module(f"evaluators.schema.{_LAZY[name] or name}")
        value = getattr(module, name) if _LAZY[name] else module
        globals()[name] = value
        return value
    raise AttributeError(f"module 'evaluators.schema' has no attribute {name!r}")


def _registry(*schemas: FamilySchema) -> dict[str, FamilySchema]:
    out: dict[str, FamilySchema] = {}
    for schema in schemas:
        if schema.name in out:
            raise RuntimeError(f"duplicate family name {schema.name!r}")
        out[schema.name] = schema
    return out


def get_family(name: str) -> FamilySchema:
    """Return a family's schema by name.

    >>> get_family("bucc").tables[1].suffix
    'gold'

    Raises:
        SchemaError: unknown family; the message suggests close names.
    """
    families = __getattr__("FAMILIES") if "FAMILIES" not in globals() else globals()["FAMILIES"]
    if name not in families:
        raise SchemaError(
            f"Unknown dataset family {name!r}; known: {', '.join(families)}.{did_you_mean(name, families)}"
        )
    return families[name]


__all__ = [
    "FAMILIES",
    "FamilySchema",
    "TableSchema",
    "check_lang",
    "get_family",
    "languages",
    "pair_config",
    "resolve_lang",
    "resolve_pair",
]
