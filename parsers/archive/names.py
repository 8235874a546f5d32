"""The ARCHIVE engine's file names (ha_archive.h ARZ, the server's reg_ext): known to
detection without importing the readers."""
from __future__ import annotations

DATA_EXT = ".ARZ"
FRM_EXT = ".frm"
