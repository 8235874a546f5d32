"""The MariaDB/MySQL server's own files in a data dir (not any storage engine's):
``.frm`` table definitions (sql/table.cc, sql/unireg.cc), ``.par`` partition
lists (sql/ha_partition.cc), ``db.opt`` and the server's environment files."""
