"""MariaDB/MySQL CSV engine (storage/csv/ha_tina.cc): ``<table>.CSV`` rows as text,
``<table>.CSM`` the meta file (row count, dirty flag)."""
