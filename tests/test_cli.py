"""`dbxray scan`: JSON contract, schema, exit codes, output files."""
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from dbxray.app.cli import main

REPO = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((REPO / "resources" / "scan.schema.json").read_text())


def run_json(capsys, path):
    rc = main(["scan", str(path), "--json", "--no-progress"])
    out = capsys.readouterr().out
    return rc, json.loads(out)


def test_scan_json_16k_equals_manifest(sparse_fixtures, capsys):
    rc, data = run_json(capsys, sparse_fixtures / "innodb" / "16k")
    assert rc == 0
    jsonschema.validate(data, SCHEMA)
    assert data["tool"] == "dbxray" and data["schema_version"] == 1
    assert data["root"] == str(sparse_fixtures / "innodb" / "16k")
    assert "innodb" in data["engines"]
    man = json.loads((sparse_fixtures / "innodb" / "manifest.json").read_text())
    expected = {f["path"][len("16k/"):]: f for f in man["files"] if f["path"].startswith("16k/")}
    got = {f["path"]: f for f in data["files"]}
    assert set(got) == set(expected)
    for path, m in expected.items():
        g = got[path]
        assert g["apparent_bytes"] == m["apparent_size"], path
        assert g["allocated_bytes"] == m.get("copy_allocated_bytes", m["allocated_bytes"]), path
        assert g["holes"] == m["holes"], path


@pytest.mark.parametrize("folder", ["innodb/datadir16k", "innodb-public", "innodb-mysql", "clickhouse/datadir",
                                    "tokudb/datadir", "tokudb/public"])
def test_scan_json_validates_for_every_fixture_folder(sparse_fixtures, capsys, folder):
    rc, data = run_json(capsys, sparse_fixtures / folder)
    assert rc == 0
    jsonschema.validate(data, SCHEMA)
    assert data["files"]


def test_scan_human_table(sparse_fixtures, capsys):
    rc = main(["scan", str(sparse_fixtures / "innodb" / "16k"), "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "fx/t_pc_zlib.ibd" in out and "innodb" in out and "allocated" in out
    assert "148.0 KiB" in out   # t_pc_zlib: 151552 bytes allocated after re-punching


def test_scan_output_file(sparse_fixtures, tmp_path, capsys):
    out = tmp_path / "scan.dbxray.json"
    rc = main(["scan", str(sparse_fixtures / "tokudb" / "datadir"), "-o", str(out), "--no-progress"])
    assert rc == 0 and capsys.readouterr().out == ""
    data = json.loads(out.read_text())
    jsonschema.validate(data, SCHEMA)
    assert "tokudb" in data["engines"]


def test_exit_code_missing_path(tmp_path, capsys):
    assert main(["scan", str(tmp_path / "nope")]) == 1
    assert "nope" in capsys.readouterr().err


def test_exit_code_bad_usage(capsys):
    with pytest.raises(SystemExit) as e:
        main(["scan"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main(["scan", ".", "--bogus"])
    assert e.value.code == 2


def test_gui_mode_missing_path_exit_1(tmp_path, capsys):
    assert main([str(tmp_path / "nope")]) == 1


def test_console_script_runs(sparse_fixtures, tmp_path):
    """The installed entry point, as a user types it."""
    exe = Path(sys.executable).parent / "dbxray"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "dbxray.app"]
    r = subprocess.run(cmd + ["scan", str(sparse_fixtures / "innodb" / "4k"), "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert {f["path"] for f in data["files"]} >= {"fx/t4_dynamic.ibd", "fx/t4_pc_zlib.ibd"}
    r = subprocess.run(cmd + ["scan", str(tmp_path / "missing")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "missing" in r.stderr


def test_scan_writes_nothing_near_the_data(sparse_fixtures, tmp_path, capsys):
    root = sparse_fixtures / "innodb" / "64k"
    before = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}
    main(["scan", str(root), "--json", "--no-progress"])
    capsys.readouterr()
    after = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}
    assert before == after


@pytest.mark.parametrize("columns", ["50", "120"])
def test_help_is_laid_out_at_the_terminal_width_as_argparse_does(columns, monkeypatch, capsys):
    """app/cli.py's help formatter finds the width as shutil.get_terminal_size does (COLUMNS),
    so every command's help is argparse's own layout."""
    import argparse
    import shutil

    from dbxray.app.cli import SUBCOMMAND_MODULES, build_parser
    monkeypatch.setenv("COLUMNS", columns)
    for command in ["scan", *SUBCOMMAND_MODULES]:
        with pytest.raises(SystemExit):
            main([command, "--help"])
        ours = capsys.readouterr().out
        assert ours.startswith(f"usage: dbxray {command}")
        # the same text argparse's own HelpFormatter (which asks shutil) lays out
        parser = build_parser(command)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
        sub.formatter_class = argparse.HelpFormatter
        assert shutil.get_terminal_size().columns == int(columns)
        assert sub.format_help() == ours
