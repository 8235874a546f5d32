"""MyISAM (MariaDB/MySQL storage/myisam): ``<table>.MYI`` (the state header and the
key blocks) and ``<table>.MYD`` (the rows: static, dynamic or myisampack-compressed)."""
