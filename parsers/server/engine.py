"""The server's own files behind the engine protocol (parsers/engine.py): table and
partition definitions, database options, and the environment files of a
MariaDB/MySQL data dir (names.py lists them and their sources)."""
from __future__ import annotations

from ..engine import Engine
from ..model import FileEntry
from .names import role_of


class Server(Engine):
    name = "server"
    label = "Server files (.frm, .par, db.opt, logs)"
    roles = ("table_definition", "partition_definition", "database_options", "ddl_log", "engine_environment",
             "leftover")
    #: after every engine: a name an engine claims (its own #sql tablespace) stays the engine's
    claim_order = 90

    def claim_name(self, rel, state):
        return role_of(rel)

    def analyze(self, dataset, files, ctx):
        from .scan import analyze
        analyze(dataset, files, ctx)

    def place(self, entry: FileEntry):
        from .scan import place_of
        db, table = place_of(entry)
        return entry.database or db or "(environment)", entry.table or table, None

    def section_from_json(self, data):
        if not isinstance(data, dict):
            return data
        from .section import section_from_json
        return section_from_json(data)


ENGINE = Server()
