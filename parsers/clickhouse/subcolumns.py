"""A column's serialization as the engine enumerates it: its substreams and
its subcolumns, as ``system.parts_columns`` lists them (``substreams``,
``filenames``, ``subcolumns.*``).

The engine (src/Storages/System/StorageSystemPartsColumns.cpp) gets
``substreams`` from ``ISerialization::enumerateStreams`` (the stream name of
each substream path, ISerialization::getFileNameForStream), ``filenames`` from
``IMergeTreeDataPart::getStreamNameForColumn`` (the stream name, or its
SipHash name, when ``<name>.bin`` is listed in checksums.txt, else ``''``), and
the subcolumns from ``IDataType::forEachSubcolumn``: every prefix of a
substream path that names a subcolumn, the first time it is seen, except
intermediate Tuple / Nested subcolumns.  A subcolumn's sizes are those of the
checksums.txt entries ``<stream of its path>.bin`` (size, uncompressed size)
and ``<stream>`` + the part's marks extension; nothing else is added (a
Nested ``n.size0`` is reported for every column that shares it, and a Compact
part, whose streams have no files of their own, reports 0).

Substream path elements (ISerialization::Substream::Type) and what each adds
to the stream name (src/DataTypes/Serializations/ISerialization.cpp,
Serialization{Nullable,Array,Tuple,Map,LowCardinality,Sparse,String}.cpp):

========================  ==========================  ======================
element                   stream name suffix          subcolumn
========================  ==========================  ======================
NullMap                   ``.null``                   ``null`` UInt8
NullableElements          --                          (nested ones, wrapped
                                                      in Nullable when they
                                                      can be)
ArraySizes                ``.size<level>``            ``size<level>`` UInt64
ArrayElements             --                          (nested ones, wrapped
                                                      in Array)
TupleElement              ``%2E<escaped name>``       the element
StringSizes (26.x)        ``.size``                   ``size`` UInt64
StringElements            --                          --
DictionaryKeys            ``.dict``                   --
DictionaryIndexes         --                          --
SparseOffsets             ``.sparse.idx``             --
SparseElements            --                          --
========================  ==========================  ======================

A String has its ``.size`` stream only with the ``with_size_stream``
serialization (serialization.json ``types_serialization_versions`` string = 1,
the 26.x default; propagated to Strings inside Array/Tuple/Map when
``propagate_types_serialization_versions_to_nested_types``); otherwise it is
one stream (``single_stream``) without subcolumns.  Map(K, V) is serialized as
Array(Tuple(keys K, values V)); a column ``n.x`` of a Nested ``n`` (an Array)
keeps its level-0 sizes in the shared ``n.size0``.

Types whose streams are not modelled here (Variant, Dynamic, JSON, Object:
the engine takes their substreams from columns_substreams.txt, and so does
the caller) and LowCardinality(Nullable(...)) (streams known, subcolumns not)
give ``None`` for their subcolumns rather than a guess.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .columns import ColumnsError, TypeNode, parse_type
from .streams import escape_for_file_name, stream_file_candidates

# ISerialization::Substream::Type names
NULL_MAP = "NullMap"
NULLABLE_ELEMENTS = "NullableElements"
ARRAY_SIZES = "ArraySizes"
ARRAY_ELEMENTS = "ArrayElements"
TUPLE_ELEMENT = "TupleElement"
STRING_SIZES = "StringSizes"
STRING_ELEMENTS = "StringElements"
DICTIONARY_KEYS = "DictionaryKeys"
DICTIONARY_INDEXES = "DictionaryIndexes"
SPARSE_OFFSETS = "SparseOffsets"
SPARSE_ELEMENTS = "SparseElements"
REGULAR = "Regular"

#: Types that are one plain stream (no substreams, no subcolumns we model).
_UNMODELLED = {"Variant", "Dynamic", "JSON", "Object"}
#: Types that cannot be wrapped in Nullable (DataTypeNullable / makeNullableSafe).
_NOT_NULLABLE_INSIDE = {"Array", "Map", "Tuple", "Nested", "LowCardinality", "Nullable", "Variant", "Dynamic",
                        "JSON", "Object", "AggregateFunction"}


class SubcolumnsUnknown(Exception):
    """The column's type has streams this module does not model."""


@dataclass(frozen=True)
class PathElement:
    """One element of a substream path (ISerialization::Substream)."""

    type: str
    name: str | None = None        # TupleElement: the element name
    #: the subcolumn this prefix names, when it names one: (name, type)
    subcolumn: tuple[str, str] | None = None


@dataclass(frozen=True)
class Subcolumn:
    """One subcolumn as system.parts_columns lists it, before sizes."""

    name: str
    type: str
    serialization: str
    stream: str                    # stream name of its path (escaped, before hashing)


@dataclass
class ColumnSerialization:
    """A column's substreams (stream names in enumeration order) and subcolumns."""

    column: str
    type: str
    kind: str
    substreams: list[str] = field(default_factory=list)
    subcolumns: list[Subcolumn] | None = field(default_factory=list)
    #: a type with dynamic subcolumns (Variant, Dynamic, JSON, Object): its
    #: substreams are the part's columns_substreams.txt list, not enumerated here
    dynamic: bool = False


@dataclass(frozen=True)
class StringSerialization:
    """Which String serialization the part uses (SerializationInfo settings)."""

    with_size_stream: bool = False
    propagate_to_nested: bool = False


def _wrap_nullable(t: str, inner: TypeNode | None) -> str:
    """makeNullableSafe: Nullable(T) when T can be inside Nullable."""
    if inner is not None and inner.name in _NOT_NULLABLE_INSIDE:
        return t
    return f"Nullable({t})"


class _Enumerator:
    """Depth-first walk of a type's serialization, producing substream paths."""

    def __init__(self, strings: StringSerialization):
        self.strings = strings
        self.paths: list[list[PathElement]] = []
        self.unknown_subcolumns = False

    def walk(self, t: TypeNode, path: list[PathElement], wraps: list[tuple[str, TypeNode | None]],
             level: int, top: bool, depth: int = 0) -> None:
        """``wraps``: outer Array/Nullable wrappers a subcolumn type is put in
        (innermost last); ``level``: array nesting level for ``.size<N>``."""
        if depth > 32:
            raise ColumnsError("type nested too deeply")
        name = t.name
        if name in _UNMODELLED:
            raise SubcolumnsUnknown(name)
        if name == "LowCardinality" and t.args and t.args[0].name == "Nullable":
            self.unknown_subcolumns = True      # streams known, its null subcolumn's sizing is not
        if name == "Nullable" and t.args:
            self.paths.append(path + [PathElement(NULL_MAP, subcolumn=("null", self._wrapped("UInt8", wraps)))])
            inner = t.args[0]
            self.walk(inner, path + [PathElement(NULLABLE_ELEMENTS)], wraps + [("Nullable", inner)], level,
                      top, depth + 1)
            return
        if name == "LowCardinality":
            self.paths.append(path + [PathElement(DICTIONARY_KEYS)])
            self.paths.append(path + [PathElement(DICTIONARY_INDEXES)])
            return
        if name in ("Array", "Map") and t.args:
            sizes = PathElement(ARRAY_SIZES, str(level),
                                subcolumn=(f"size{level}", self._wrapped("UInt64", wraps)))
            self.paths.append(path + [sizes])
            if name == "Array":
                inner = t.args[0]
                self.walk(inner, path + [PathElement(ARRAY_ELEMENTS)], wraps + [("Array", inner)], level + 1,
                          False, depth + 1)
            else:      # Map(K, V) = Array(Tuple(keys K, values V))
                elems = TypeNode("Tuple", tuple(t.args), ("keys", "values"),
                                 raw=f"Tuple(keys {t.args[0].raw}, values {t.args[1].raw})")
                self.walk(elems, path + [PathElement(ARRAY_ELEMENTS)], wraps + [("Array", elems)], level + 1,
                          False, depth + 1)
            return
        if name in ("Tuple", "Nested") and t.args:
            for i, (sub, en) in enumerate(zip(t.args, t.elem_names or (None,) * len(t.args))):
                elem = en if en is not None else str(i + 1)
                sc = None if sub.name in ("Tuple", "Nested") else (elem, self._wrapped(sub.raw or sub.name, wraps))
                self.walk(sub, path + [PathElement(TUPLE_ELEMENT, elem, subcolumn=sc)], wraps, level, False,
                          depth + 1)
            return
        if name == "String" and self.strings.with_size_stream and (top or self.strings.propagate_to_nested):
            self.paths.append(path + [PathElement(STRING_SIZES, subcolumn=("size", self._wrapped("UInt64", wraps)))])
            self.paths.append(path + [PathElement(STRING_ELEMENTS)])
            return
        self.paths.append(path + [PathElement(REGULAR)] if not path else path)

    @staticmethod
    def _wrapped(t: str, wraps: list[tuple[str, TypeNode | None]]) -> str:
        for kind, inner in reversed(wraps):
            t = f"Array({t})" if kind == "Array" else _wrap_nullable(t, TypeNode(t.split("(", 1)[0]))
        return t


def stream_name(column: str, path: list[PathElement]) -> str:
    """ISerialization::getFileNameForStream: the escaped column name plus each
    element's suffix; the level-0 sizes of a Nested column ``n.x`` are ``n.size0``."""
    base = escape_for_file_name(column)
    if path and path[0].type == ARRAY_SIZES and "." in column:
        base = escape_for_file_name(column.split(".", 1)[0])
    out = [base]
    for el in path:
        if el.type == NULL_MAP:
            out.append(".null")
        elif el.type == ARRAY_SIZES:
            out.append(f".size{el.name}")
        elif el.type == STRING_SIZES:
            out.append(".size")
        elif el.type == DICTIONARY_KEYS:
            out.append(".dict")
        elif el.type == SPARSE_OFFSETS:
            out.append(".sparse.idx")
        elif el.type == TUPLE_ELEMENT:
            out.append("%2E" + escape_for_file_name(el.name or ""))
    return "".join(out)


def _subcolumn_name(path: list[PathElement]) -> str:
    """ISerialization::getSubcolumnNameForStream: the named elements joined by dots."""
    return ".".join(el.subcolumn[0] if el.type != TUPLE_ELEMENT else el.name for el in path
                    if el.subcolumn is not None or el.type == TUPLE_ELEMENT)


def enumerate_serialization(column: str, type_text: str, kind: str = "Default",
                            strings: StringSerialization = StringSerialization()) -> ColumnSerialization:
    """Substreams and subcolumns of one column of a part (``kind``: Default or
    Sparse, from serialization.json)."""
    out = ColumnSerialization(column, type_text, kind)
    t = parse_type(type_text)
    en = _Enumerator(strings)
    prefix: list[PathElement] = []
    if kind == "Sparse":
        en.paths.append([PathElement(SPARSE_OFFSETS)])
        prefix = [PathElement(SPARSE_ELEMENTS)]
    try:
        en.walk(t, prefix, [], 0, True)
    except SubcolumnsUnknown:
        out.substreams = [stream_name(column, [])]
        out.subcolumns = None
        out.dynamic = True
        return out
    if en.unknown_subcolumns:
        out.subcolumns = None
    seen: set[tuple] = set()
    for path in en.paths:
        out.substreams.append(stream_name(column, [el for el in path if el.type != REGULAR]))
        for i, el in enumerate(path):
            if out.subcolumns is None:
                break
            if el.type != TUPLE_ELEMENT and el.subcolumn is None:
                continue
            key = tuple((e.type, e.name) for e in path[:i + 1])
            if key in seen:
                continue
            seen.add(key)
            if el.subcolumn is None:        # an intermediate Tuple / Nested element: skipped
                continue
            sub_path = path[:i + 1]
            out.subcolumns.append(Subcolumn(_subcolumn_name(sub_path), el.subcolumn[1], "Default",
                                            stream_name(column, sub_path)))
    return out


def stream_file_stem(stream: str, listed: set[str] | dict, ext: str = ".bin") -> str | None:
    """IMergeTreeDataPart::getStreamNameForColumn: the stream's own name, or its
    SipHash name, whichever ``<name><ext>`` checksums.txt lists; None when neither."""
    for stem in stream_file_candidates(stream):
        if stem + ext in listed:
            return stem
    return None
