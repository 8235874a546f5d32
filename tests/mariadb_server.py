"""A private MariaDB server for tests that need the real engine: its own datadir and
socket under a temporary folder, ``--skip-networking``, never the system service
(Debian 12 ``mariadb-server``; MyRocks with ``mariadb-plugin-rocksdb``)."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

MARIADBD = shutil.which("mariadbd") or "/usr/sbin/mariadbd"
PLUGIN_DIRS = ("/usr/lib/mysql/plugin", "/usr/lib/x86_64-linux-gnu/mariadb19/plugin")


def missing(plugins: tuple[str, ...] = ()) -> str | None:
    """Why a private server cannot run here (None when it can)."""
    for tool in ("mariadb-install-db", "mariadb", "mariadb-admin"):
        if shutil.which(tool) is None:
            return f"{tool} not installed (Debian package mariadb-server)"
    if not os.path.exists(MARIADBD):
        return "mariadbd not installed (Debian package mariadb-server)"
    for p in plugins:
        if not any(os.path.exists(os.path.join(d, p)) for d in PLUGIN_DIRS):
            return f"{p} not installed (Debian package mariadb-plugin-rocksdb)" if "rocks" in p else f"{p} missing"
    return None


class PrivateServer:
    """``with PrivateServer(base, ["--plugin-load-add=ha_rocksdb.so", ...]) as s: s.sql(...)``."""

    def __init__(self, base: Path, options: list[str] | None = None):
        self.base = Path(base)
        self.datadir = self.base / "datadir"
        self.socket = self.base / "mysqld.sock"
        self.options = list(options or [])
        self.proc: subprocess.Popen | None = None

    def _common(self) -> list[str]:
        return ["--no-defaults", f"--datadir={self.datadir}", "--user=root"]

    def start(self, timeout: float = 60.0) -> "PrivateServer":
        self.base.mkdir(parents=True, exist_ok=True)
        if not (self.datadir / "mysql").exists():
            subprocess.run(["mariadb-install-db", *self._common(), "--auth-root-authentication-method=normal",
                            "--skip-test-db"], check=True, capture_output=True, timeout=180)
        log = open(self.base / "server.log", "ab")
        self.proc = subprocess.Popen([MARIADBD, *self._common(), f"--socket={self.socket}", "--skip-networking",
                                      f"--log-error={self.base / 'error.log'}", f"--pid-file={self.base / 'pid'}",
                                      *self.options], stdout=log, stderr=log)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mariadbd exited: {(self.base / 'error.log').read_text()[-2000:]}")
            r = subprocess.run(["mariadb-admin", "--no-defaults", f"--socket={self.socket}", "-uroot", "ping"],
                               capture_output=True)
            if r.returncode == 0:
                return self
            time.sleep(0.3)
        self.stop()
        raise RuntimeError("mariadbd did not answer within the timeout")

    def sql(self, statements: str, database: str | None = None) -> str:
        cmd = ["mariadb", "--no-defaults", f"--socket={self.socket}", "-uroot", "-N", "-B"]
        if database:
            cmd.append(database)
        r = subprocess.run(cmd, input=statements.encode(), capture_output=True, timeout=600)
        if r.returncode != 0:
            raise RuntimeError(f"SQL failed: {r.stderr.decode()[-1500:]}")
        return r.stdout.decode()

    def stop(self) -> None:
        if self.proc is None:
            return
        subprocess.run(["mariadb-admin", "--no-defaults", f"--socket={self.socket}", "-uroot", "shutdown"],
                       capture_output=True, timeout=120)
        try:
            self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def __enter__(self) -> "PrivateServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
