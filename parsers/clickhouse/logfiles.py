"""The files that make a ClickHouse Log-family table folder (TinyLog, Log, StripeLog), by name:
what detection needs to recognise such a folder without importing the readers
(src/Storages/StorageLog.cpp: ``__marks.mrk``, ``sizes.json``; src/Storages/StorageStripeLog.cpp:
``data.bin``, ``index.mrk``; src/Storages/FileChecker.cpp writes ``sizes.json``)."""
from __future__ import annotations

#: FileChecker's file: every file's size (StorageLog, StorageStripeLog, StorageTinyLog)
SIZES_FILE_NAME = "sizes.json"
#: StorageLog's marks file
MARKS_FILE_NAME = "__marks.mrk"
#: StorageStripeLog's index and its one data file
INDEX_FILE_NAME = "index.mrk"
DATA_FILE_NAME = "data.bin"


def is_log_table_dir(names: set[str]) -> bool:
    """A Log-family table folder: sizes.json beside .bin files, a Log marks file
    or a StripeLog index (and not a MergeTree part)."""
    if "checksums.txt" in names or "columns.txt" in names:
        return False
    return SIZES_FILE_NAME in names and (
        MARKS_FILE_NAME in names or INDEX_FILE_NAME in names or any(n.endswith(".bin") for n in names))
