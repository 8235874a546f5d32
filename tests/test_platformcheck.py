"""Start-up messages (issue 21, defects 11 and 12): a missing xcb library is named with
its Debian package (Qt's own message blames libxcb-cursor0 whatever is missing); no
display is said as such; headless commands print no Qt platform noise."""
import os
import subprocess
import sys
from pathlib import Path

from dbxray.app.platformcheck import XCB_LIBRARIES, platform_problem


def _loader(missing):
    def load(name):
        if name in missing:
            raise OSError(f"{name}: cannot open shared object file")
    return load


def test_missing_library_named_with_its_package():
    msg = platform_problem({"DISPLAY": ":0"}, load=_loader({"libxcb-icccm.so.4", "libxcb-keysyms.so.1"}))
    assert "libxcb-icccm.so.4" in msg and "libxcb-keysyms.so.1" in msg
    assert "apt-get install libxcb-icccm4 libxcb-keysyms1" in msg
    assert "cursor" not in msg


def test_all_present_and_other_platforms():
    assert platform_problem({"DISPLAY": ":0"}, load=_loader(set())) is None
    assert platform_problem({"QT_QPA_PLATFORM": "offscreen"}, load=_loader(set(XCB_LIBRARIES))) is None
    assert "no display" in platform_problem({}, load=_loader(set()))


def test_the_list_is_what_the_plugin_links_to():
    """Every non-Qt X11 library libqxcb.so and libQt6XcbQpa need (ldd) is in the list."""
    import PySide6
    qt = Path(PySide6.__file__).parent / "Qt"
    needed = set()
    for so in (qt / "plugins" / "platforms" / "libqxcb.so", qt / "lib" / "libQt6XcbQpa.so.6"):
        out = subprocess.run(["ldd", str(so)], capture_output=True, text=True).stdout
        needed |= {ln.split()[0] for ln in out.splitlines() if ln.strip().startswith(("libxcb", "libX11", "libxkb"))}
    assert needed and needed <= set(XCB_LIBRARIES), needed - set(XCB_LIBRARIES)


def test_gui_without_display_exits_1_with_a_message(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    p = subprocess.run([sys.executable, "-m", "dbxray.app", str(tmp_path)], env=env, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 1 and "no display" in p.stderr, p.stderr


def test_headless_export_prints_no_qt_noise(tmp_path):
    demo = Path(__file__).resolve().parents[1] / "resources" / "demo"
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "QT_QPA_PLATFORM")}
    p = subprocess.run([sys.executable, "-m", "dbxray.app", "export", str(demo), "--view", "sizes",
                        "-o", str(tmp_path / "s.png")], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "propagateSizeHints" not in p.stderr and "This plugin" not in p.stderr, p.stderr
