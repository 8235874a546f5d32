#!/usr/bin/env bash
# Build the one-folder bundle into dist/dbxray and smoke-test it headless.
#   packaging/build.sh            (needs: pip install -e '.[build]')
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
export PYINSTALLER_CONFIG_DIR="$PWD/.pyi-cache"
$PY -m PyInstaller --noconfirm --clean --log-level WARN --distpath dist --workpath build packaging/dbxray.spec
du -sh dist/dbxray
# smoke test: the frozen app renders the demo to a PNG without a display
out=$(mktemp -d)/bundle.png
QT_QPA_PLATFORM=offscreen XDG_CACHE_HOME="$(dirname "$out")/cache" dist/dbxray/dbxray --screenshot "$out"
$PY - "$out" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000, "bundle screenshot is not a PNG"
print(f"bundle screenshot OK: {sys.argv[1]} ({len(data)} bytes)")
PY
# the headless commands of the frozen app: scan and what-if of the embedded demo (every engine)
demo=$(ls -d "$(dirname "$out")"/cache/dbxray/demo/*/data | head -1)     # the copy the screenshot run made
QT_QPA_PLATFORM=offscreen dist/dbxray/dbxray scan "$demo" --json --no-progress -o "$(dirname "$out")/scan.json"
QT_QPA_PLATFORM=offscreen dist/dbxray/dbxray whatif "$demo" --json --seed 1 --codec zstd:3 -o "$(dirname "$out")/whatif.json"
$PY - "$(dirname "$out")" <<'PY'
import json, sys
scan = json.load(open(f"{sys.argv[1]}/scan.json"))
whatif = json.load(open(f"{sys.argv[1]}/whatif.json"))
# the demo's engines (MyRocks with its tables' .frm files since 2026-11-24), in registry order
assert scan["engines"] == ["innodb", "clickhouse", "tokudb", "rocksdb", "server"], scan["engines"]
assert {t["engine"] for t in whatif["targets"]} == {"innodb", "clickhouse", "tokudb", "rocksdb"}, whatif.get("errors")
print(f"bundle scan and whatif OK: {len(scan['files'])} files, {len(whatif['targets'])} targets")
PY
