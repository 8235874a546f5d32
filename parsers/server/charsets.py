"""The collations a ``.frm`` names by number (a field's bytes 11 and 14, the table's header
bytes 38 and 41): the collation's name, its character set and that set's bytes per
character (MariaDB strings/ctype-*.c ``CHARSET_INFO``: number, cs_name, coll_name, mbminlen,
mbmaxlen; ``SHOW COLLATION`` lists the same numbers).  Only the common ones are here; an
other number gives no name and unknown widths (:func:`collation` returns None)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Collation:
    number: int
    name: str
    charset: str
    mbminlen: int
    mbmaxlen: int

    @property
    def binary(self) -> bool:
        """The ``binary`` pseudo-charset (my_charset_bin): BINARY/VARBINARY/BLOB columns."""
        return self.number == BINARY_COLLATION


BINARY_COLLATION = 63
#: character set -> (mbminlen, mbmaxlen)
_WIDTHS = {"latin1": (1, 1), "latin2": (1, 1), "ascii": (1, 1), "binary": (1, 1), "cp1250": (1, 1),
           "cp1251": (1, 1), "cp1256": (1, 1), "cp1257": (1, 1), "greek": (1, 1), "hebrew": (1, 1),
           "koi8r": (1, 1), "koi8u": (1, 1), "swe7": (1, 1), "dec8": (1, 1), "cp850": (1, 1), "hp8": (1, 1),
           "latin5": (1, 1), "latin7": (1, 1), "armscii8": (1, 1), "keybcs2": (1, 1), "cp852": (1, 1),
           "cp866": (1, 1), "macce": (1, 1), "macroman": (1, 1), "geostd8": (1, 1), "tis620": (1, 1),
           "utf8mb3": (1, 3), "utf8mb4": (1, 4), "ucs2": (2, 2), "utf16": (2, 4), "utf16le": (2, 4),
           "utf32": (4, 4), "big5": (1, 2), "gbk": (1, 2), "gb2312": (1, 2), "sjis": (1, 2), "cp932": (1, 2),
           "euckr": (1, 2), "ujis": (1, 3), "eucjpms": (1, 3)}
#: number -> (collation name, character set)
_COLLATIONS = {
    1: ("big5_chinese_ci", "big5"), 3: ("dec8_swedish_ci", "dec8"), 4: ("cp850_general_ci", "cp850"),
    5: ("latin1_german1_ci", "latin1"), 6: ("hp8_english_ci", "hp8"), 7: ("koi8r_general_ci", "koi8r"),
    8: ("latin1_swedish_ci", "latin1"), 9: ("latin2_general_ci", "latin2"), 10: ("swe7_swedish_ci", "swe7"),
    11: ("ascii_general_ci", "ascii"), 12: ("ujis_japanese_ci", "ujis"), 13: ("sjis_japanese_ci", "sjis"),
    14: ("cp1251_bulgarian_ci", "cp1251"), 15: ("latin1_danish_ci", "latin1"), 16: ("hebrew_general_ci", "hebrew"),
    18: ("tis620_thai_ci", "tis620"), 19: ("euckr_korean_ci", "euckr"), 22: ("koi8u_general_ci", "koi8u"),
    24: ("gb2312_chinese_ci", "gb2312"), 25: ("greek_general_ci", "greek"), 26: ("cp1250_general_ci", "cp1250"),
    28: ("gbk_chinese_ci", "gbk"), 30: ("latin5_turkish_ci", "latin5"), 32: ("armscii8_general_ci", "armscii8"),
    33: ("utf8mb3_general_ci", "utf8mb3"), 35: ("ucs2_general_ci", "ucs2"), 36: ("cp866_general_ci", "cp866"),
    37: ("keybcs2_general_ci", "keybcs2"), 38: ("macce_general_ci", "macce"), 39: ("macroman_general_ci", "macroman"),
    40: ("cp852_general_ci", "cp852"), 41: ("latin7_general_ci", "latin7"), 45: ("utf8mb4_general_ci", "utf8mb4"),
    46: ("utf8mb4_bin", "utf8mb4"), 47: ("latin1_bin", "latin1"), 48: ("latin1_general_ci", "latin1"),
    49: ("latin1_general_cs", "latin1"), 51: ("cp1251_general_ci", "cp1251"), 54: ("utf16_general_ci", "utf16"),
    55: ("utf16_bin", "utf16"), 56: ("utf16le_general_ci", "utf16le"), 57: ("cp1256_general_ci", "cp1256"),
    59: ("cp1257_general_ci", "cp1257"), 60: ("utf32_general_ci", "utf32"), 61: ("utf32_bin", "utf32"),
    62: ("utf16le_bin", "utf16le"), 63: ("binary", "binary"), 64: ("armscii8_bin", "armscii8"),
    65: ("ascii_bin", "ascii"), 66: ("cp1250_bin", "cp1250"), 83: ("utf8mb3_bin", "utf8mb3"),
    84: ("big5_bin", "big5"), 87: ("gbk_bin", "gbk"), 90: ("ucs2_bin", "ucs2"), 92: ("geostd8_general_ci", "geostd8"),
    95: ("cp932_japanese_ci", "cp932"), 97: ("eucjpms_japanese_ci", "eucjpms"),
    101: ("utf16_unicode_ci", "utf16"), 128: ("ucs2_unicode_ci", "ucs2"), 160: ("utf32_unicode_ci", "utf32"),
    192: ("utf8mb3_unicode_ci", "utf8mb3"), 224: ("utf8mb4_unicode_ci", "utf8mb4"),
    246: ("utf8mb4_unicode_520_ci", "utf8mb4"), 214: ("utf8mb3_unicode_520_ci", "utf8mb3"),
    1057: ("utf8mb3_general_nopad_ci", "utf8mb3"), 1101: ("utf8mb4_general_nopad_ci", "utf8mb4"),
    1102: ("utf8mb4_nopad_bin", "utf8mb4"), 1071: ("latin1_nopad_bin", "latin1"),
    1032: ("latin1_swedish_nopad_ci", "latin1"), 1091: ("utf8mb3_nopad_bin", "utf8mb3"),
}


def collation(number: int) -> Collation | None:
    """The collation numbered ``number`` (None: 0, or one not listed here)."""
    hit = _COLLATIONS.get(number)
    if hit is None:
        return None
    name, cs = hit
    lo, hi = _WIDTHS[cs]
    return Collation(number, name, cs, lo, hi)
