"""``files[].server`` of the JSON, typed (parsers/section.py)."""
from __future__ import annotations

from ..section import Key, Section


class FrmSection(Section):
    """A ``.frm`` table definition (sql/table.cc)."""

    kind: str = Key('"frm"')
    table_engine: str = Key("the table's engine as information_schema names it (VIEW for a view; "
                            "a partitioned table: its partitions' engine)")
    view: bool = Key()
    frm_version: int = Key("header byte 2 (sql/unireg.h FRM_VER + 3..5)")
    legacy_db_type: int = Key("header byte 3 (sql/handler.h enum legacy_db_type)")
    engine_name: str = Key("the engine name in the extra segment (plugin engines; 'partition')")
    partitioned: bool = Key()
    partition_clause: str = Key("PARTITION BY ... as the server stored it")
    mysql_version: int = Key("MYSQL_VERSION_ID of the server that wrote the file")
    leftover: bool = Key("a #sql name: left by an interrupted ALTER TABLE or a crash")


class ParSection(Section):
    """A ``.par`` partition list (sql/ha_partition.cc)."""

    kind: str = Key('"par"')
    table_engine: str = Key("the partitions' engine (from the .frm beside it when the .par holds a dynamic "
                            "engine number)")
    partitions: list = Key("partition file names in order (p0, or p0#SP#p0sp0 for subpartitions)")
    engines: list = Key("each partition's engine as the .par stores it")
    checksum_ok: bool = Key()


class DbOptSection(Section):
    """A database's ``db.opt`` (sql/sql_db.cc write_db_opt)."""

    kind: str = Key('"db_opt"')
    default_character_set: str = Key()
    default_collation: str = Key()
    comment: str = Key()


class EnvironmentSection(Section):
    """A file of the server's environment (not a table's)."""

    kind: str = Key('"environment"')
    what: str = Key("what the file is, in words")
    of_engine: str = Key("the engine it belongs to, when one")
    text: str = Key("its content when short text (a version, a list of connection names)")


_KINDS = {"frm": FrmSection, "par": ParSection, "db_opt": DbOptSection, "environment": EnvironmentSection}


def section_from_json(data: dict) -> Section:
    """The typed section of a saved scan's ``files[].server``."""
    return _KINDS.get(data.get("kind"), EnvironmentSection).from_json(data)
