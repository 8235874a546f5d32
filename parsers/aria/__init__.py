"""Aria (MariaDB storage/maria): ``<table>.MAI`` (state header and index pages),
``<table>.MAD`` (rows: BLOCK_RECORD pages, or the MyISAM-like dynamic/static/packed
formats), and the engine's transaction log ``aria_log.NNNNNNNN`` with its
``aria_log_control``.  MariaDB's own ``mysql.*`` system tables are Aria tables."""
