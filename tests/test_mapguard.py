"""parsers/mapguard.py: a file truncated by another process while dbxray holds
it memory-mapped must not kill the process with SIGBUS (issue 8, files that
change).  Each case runs in a child process, so a regression kills only the
child and the test reports its exit code."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap

import pytest

from dbxray.parsers import mapguard

REPO = __import__("pathlib").Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent("""
    import json, os, sys, tempfile, threading
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    from dbxray.parsers.fileio import ReadOnlyFile
    from dbxray.parsers import mapguard
    mode = sys.argv[2]
    p = os.path.join(tempfile.mkdtemp(), "t.ibd")
    data = np.random.default_rng(1).integers(1, 255, 1 << 22, dtype=np.uint8)  # no zero bytes
    data.tofile(p)
    out = {}
    def work():
        with ReadOnlyFile(p) as f:
            a = f.array()
            os.truncate(p, 100_000)          # "another process" shrinks the file
            if mode == "slice":
                out["tail"] = f.pread(3_000_000, 16).hex()
            else:
                b = a.copy()                 # numpy releases the GIL for a big copy
                out["tail_sum"] = int(b[200_704:].sum())
                out["head_equal"] = bool((b[:98_304] == data[:98_304]).all())
            out["events"] = mapguard.shrink_events(p)
            del a
    if mode == "thread":
        t = threading.Thread(target=work); t.start(); t.join()
    else:
        work()
    print(json.dumps(out))
""")


def _child(mode: str):
    p = subprocess.run([sys.executable, "-X", "faulthandler", "-c", CHILD, str(REPO), mode],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, (json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else p.stderr)


pytestmark = pytest.mark.skipif(not mapguard._supported(), reason="the guard is Linux-only")


def test_bytes_past_the_new_end_read_as_zeros():
    rc, out = _child("slice")
    assert rc != -signal.SIGBUS, out
    assert rc == 0, out
    assert out["tail"] == "00" * 16
    (off, now), = out["events"]
    assert now == 100_000 and off == 3_000_000


def test_numpy_copy_in_a_thread_without_the_gil():
    rc, out = _child("thread")
    assert rc == 0, out
    assert out["tail_sum"] == 0            # everything from the first page past the end is zeros
    assert out["head_equal"]               # and what is still in the file is unchanged
    assert out["events"] and all(now == 100_000 for _, now in out["events"])


def test_scan_warns_with_file_and_offset(tmp_path):
    code = textwrap.dedent("""
        import json, os, sys, traceback
        sys.path.insert(0, sys.argv[1])
        from dbxray.parsers import fileio
        from dbxray.parsers.scan import scan
        target = sys.argv[2]
        orig = fileio.ReadOnlyFile.mmap
        def mm(self):
            out = orig(self)
            if (out is not None and os.path.abspath(self.path) == target and os.path.getsize(target) > 65536
                    and any(fr.name == "build_page_map" for fr in traceback.extract_stack())):
                os.truncate(target, 65536)       # right after the page map maps it
            return out
        fileio.ReadOnlyFile.mmap = mm
        ds = scan(target)
        print(json.dumps([w for f in ds.files for w in f.warnings]))
    """)
    src = REPO.parent / "shared" / "fixtures" / "innodb" / "16k" / "fx" / "t_dynamic.ibd"
    if not src.exists():
        pytest.fail(f"fixture missing: {src}")
    dst = tmp_path / "t_dynamic.ibd"
    dst.write_bytes(src.read_bytes())
    p = subprocess.run([sys.executable, "-c", code, str(REPO), str(dst)], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    warnings = json.loads(p.stdout.strip().splitlines()[-1])
    shrank = [w for w in warnings if "shrank to 65536 bytes" in w and "t_dynamic.ibd" in w]
    assert shrank, warnings
    assert "offset" in shrank[0]
