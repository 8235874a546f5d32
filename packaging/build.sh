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
