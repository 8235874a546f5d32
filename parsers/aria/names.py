"""File names of Aria: MARIA_NAME_IEXT / MARIA_NAME_DEXT (storage/maria/maria_def.h), the
control file (ma_control_file.c) and the log files ``aria_log.NNNNNNNN`` (ma_loghandler.c),
kept apart from the scan so that detecting files imports no Aria reader."""
from __future__ import annotations

import re

INDEX_EXT = ".MAI"
DATA_EXT = ".MAD"
CONTROL_NAME = "aria_log_control"
LOG_NAME = re.compile(r"aria_log\.\d{8}$")
