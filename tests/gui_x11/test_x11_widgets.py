"""pytest-qt widget tests whose behaviour depends on the X11 platform, run on the real
X server: a QLineEdit takes Ctrl+E as end-of-line only with X11's key bindings
(QKeySequence::MoveToEndOfLine), so the shortcut tests are run again there, in their own
process (a QApplication's platform is fixed when it is created)."""
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_shortcut_tests_on_xcb(xdisplay):
    env = xdisplay.env(QT_QPA_PLATFORM="xcb", PYQTGRAPH_QT_LIB="PySide6")
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        str(TESTS / "test_gui_shortcuts.py")], env=env, capture_output=True, text=True,
                       timeout=300, cwd=str(TESTS.parent))
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
    assert " passed" in p.stdout and "skipped" not in p.stdout, p.stdout[-2000:]
