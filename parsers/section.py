"""Typed JSON sections: an engine's section of one file (``files[].<engine>`` in the
JSON) as a class that declares its keys, with their types and meaning, in the order
they are written.

A section is the JSON object itself (a ``dict``: it serialises, compares and reads
as the JSON does) whose declared keys are also attributes (``section.pages``); a key
a file does not have is absent from the JSON and reads as :data:`ABSENT`.
Constructing one writes the keys in their declared order whatever the order of the
arguments; ``from_json()`` turns a saved scan's object back into the engine's type,
keeping keys this version does not know.
"""
from __future__ import annotations

from typing import Any


class _Absent:
    """A key this file's section does not have (not written to the JSON)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


ABSENT: Any = _Absent()


class Key:
    """One declared JSON key of a section, read and written as an attribute."""

    def __init__(self, doc: str = ""):
        self.__doc__ = doc
        self.name = ""

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        return obj.get(self.name, ABSENT)

    def __set__(self, obj, value) -> None:
        if value is ABSENT:
            obj.pop(self.name, None)
        else:
            obj[self.name] = value


#: each Section class's declared keys in order (keys are declared in the class body only)
_KEYS: dict[type, tuple[str, ...]] = {}


class Section(dict):
    """Base of the typed sections: subclasses declare ``name = Key("meaning")``, and in
    ``nested`` the Section type of the objects a key holds a list of (read back from a
    saved scan as that type)."""

    nested: dict[str, type["Section"]] = {}

    @classmethod
    def keys_in_order(cls) -> tuple[str, ...]:
        """The declared keys, base classes' first (worked out once per class: a scan
        makes one section per file and per index)."""
        got = _KEYS.get(cls)
        if got is None:
            out: list[str] = []
            for klass in reversed(cls.__mro__):
                for name, value in vars(klass).items():
                    if isinstance(value, Key) and name not in out:
                        out.append(name)
            got = _KEYS[cls] = tuple(out)
        return got

    def __init__(self, **values: Any):
        super().__init__()
        declared = self.keys_in_order()
        unknown = set(values) - set(declared)
        if unknown:
            raise TypeError(f"{type(self).__name__}: no such key(s) {sorted(unknown)}")
        for k in declared:
            if k in values and values[k] is not ABSENT:
                self[k] = values[k]

    @classmethod
    def of(cls, data: dict[str, Any]) -> "Section":
        """``data`` (built key by key, in the order it is written) as this type, as it is."""
        obj = cls.__new__(cls)
        dict.__init__(obj, data)
        return obj

    @classmethod
    def undeclared(cls, data: dict[str, Any]) -> list[str]:
        """Keys of ``data`` this type does not declare (tests keep it empty)."""
        declared = set(cls.keys_in_order())
        return [k for k in data if k not in declared]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Section":
        """The typed section of a saved scan's JSON object, in its order, keys this version
        does not know kept; the lists of ``nested`` keys read back as their types."""
        obj = cls.of(data)
        for key, kind in cls.nested.items():
            items = obj.get(key)
            if isinstance(items, list):
                obj[key] = [kind.from_json(x) if isinstance(x, dict) else x for x in items]
        return obj

    def to_json(self) -> dict[str, Any]:
        return dict(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"
