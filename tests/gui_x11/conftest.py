"""The real-X-server suite's fixtures (x11util.py has the display, the app and the
tools): one Xvfb + openbox per session, apps started per test and stopped after it."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from x11util import App, XDisplay


@pytest.fixture(scope="session")
def xdisplay(tmp_path_factory):
    d = XDisplay(tmp_path_factory.mktemp("x11"))
    yield d
    d.close()


@pytest.fixture
def public_tmp():
    """A temp folder any user can reach (pytest's own is under a 0700 folder): the app
    runs as nobody in one test."""
    d = Path(tempfile.mkdtemp(prefix="dbxray-x11-"))
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def launch(xdisplay, public_tmp):
    apps = []

    def start(*args, prefix=None, env=None, name="app"):
        app = App(xdisplay, public_tmp / f"{name}{len(apps)}", [str(a) for a in args], prefix, env)
        apps.append(app)
        return app
    yield start
    for a in apps:
        a.close()


@pytest.fixture(scope="session")
def xdisplay_hidpi(tmp_path_factory):
    """A screen large enough for the window at QT_SCALE_FACTOR=2 (its minimum is 966x515
    logical pixels: 1932x1030 device pixels)."""
    d = XDisplay(tmp_path_factory.mktemp("x11hidpi"), screen=(2560, 1600))
    yield d
    d.close()


@pytest.fixture
def launch_hidpi(xdisplay_hidpi, public_tmp):
    apps = []

    def start(*args, env=None, name="hidpi"):
        app = App(xdisplay_hidpi, public_tmp / f"{name}{len(apps)}", [str(a) for a in args], None, env)
        apps.append(app)
        return app
    yield start
    for a in apps:
        a.close()
