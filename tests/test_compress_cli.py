"""``dbxray whatif``: options, outputs and exit codes (0 ok, 1 unreadable path, 2 bad usage)."""
import json

import pytest

from dbxray.app.cli import main


@pytest.fixture(scope="module")
def t_dynamic(sparse_fixtures):
    return str(sparse_fixtures / "innodb" / "16k" / "fx" / "t_dynamic.ibd")


def test_json_to_stdout(t_dynamic, capsys):
    rc = main(["whatif", t_dynamic, "--codec", "zlib:6", "--codec", "lz4", "--sample", "all", "--json",
               "--fs-block", "4096", "--no-raw", "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 0
    res = json.loads(out)
    assert res["kind"] == "whatif" and res["fs_block"] == 4096 and res["sample"]["mode"] == "all"
    t = res["targets"][0]
    assert {r["codec"] for r in t["results"]} >= {"zlib:6", "lz4"}


def test_human_table_and_output_file(t_dynamic, tmp_path, capsys):
    rc = main(["whatif", t_dynamic, "--codec", "zstd:3", "--sample", "0.5", "--seed", "4", "--no-raw",
               "--target-error", "5%"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "zstd:3" in out and "innodb_page_compressed" in out and "95% CI" in out and "seed 4" in out
    dest = tmp_path / "w.json"
    assert main(["whatif", t_dynamic, "--codec", "lz4", "-o", str(dest), "--no-raw"]) == 0
    assert json.loads(dest.read_text())["targets"]


@pytest.mark.parametrize("argv", [["--codec", "zstd:99"], ["--codec", "gzip"], ["--sample", "2"],
                                  ["--sample", "x"], ["--target-error", "150%"], ["--fs-block", "1000"]])
def test_bad_usage_exits_2(t_dynamic, argv, capsys):
    assert main(["whatif", t_dynamic, *argv]) == 2
    assert "dbxray whatif" in capsys.readouterr().err


def test_unreadable_path_exits_1(tmp_path, capsys):
    assert main(["whatif", str(tmp_path / "nope")]) == 1
    assert "no such file" in capsys.readouterr().err
