"""Helpers of the real-X-server suite: Xvfb with a window manager (openbox), the ``dbxray`` entry
point started as a user starts it (QT_QPA_PLATFORM=xcb), driven with xdotool, the screen
grabbed with ImageMagick's ``import -window root`` into artifacts/x11/.  What the window
shows is read back from its own state dump (DBXRAY_STATE_DUMP, app/statedump.py).

The tools are Debian packages (.ci/run installs them); a missing one fails the suite,
it does not skip it."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "artifacts" / "x11"
VENV_BIN = Path(sys.executable).parent
TOOLS = {"Xvfb": "xvfb", "openbox": "openbox", "xdotool": "xdotool", "import": "imagemagick",
         "xwininfo": "x11-utils", "xprop": "x11-utils", "setpriv": "util-linux"}
SCREEN = (1600, 1000)


def _wait(pred, timeout: float, what: str, step: float = 0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


class XDisplay:
    """Xvfb + openbox on a free display number."""

    def __init__(self, logdir: Path, screen: tuple[int, int] = SCREEN):
        missing = [f"{t} ({pkg})" for t, pkg in TOOLS.items() if shutil.which(t) is None]
        if missing:
            pytest.fail("the X11 suite needs " + ", ".join(missing) + ": apt-get install them (.ci/run does)",
                        pytrace=False)
        n = next(n for n in range(71, 200) if not os.path.exists(f"/tmp/.X11-unix/X{n}")
                 and not os.path.exists(f"/tmp/.X{n}-lock"))
        self.name = f":{n}"
        self.logdir = logdir
        self._xlog = open(logdir / "xvfb.log", "wb")
        # -ac: any local user may connect (the app also runs as nobody); no TCP
        self.screen = screen
        self.xvfb = subprocess.Popen(["Xvfb", self.name, "-screen", "0", f"{screen[0]}x{screen[1]}x24",
                                      "-nolisten", "tcp", "-ac", "-noreset"],
                                     stdout=self._xlog, stderr=subprocess.STDOUT)
        _wait(lambda: os.path.exists(f"/tmp/.X11-unix/X{n}") or self.xvfb.poll() is not None, 20, "Xvfb")
        if self.xvfb.poll() is not None:
            pytest.fail(f"Xvfb exited: {(logdir / 'xvfb.log').read_text()[-2000:]}", pytrace=False)
        self._wmlog = open(logdir / "openbox.log", "wb")
        self.wm = subprocess.Popen(["openbox", "--sm-disable"], env=self.env(), stdout=self._wmlog,
                                   stderr=subprocess.STDOUT)
        _wait(lambda: "window id" in self.run("xprop", "-root", "_NET_SUPPORTING_WM_CHECK", check=False),
              20, "openbox")

    def env(self, **extra) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("QT_", "PYTEST", "XDG_", "WAYLAND"))}
        env.update(DISPLAY=self.name, **extra)
        return env

    def run(self, *cmd, check=True, timeout=30) -> str:
        p = subprocess.run(cmd, env=self.env(), capture_output=True, text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
        return p.stdout

    def xdo(self, *args) -> str:
        return self.run("xdotool", *map(str, args))

    def pointer(self) -> tuple[int, int]:
        """Where the pointer is (``xdotool getmouselocation --shell``)."""
        loc = dict(ln.split("=", 1) for ln in self.xdo("getmouselocation", "--shell").split() if "=" in ln)
        return int(loc["X"]), int(loc["Y"])

    def screenshot(self, name: str, window: str | None = None) -> Path:
        """The whole screen (``import -window root``), or one window's frame cut out of it."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        out = ARTIFACTS / f"{name}.png"
        cmd = ["import", "-window", "root"]
        if window is not None:
            info = self.run("xwininfo", "-id", window)
            geo = {k.strip(): int(v) for k, v in (ln.split(":", 1) for ln in info.splitlines()
                                                    if ln.strip().startswith(("Absolute upper-left", "Width", "Height")))}
            cmd += ["-crop", f"{geo['Width']}x{geo['Height']}+{geo['Absolute upper-left X']}+"
                             f"{geo['Absolute upper-left Y']}", "+repage"]
        self.run(*cmd, str(out))
        return out

    def close(self) -> None:
        for p in (self.wm, self.xvfb):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
        self._xlog.close()
        self._wmlog.close()


def unprivileged_prefix(home: Path) -> tuple[list[str], str]:
    """The setpriv command that runs the app without root's right to read every file:
    as ``nobody`` when nobody can read the venv and the source; else (a checkout under
    root's 0700 home) as root without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH, for which
    a mode-000 file is just as unreadable."""
    nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    probe = subprocess.run(nobody + [sys.executable, "-c", "import dbxray.app.window"], capture_output=True,
                           env={"HOME": str(home), "PATH": os.environ.get("PATH", "")}, cwd="/")
    if probe.returncode == 0:
        return nobody, "nobody"
    return CAPS_DROPPED, "root without DAC capabilities"


#: root without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH: file modes apply to it
CAPS_DROPPED = ["setpriv", "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search"]


class App:
    """One ``dbxray`` process on the display, and its state dump."""

    def __init__(self, display: XDisplay, workdir: Path, args: list[str], prefix: list[str] | None = None,
                 env: dict | None = None):
        self.display = display
        workdir.mkdir(parents=True, exist_ok=True)
        home = workdir / "home"
        home.mkdir(exist_ok=True)
        for d in (workdir, home):
            os.chmod(d, 0o777)          # the app may run as nobody
        self.dump = workdir / "state.json"
        self.log = workdir / "app.log"
        e = display.env(QT_QPA_PLATFORM="xcb", DBXRAY_STATE_DUMP=str(self.dump), HOME=str(home),
                        XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"),
                        XDG_RUNTIME_DIR=str(workdir), PYQTGRAPH_QT_LIB="PySide6", **(env or {}))
        self._log = open(self.log, "wb")
        self.proc = subprocess.Popen((prefix or []) + [str(VENV_BIN / "dbxray"), *args], env=e, cwd=str(workdir),
                                     stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        self.wid = self._find_window()

    def _find_window(self) -> str:
        def found():
            if self.proc.poll() is not None:
                raise AssertionError(f"dbxray exited {self.proc.returncode}: {self.log.read_text()[-3000:]}")
            out = self.display.run("xdotool", "search", "--onlyvisible", "--pid", str(self.proc.pid), check=False)
            return out.split()[-1] if out.split() else None
        wid = _wait(found, 60, "the dbxray window")
        self.display.xdo("windowactivate", "--sync", wid)
        return wid

    def state(self) -> dict:
        try:
            return json.loads(self.dump.read_text())
        except (OSError, ValueError):
            return {}

    def wait(self, pred, timeout: float = 60, what: str = "the window's state") -> dict:
        def ok():
            s = self.state()
            return s if s and pred(s) else None
        try:
            return _wait(ok, timeout, what, step=0.1)
        except AssertionError as e:
            raise AssertionError(f"{e}; last state: {json.dumps(self.state())[:3000]}") from None

    def idle(self, timeout: float = 90) -> dict:
        return self.wait(lambda s: not s["busy"] and s["status"] and not s["status"].startswith("Scanning"),
                         timeout, "the scan to end")

    def key(self, *keys: str) -> None:
        self.display.xdo("key", "--clearmodifiers", *keys)

    def click(self, x: int, y: int, button: int = 1) -> None:
        # xdotool's ``mousemove --sync`` waits ~15 s for a motion event when the pointer is
        # already there (a second click on the same row): move only where it is not
        if self.display.pointer() != (x, y):
            self.display.xdo("mousemove", "--sync", x, y)
        time.sleep(0.1)
        self.display.xdo("click", button)

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        self._log.close()


def center(rect) -> tuple[int, int]:
    x, y, w, h = rect
    return x + w // 2, y + h // 2
