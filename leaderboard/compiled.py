"""Hot reads without building ORM queries per request: a values() query compiled once per
process, run on a cursor, its rows converted the way the ORM converts them.

Building a query with the ORM costs several times the CPU PostgreSQL spends answering an
indexed lookup, and the token lookup and the status read run on nearly every API request
(docs/api-load.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import QuerySet


@dataclass(frozen=True)
class CompiledValues:
    """A values() query compiled once: its SQL (with parameters), the names of its columns and
    the converters the ORM applies to them (the backend's and the fields': SQLite gives naive
    datetimes, for one), by column index."""

    sql: str
    columns: tuple[str, ...]
    converters: dict[int, tuple[list[Any], Any]]
    order: tuple[int, ...] = (0,)  # position in fetch_one's arguments of each SQL parameter

    @classmethod
    def of(
        cls, qs: QuerySet[Any], columns: tuple[str, ...], placeholders: tuple[Any, ...] = (0,)
    ) -> CompiledValues:
        """Compiles `qs`, built with `placeholders` (distinct values) as its parameters;
        fetch_one takes the real values in the order of `placeholders`, whatever order the SQL
        puts them in."""
        compiler = qs.query.get_compiler(using=qs.db)
        sql, params = compiler.as_sql()
        if sorted(map(repr, params)) != sorted(map(repr, placeholders)):
            raise RuntimeError(f"expected the parameters {placeholders}, the query has {params}")
        order = tuple(placeholders.index(p) for p in params)
        converters = compiler.get_converters([col for col, _, _ in compiler.select])
        return cls(sql, columns, converters, order)

    def as_dict(self, row: Sequence[Any]) -> dict[str, Any]:
        values = list(row)
        for i, (converters, expression) in self.converters.items():
            for convert in converters:
                values[i] = convert(values[i], expression, connection)
        return dict(zip(self.columns, values, strict=True))

    def fetch_one(self, *params: Any) -> dict[str, Any] | None:
        with connection.cursor() as cur:
            cur.execute(self.sql, [params[i] for i in self.order])
            row = cur.fetchone()
        return None if row is None else self.as_dict(row)
