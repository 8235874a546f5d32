"""Size formatting shared by the views, the CLI and the report (one place)."""
from dbxray.parsers.humanize import axis_unit, human_bytes, short_label


def test_axis_unit_picks_the_largest_binary_unit_below_the_maximum():
    assert axis_unit(0) == (1.0, "B") and axis_unit(1023) == (1.0, "B")
    assert axis_unit(1024) == (1024.0, "KiB")
    assert axis_unit(5 << 20) == (float(1 << 20), "MiB")
    assert axis_unit(3 << 30) == (float(1 << 30), "GiB")
    assert axis_unit(2 << 40) == (float(1 << 40), "TiB")      # the what-if view had no TiB


def test_short_label_keeps_start_and_tail():
    name = "a_rather_long_dictionary_name_main_0123456789"
    assert short_label("short", 10, 5) == "short"
    # the views' former cuts, each with its own length and tail
    assert short_label(name, 22, 5) == name[:16] + "…" + name[-5:]
    assert short_label(name, 30, 7) == name[:22] + "…" + name[-7:]
    assert short_label(name, 25, 15) == name[:9] + "…" + name[-15:]
    assert short_label(name, 16, 0) == name[:15] + "…"
    assert all(len(short_label(name, n, t)) == n for n, t in ((22, 5), (30, 7), (25, 15), (16, 0)))


def test_human_bytes():
    assert human_bytes(None) == "-" and human_bytes(1536) == "1.5 KiB" and human_bytes(-2048) == "-2.0 KiB"
