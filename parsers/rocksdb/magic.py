"""The magic numbers that end an SST file (its footer's last 8 bytes, little-endian), as
table/block_based/block_based_table_builder.cc, table/plain/plain_table_builder.cc and
table/cuckoo/cuckoo_table_builder.cc name them: a module of their own, so that detection
knows an SST by its tail without importing the footer reader."""
from __future__ import annotations

#: table/block_based/block_based_table_builder.cc kBlockBasedTableMagicNumber
kBlockBasedTableMagicNumber = 0x88E241B785F4CFF7
#: kLegacyBlockBasedTableMagicNumber (format_version 0)
kLegacyBlockBasedTableMagicNumber = 0xDB4775248B80FB57
#: table/plain/plain_table_builder.cc, table/cuckoo/cuckoo_table_builder.cc (other table formats)
kPlainTableMagicNumber = 0x8242229663BF9564
kLegacyPlainTableMagicNumber = 0x4F3418EB7A8F13B8
kCuckooTableMagicNumber = 0x926789D0C5F17873
