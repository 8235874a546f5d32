"""What the hardening modules share: where they are, which fixture folders and
roles they take, the time boxes."""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent          # tests/
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

FIXTURE_FOLDERS = ("innodb", "innodb-mysql", "innodb-public", "tokudb", "clickhouse")
SKIP_ROLES = ("other", "table_metadata")
CASE_ALARM_S = 5.0           # per-case alarm inside the worker
CASE_GUARD_S = 20.0          # the parent kills a worker silent for this long in one case
#: the script the parent starts its workers and probes with
SCRIPT = HERE / "hardening_util.py"
