"""File names of a RocksDB directory (db/filename.cc: MakeTableFileName ``<number>.sst``,
LogFileName ``<number>.log``, DescriptorFileName ``MANIFEST-<number>``, OptionsFileName
``OPTIONS-<number>``, CurrentFileName, IdentityFileName, LockFileName, InfoLogFileName
``LOG`` / ``LOG.old.<time>``): what detection needs, kept apart from the scan so that
detecting files imports no SST reader."""
from __future__ import annotations

import re

ENGINE = "rocksdb"
SST_RE = re.compile(r"^(\d+)\.sst$")
WAL_RE = re.compile(r"^(\d+)\.log$")
MANIFEST_RE = re.compile(r"^MANIFEST-(\d+)$")
OPTIONS_RE = re.compile(r"^OPTIONS-(\d+)$")
ENV_NAMES = ("CURRENT", "IDENTITY", "LOCK")
INFO_LOG_RE = re.compile(r"^LOG(\.old\.\d+)?$")
