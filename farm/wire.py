"""Reading JSON objects into typed objects: one field at a time, with errors that name the field.

Everything that crosses a process or network boundary (the result document, the node API's
answers) is a dataclass with `to_json` and a validating `from_json`; those `from_json` methods
read their input through `Fields`, so a bad document fails with the path of the bad field
(`result.workloads[2].timing.ci95_low_ms: has the wrong type (str)`), never a KeyError.
"""

from __future__ import annotations

from typing import Any


class WireError(ValueError):
    """A JSON object does not have the shape its typed object needs; the message names the
    field by its path."""


class Fields:
    """The fields of one JSON object at path `where`; each getter checks one field's type and
    raises `error` naming it. `rest()` returns the fields no getter asked for."""

    def __init__(self, data: Any, where: str, error: type[WireError] = WireError) -> None:
        if not isinstance(data, dict):
            raise error(f"{where}: must be an object")
        self.data, self.where, self.error = data, where, error
        self.seen: set[str] = set()

    def _get(self, key: str, required: bool) -> Any:
        self.seen.add(key)
        if key not in self.data:
            if required:
                raise self.error(f"{self.where}.{key}: is required")
            return None
        return self.data[key]

    def _wrong(self, key: str) -> WireError:
        return self.error(
            f"{self.where}.{key}: has the wrong type ({type(self.data[key]).__name__})"
        )

    def text(self, key: str, *, required: bool = True, null: bool = False) -> Any:
        value = self._get(key, required)
        if value is None and (null or not required):
            return None
        if not isinstance(value, str):
            raise self._wrong(key)
        return value

    def number(self, key: str, *, required: bool = True, null: bool = True) -> float | None:
        """A number (int or float, never bool) as float; None when null or absent."""
        value = self._get(key, required)
        if value is None and (null or not required):
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._wrong(key)
        return float(value)

    def integer(self, key: str, *, required: bool = True, null: bool = False) -> Any:
        value = self._get(key, required)
        if value is None and (null or not required):
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._wrong(key)
        return value

    def flag(self, key: str, *, default: bool = False) -> bool:
        value = self._get(key, False)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self._wrong(key)
        return value

    def object(self, key: str, *, required: bool = True) -> Fields | None:
        """The nested object at `key` as Fields (None when absent or null and not required)."""
        value = self._get(key, required)
        if value is None and not required:
            return None
        return Fields(value, f"{self.where}.{key}", self.error)

    def mapping(self, key: str, *, required: bool = True) -> dict[str, Any] | None:
        """A free-form object, checked to be an object and returned as is."""
        value = self._get(key, required)
        if value is None and not required:
            return None
        if not isinstance(value, dict):
            raise self._wrong(key)
        return value

    def array(self, key: str, *, required: bool = True) -> list[Any]:
        value = self._get(key, required)
        if value is None and not required:
            return []
        if not isinstance(value, list):
            raise self._wrong(key)
        return value

    def elements(self, key: str, *, required: bool = True) -> list[tuple[Any, str]]:
        """The elements of the list at `key`, each with its path (`where.key[i]`)."""
        return [
            (v, f"{self.where}.{key}[{i}]")
            for i, v in enumerate(self.array(key, required=required))
        ]

    def rest(self) -> dict[str, Any]:
        return {k: v for k, v in self.data.items() if k not in self.seen}
