"""The advisor: smallest, fastest to decode within 5%, current, and the DDL."""
from dbxray.compress.advisor import advise, available, ddl_for
from dbxray.compress.estimate import Estimate
from dbxray.compress.targets import Result, Target


def _r(codec, model, size, dec):
    return Result(codec, model, Estimate(size, size * 0.99, size * 1.01, 1.0, 10, 5, 10), 100.0, dec)


def test_picks_and_ddl_innodb():
    t = Target("fx/t.ibd", "innodb", 1000, 2000, current_codec="none", primary_model="innodb_page_compressed",
               info={"database": "fx", "table": "t"})
    t.results = [_r("none", "innodb_page_compressed", 1000, 5000), _r("zlib:6", "innodb_page_compressed", 400, 300),
                 _r("lzma:6", "innodb_page_compressed", 390, 60), _r("lz4", "innodb_page_compressed", 600, 2000),
                 _r("zstd:3", "innodb_page_compressed", 300, 900),       # MariaDB has no zstd: not advised
                 _r("zlib:6", "innodb_row_compressed_kbs8k_estimate", 100, 300)]
    adv = {a["choice"]: a for a in advise([t])}
    assert adv["smallest"]["codec"] == "lzma:6"
    assert adv["fastest_decode_within_5pct"]["codec"] == "zlib:6"      # 400 <= 390 * 1.05, decodes faster
    assert "current" not in adv and set(adv) == {"smallest", "fastest_decode_within_5pct"}
    assert adv["smallest"]["saving_bytes"] == 610 and "verdict" not in adv["smallest"]
    # lzma comes from a provider plugin in MariaDB 10.7+ (tests/test_compress_reality_ddl.py found
    # the SET GLOBAL failing without it): the DDL's first line says so, as a comment
    assert adv["smallest"]["ddl"].splitlines() == [
        "-- MariaDB 10.7+ takes lzma from a provider plugin: if SHOW PLUGINS does not list provider_lzma, "
        "first INSTALL SONAME 'provider_lzma';",
        "SET GLOBAL innodb_compression_algorithm='lzma'; ALTER TABLE `fx`.`t` PAGE_COMPRESSED=1 "
        "PAGE_COMPRESSION_LEVEL=6;"]
    assert ddl_for(t, "zlib:6", "innodb_row_compressed_kbs8k_estimate") == \
        "ALTER TABLE `fx`.`t` ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8;"
    assert ddl_for(t, "zstd:3", "innodb_page_compressed").startswith("-- zstd:3")
    assert not available("innodb", "zstd:3") and available("innodb", "snappy")


def test_ddl_clickhouse_and_tokudb():
    c = Target("fx.t.c", "clickhouse", 10, 20, info={"database": "fx", "table": "t", "column": "c", "type": "UInt32"})
    assert ddl_for(c, "Delta(4),ZSTD(1)", "clickhouse_blocks") == \
        "ALTER TABLE fx.t MODIFY COLUMN c UInt32 CODEC(Delta(4),ZSTD(1));"
    assert ddl_for(c, "zstd:3", "clickhouse_blocks") == "ALTER TABLE fx.t MODIFY COLUMN c UInt32 CODEC(ZSTD(3));"
    assert not available("clickhouse", "lzma:6")
    k = Target("x.tokudb", "tokudb", 10, 20, info={"table": "fx.orders"})
    assert ddl_for(k, "lzma:2", "tokudb_partitions") == "ALTER TABLE fx.orders ROW_FORMAT=tokudb_lzma;"
    assert ddl_for(k, "snappy", "tokudb_partitions") == "ALTER TABLE fx.orders ROW_FORMAT=tokudb_snappy;"
    assert ddl_for(k, "brotli:5", "tokudb_partitions").startswith("--")


def test_mysql_layout_ddl():
    t = Target("db/t.ibd", "innodb", 1000, 2000, current_codec="none", primary_model="innodb_page_compressed",
               info={"database": "db", "table": "t", "layout": "mysql"})
    assert ddl_for(t, "lz4", "innodb_page_compressed") == "ALTER TABLE `db`.`t` COMPRESSION='lz4'; OPTIMIZE TABLE `db`.`t`;"
    assert ddl_for(t, "lzma:6", "innodb_page_compressed").startswith("--")
    assert available("innodb", "lz4", "mysql") and not available("innodb", "snappy", "mysql")


def _t(path, db, table, current, results, role="tablespace", current_codec="none"):
    t = Target(path, "innodb", current, 2 * current, current_codec=current_codec,
               primary_model="innodb_page_compressed", info={"database": db, "table": table, "role": role})
    t.results = [_r(c, "innodb_page_compressed", size, dec) for c, size, dec in results]
    return t


def test_advice_scope_tables_only():
    """Never the system tablespace, undo, the server's schemas or FULLTEXT auxiliary tables."""
    res = [("zlib:6", 400, 300), ("lz4", 600, 2000)]
    ts = [_t("ibdata1", None, "ibdata1", 1000, res, role="system_tablespace"),
          _t("mysql/innodb_index_stats.ibd", "mysql", "innodb_index_stats", 1000, res),
          _t("sys/x.ibd", "SYS", "x", 1000, res),
          _t("inno/FTS_0000000000000007_0000000000000011_INDEX_1.ibd", "inno",
             "FTS_0000000000000007_0000000000000011_INDEX_1", 1000, res),
          _t("db/t.ibd", "db", "t", 1000, res)]
    adv = advise(ts)
    assert {a["target"] for a in adv} == {"db/t.ibd"}


def test_advice_one_entry_per_table_partitions_summed():
    parts = [_t(f"db/p#P#p{i}.ibd", "db", "p", 1000, [("zlib:6", 400, 300), ("lz4", 600, 2000)]) for i in range(3)]
    adv = advise(parts)
    assert [a["choice"] for a in adv] == ["smallest", "fastest_decode_within_5pct"] or \
        [a["choice"] for a in adv] == ["smallest, fastest_decode_within_5pct"]
    a = adv[0]
    assert a["target"] == "db.p" and a["current_bytes"] == 3000 and a["projected_bytes"] == 1200
    assert a["files"] == sorted(t.target for t in parts)
    assert len({x["ddl"] for x in adv}) == len(adv)          # one DDL per recommendation, not per partition


def test_advice_same_codec_once_no_negative_no_current():
    # the smallest also decodes fastest: one line
    one = advise([_t("db/a.ibd", "db", "a", 1000, [("zlib:6", 400, 3000), ("lz4", 600, 2000)])])
    assert [(a["codec"], a["choice"]) for a in one] == [("zlib:6", "smallest, fastest_decode_within_5pct")]
    # no saving beyond the interval: nothing
    assert advise([_t("db/b.ibd", "db", "b", 1000, [("zlib:6", 995, 300)])]) == []
    # the codec the table already has is not advice (its 'saving' is free / unwritten space)
    assert advise([_t("db/c.ibd", "db", "c", 1000, [("none", 700, 5000)])]) == []
    assert advise([_t("db/d.ibd", "db", "d", 1000, [("zlib:6", 700, 300)], current_codec="zlib:6")]) == []


def test_advice_tie_within_error():
    t = _t("db/e.ibd", "db", "e", 1000, [("zlib:6", 400, 300), ("lzma:6", 402, 60)])
    (a,) = [x for x in advise([t]) if "smallest" in x["choice"]]
    assert a["codec"] == "zlib:6" and a["verdict"].startswith("tie within error with lzma:6")


def test_tie_names_the_sample_that_would_separate():
    from dbxray.compress.advisor import separating_sample
    from dbxray.compress.estimate import Estimate

    def est(p, half, n=50, total=1000):
        return Estimate(p, p - half, p + half, 1.0, 20, n, total)
    # half-widths 10 + 10 at 50 of 1000 units, 5 apart: 4x narrower needed, sqrt(1/n - 1/N) / 4
    need = separating_sample(est(400, 10), est(405, 10))
    r = 5 / 20
    assert need == -(-1 // (r * r * (1 / 50 - 1 / 1000) + 1 / 1000))
    assert 50 < need < 1000
    # the wider the sample the narrower the interval: the sample found really separates them
    shrink = ((1 / need - 1 / 1000) / (1 / 50 - 1 / 1000)) ** 0.5
    assert 20 * shrink <= 5 + 1e-9
    assert separating_sample(est(400, 10), est(400, 10)) is None          # the same size: nothing separates
    assert separating_sample(est(400, 100), est(401, 100)) == 1000        # only every unit
    t = _t("db/e.ibd", "db", "e", 1000, [("zlib:6", 400, 300), ("lzma:6", 402, 60)])
    (a,) = [x for x in advise([t]) if "smallest" in x["choice"]]
    assert a["separating_units"] is not None and str(a["separating_units"]) in a["verdict"].replace(",", "") \
        or "--sample all" in a["verdict"]
