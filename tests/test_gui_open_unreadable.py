"""Opening a folder with one unreadable file in the window (issue 21, defect 1): every
readable file is shown, the unreadable one is listed with its error, once; the CLI
table says the same (defect 11).  The tests run as root, which reads everything, so
"unreadable" is a mode-000 file that ``os.open`` / ``open`` refuse (as the kernel
does for any other user; tests/gui_x11 runs the real thing as ``nobody``)."""
import os
import shutil

import pytest
from PySide6.QtCore import QSettings

from dbxray.app.cli import main as cli_main
from dbxray.app.window import MainWindow
from test_hardening_perms import _deny


@pytest.fixture
def folder(fixtures_root, tmp_path, monkeypatch):
    """Two tablespaces: t_zip4.ibd readable, the larger t_zip8.ibd (the one the
    progressive preview picks) unreadable."""
    d = tmp_path / "one_unreadable"
    d.mkdir()
    for name in ("t_zip4.ibd", "t_zip8.ibd"):
        shutil.copyfile(fixtures_root / "innodb" / "16k" / "fx" / name, d / name)
    bad = d / "t_zip8.ibd"
    os.chmod(bad, 0)
    _deny(monkeypatch, {str(bad)})
    return d


def test_window_shows_readable_files_and_lists_the_error(qtbot, tmp_path, folder):
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.scan_done, timeout=60000):
        w.open_path(str(folder))
    files = {n.path: n for n in w.tree_root.walk() if n.kind == "file"}
    assert set(files) == {"t_zip4.ibd", "t_zip8.ibd"}
    assert files["t_zip4.ibd"].apparent == 126976
    assert files["t_zip8.ibd"].apparent == 155648          # stat needs no read permission
    assert w.model.rowCount() >= 1                          # the tree is not empty
    errors = [w.errors.item(i).text() for i in range(w.errors.count())]
    denied = [e for e in errors if "t_zip8.ibd" in e and "Permission denied" in e and "innodb names" not in e]
    assert len(denied) == 1, errors                         # listed, once
    assert not any("failed" in e for e in errors), errors
    assert "2 files" in w.status_label.text()


def test_cli_table_lists_size_error_once_and_warnings(folder, capsys):
    (folder / "empty.ibd").write_bytes(b"")                 # a warning of its own: an empty tablespace
    assert cli_main(["scan", str(folder), "--no-progress"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("t_zip8.ibd"))
    assert "152.0 KiB" in row, row                         # not 0 B
    listed = [line for line in out.splitlines() if line.strip() == "t_zip8.ibd: cannot open: Permission denied"]
    assert len(listed) == 1, out
    # the warnings are listed, and the unreadable file's error is not repeated among them
    assert "warning(s):" in out and "empty.ibd: empty file" in out, out
    assert "innodb names: t_zip8.ibd" not in out, out
