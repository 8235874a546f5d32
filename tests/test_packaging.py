"""The installed names: dbxray installs as the ``dbxray`` namespace only.

The folders app/, parsers/, compress/, viz/, resources/ stay at the top of the
repository and install as dbxray.app, dbxray.parsers, ...: another installed
package called ``app`` (a common name) neither breaks dbxray nor is shadowed by it.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TOP = ("app", "parsers", "compress", "viz", "resources")


def test_every_package_folder_is_installed_under_dbxray():
    conf = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(conf["packages"])
    on_disk = {"dbxray." + str(p.parent.relative_to(REPO)).replace(os.sep, ".")
               for top in TOP for p in (REPO / top).rglob("__init__.py")}
    assert listed == on_disk
    assert conf["package-dir"] == {f"dbxray.{t}": t for t in TOP}


def test_no_module_imports_the_old_top_level_names():
    bad = []
    for top in TOP + ("tests", "packaging"):
        for p in (REPO / top).rglob("*.py"):
            for n, line in enumerate(p.read_text().splitlines(), 1):
                s = line.strip()
                if s.startswith(("from ", "import ")) and s.split()[1].split(".")[0] in TOP:
                    bad.append(f"{p.relative_to(REPO)}:{n}: {s}")
    assert bad == []


def _fresh_venv(where: Path) -> Path:
    """A new venv whose only extra path is this interpreter's site-packages for the
    dependencies (Qt, numpy, ...): a path line, so that the .pth files there (the
    repository's own editable install among them) are not run."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    py = where / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "zz_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return py


def _other_app(where: Path) -> Path:
    """A tiny project that installs a top-level package named ``app``."""
    proj = where / "other-app"
    (proj / "app").mkdir(parents=True)
    (proj / "app" / "__init__.py").write_text('WHO = "the other app"\n')
    (proj / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "other-app"\nversion = "1.0"\n[tool.setuptools]\npackages = ["app"]\n')
    return proj


@pytest.mark.parametrize("editable", [False, True], ids=["wheel", "editable"])
def test_installed_beside_a_package_named_app(tmp_path, fixtures_root, editable):
    py = _fresh_venv(tmp_path / "venv")
    pip = [str(py), "-m", "pip", "install", "-q", "--no-deps", "--disable-pip-version-check"]
    subprocess.run([*pip, str(_other_app(tmp_path))], check=True, cwd=tmp_path)
    subprocess.run([*pip, *(["-e"] if editable else []), str(REPO)], check=True, cwd=tmp_path)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    env.pop("PYTHONPATH", None)
    who = subprocess.run([str(py), "-c", "import app, dbxray.app as d; print(app.WHO); print(d.__file__)"],
                         capture_output=True, text=True, check=True, cwd=tmp_path, env=env).stdout.split("\n")
    assert who[0] == "the other app"
    where = Path(who[1]).resolve()
    if editable:
        assert where == REPO / "app" / "__init__.py"
    else:
        assert str(where).startswith(str((tmp_path / "venv").resolve()))
    res = subprocess.run([str(tmp_path / "venv" / "bin" / "dbxray"), "scan",
                          str(fixtures_root / "innodb" / "16k"), "--json"],
                         capture_output=True, text=True, cwd=tmp_path, env=env)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["engines"] == ["innodb", "server"] and len(data["files"]) > 10     # .frm files: server
