"""What every dataset family declares: its tables, features, splits and config naming.

A family (``cbd``, ``silver``, ``alee``, ``bucc``) publishes one or more *tables*
per language pair. The main table's config is the pair itself
(``eng_Latn-deu_Latn``); an auxiliary table appends its suffix
(``deu_Latn-eng_Latn-gold``). Each config has one ``datasets.Features``, built on
first use from the table's plain column declaration (:data:`Column`), so that importing
the schema does not import ``datasets`` (seconds) for a command that only reads a name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from evaluators.core.errors import SchemaError, truncate
from evaluators.schema.langs import check_lang

if TYPE_CHECKING:
    import pyarrow as pa
    from datasets import Features


@dataclass(frozen=True)
class Seq:
    """A list column of ``of`` (``datasets.Sequence``).

    Attributes:
        of: the element type: a dtype name, another :class:`Seq`, or a struct.
    """

    of: Column


#: A column's type, declared without ``datasets``: a ``datasets.Value`` dtype name
#: (``"string"``, ``"int32"``), a :class:`Seq`, or a struct ``{field: Column}``.
Column = str | Seq | Mapping[str, "Column"]


def to_feature(column: Column) -> Any:
    """Return the ``datasets`` feature of one column declaration (imports ``datasets``).

    >>> to_feature(Seq(Seq("int32")))
    List(List(Value('int32')))
    """
    from datasets import Sequence, Value

    if isinstance(column, str):
        return Value(column)
    if isinstance(column, Seq):
        return Sequence(to_feature(column.of))
    return {name: to_feature(c) for name, c in column.items()}


def to_features(columns: Mapping[str, Column]) -> Features:
    """Return the ``datasets.Features`` of a table's column declarations, in order (imports ``datasets``)."""
    from datasets import Features

    return Features({name: to_feature(c) for name, c in columns.items()})


@dataclass(frozen=True)
class TableSchema:
    """One table of a family: its features, allowed splits and unique key.

    Attributes:
        suffix: ``""`` for the main table, else appended to the config name after ``-``.
        columns: column names and types (:data:`Column`), in order; changing them means a
            version bump. :attr:`features` is their ``datasets.Features``.
        splits: the splits this table may have.
        key: columns whose values are unique within a (config, split).
        description: one line for the card.
        refers_to: ``(column, suffix)`` pairs: every value of ``column`` is an ``id`` of the
            same subset's table with that suffix, in the same split (a gold pair names rows
            that exist).
        optional: columns a table carries only when its input states them (a corpus'
            domain), after ``columns``; their cells may be null. A table without them has
            exactly the bytes it had before they were declared.
    """

    suffix: str
    columns: Mapping[str, Column]
    splits: tuple[str, ...]
    key: tuple[str, ...] = ("id",)
    description: str = ""
    refers_to: tuple[tuple[str, str], ...] = ()
    optional: Mapping[str, Column] = field(default_factory=dict)

    @cached_property
    def features(self) -> Features:
        """The table's ``datasets.Features`` without its optional columns (built on first use)."""
        return to_features(self.columns)

    def present(self, names: Iterable[str]) -> list[str]:
        """Return the optional columns among ``names``, in declared order.

        >>> TableSchema("", {"id": "string"}, ("test",), optional={"a": "string", "b": "string"}).present(["b", "id"])
        ['b']
        """
        have = set(names)
        return [c for c in self.optional if c in have]

    def features_with(self, names: Iterable[str]) -> Features:
        """Return the features of a table holding the optional columns among ``names`` (imports ``datasets``)."""
        extra = self.present(names)
        if not extra:
            return self.features
        return to_features({**self.columns, **{c: self.optional[c] for c in extra}})


@dataclass(frozen=True)
class FamilySchema:
    """The contract of one dataset family, shared by its builder and its evaluators.

    Attributes:
        name: kebab-case family name, also the ``xlbench build`` subcommand.
        pretty_name: the card's ``pretty_name``.
        tables: the main table first.
        disjoint_column: a column whose values must never occur in two splits
            of one config (BUCC train/test sentences), or ``None``.
        task_categories: Hub task categories for the card.
        tags: Hub tags for the card.
        citation: BibTeX of the seed paper.
    """

    name: str
    pretty_name: str
    tables: tuple[TableSchema, ...]
    task_categories: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    citation: str = ""
    disjoint_column: str | None = None

    @property
    def main(self) -> TableSchema:
        """The main table (its config is the bare pair)."""
        return self.tables[0]

    def table(self, suffix: str) -> TableSchema:
        """Return the table whose configs end in ``-<suffix>`` (``""``: the main table).

        Raises:
            SchemaError: the family has no such table.
        """
        for table in self.tables:
            if table.suffix == suffix:
                return table
        known = ", ".join(repr(t.suffix) for t in self.tables)
        raise SchemaError(
            f"Family {self.name!r} has no table with suffix {suffix!r}; its tables: {known}."
        )

    def config_name(self, subset: str, table: TableSchema | str | None = None) -> str:
        """Return the config name of ``subset`` (a pair or language) for ``table`` (a table or its suffix).

        The one place config names are made: ``<pair>`` for the main table, ``<pair>-<suffix>`` for the others.
        """
        languages(subset)
        if isinstance(table, str):
            table = self.table(table)
        table = table or self.main
        return f"{subset}-{table.suffix}" if table.suffix else subset

    def split_config(self, config: str) -> tuple[str, TableSchema]:
        """Return ``(subset, table)`` for a config name.

        Raises:
            SchemaError: the config does not follow this family's naming.
        """
        for table in self.tables[1:]:
            if table.suffix and config.endswith("-" + table.suffix):
                subset = config[: -len(table.suffix) - 1]
                languages(subset)
                return subset, table
        languages(config)
        return config, self.main


def data_file(config: str, split: str) -> str:
    """Return the path of a split's parquet file inside a built folder (the one layout; Hub-shaped).

    >>> data_file("eng_Latn-deu_Latn", "test")
    'data/eng_Latn-deu_Latn/test-00000-of-00001.parquet'
    """
    return f"data/{config}/{split}-00000-of-00001.parquet"


def languages(subset: str) -> list[str]:
    """Return the canonical languages of a subset (``eng_Latn-deu_Latn`` or ``eng_Latn``).

    >>> languages("eng_Latn-deu_Latn")
    ['eng_Latn', 'deu_Latn']

    Raises:
        SchemaError: the subset is not one or two canonical codes joined by ``-``.
    """
    parts = subset.split("-")
    if not 1 <= len(parts) <= 2:
        raise SchemaError(
            f"Expected a config like 'eng_Latn-deu_Latn' (optionally with a table suffix), got {subset!r}."
        )
    return [check_lang(p) for p in parts]


def to_arrow(
    rows: Iterable[Mapping[str, object]] | pa.Table, table: TableSchema, where: str
) -> pa.Table:
    """Turn rows into an Arrow table with exactly ``table.features``' schema.

    Column order follows the features, then the optional columns present (the same in
    every row); extra or missing columns and values of the wrong type raise, naming
    ``where`` (config/split) and the column.

    Raises:
        SchemaError: the rows do not match the features.
    """
    import pyarrow as pa  # with the features: only when rows are written or checked

    data: pa.Table | None = None
    if isinstance(rows, pa.Table):
        got = rows.column_names
        data = rows
    else:
        rows = list(rows)
        got = list(rows[0].keys()) if rows else list(table.features)
    features = table.features_with(got)
    schema = features.arrow_schema
    expected = list(features)
    if data is None:
        for i, row in enumerate(rows):
            if set(row) != set(expected):
                missing = sorted(set(expected) - set(row))
                extra = sorted(set(row) - set(expected))
                raise SchemaError(
                    f"{where}: row {i} has missing columns {missing} and unexpected columns {extra}; "
                    f"expected exactly {expected}."
                )
    if set(got) != set(expected):
        raise SchemaError(f"{where}: columns {sorted(got)} do not match the schema's {expected}.")
    try:
        if data is None:
            data = pa.Table.from_pylist(rows, schema=schema)
        else:
            data = data.select(expected).cast(schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as err:
        raise SchemaError(
            f"{where}: values do not match the schema ({truncate(str(err), 200)})."
        ) from err
    return data.replace_schema_metadata(schema.metadata)


def check_no_nulls(data: pa.Table, where: str, nullable: Iterable[str] = ()) -> None:
    """Raise if a cell (or a struct field or list element inside one) is null, outside the ``nullable`` columns.

    Only a table's optional columns (:attr:`TableSchema.optional`) may hold nulls: a row
    whose input did not state the value.

    >>> import pyarrow as pa
    >>> check_no_nulls(pa.table({"text": [["a"], ["b", None]]}), "c/test")
    Traceback (most recent call last):
    ...
    evaluators.core.errors.SchemaError: c/test: column 'text' has a null value in row 1; every cell must hold a value: rebuild the dataset.
    """
    import pyarrow as pa

    for name in data.column_names:
        if name in nullable:
            continue
        column = data.column(name).combine_chunks()
        rows = _null_rows(column, pa)
        if rows:
            raise SchemaError(
                f"{where}: column {name!r} has a null value in row {rows[0]}; every cell must hold a value: "
                f"rebuild the dataset."
            )


def _null_rows(array: Any, pa: Any) -> list[int]:
    """Rows of ``array`` holding a null anywhere inside (struct fields and list elements included)."""
    import pyarrow.compute as pc

    bad: set[int] = set()
    if array.null_count:
        bad.update(i for i, valid in enumerate(array.is_valid().to_pylist()) if not valid)
    if pa.types.is_struct(array.type):
        for child in array.flatten():
            bad.update(_null_rows(child, pa))
    elif pa.types.is_list(array.type) or pa.types.is_large_list(array.type):
        inner = _null_rows(array.flatten(), pa)
        if inner:
            parents = pc.list_parent_indices(array).to_pylist()
            bad.update(parents[i] for i in inner)
    return sorted(bad)


def check_unique(data: pa.Table, table: TableSchema, where: str) -> None:
    """Raise if the key columns repeat within one table.

    Raises:
        SchemaError: a key value occurs twice; the message names the first duplicate.
    """
    if not table.key or data.num_rows == 0:
        return
    cols = [data.column(k).to_pylist() for k in table.key]
    seen: set[tuple] = set()
    for key in zip(*cols):
        if key in seen:
            raise SchemaError(
                f"{where}: duplicate {'/'.join(table.key)} {truncate(key)}; ids must be unique."
            )
        seen.add(key)
