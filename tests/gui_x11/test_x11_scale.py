"""The window at QT_SCALE_FACTOR=2 on a real X server (Xvfb 2560x1600 with openbox): it
opens on the demo, fits the screen, accepts its own minimum size, and every view shows
(one screenshot each, looked at: texts scale with the window, none is cut by the
doubled fonts)."""
from __future__ import annotations

import time

from x11util import center


def _switch_to(app, s, title: str, order: list[str]) -> dict:
    """The view's shortcut pressed with the focus in the tree, as a user does, until the tab
    shows it: once more after 10 s (on a loaded machine a key press can reach the window
    before it takes keys again after the previous view's drawing), 30 s in all."""
    for attempt, wait_s in enumerate((10, 20)):
        app.click(*center(s["tree"]))
        app.key(f"ctrl+{order.index(title) + 1}")
        try:
            return app.wait(lambda st, t=title: st["tab"] == t, wait_s, f"the {title} view")
        except AssertionError:
            if attempt:
                raise
            s = app.state() or s


def test_every_view_at_scale_2(launch_hidpi, xdisplay_hidpi):
    app = launch_hidpi(env={"QT_SCALE_FACTOR": "2"})
    s = app.idle()
    w, h = s["min_size"]
    assert 2 * w <= 2560 and 2 * h <= 1600, s["min_size"]
    xdisplay_hidpi.xdo("windowsize", "--sync", app.wid, 2 * 1200, 2 * 760)
    s = app.wait(lambda s: s["size"] == [1200, 760], 10, "the window at 1200x760 logical pixels")
    geo = xdisplay_hidpi.run("xwininfo", "-id", app.wid)
    assert "Width: 2400" in geo and "Height: 1520" in geo, geo          # device pixels: twice the logical
    order = ["Sizes", "Extent map", "Holes", "Columns", "TokuDB", "LSM", "What if"]
    shown = []
    for title in s["tabs"]:
        s = _switch_to(app, s, title, order)
        # the doubled fonts cut no legend or value text (the TokuDB legends were cut here)
        s = app.wait(lambda s: s.get("cut_texts") == [], 10, f"the {title} view's texts inside")
        time.sleep(0.4)
        xdisplay_hidpi.screenshot("scale2_" + title.lower().replace(" ", "_"), window=app.wid)
        shown.append(title)
    assert shown == [t for t in order if t in shown] and len(shown) == len(order), shown
    # narrower, still at scale 2: 1024x700 logical pixels
    xdisplay_hidpi.xdo("windowsize", "--sync", app.wid, 2 * 1024, 2 * 700)
    s = app.wait(lambda s: s["size"] == [1024, 700], 10, "the window at 1024x700 logical pixels")
    for title in ("Holes", "Columns", "TokuDB"):
        s = _switch_to(app, s, title, order)
        s = app.wait(lambda s: s.get("cut_texts") == [], 10, f"the {title} view's texts inside at 1024x700")
        time.sleep(0.4)
        xdisplay_hidpi.screenshot("scale2_1024x700_" + title.lower(), window=app.wid)
