"""Corrupt-input matrix machinery: targets, mutations, time-boxed workers.

Every engine file of every fixture folder is a *target*.  For each target a
deterministic list of *mutations* is planned from the pristine file's own
structure (the units the scan finds in it: InnoDB pages, ClickHouse blocks,
TokuDB partitions; plus compressed-block chains in ClickHouse marks, primary
index and checksums.txt): truncations inside the header, mid-unit and near
the end, bit flips in headers, in the size fields of unit headers and in
compressed payloads, and size fields overwritten with huge values.

Each mutated copy (the lone file, or the whole ClickHouse part directory it
belongs to) is scanned with ``parsers.scan.scan`` in a worker process, under
a per-case alarm; the parent kills a worker that stops answering (a hang in C
code) or dies (a signal) and records the case as failed.

A case FAILS when:
  * an exception escapes ``scan`` (or a payload decoder raises anything but
    its documented error),
  * ``scan`` had to catch a parser crash ("<engine> parser failed: ..."),
  * it runs past the time box (hang) or the worker dies (crash, SIGBUS, OOM),
  * an error message does not name its file.

Run it by hand::

    .venv/bin/python tests/hardening_util.py [--full] [--jobs 2] [--root DIR]

(The parent makes its own sparse copy of the fixtures when no --root is given.)
"""
from __future__ import annotations

import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

FIXTURE_FOLDERS = ("innodb", "innodb-mysql", "innodb-public", "tokudb", "clickhouse")
SKIP_ROLES = ("other", "table_metadata")
CASE_ALARM_S = 5.0           # per-case alarm inside the worker
CASE_GUARD_S = 20.0          # the parent kills a worker silent for this long in one case


# --------------------------------------------------------------------------
# targets
# --------------------------------------------------------------------------
@dataclass
class Target:
    engine: str
    role: str
    abspath: str          # the (sparse copy of the) fixture file
    rel: str              # path relative to the fixtures root, for reports
    context: str | None   # ClickHouse part directory scanned around it, else None

    def to_json(self) -> dict:
        return self.__dict__.copy()


def _is_part_dir(d: str) -> bool:
    return os.path.isfile(os.path.join(d, "checksums.txt")) and os.path.isfile(os.path.join(d, "columns.txt"))


def find_targets(root: str | Path) -> list[Target]:
    """Every non-empty engine file under the fixture folders of ``root``."""
    from dbxray.parsers.detect import detect
    root = str(root)
    out: list[Target] = []
    for folder in FIXTURE_FOLDERS:
        top = os.path.join(root, folder)
        if not os.path.isdir(top):
            continue
        found = detect(top)
        for f in found.files:
            if not f.engine or f.role in SKIP_ROLES or f.is_symlink:
                continue
            try:
                if os.path.getsize(f.abspath) == 0:
                    continue
            except OSError:
                continue
            ctx = None
            if f.engine == "clickhouse":
                d = os.path.dirname(f.abspath)
                if not _is_part_dir(d):
                    continue          # format_version.txt and the like: not part files
                ctx = d
            out.append(Target(f.engine, f.role, f.abspath, f"{folder}/{f.path}", ctx))
    out.sort(key=lambda t: t.rel)
    return out


def _kind(t: Target) -> str:
    """A category for picking the CI subset: engine, role, file-name suffix."""
    name = os.path.basename(t.abspath)
    suffix = name.rsplit(".", 1)[-1] if "." in name else name
    if t.engine == "tokudb" and t.role == "redo_log":
        suffix = "tokulog"
    if t.engine == "innodb" and t.role == "redo_log":
        suffix = "redo"
    return f"{t.engine}/{t.role}/{suffix}"


def ci_subset(targets: list[Target], per_kind: int = 2) -> list[Target]:
    """A deterministic subset: the first, and a spread of the others, of each kind."""
    by: dict[str, list[Target]] = {}
    for t in targets:
        by.setdefault(_kind(t), []).append(t)
    out = []
    for kind in sorted(by):
        ts = by[kind]
        picks = {0}
        if len(ts) > 1 and per_kind > 1:
            step = max(1, len(ts) // per_kind)
            picks.update(range(step, len(ts), step))
        out.extend(ts[i] for i in sorted(picks)[:per_kind])
    return out


# --------------------------------------------------------------------------
# copies that keep holes
# --------------------------------------------------------------------------
def sparse_copyfile(src: str, dst: str) -> None:
    """Copy data ranges only (holes stay holes), then set the size."""
    sfd = os.open(src, os.O_RDONLY)
    try:
        size = os.fstat(sfd).st_size
        dfd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            pos = 0
            while pos < size:
                try:
                    data = os.lseek(sfd, pos, os.SEEK_DATA)
                except OSError:
                    break
                hole = os.lseek(sfd, data, os.SEEK_HOLE)
                off = data
                while off < hole:
                    chunk = os.pread(sfd, min(1 << 20, hole - off), off)
                    if not chunk:
                        break
                    os.pwrite(dfd, chunk, off)
                    off += len(chunk)
                pos = hole
            os.ftruncate(dfd, size)
        finally:
            os.close(dfd)
    finally:
        os.close(sfd)


def sparse_copytree(src: str, dst: str) -> None:
    os.makedirs(dst, exist_ok=True)
    for name in os.listdir(src):
        s, d = os.path.join(src, name), os.path.join(dst, name)
        if os.path.islink(s):
            os.symlink(os.readlink(s), d)
        elif os.path.isdir(s):
            sparse_copytree(s, d)
        elif os.path.isfile(s):
            sparse_copyfile(s, d)


# --------------------------------------------------------------------------
# mutations
# --------------------------------------------------------------------------
@dataclass
class Mutation:
    op: str                 # "trunc" | "flip" | "set"
    offset: int
    bit: int = 0            # flip: bit number 0..7
    data: bytes = b""       # set: bytes written at offset
    why: str = ""           # "header", "mid-unit", "size field", "payload", ...
    unit: int = -1          # unit index concerned (payload decoder sample), -1 none

    def describe(self) -> str:
        if self.op == "trunc":
            return f"truncate to {self.offset} ({self.why})"
        if self.op == "flip":
            return f"flip bit {self.bit} @ {self.offset} ({self.why})"
        return f"set {self.data.hex()} @ {self.offset} ({self.why})"

    def to_json(self) -> dict:
        d = self.__dict__.copy()
        d["data"] = self.data.hex()
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Mutation":
        d = dict(d)
        d["data"] = bytes.fromhex(d["data"])
        return cls(**d)

    def apply(self, path: str) -> None:
        if self.op == "trunc":
            os.truncate(path, self.offset)
            return
        fd = os.open(path, os.O_RDWR)
        try:
            if self.op == "flip":
                b = os.pread(fd, 1, self.offset)
                if len(b) == 1:
                    os.pwrite(fd, bytes([b[0] ^ (1 << self.bit)]), self.offset)
            else:
                os.pwrite(fd, self.data, self.offset)
        finally:
            os.close(fd)


def ch_block_chain(data: bytes, start: int = 0, limit: int = 4096) -> list[tuple[int, int]]:
    """(offset, stored bytes) of the ClickHouse compressed blocks from ``start``:
    16-byte checksum, method byte, u32 compressed size (incl. 9-byte header),
    u32 decompressed size."""
    out = []
    off = start
    while off + 25 <= len(data) and len(out) < limit:
        comp = int.from_bytes(data[off + 17:off + 21], "little")
        if comp < 9 or off + 16 + comp > len(data):
            break
        out.append((off, 16 + comp))
        off += 16 + comp
    return out


def _pick(seq: list, k: int) -> list:
    """First, middle and last (up to k) of seq, deterministic."""
    if len(seq) <= k:
        return list(seq)
    idx = sorted({0, len(seq) // 2, len(seq) - 1} | {round(i * (len(seq) - 1) / (k - 1)) for i in range(k)})
    return [seq[i] for i in idx[:k]]


def plan_mutations(target: Target, size: int, units, head: bytes, full: bool,
                   seed: int = 0) -> list[Mutation]:
    """The mutations of one file, from its size, its units and its first bytes."""
    rnd = random.Random(f"{target.rel}:{seed}")
    muts: list[Mutation] = []
    eng, name = target.engine, os.path.basename(target.abspath)
    k_units = 4 if full else 2

    # -- truncations -------------------------------------------------------
    cuts = {1: "inside the header", min(37, size - 1): "inside the header", size // 2: "middle of the file",
            size - 1: "last byte missing"}
    if full:
        cuts[0] = "empty"
        cuts[min(200, size - 1)] = "inside the header"
    # -- unit structure ----------------------------------------------------
    ulist: list[tuple[int, int, int, bool]] = []   # (index, offset, stored, compressed)
    if units is not None and len(units):
        from dbxray.parsers.model import UNIT_COMPRESSED
        for i in range(len(units)):
            off, st = int(units["offset"][i]), int(units["stored"][i])
            if st and off + st <= size:
                ulist.append((i, off, st, bool(int(units["flags"][i]) & UNIT_COMPRESSED)))
    blocks: list[tuple[int, int]] = []
    if eng == "clickhouse":
        start = 0
        if name == "checksums.txt":
            nl = head.find(b"\n")
            start = nl + 1 if nl >= 0 else 0
        if name.endswith((".bin", ".cmrk", ".cmrk2", ".cmrk3", ".cmrk4", ".cidx")) or name == "checksums.txt":
            with open(target.abspath, "rb") as f:
                blocks = ch_block_chain(f.read(), start)
    for i, off, st, _c in _pick(ulist, k_units):
        if st > 2:
            cuts[off + st // 2] = f"mid-unit {i}"
    for off, st in _pick(blocks, k_units):
        if st > 2:
            cuts[off + st // 2] = "mid-block"
        cuts[off + 20] = "inside a block header"
    if eng == "innodb" and size > 16384 * 2:
        cuts[16384 + 8192] = "mid-page"
    for off, why in sorted(cuts.items()):
        if 0 <= off < size:
            muts.append(Mutation("trunc", off, why=why))

    # -- bit flips in headers ---------------------------------------------
    hdr = []
    if eng == "innodb":
        # FIL header: checksum, page no, prev/next, LSN, type, flush LSN, space id;
        # FSP header: space id, size, free limit, flags; redo/ibdata header fields
        hdr = [0, 4, 7, 16, 24, 25, 34, 38, 46, 49, 54, 57, 150, 512, 526]
    elif eng == "tokudb":
        # magic, layout version, size, checkpoint count, nodesize, translation offset/size, root
        hdr = [0, 8, 11, 16, 19, 20, 36, 39, 40, 47, 48, 55, 56, 100, 4096 + 16, 4096 + 47]
    else:
        hdr = [0, 1, 8, 15, 16, 24, 30]
    n_hdr = len(hdr) if full else 5
    for off in hdr[:n_hdr] if full else rnd.sample(hdr, min(n_hdr, len(hdr))):
        if off < size:
            muts.append(Mutation("flip", off, bit=rnd.randrange(8), why="header"))
    if eng == "tokudb" and size > 4096 + 64:
        for off in (16, 40, 48):   # the same field in both header slots
            muts.append(Mutation("set", off, data=b"\xff\xff\xff\x7f", why="size field, slot 0"))
            muts.append(Mutation("set", 4096 + off, data=b"\xff\xff\xff\x7f", why="size field, slot 1"))
            if not full:
                break

    # -- size fields and payloads of units ------------------------------------
    for i, off, st, comp in _pick(ulist, k_units):
        if eng == "tokudb":
            # sub-block: u32 compressed size, u32 uncompressed size, payload (method byte first)
            muts.append(Mutation("set", off, data=b"\xff\xff\xff\x7f", why="compressed size field", unit=i))
            muts.append(Mutation("set", off + 4, data=b"\x00\x00\x00\x40", why="uncompressed size 1 GiB", unit=i))
            muts.append(Mutation("flip", off + 8, bit=rnd.randrange(8), why="method byte", unit=i))
        elif eng == "innodb":
            muts.append(Mutation("flip", off + 24, bit=rnd.randrange(8), why="page type", unit=i))
            muts.append(Mutation("set", off + 38, data=b"\xff\xff", why="page-compressed size field", unit=i))
            muts.append(Mutation("flip", off + 26, bit=rnd.randrange(8), why="compression algorithm", unit=i))
        if st > 16:
            muts.append(Mutation("flip", off + st // 2, bit=rnd.randrange(8),
                                 why="compressed payload" if comp else "unit body", unit=i))
            muts.append(Mutation("flip", off + 12 + rnd.randrange(min(st - 12, 64)), bit=rnd.randrange(8),
                                 why="payload start", unit=i))
    bin_units = {}
    if eng == "clickhouse" and ulist:
        bin_units = {off: i for i, off, _s, _c in ulist}
    for off, st in _pick(blocks, k_units):
        u = bin_units.get(off, -1)
        muts.append(Mutation("flip", off + 16, bit=rnd.randrange(8), why="codec byte", unit=u))
        muts.append(Mutation("flip", off + 20, bit=rnd.randrange(8), why="compressed size high byte", unit=u))
        muts.append(Mutation("set", off + 17, data=b"\xff\xff\xff\x7f", why="compressed size 2 GiB", unit=u))
        muts.append(Mutation("set", off + 21, data=b"\x00\x00\x00\x80", why="decompressed size 2 GiB", unit=u))
        if st > 30:
            muts.append(Mutation("flip", off + 25 + rnd.randrange(st - 25), bit=rnd.randrange(8),
                                 why="compressed payload", unit=u))
    if not blocks and not ulist and size > 8:
        # text and plain binary files (columns.txt, marks, primary.idx, ...): flips spread over the file
        for _ in range(4 if full else 2):
            muts.append(Mutation("flip", rnd.randrange(size), bit=rnd.randrange(8), why="body"))
        if name.endswith(".txt"):
            muts.append(Mutation("set", rnd.randrange(size), data=b"\n", why="line break"))
            muts.append(Mutation("set", rnd.randrange(size), data=b"9", why="digit"))
    # dedupe, keep order
    seen, out = set(), []
    for m in muts:
        key = (m.op, m.offset, m.bit, m.data)
        if key in seen or m.offset >= size + (1 if m.op == "trunc" else 0):
            continue
        if m.op == "set" and m.offset + len(m.data) > size:
            continue
        seen.add(key)
        out.append(m)
    return out


# --------------------------------------------------------------------------
# one case (runs in the worker)
# --------------------------------------------------------------------------
class CaseTimeout(BaseException):
    """Raised by the per-case alarm; a BaseException so no parser swallows it."""


def _on_alarm(signum, frame):
    raise CaseTimeout()


def _names_in(ds) -> set[str]:
    out = {os.path.basename(ds.root.rstrip("/"))}
    for f in ds.files:
        out.add(f.path)
        out.add(os.path.basename(f.path))
    return {n for n in out if n}


def check_dataset(ds, target_rel: str) -> tuple[list[str], dict]:
    """Failures (list of reasons) and facts of one scanned dataset."""
    fails = []
    facts = {"errors": 0, "located": 0}
    for e in ds.errors:
        facts["errors"] += 1
        if "parser failed" in e:
            fails.append(f"parser crash caught by scan: {e}")
        elif not any(n in e for n in _names_in(ds)):
            fails.append(f"dataset error names no file: {e}")
    for f in ds.files:
        base = os.path.basename(f.path)
        for e in f.errors:
            facts["errors"] += 1
            if base not in e and f.path not in e:
                fails.append(f"error of {f.path} does not name it: {e}")
            low = e.lower()
            if any(w in low for w in ("offset", "page", "@", "block", "node", "mark", "line", "row", "byte")):
                facts["located"] += 1
    return fails, facts


def _payload_module(engine: str):
    from dbxray.parsers.clickhouse import payloads as clickhouse
    from dbxray.parsers.innodb import payloads as innodb
    from dbxray.parsers.tokudb import payloads as tokudb
    return {"innodb": innodb, "clickhouse": clickhouse, "tokudb": tokudb}[engine]


def check_payloads(entry, engine: str, unit: int, limit: int = 3) -> tuple[list[str], int]:
    """Decode a few units of the mutated entry; only the engine's documented
    errors may come out, and they must name the file."""
    from dbxray.parsers.codecs.general import DecodeError
    from dbxray.parsers.fileio import FileReadError
    mod = _payload_module(engine)
    allowed = (mod.PayloadError, DecodeError, FileReadError)
    if entry.units is None or not len(entry.units):
        return [], 0
    n = len(entry.units)
    idx = sorted({i for i in (unit, unit + 1, 0, n - 1) if 0 <= i < n})[:limit]
    fails, tried = [], 0
    base = os.path.basename(entry.path)
    for i in idx:
        tried += 1
        try:
            mod.unit_payload(entry, i)
        except allowed as e:
            if base not in str(e):
                fails.append(f"payload error of unit {i} does not name the file: {e}")
        except CaseTimeout:
            raise
        except Exception as e:     # noqa: BLE001 - that is the point
            tb = traceback.extract_tb(e.__traceback__)[-1]
            fails.append(f"unit_payload({i}) raised {type(e).__name__}: {e} "
                         f"({os.path.basename(tb.filename)}:{tb.lineno})")
    return fails, tried


def run_case(target: Target, mut: Mutation, pristine: str, work: str, do_payloads: bool) -> dict:
    """Copy the pristine context, mutate the target in it, scan, check."""
    from dbxray.parsers.scan import scan
    case_dir = os.path.join(work, "case")
    shutil.rmtree(case_dir, ignore_errors=True)
    os.makedirs(case_dir)
    if os.path.isdir(pristine):
        scan_path = os.path.join(case_dir, os.path.basename(pristine))
        sparse_copytree(pristine, scan_path)
        file_path = os.path.join(scan_path, os.path.basename(target.abspath))
    else:
        scan_path = file_path = os.path.join(case_dir, os.path.basename(pristine))
        sparse_copyfile(pristine, file_path)
    mut.apply(file_path)
    res = {"fail": [], "errors": 0, "located": 0, "detected": False, "partial": None, "payloads": 0}
    signal.setitimer(signal.ITIMER_REAL, CASE_ALARM_S)
    try:
        try:
            ds = scan(scan_path)
        except CaseTimeout:
            raise
        except Exception as e:    # noqa: BLE001
            tb = traceback.extract_tb(e.__traceback__)[-1]
            res["fail"].append(f"exception escaped scan: {type(e).__name__}: {e} "
                               f"({os.path.basename(tb.filename)}:{tb.lineno})")
            return res
        fails, facts = check_dataset(ds, target.rel)
        res["fail"] += fails
        res.update(facts)
        base = os.path.basename(target.abspath)
        entry = next((f for f in ds.files if os.path.basename(f.path) == base), None)
        if entry is not None:
            res["detected"] = bool(entry.errors or entry.warnings or
                                   (entry.units is not None and len(entry.units) and
                                    bool((entry.units["flags"] & 0x22).any())))
            res["partial"] = entry.units is not None and len(entry.units) > 0
            if do_payloads and (mut.unit >= 0 or mut.why.startswith("mid-unit")):
                pf, tried = check_payloads(entry, target.engine, mut.unit)
                res["fail"] += pf
                res["payloads"] = tried
    except CaseTimeout:
        res["fail"].append(f"hang: still running after {CASE_ALARM_S:.0f} s")
    except MemoryError:
        res["fail"].append("MemoryError (address space capped)")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return res


def plan_target(target: Target, work: str, full: bool) -> tuple[str, list[Mutation]]:
    """Make the pristine copy (file or part dir) and plan its mutations."""
    from dbxray.parsers.scan import scan
    pristine_root = os.path.join(work, "pristine")
    shutil.rmtree(pristine_root, ignore_errors=True)
    os.makedirs(pristine_root)
    if target.context:
        pristine = os.path.join(pristine_root, os.path.basename(target.context))
        sparse_copytree(target.context, pristine)
    else:
        pristine = os.path.join(pristine_root, os.path.basename(target.abspath))
        sparse_copyfile(target.abspath, pristine)
    ds = scan(pristine)
    base = os.path.basename(target.abspath)
    entry = next((f for f in ds.files if os.path.basename(f.path) == base), None)
    units = entry.units if entry is not None else None
    size = os.path.getsize(target.abspath)
    with open(target.abspath, "rb") as f:
        head = f.read(65536)
    first_end = None
    if units is not None and len(units):
        first_end = int(units["offset"][0]) + int(units["stored"][0])
    return pristine, plan_mutations(target, size, units, head, full), first_end


def worker_main() -> None:
    """Read jobs (JSON lines) on stdin; answer with JSON lines on stdout."""
    import resource
    lim = 6 << 30
    resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    signal.signal(signal.SIGALRM, _on_alarm)
    work = os.environ.get("DBXRAY_HARDENING_WORK") or tempfile.mkdtemp(prefix="dbxray-hardening-")
    out = sys.stdout
    sys.stdout = sys.stderr     # parsers must not write into the protocol

    def say(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()
    try:
        for line in sys.stdin:
            job = json.loads(line)
            target = Target(**job["target"])
            try:
                pristine, muts, first_end = plan_target(target, work, job["full"])
            except BaseException as e:  # noqa: BLE001
                say({"planned": [], "plan_error": f"{type(e).__name__}: {e}"})
                continue
            say({"planned": [m.to_json() for m in muts]})
            skip = set(job.get("skip", []))
            for i, m in enumerate(muts):
                if i in skip:
                    continue
                say({"start": i})
                r = run_case(target, m, pristine, work, job["payloads"])
                if (m.op == "trunc" and first_end is not None and m.offset >= first_end
                        and r.get("partial") is False):
                    r["lost_partial"] = True
                say({"result": i, **r})
            say({"done": True})
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --------------------------------------------------------------------------
# the parent: a small pool of time-guarded workers
# --------------------------------------------------------------------------
@dataclass
class Summary:
    targets: int = 0
    cases: int = 0
    failures: list[dict] = field(default_factory=list)
    detected: int = 0
    located_errors: int = 0
    errors: int = 0
    partial: int = 0
    payload_calls: int = 0
    lost_partial: list[str] = field(default_factory=list)
    by_engine: dict = field(default_factory=dict)
    seconds: float = 0.0

    def figures(self) -> str:
        eng = ", ".join(f"{e}: {n['targets']} files / {n['cases']} cases / {n['failures']} failures"
                        for e, n in sorted(self.by_engine.items()))
        return (f"corrupt-input matrix: {self.targets} files (inputs tried), {self.cases} cases, "
                f"{len(self.failures)} failures; {self.detected} cases reported by the parser, "
                f"{self.errors} error messages ({self.located_errors} with a location), "
                f"{self.partial} cases kept units ({len(self.lost_partial)} truncations past the first unit "
                f"kept none), {self.payload_calls} payload decodes; "
                f"{self.seconds:.0f} s  [{eng}]")


class _Worker:
    def __init__(self):
        self.work = tempfile.mkdtemp(prefix="dbxray-hardening-")    # removed by kill()/the parent
        self.proc = subprocess.Popen(
            [sys.executable, "-u", str(Path(__file__).resolve()), "--worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, bufsize=1, cwd=str(REPO), start_new_session=True,
            env={**os.environ, "DBXRAY_HARDENING_WORK": self.work})
        self.buf = ""
        self.job = None
        self.planned: list | None = None
        self.current: int | None = None
        self.since = time.monotonic()
        self.skip: set[int] = set()

    def send(self, target: Target, full: bool, payloads: bool, skip=()) -> None:
        self.job = (target, full, payloads)
        self.skip = set(skip)
        self.planned = None
        self.current = None
        self.since = time.monotonic()
        self.proc.stdin.write(json.dumps({"target": target.to_json(), "full": full,
                                          "payloads": payloads, "skip": sorted(self.skip)}) + "\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()
        shutil.rmtree(self.work, ignore_errors=True)


def run_matrix(targets: list[Target], full: bool = False, jobs: int = 2, payloads: bool = True,
               log=None) -> Summary:
    """Run every target's cases over ``jobs`` workers; returns the figures."""
    t0 = time.monotonic()
    s = Summary(targets=len(targets))
    queue = list(targets)
    workers: list[_Worker] = []

    def eng_stats(t: Target) -> dict:
        return s.by_engine.setdefault(t.engine, {"targets": 0, "cases": 0, "failures": 0})

    for t in targets:
        eng_stats(t)["targets"] += 1

    def record(t: Target, i: int, r: dict, planned: list) -> None:
        s.cases += 1
        eng_stats(t)["cases"] += 1
        s.detected += bool(r.get("detected"))
        s.errors += r.get("errors", 0)
        s.located_errors += r.get("located", 0)
        s.partial += bool(r.get("partial"))
        s.payload_calls += r.get("payloads", 0)
        if r.get("lost_partial"):
            m = Mutation.from_json(planned[i]) if planned and i < len(planned) else None
            s.lost_partial.append(f"{t.rel}: {m.describe() if m else i}")
        if r.get("fail"):
            eng_stats(t)["failures"] += 1
            m = Mutation.from_json(planned[i]) if planned and i < len(planned) else None
            s.failures.append({"file": t.rel, "case": m.describe() if m else f"case {i}",
                               "reasons": r["fail"][:3]})
            if log:
                log(f"FAIL {t.rel}: {s.failures[-1]['case']}: {r['fail'][0]}")

    def start_next(w: _Worker) -> bool:
        if not queue:
            return False
        w.send(queue.pop(0), full, payloads)
        return True

    for _ in range(min(jobs, len(queue))):
        w = _Worker()
        workers.append(w)
        start_next(w)
    active = [w for w in workers if w.job]
    while active:
        fds = {w.proc.stdout.fileno(): w for w in active}
        ready, _, _ = select.select(list(fds), [], [], 1.0)
        now = time.monotonic()
        for fd in ready:
            w = fds[fd]
            chunk = os.read(fd, 65536).decode()
            if not chunk:          # the worker died (signal, OOM kill)
                rc = w.proc.wait()
                t = w.job[0]
                if w.current is not None:
                    record(t, w.current, {"fail": [f"worker died (exit {rc}) during the case"]}, w.planned)
                    w.skip.add(w.current)
                elif w.planned is None:
                    record(t, 0, {"fail": [f"worker died (exit {rc}) while planning"]}, None)
                _restart(w, workers, active, full, payloads, queue, start_next)
                continue
            w.buf += chunk
            while "\n" in w.buf:
                line, w.buf = w.buf.split("\n", 1)
                msg = json.loads(line)
                w.since = now
                t = w.job[0]
                if "planned" in msg:
                    w.planned = msg["planned"]
                    if msg.get("plan_error"):
                        record(t, 0, {"fail": [f"pristine scan failed: {msg['plan_error']}"]}, None)
                elif "start" in msg:
                    w.current = msg["start"]
                elif "result" in msg:
                    record(t, msg["result"], msg, w.planned)
                    w.skip.add(msg["result"])
                    w.current = None
                elif msg.get("done"):
                    w.job = None
                    if not start_next(w):
                        active.remove(w)
        for w in list(active):
            if w.job and now - w.since > CASE_GUARD_S:
                t = w.job[0]
                i = w.current
                w.kill()
                if i is not None:
                    record(t, i, {"fail": [f"hang: no answer for {CASE_GUARD_S:.0f} s (killed)"]}, w.planned)
                    w.skip.add(i)
                else:
                    record(t, 0, {"fail": [f"hang while planning (killed after {CASE_GUARD_S:.0f} s)"]}, None)
                _restart(w, workers, active, full, payloads, queue, start_next)
    for w in workers:
        try:
            w.proc.stdin.close()
        except OSError:
            pass
        try:
            w.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            w.kill()
        shutil.rmtree(w.work, ignore_errors=True)
    s.seconds = time.monotonic() - t0
    return s


def _restart(w: _Worker, workers, active, full, payloads, queue, start_next) -> None:
    """Replace a dead or killed worker; resume its target after the bad case."""
    job, planned, skip = w.job, w.planned, set(w.skip)
    try:
        w.kill()
    except Exception:  # noqa: BLE001
        pass
    nw = _Worker()
    workers[workers.index(w)] = nw
    active[active.index(w)] = nw
    if job and planned is not None and len(skip) < len(planned):
        nw.send(job[0], full, payloads, skip=skip)
    elif not start_next(nw):
        active.remove(nw)
        nw.proc.stdin.close()


# --------------------------------------------------------------------------
# probes run in a fresh process (memory and I/O figures of one scan)
# --------------------------------------------------------------------------
def _proc_io() -> dict:
    out = {}
    try:
        with open("/proc/self/io") as f:
            for line in f:
                k, v = line.split(":")
                out[k.strip()] = int(v)
    except OSError:
        pass
    return out


def probe_scan(path: str) -> dict:
    """Scan ``path`` and measure it: peak RSS before/after (KiB), page faults,
    bytes read through read(2)/pread(2) (rchar) and from the device."""
    import resource
    from dbxray.parsers.scan import scan
    r0, io0 = resource.getrusage(resource.RUSAGE_SELF), _proc_io()
    t0 = time.monotonic()
    ds = scan(path)
    dt = time.monotonic() - t0
    r1, io1 = resource.getrusage(resource.RUSAGE_SELF), _proc_io()
    return {
        "seconds": dt,
        "maxrss_before_kib": r0.ru_maxrss, "maxrss_after_kib": r1.ru_maxrss,
        "minflt": r1.ru_minflt - r0.ru_minflt, "majflt": r1.ru_majflt - r0.ru_majflt,
        "rchar": io1.get("rchar", 0) - io0.get("rchar", 0),
        "read_bytes": io1.get("read_bytes", 0) - io0.get("read_bytes", 0),
        "files": len(ds.files),
        "engines": ds.engines,
        "errors": ds.errors[:5],
        "file_errors": sum(len(f.errors) for f in ds.files),
        "first_file_errors": [e for f in ds.files for e in f.errors][:5],
        "warnings": [w for f in ds.files for w in f.warnings][:5],
        "units": {f.path: (0 if f.units is None else len(f.units)) for f in ds.files[:20]},
        "holes": {f.path: f.holes[:4] for f in ds.files[:20]},
        "apparent": {f.path: f.apparent_bytes for f in ds.files[:20]},
    }


class ProbeError(AssertionError):
    """A probe scan hung, ran out of its memory budget or crashed."""


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_probe(path: str, timeout: float = 300.0, rss_limit_mib: int = 2048, env: dict | None = None) -> dict:
    """``probe_scan(path)`` in a fresh interpreter.  The parent is the hang
    guard (kill after ``timeout`` s) and the memory guard (kill when the
    child's RSS passes ``rss_limit_mib``); both raise ProbeError."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--probe", path],
                             stdout=out, stderr=err, text=True, cwd=str(REPO),
                             env={**os.environ, **(env or {})}, start_new_session=True)
        t0, peak = time.monotonic(), 0
        try:
            while p.poll() is None:
                peak = max(peak, _rss_kib(p.pid))
                if peak > rss_limit_mib * 1024:
                    raise ProbeError(f"scan of {path}: RSS passed {rss_limit_mib} MiB after "
                                     f"{time.monotonic() - t0:.0f} s (killed)")
                if time.monotonic() - t0 > timeout:
                    raise ProbeError(f"scan of {path}: still running after {timeout:.0f} s (killed)")
                time.sleep(0.1)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        out.seek(0)
        err.seek(0)
        if p.returncode != 0:
            raise ProbeError(f"probe of {path} exited {p.returncode}: {err.read()[-2000:]}")
        res = json.loads(out.read().strip().splitlines()[-1])
        res["watched_rss_kib"] = peak
        return res


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(description="dbxray corrupt-input matrix")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--full", action="store_true", help="every fixture file, every mutation")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--root", help="a sparse copy of the fixtures (default: make one)")
    ap.add_argument("--only", help="only targets whose path contains this")
    ap.add_argument("--json", help="write the figures and failures here")
    ap.add_argument("--probe", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        worker_main()
        return 0
    if a.probe:
        res = probe_scan(a.probe)
        sys.stdout.write("\n" + json.dumps(res) + "\n")
        return 0
    from fixtures_util import make_sparse_copy
    tmp = None
    root = a.root
    if not root:
        tmp = tempfile.mkdtemp(prefix="dbxray-fx-")
        root = str(make_sparse_copy(Path(tmp)))
    try:
        targets = find_targets(root)
        if not a.full:
            targets = ci_subset(targets)
        if a.only:
            targets = [t for t in targets if a.only in t.rel]
        s = run_matrix(targets, full=a.full, jobs=a.jobs, log=lambda m: print(m, flush=True))
        print(s.figures())
        if a.json:
            Path(a.json).write_text(json.dumps({"figures": s.figures(), "cases": s.cases, "targets": s.targets,
                                                "failures": s.failures, "by_engine": s.by_engine,
                                                "lost_partial": s.lost_partial}, indent=1))
        return 1 if s.failures else 0
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
