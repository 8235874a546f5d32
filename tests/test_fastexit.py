"""The end of a headless command (app/fastexit.py, app/main.py): no interpreter teardown once
the output is written, the atexit functions and the buffered output kept, the ordinary exit
where a thread or a stream needs it; a reader that closes stdout early ends the command
quietly with status 141."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading

import pytest

from dbxray.app import fastexit
from dbxray.app.cli import is_headless

# an object whose __del__ only the interpreter's teardown runs: it says whether it ran
PROBE = textwrap.dedent("""
    import sys
    class _Teardown:
        def __del__(self):
            sys.stderr.write("TEARDOWN\\n")
    _probe = _Teardown()
    from dbxray.app.main import main
    sys.argv = ["dbxray", *sys.argv[1:]]
    main()
""")


def _run(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=300, **kw)


def test_scan_ends_without_teardown_and_its_json_is_whole(fixtures_root):
    r = _run("scan", str(fixtures_root / "innodb" / "16k"), "--json", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "TEARDOWN" not in r.stderr                # the fast end was taken
    doc = json.loads(r.stdout)                       # stdout flushed to its last byte
    assert doc["files"] and r.stdout.rstrip().endswith("}")


def test_scan_to_a_file_and_an_error_keep_their_status(fixtures_root, tmp_path):
    out = tmp_path / "scan.json"
    r = _run("scan", str(fixtures_root / "innodb" / "16k"), "-o", str(out), "--no-progress")
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["files"]
    r = _run("scan", str(tmp_path / "missing"))
    assert r.returncode == 1 and "no such file or directory" in r.stderr
    assert "TEARDOWN" not in r.stderr


def test_the_window_and_its_help_exit_the_ordinary_way():
    r = _run("--help")
    assert r.returncode == 0 and "subcommands:" in r.stdout
    assert "TEARDOWN" in r.stderr                    # not a subcommand: the interpreter's own exit
    assert is_headless(["scan", "x"]) and is_headless(["whatif"]) and not is_headless(["x.ibd"])
    assert not is_headless([]) and not is_headless(["--help"])


def test_atexit_functions_and_buffered_output_survive(tmp_path):
    marker = tmp_path / "atexit.txt"
    code = textwrap.dedent(f"""
        import atexit, sys
        from dbxray.app.fastexit import exit_without_teardown
        atexit.register(lambda: open({str(marker)!r}, "w").write("ran"))
        sys.stdout.write("buffered, no newline")
        exit_without_teardown(3)
        sys.stdout.write(" NOT REACHED")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 3
    assert r.stdout == "buffered, no newline"
    assert marker.read_text() == "ran"


class _Exited(Exception):
    pass


@pytest.fixture
def no_exit(monkeypatch):
    """os._exit and the atexit run recorded instead of done (this is pytest's process)."""
    calls: list[str] = []

    def fake_exit(code):
        calls.append(f"exit {code}")
        raise _Exited

    monkeypatch.setattr(fastexit.os, "_exit", fake_exit)
    import atexit
    monkeypatch.setattr(atexit, "_run_exitfuncs", lambda: calls.append("atexit"))
    return calls


def test_a_running_thread_gets_the_ordinary_exit(no_exit):
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        fastexit.exit_without_teardown(0)          # returns: the interpreter must join it
    finally:
        stop.set()
        t.join()
    assert no_exit == []
    daemon = threading.Thread(target=stop.wait, daemon=True)   # a daemon thread is no reason
    stop.clear()
    daemon.start()
    try:
        with pytest.raises(_Exited):
            fastexit.exit_without_teardown(257)
    finally:
        stop.set()
        daemon.join()
    assert no_exit == ["atexit", "exit 1"]


def test_a_stream_that_does_not_flush_gets_the_ordinary_exit(no_exit, monkeypatch):
    class Broken:
        def flush(self):
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Broken())
    fastexit.exit_without_teardown(0)
    assert no_exit == ["atexit"]


def test_a_reader_closing_stdout_ends_the_scan_quietly(fixtures_root):
    """``dbxray scan --json | head -c 10``: no traceback, status 141 (as SIGPIPE's)."""
    p = subprocess.Popen([sys.executable, "-c", PROBE, "scan", str(fixtures_root / "innodb"), "--json",
                          "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    head = p.stdout.read(10)
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=300) == 141, err
    assert head.startswith(b"{")
    assert "Traceback" not in err and "BrokenPipe" not in err, err
