"""The CSV engine's file names (ha_tina.cc CSV_EXT, CSM_EXT; the engine writes them upper
case): known to detection without importing the readers."""
from __future__ import annotations

DATA_EXT = ".CSV"
META_EXT = ".CSM"
