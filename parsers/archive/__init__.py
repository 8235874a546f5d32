"""MariaDB/MySQL ARCHIVE engine (storage/archive: azio.c, azlib.h, ha_archive.cc):
``<table>.ARZ``, an azio header, the table's .frm copy and one or more raw deflate
streams holding the rows, each row framed by a 4-byte length."""
