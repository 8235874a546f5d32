"""Savings that are compression only, checked against MariaDB itself (issue 17 item 1).

A private MariaDB 10.11 fills a table and deletes three quarters of its rows (a contiguous
range, as an archive purge does); after a slow shutdown (purge done) the pages they held are
free but stay in the file, which InnoDB never shrinks. dbxray splits each copy's bytes into
compressible, overhead and reclaimable; then the server runs the rebuild dbxray advises
(``OPTIMIZE TABLE``) on one copy and the advised page compression on another.

- the rebuild gains at most the reclaimable bytes, and most of them;
- the page-compressed table's real size lies inside the projection, which leaves the free
  pages out (the ALTER rebuilds the table), and the codec's saving in the advice is counted
  against the rebuilt table, never against the free space;
- a copy never touched keeps its size (the free pages are really there).
"""
from __future__ import annotations

import os
import shutil

import pytest

from dbxray.compress.whatif import run_whatif
from dbxray.parsers.scan import scan
from mariadb_server import PrivateServer, missing

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))

COLUMNS = ("id INT NOT NULL PRIMARY KEY, at DATETIME NOT NULL, host VARCHAR(40) NOT NULL, "
           "msg VARCHAR(200) NOT NULL")
FILL = ("SELECT seq, '2026-01-01' + INTERVAL seq SECOND, CONCAT('web-', seq % 37, '.example.net'), "
        "CONCAT('GET /api/v2/orders/', seq % 9973, ' status ', 200 + seq % 7, ' in ', seq % 331, ' ms') "
        "FROM seq_1_to_80000")
COPIES = ("keep", "opt", "zlib")
#: MyISAM and Aria keep deleted rows in the data file until OPTIMIZE TABLE rewrites it
ROW_ENGINES = {"my": "MyISAM", "ar": "Aria TRANSACTIONAL=0"}


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    base = tmp_path_factory.mktemp("rebuild")
    options = ["--innodb-fast-shutdown=0"]
    sql = "CREATE DATABASE r; USE r;\n"
    for c in COPIES:
        sql += (f"CREATE TABLE churn_{c} ({COLUMNS}) ENGINE=InnoDB;\nINSERT INTO churn_{c} {FILL};\n"
                f"DELETE FROM churn_{c} WHERE id > 20000;\n")
    for e, spec in ROW_ENGINES.items():
        sql += (f"CREATE TABLE rows_{e} ({COLUMNS}) ENGINE={spec};\nINSERT INTO rows_{e} {FILL};\n"
                f"DELETE FROM rows_{e} WHERE id > 20000;\n")
    with PrivateServer(base, options) as srv:
        srv.sql(sql)
    d = srv.datadir / "r"
    res = run_whatif(scan(str(d)), ["zlib:6", "lz4"], sample="0.2", seed=1, raw_models=False)
    targets = {t["target"].rsplit("/", 1)[-1][:-len(".ibd")]: t for t in res["targets"]
               if t["target"].endswith(".ibd")}
    advice = {(a["target"], a.get("kind")): a for a in res["advice"]}
    ddl = {"opt": advice[("churn_opt.ibd", "rebuild")]["ddl"],
           "zlib": next(a["ddl"] for a in res["advice"]
                        if a["target"] == "churn_zlib.ibd" and a["codec"] == "zlib:6" and a["kind"] == "codec")}
    for e, ext in (("my", "MYD"), ("ar", "MAD")):
        ddl[e] = advice[(f"rows_{e}.{ext}", "rebuild")]["ddl"]
        targets[f"rows_{e}"] = next(t for t in res["targets"] if t["target"] == f"rows_{e}.{ext}")
    with PrivateServer(base, options) as srv:
        for c in ("opt", "zlib", "my", "ar"):
            srv.sql(ddl[c])
    real = {c: os.stat(d / f"churn_{c}.ibd").st_blocks * 512 for c in COPIES}
    real.update({e: os.stat(d / f"rows_{e}.{ext}").st_blocks * 512 for e, ext in (("my", "MYD"), ("ar", "MAD"))})
    yield targets, advice, ddl, real
    shutil.rmtree(base, ignore_errors=True)


def test_split_sums_and_most_of_the_file_is_free(measured):
    targets, _, _, _ = measured
    for c in COPIES:
        t = targets[f"churn_{c}"]
        s = t["split"]
        assert s["compressible_bytes"] + s["overhead_bytes"] + s["reclaimable_bytes"] == t["current_bytes"]
        # 60,000 of 80,000 rows deleted and purged: their pages are free, the file as big as before
        assert s["reclaimable_bytes"] > 0.5 * t["current_bytes"], s


def test_rebuild_gains_at_most_the_reclaimable_bytes(measured):
    targets, advice, ddl, real = measured
    t = targets["churn_opt"]
    gain = t["current_bytes"] - real["opt"]
    reclaim = t["split"]["reclaimable_bytes"]
    print(f"churn_opt: now {t['current_bytes']:,}, reclaimable {reclaim:,}, after {ddl['opt']!r} {real['opt']:,} "
          f"(gain {gain:,}, {gain / reclaim:.0%} of the reclaimable)")
    assert ddl["opt"] == "OPTIMIZE TABLE `r`.`churn_opt`;"
    assert advice[("churn_opt.ibd", "rebuild")]["saving_bytes"] == reclaim
    assert gain <= reclaim                       # never more than the free space
    assert gain >= 0.6 * reclaim                 # and most of it (the new file reserves its own free pages)
    assert real["keep"] == targets["churn_keep"]["current_bytes"]     # untouched copy: the free pages stay


def test_codec_saving_is_compression_only_and_lands(measured):
    targets, advice, ddl, real = measured
    t = targets["churn_zlib"]
    r = next(r for r in t["results"] if r["codec"] == "zlib:6" and r["model"] == "innodb_page_compressed")
    lo, hi = r["ci95"]
    print(f"churn_zlib: now {t['current_bytes']:,}, rebuilt {t['split']['rebuilt_bytes']:,}, projected "
          f"{r['projected_bytes']:,} [{lo:,}, {hi:,}], real after {ddl['zlib']!r} {real['zlib']:,}")
    assert lo <= real["zlib"] <= hi
    a = next(a for a in advice.values() if a["target"] == "churn_zlib.ibd" and a["kind"] == "codec"
             and a["codec"] == "zlib:6")
    assert a["compared_with"] == "rebuilt"
    assert a["saving_bytes"] == t["split"]["rebuilt_bytes"] - a["projected_bytes"]
    assert a["saving_bytes"] == r["compression_saving_bytes"]
    # the free space is not in the codec's saving: it is the rebuild's
    assert a["saving_bytes"] < t["current_bytes"] - a["projected_bytes"] - 0.5 * t["split"]["reclaimable_bytes"]


@pytest.mark.parametrize("e", ["my", "ar"])
def test_myisam_aria_deleted_rows_are_the_rebuilds(measured, e):
    targets, advice, ddl, real = measured
    t = targets[f"rows_{e}"]
    s = t["split"]
    reclaim = s["reclaimable_bytes"]
    gain = t["current_bytes"] - real[e]
    print(f"rows_{e}: now {t['current_bytes']:,}, deleted (reclaimable) {reclaim:,}, after {ddl[e]!r} {real[e]:,} "
          f"(gain {gain:,})")
    assert s["compressible_bytes"] + s["overhead_bytes"] + reclaim == t["current_bytes"]
    assert reclaim > 0.6 * t["current_bytes"]                  # 60,000 of 80,000 rows deleted
    assert ddl[e].startswith("OPTIMIZE TABLE `r`.`rows_")
    # OPTIMIZE rewrites the data file without them: the gain is the deleted bytes, to a block
    assert abs(gain - reclaim) <= max(8192, 0.02 * reclaim), (gain, reclaim)
