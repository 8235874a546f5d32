"""File › Key File…: the key file's keys decrypt the encrypted tablespaces of the next scan."""
import shutil

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QFileDialog, QInputDialog

from dbxray.app.window import MainWindow


@pytest.fixture
def window(qtbot, tmp_path):
    w = MainWindow(settings=QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.show()
    return w


def _indexes(w, path):
    e = next(f for f in w.dataset.files if f.path == path)
    return [ix["index_id"] for ix in e.sections["innodb"]["indexes"]]


def test_key_file_menu_decrypts_on_rescan(window, qtbot, fixtures_root, tmp_path, monkeypatch):
    src = fixtures_root / "mariadb" / "datadir" / "enc"
    d = tmp_path / "enc"
    d.mkdir()
    shutil.copy(src / "k4.ibd", d / "k4.ibd")
    with qtbot.waitSignal(window.scan_done, timeout=60000):
        window.open_path(str(d))
    assert _indexes(window, "k4.ibd") == []
    assert window.key_file_action.text() == "&Key File…" and window.key_file_action.associatedObjects()
    keys = str(fixtures_root / "mariadb" / "keys.txt")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (keys, ""))
    with qtbot.waitSignal(window.scan_done, timeout=60000):
        window.key_file_action.trigger()
    assert _indexes(window, "k4.ibd") == [80, 81]
    assert "key ids 1, 4, 7, 11" in window.status_label.text()


def test_key_file_wrong_password_named(window, qtbot, tmp_path, monkeypatch):
    bad = tmp_path / "keys.enc"
    bad.write_bytes(b"Salted__" + bytes(8) + bytes(48))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(bad), ""))
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("not it", True))
    window.key_file_action.trigger()
    assert window.keys is None
    assert "wrong password" in window.status_label.text() and "keys.enc" in window.status_label.text()
    items = [window.errors.item(i).text() for i in range(window.errors.count())]
    assert any("wrong password" in t for t in items)
