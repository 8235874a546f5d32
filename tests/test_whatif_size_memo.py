"""Two storage models that compress a unit's same bytes with the same codec encode them once
(compress/registry.py ``same_input_sizes``, opened by the projector per unit): InnoDB page
compression and the ROW_FORMAT=COMPRESSED estimate both zlib a page-compressed zlib page whole.
The JSON is the same as with every model encoding for itself."""
from __future__ import annotations

import contextlib
import json

import dbxray.compress.projector as projector
import dbxray.compress.registry as registry
from dbxray.compress.whatif import run_whatif
from dbxray.parsers.model import ScanContext
from dbxray.parsers.scan import scan

SPEEDS = {"compress_mb_s", "decompress_mb_s"}


def _strip(x):
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if k not in SPEEDS}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


def _counted(monkeypatch, memo: bool):
    calls = []
    real = registry._ENCODERS["zlib"]

    def zlib(data, level):
        calls.append(len(data))
        return real(data, level)

    monkeypatch.setitem(registry._ENCODERS, "zlib", zlib)
    if not memo:
        @contextlib.contextmanager
        def none():
            yield registry.SizeMemo()
        monkeypatch.setattr(projector, "same_input_sizes", none)
    return calls


def test_a_page_is_zlibbed_once_for_both_models(fixtures_root, monkeypatch):
    ds = scan(str(fixtures_root / "innodb" / "16k" / "fx" / "t_pc_zlib.ibd"), ScanContext(verify_checksums=False))
    with monkeypatch.context() as m:
        twice = _counted(m, memo=False)
        before = run_whatif(ds, ["zstd:3"], sample="0.5", larger_pages=False)
    with monkeypatch.context() as m:
        once = _counted(m, memo=True)
        after = run_whatif(ds, ["zstd:3"], sample="0.5", larger_pages=False)
    assert _strip(json.loads(json.dumps(after))) == _strip(json.loads(json.dumps(before)))
    assert 0 < len(once) < len(twice)
    # the speed measurement outside the projector's units: every call encodes
    assert getattr(registry._shared, "memo", None) is None


def test_memo_is_by_object_and_codec():
    z6, z1 = registry.parse_codec("zlib:6"), registry.parse_codec("zlib:1")
    a = bytes(range(256)) * 64
    b = bytes(bytearray(a))           # equal bytes, another object: encoded again
    with registry.same_input_sizes() as memo:
        n = z6.compressed_size(a)
        assert z6.compressed_size(a) == n and memo.hits == 1
        assert z6.compressed_size(b) == n and memo.hits == 1
        assert z1.compressed_size(a) == len(z1.compress(a)) and memo.hits == 1
    assert getattr(registry._shared, "memo", None) is None
