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
    assert adv["current"]["codec"] == "none" and adv["current"]["saving_bytes"] == 0
    assert adv["smallest"]["saving_bytes"] == 610
    assert adv["smallest"]["ddl"] == ("SET GLOBAL innodb_compression_algorithm='lzma'; "
                                      "ALTER TABLE `fx`.`t` PAGE_COMPRESSED=1 PAGE_COMPRESSION_LEVEL=6;")
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
