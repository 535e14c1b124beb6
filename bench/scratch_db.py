"""A fresh PostgreSQL database per bench run (bench/faults.py, bench/fleet.py), dropped at the end.

FARM_BENCH_PG: the server to use (default postgresql://postgres@127.0.0.1:5432, trust auth).
"""

from __future__ import annotations

import contextlib
import os
import uuid

PG = os.environ.get("FARM_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")


def sql(database: str, query: str, *args: object) -> list[tuple]:
    """Run one statement on `database` (autocommit); its rows, if it returns any."""
    import psycopg

    with psycopg.connect(f"{PG}/{database}", autocommit=True) as conn:
        cursor = conn.execute(query, args or None)
        return cursor.fetchall() if cursor.description else []


def create(prefix: str) -> str:
    """A new empty database named `prefix` + a random suffix; its name."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    sql("postgres", f'CREATE DATABASE "{name}"')
    return name


def drop(name: str) -> None:
    """End its connections and drop it (quietly: a bench's cleanup must not hide its result)."""
    with contextlib.suppress(Exception):
        sql(
            "postgres",
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
            name,
        )
        sql("postgres", f'DROP DATABASE IF EXISTS "{name}"')
