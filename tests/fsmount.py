"""Real filesystems for tests: tmpfs, and loop-mounted XFS (4 KiB and 1 KiB
blocks) and btrfs with ``compress-force=zstd``, made in a temp folder and
unmounted afterwards.  Needs root and loop devices (CI runs as root); where
they are missing the caller gets :class:`MountUnavailable` with the reason, and
the tests fail with it rather than pass without having looked."""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

#: name -> (mkfs command or None for tmpfs, mount options)
KINDS = {
    "tmpfs": (None, "size=1g"),
    "xfs4k": (["mkfs.xfs", "-q", "-f", "-b", "size=4096"], ""),
    "xfs1k": (["mkfs.xfs", "-q", "-f", "-b", "size=1024"], ""),
    "btrfs-zstd": (["mkfs.btrfs", "-q", "-f"], "compress-force=zstd"),
    "btrfs-zstd-heuristic": (["mkfs.btrfs", "-q", "-f"], "compress=zstd"),
}
IMAGE_BYTES = 1 << 30


class MountUnavailable(RuntimeError):
    pass


def _run(cmd: list[str]) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise MountUnavailable(f"`{' '.join(cmd)}` failed ({r.returncode}): {(r.stderr or r.stdout).strip()}")


@contextlib.contextmanager
def mounted(kind: str, workdir: Path):
    """Mount a fresh filesystem of ``kind`` under ``workdir``; yields the mount point."""
    mkfs, opts = KINDS[kind]
    if os.geteuid() != 0:
        raise MountUnavailable(f"mounting {kind} needs root (CI runs as root); this run is uid {os.geteuid()}")
    if mkfs and shutil.which(mkfs[0]) is None:
        raise MountUnavailable(f"{mkfs[0]} is not installed (apt-get install "
                               f"{'xfsprogs' if 'xfs' in mkfs[0] else 'btrfs-progs'})")
    mp = workdir / f"mnt-{kind}"
    mp.mkdir(parents=True, exist_ok=True)
    if mkfs is None:
        _run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(mp)])
    else:
        img = workdir / f"{kind}.img"
        with open(img, "wb") as fh:
            fh.truncate(IMAGE_BYTES)
        _run(mkfs + [str(img)])
        _run(["mount", "-o", ",".join(o for o in ("loop", opts) if o), str(img), str(mp)])
    try:
        yield mp
    finally:
        subprocess.run(["umount", "-l", str(mp)], capture_output=True)
        if mkfs is not None:
            with contextlib.suppress(OSError):
                (workdir / f"{kind}.img").unlink()


def peak_rss_kb(code: str, *args: str, timeout: int = 300) -> tuple[str, int]:
    """Run ``code`` in a fresh Python (``sys.argv[1:]`` = args); (its stdout, its peak RSS in
    KiB from /proc/self/status VmHWM; ru_maxrss would keep the forking parent's peak)."""
    import sys
    wrapped = (code + "\nimport re as _re; print('VMHWM', _re.search(r'VmHWM:\\s+(\\d+)', "
               "open('/proc/self/status').read()).group(1))")
    r = subprocess.run([sys.executable, "-c", wrapped, *args], capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr[-2000:]
    out, _, hwm = r.stdout.rpartition("VMHWM ")
    return out, int(hwm)
