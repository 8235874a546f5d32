"""dbxray in a real X server (Xvfb + openbox), started and driven as a user does
(issue 21): open a folder with an unreadable file as an unprivileged user, resize to
1024x700, hover a page for 3 s, click tree rows, right-click, shortcuts with the focus in
the filter box.  Every step leaves a screenshot in artifacts/x11/."""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from x11util import CAPS_DROPPED, center, unprivileged_prefix

FIXTURES = Path(os.environ.get("DBXRAY_FIXTURES", Path(__file__).resolve().parents[3] / "shared" / "fixtures"))


@pytest.fixture(scope="module")
def fixtures():
    if not (FIXTURES / "innodb" / "16k").is_dir():
        pytest.fail(f"fixtures not found at {FIXTURES}", pytrace=False)
    return FIXTURES


@pytest.mark.parametrize("who", ["unprivileged", "root without DAC capabilities"])
def test_open_folder_with_an_unreadable_file_as_nobody(launch, fixtures, public_tmp, xdisplay, who):
    """As nobody where nobody can run the checkout, else (a checkout under root's 0700 home,
    as CI may have it) as root without the capabilities that read any file; the second
    case forces that path so both are known to work."""
    d = public_tmp / "data"
    d.mkdir()
    for name in ("t_zip4.ibd", "t_zip8.ibd"):
        shutil.copyfile(fixtures / "innodb" / "16k" / "fx" / name, d / name)
    os.chmod(d, 0o755)
    os.chmod(d / "t_zip4.ibd", 0o644)
    os.chmod(d / "t_zip8.ibd", 0)
    prefix, who = unprivileged_prefix(public_tmp) if who == "unprivileged" else (CAPS_DROPPED, who)
    app = launch(d, prefix=prefix, name="nobody")
    s = app.idle()
    xdisplay.screenshot("unreadable_file" if who == "nobody" else "unreadable_file_" + who.split()[0])
    assert s["tree_files"] == ["t_zip4.ibd", "t_zip8.ibd"], (who, s)
    assert len(s["tree_rows"]) >= 2, s["tree_rows"]
    denied = [e for e in s["errors"] if "t_zip8.ibd" in e and "Permission denied" in e]
    assert denied, (who, s["errors"])
    assert not any("failed" in e for e in s["errors"]), s["errors"]
    assert "2 files" in s["status"], s["status"]


def test_window_accepts_1024x700(launch, xdisplay):
    app = launch()
    app.idle()
    xdisplay.xdo("windowsize", "--sync", app.wid, 1024, 700)
    s = app.wait(lambda s: s["size"] == [1024, 700], 10, "the window at 1024x700")
    assert s["min_size"][0] <= 1024 and s["min_size"][1] <= 700, s["min_size"]
    geo = xdisplay.run("xwininfo", "-id", app.wid)
    assert "Width: 1024" in geo and "Height: 700" in geo, geo
    xdisplay.screenshot("window_1024x700")
    order = ["Sizes", "Extent map", "Holes", "Columns", "TokuDB", "LSM", "What if"]
    for title in s["tabs"]:                     # every view at that size, looked at, and its texts measured
        app.click(*center(s["tree"]))
        app.key(f"ctrl+{order.index(title) + 1}")
        s = app.wait(lambda s, t=title: s["tab"] == t and s["size"] == [1024, 700], 10, f"the {title} view")
        # every legend and value text of the view's charts inside its plot and the view
        s = app.wait(lambda s: s.get("cut_texts") == [], 10, f"the {title} view's texts inside")
        time.sleep(0.3)
        xdisplay.screenshot("small_" + title.lower().replace(" ", "_"), window=app.wid)


def test_hovered_page_facts_stay_for_3_s(launch, xdisplay, fixtures, tmp_path):
    f = tmp_path / "t_pc_zlib.ibd"
    shutil.copyfile(fixtures / "innodb" / "16k" / "fx" / "t_pc_zlib.ibd", f)
    app = launch(f)
    s = app.wait(lambda s: not s["busy"] and s.get("map_pages", {}).get("4"), 90, "the extent map")
    # the map may still settle (a refit after the last paint moves the cells): each attempt
    # takes the page's position afresh, rests the mouse there and looks 3 s later
    for _attempt in range(3):
        x, y = app.state()["map_pages"]["4"]
        xdisplay.xdo("mousemove", "--sync", x + 30, y + 30)
        time.sleep(0.2)
        xdisplay.xdo("mousemove", "--sync", x, y)
        time.sleep(3.0)
        s = app.state()
        if s["hover"].startswith("Page 4 "):
            break
    xdisplay.screenshot("hover_page_3s")
    assert s["hover"].startswith("Page 4 "), s["hover"]
    assert "Page 4" in s["tooltip"], s["tooltip"]


def test_tree_rows_click_and_shortcuts_from_the_filter_box(launch, xdisplay):
    app = launch()
    s = app.idle()
    rows = s["tree_rows"]
    assert len(rows) >= 3, rows
    app.click(*center(rows[1]["rect"]))
    s = app.wait(lambda s: s["selected"] == rows[1]["text"], 10, "the clicked row selected")
    app.click(*center(rows[2]["rect"]))
    s = app.wait(lambda s: s["selected"] == rows[2]["text"], 10, "the clicked row selected")
    xdisplay.screenshot("tree_row_clicked")
    app.click(*center(s["filter"]))
    app.wait(lambda s: s["focus"] == "filter", 10, "the focus in the filter box")
    xdisplay.xdo("type", "--delay", "30", "t_")
    app.key("ctrl+e")
    s = app.wait(lambda s: s["modal"].startswith("Export"), 30, "Ctrl+E's export dialog")   # a file dialog: slow under load
    xdisplay.screenshot("ctrl_e_from_filter")
    app.key("Escape")
    app.wait(lambda s: not s["modal"], 10, "the dialog closed")


def test_right_click_menus(launch, xdisplay):
    app = launch()
    s = app.idle()
    row = next(r for r in s["tree_rows"] if r["text"] not in ("InnoDB", "ClickHouse", "TokuDB", "MyRocks / RocksDB",
                                                                "Other files"))
    app.click(*center(row["rect"]), button=3)
    s = app.wait(lambda s: "Copy path" in s["popup"] or "Copy row" in s["popup"], 10, "the tree's menu")
    assert "Copy tree as CSV" in s["popup"], s["popup"]
    xdisplay.screenshot("tree_right_click")
    app.key("Escape")
    app.wait(lambda s: not s["popup"], 10, "the menu closed")
    app.click(*center(s["view"]), button=3)
    s = app.wait(lambda s: bool(s["popup"]), 10, "the view's menu")
    assert "Export this view as PNG…" in s["popup"], s["popup"]
    xdisplay.screenshot("view_right_click")
    app.key("Escape")


def test_every_view_on_the_demo(launch, xdisplay):
    """One screenshot per view (Ctrl+1..), at 1400x860 on the demo; the what-if view after a
    run; the README's pictures are these."""
    app = launch()
    s = app.idle()
    xdisplay.xdo("windowsize", "--sync", app.wid, 1400, 860)
    app.wait(lambda s: s["size"] == [1400, 860], 10, "the window at 1400x860")
    names = {"Sizes": "sizes", "Extent map": "extent_map", "Holes": "holes", "Columns": "columns",
             "TokuDB": "tokudb", "LSM": "lsm", "What if": "whatif"}
    all_tabs = list(names)
    shots = []
    for title in s["tabs"]:
        app.click(*center(s["tree"]))              # focus in the tree, not an editor
        app.key(f"ctrl+{all_tabs.index(title) + 1}")
        s = app.wait(lambda s, t=title: s["tab"] == t, 10, f"the {title} view")
        if title == "What if":
            app.click(*center(s["buttons"]["Run what-if"]))
            s = app.wait(lambda s: s["status"] == "What-if done", 180, "the what-if run")
            # no point name of the scatter on a marker or another name
            s = app.wait(lambda s: s.get("scatter_collisions") == [], 10, "the scatter's names placed")
        s = app.wait(lambda s: s.get("cut_texts") == [], 10, f"the {title} view's texts inside")
        time.sleep(0.5)
        shots.append(xdisplay.screenshot(f"view_{names[title]}", window=app.wid))
    assert len(shots) == len(names), s["tabs"]          # the demo has every engine: every view shows
