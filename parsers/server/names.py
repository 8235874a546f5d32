"""The server's own file names in a data dir and what each file is
(MariaDB/server: sql/table.cc reg_ext ``.frm``, sql/ha_partition.cc ha_par_ext
``.par``, sql/sql_db.cc MY_DB_OPT_FILE ``db.opt``, sql/ddl_log.cc
``ddl_recovery.log``, sql/rpl_mi.cc ``multi-master.info``, client/mysql_upgrade.c
``mysql_upgrade_info``, storage/innobase/buf/buf0dump.cc ``ib_buffer_pool``,
sql/sql_table.cc tmp_file_prefix ``#sql``)."""
from __future__ import annotations

FRM_EXT = ".frm"
PAR_EXT = ".par"
DB_OPT = "db.opt"
TMP_FILE_PREFIX = "#sql"

#: environment files by exact name: (role, what, engine it belongs to)
ENVIRONMENT = {
    "ddl_recovery.log": ("ddl_log", "DDL recovery log: replayed at startup to finish or undo an interrupted "
                         "DDL (sql/ddl_log.cc)", None),
    "ddl_recovery-backup.log": ("ddl_log", "the previous DDL recovery log, kept at startup (sql/ddl_log.cc)", None),
    "multi-master.info": ("engine_environment", "replication: the names of the named primary connections "
                          "(sql/rpl_mi.cc)", None),
    "master.info": ("engine_environment", "replication: the primary's coordinates (sql/rpl_mi.cc)", None),
    "relay-log.info": ("engine_environment", "replication: the relay log position (sql/rpl_rli.cc)", None),
    "mysql_upgrade_info": ("engine_environment", "the server version mariadb-upgrade last ran for "
                           "(client/mysql_upgrade.c)", None),
    "mariadb_upgrade_info": ("engine_environment", "the server version mariadb-upgrade last ran for "
                             "(client/mysql_upgrade.c)", None),
    "ib_buffer_pool": ("engine_environment", "InnoDB buffer pool dump: space and page numbers to load at "
                       "startup (innodb_buffer_pool_dump_at_shutdown; buf0dump.cc)", "InnoDB"),
    "tc.log": ("engine_environment", "the two-phase-commit coordinator log (sql/log.cc TC_LOG_MMAP)", None),
}


def base(rel: str) -> str:
    return rel.rsplit("/", 1)[-1]


def role_of(rel: str) -> str | None:
    """The role of a server file at ``rel`` (relative to the scan root), or None."""
    name = base(rel)
    if name.endswith(FRM_EXT):
        return "table_definition"
    if name.endswith(PAR_EXT):
        return "partition_definition"
    if name == DB_OPT:
        return "database_options"
    if name in ENVIRONMENT:
        return ENVIRONMENT[name][0]
    if name.endswith(".pid"):
        return "engine_environment"
    if name.startswith(TMP_FILE_PREFIX):
        return "leftover"
    return None
