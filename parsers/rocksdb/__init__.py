"""RocksDB / MyRocks files read offline: SST tables, the MANIFEST, OPTIONS, WAL names,
and MyRocks' data dictionary (the ``__system__`` column family)."""
