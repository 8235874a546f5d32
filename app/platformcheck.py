"""Before Qt starts on X11: the libraries its xcb platform plugin links to, checked by
name.  Qt's own message when one is missing blames libxcb-cursor0 whatever is missing
(and it aborts the same way when there is no display at all); this names the missing
library and its Debian package.

The list is the DT_NEEDED closure of PySide6 6.10's ``plugins/platforms/libqxcb.so`` and
``lib/libQt6XcbQpa.so.6`` outside Qt itself (``ldd``), on Debian 12."""
from __future__ import annotations

import ctypes
import os

#: soname -> Debian 12 package
XCB_LIBRARIES = {
    "libX11.so.6": "libx11-6",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxcb.so.1": "libxcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
}


def missing_xcb_libraries(load=ctypes.CDLL) -> list[tuple[str, str]]:
    """(soname, package) of each library of the list that cannot be loaded."""
    out = []
    for soname, package in XCB_LIBRARIES.items():
        try:
            load(soname)
        except OSError:
            out.append((soname, package))
    return out


def platform_problem(environ=os.environ, load=ctypes.CDLL) -> str | None:
    """Why the window cannot open on this machine, or None.  Only the xcb platform
    (the default on Linux with a DISPLAY) is checked."""
    platform = environ.get("QT_QPA_PLATFORM", "")
    if platform and not platform.startswith("xcb"):
        return None
    if not environ.get("DISPLAY"):
        if environ.get("WAYLAND_DISPLAY") and not platform:
            return None
        return ("no display: DISPLAY is not set (run the window in a desktop session; headless, use "
                "`dbxray scan`, `dbxray export` or `dbxray --screenshot FILE`)")
    missing = missing_xcb_libraries(load)
    if missing:
        return ("Qt's X11 (xcb) platform needs libraries that are missing: "
                + ", ".join(s for s, _ in missing)
                + "\n  on Debian/Ubuntu: apt-get install " + " ".join(p for _, p in missing))
    return None
