"""File names of a MyISAM table: MI_NAME_IEXT / MI_NAME_DEXT (storage/myisam/myisamdef.h),
kept apart from the scan so that detecting files imports no MyISAM reader."""
from __future__ import annotations

INDEX_EXT = ".MYI"
DATA_EXT = ".MYD"
