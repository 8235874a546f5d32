#!/usr/bin/env bash
# The README's Debian package lists for the window, checked on a bare Debian 12 (issue 21).
#
#   sudo packaging/check_bare_debian12.sh [WORKDIR]        (default /tmp/dbxray-deb12)
#
# Needs root, debootstrap, Xvfb and ImageMagick's `import` on this machine and network access
# to deb.debian.org.  Takes 4-7 minutes (debootstrap ~3 min the first time; its root is
# kept in WORKDIR/base and copied for each run).  Not run by CI for that reason.
#
# 1. A minimal bookworm root: `debootstrap --variant=minbase bookworm`.
# 2. Inside it (chroot, /proc and /dev mounted): python3, python3-venv and the README's first
#    list (the Qt libraries); dbxray and its requirements from wheels built here
#    (`pip wheel .`), installed with --no-index: the chroot never reaches PyPI.
# 3. `dbxray` with QT_QPA_PLATFORM=xcb on an Xvfb display of this machine (its socket
#    bind-mounted): it must refuse to start and name exactly the libraries `ldd` finds missing
#    for Qt's xcb plugin, with their packages (Qt's own message is printed beside it).
# 4. The README's second list (the X11 libraries) installed: `dbxray` must open its window
#    (its state dump, DBXRAY_STATE_DUMP, shows the demo's views; a screenshot of the display
#    is written to WORKDIR/window.png), `ldd` must find every library of the xcb platform
#    plugin and its GL integrations, and every package of the list must hold one of them.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
WORK=${1:-/tmp/dbxray-deb12}
BASE=$WORK/base
R=$WORK/root
PY=${PY:-$REPO/.venv/bin/python}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
QT=/opt/venv/lib/python3.11/site-packages/PySide6/Qt

[ "$(id -u)" -eq 0 ] || { echo "run as root (debootstrap, chroot, mounts)" >&2; exit 2; }
for t in debootstrap Xvfb import; do
  command -v $t >/dev/null || { echo "needs $t (apt-get install debootstrap xvfb imagemagick)" >&2; exit 2; }
done
mkdir -p "$WORK"

# the README's lists: the first two `apt-get install ...` of its "Install and run" section
read -r LIST_QT LIST_X11 < <("$PY" - "$REPO/README.md" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
sec = text.split("## Install and run", 1)[1].split("\n## ", 1)[0]
lists = re.findall(r"`apt-get install ([^`]+)`", sec)
assert len(lists) >= 2, lists
print(",".join(lists[0].split()), ",".join(lists[1].split()))
PY
)
LIST_QT=${LIST_QT//,/ }
LIST_X11=${LIST_X11//,/ }
echo "README, the Qt libraries: $LIST_QT"
echo "README, the X11 libraries: $LIST_X11"

XPID=""
cleanup() {
  for m in tmp/.X11-unix dev/pts dev proc; do
    mountpoint -q "$R/$m" 2>/dev/null && umount -l "$R/$m" || true
  done
  [ -n "$XPID" ] && kill "$XPID" 2>/dev/null || true
}
trap cleanup EXIT

if [ ! -x "$BASE/usr/bin/apt-get" ]; then
  rm -rf "$BASE"
  debootstrap --variant=minbase bookworm "$BASE" "$MIRROR" > "$WORK/debootstrap.log"
fi
for m in tmp/.X11-unix dev/pts dev proc; do             # never copy a root with mounts in it
  if mountpoint -q "$R/$m" 2>/dev/null; then umount -l "$R/$m"; fi
done
rm -rf "$R"
cp -a "$BASE" "$R"
cp /etc/resolv.conf "$R/etc/resolv.conf"
mount -t proc proc "$R/proc"
mount --bind /dev "$R/dev"
mount --bind /dev/pts "$R/dev/pts"

in_root() { chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
  DEBIAN_FRONTEND=noninteractive "$@"; }

echo "== apt: python3 python3-venv + the Qt libraries"
in_root apt-get update -qq
in_root apt-get install -y -qq --no-install-recommends python3 python3-venv $LIST_QT > "$WORK/apt-qt.log"

echo "== dbxray and its requirements from wheels built here"
rm -rf "$WORK/wheels"
"$PY" -m pip wheel -q -w "$WORK/wheels" "$REPO"
mkdir -p "$R/opt/wheels"
cp "$WORK"/wheels/*.whl "$R/opt/wheels/"
in_root python3 -m venv /opt/venv
in_root /opt/venv/bin/pip install -q --no-index --find-links /opt/wheels dbxray

# an X server of this machine, its socket seen inside the root
N=$(for n in $(seq 90 160); do [ -e /tmp/.X11-unix/X$n ] || [ -e /tmp/.X$n-lock ] || { echo $n; break; }; done)
Xvfb ":$N" -screen 0 1400x900x24 -nolisten tcp -ac > "$WORK/xvfb.log" 2>&1 &
XPID=$!
for _ in $(seq 100); do [ -e /tmp/.X11-unix/X$N ] && break; sleep 0.1; done
mkdir -p "$R/tmp/.X11-unix"
mount --bind /tmp/.X11-unix "$R/tmp/.X11-unix"

run_app() {   # seconds, then the app's own arguments
  local secs=$1; shift
  in_root DISPLAY=":$N" QT_QPA_PLATFORM=xcb DBXRAY_STATE_DUMP=/tmp/state.json timeout "$secs" /opt/venv/bin/dbxray "$@"
}
missing_by_ldd() {
  in_root sh -c "ldd $QT/plugins/platforms/libqxcb.so $QT/plugins/xcbglintegrations/*.so" \
    | awk '/not found/ {print $1}' | sort -u
}

echo "== 1. the window with only the Qt libraries"
set +e
msg=$(run_app 60 2>&1)
rc=$?
qt_msg=$(in_root DISPLAY=":$N" QT_QPA_PLATFORM=xcb timeout 60 /opt/venv/bin/python -c \
  "from PySide6.QtWidgets import QApplication; QApplication([])" 2>&1 | grep -v '^$' | head -5)
set -e
echo "dbxray (exit $rc): $msg"
echo "Qt alone says: $qt_msg"
ldd_missing=$(missing_by_ldd)
named=$(printf '%s\n' "$msg" | head -1 | sed 's/.*missing: //' | tr ',' '\n' | tr -d ' ' | sort -u)
echo "ldd: missing $(echo $ldd_missing)"
[ "$rc" -eq 1 ] || { echo "FAIL: dbxray should refuse to start (exit 1), it exited $rc" >&2; exit 1; }
[ -n "$ldd_missing" ] || { echo "FAIL: nothing missing: the first list already holds the X11 libraries" >&2; exit 1; }
if [ "$named" != "$ldd_missing" ]; then
  echo "FAIL: dbxray names [$(echo $named)], ldd finds [$(echo $ldd_missing)] missing" >&2; exit 1
fi
# the packages the message names are the ones holding those libraries (checked after step 2)
named_pkgs=$(printf '%s\n' "$msg" | sed -n 's/.*apt-get install //p')

echo "== 2. the X11 libraries of the README"
in_root apt-get install -y -qq --no-install-recommends $LIST_X11 > "$WORK/apt-x11.log"
left=$(missing_by_ldd)
[ -z "$left" ] || { echo "FAIL: still missing after the README's lists: $(echo $left)" >&2; exit 1; }
for p in $named_pkgs; do
  in_root dpkg -s "$p" >/dev/null 2>&1 || { echo "FAIL: dbxray named $p, which is not installed now" >&2; exit 1; }
done
for so in $ldd_missing; do
  owner=$(in_root dpkg -S "*/$so" 2>/dev/null | head -1 | cut -d: -f1 || true)
  case " $named_pkgs " in *" $owner "*) ;; *) echo "FAIL: $so is in $owner, dbxray named [$named_pkgs]" >&2; exit 1;; esac
done
# every package of the list holds a library the xcb plugin or its GL integrations load
closure=$(in_root sh -c "ldd $QT/plugins/platforms/libqxcb.so $QT/plugins/xcbglintegrations/*.so" \
  | awk '/=> \// && $3 !~ /^\/opt\// {print $3}' | sort -u)      # the system's, not Qt's own
owners=$(for f in $closure; do in_root dpkg -S "$(in_root readlink -f "$f")" 2>/dev/null | cut -d: -f1 || true; done \
  | sort -u)
for p in $LIST_X11; do
  echo "$owners" | grep -qx "$p" || { echo "FAIL: $p is in the README's list but holds no library the xcb plugin loads" >&2; exit 1; }
done
x11_needed=$(echo "$owners" | grep -E '^lib(x11|xcb|xkbcommon)' || true)
for p in $x11_needed; do
  case " $LIST_QT $LIST_X11 " in *" $p "*) ;; *) echo "FAIL: the xcb plugin loads a library of $p, not in the README's lists" >&2; exit 1;; esac
done

rm -f "$R/tmp/state.json"
set +e
run_app 45 > "$WORK/app.log" 2>&1 &
APP=$!
set -e
ok=""
for _ in $(seq 200); do
  if [ -s "$R/tmp/state.json" ] && grep -q '"busy": false' "$R/tmp/state.json" \
     && grep -q '"What if"' "$R/tmp/state.json"; then ok=1; break; fi
  sleep 0.2
done
sleep 2
DISPLAY=":$N" import -window root "$WORK/window.png" || true
kill "$APP" 2>/dev/null || true
wait "$APP" 2>/dev/null || true
[ -n "$ok" ] || { echo "FAIL: the window did not open:" >&2; cat "$WORK/app.log" >&2; exit 1; }
"$PY" - "$R/tmp/state.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"the window: {s['size'][0]}x{s['size'][1]}, {s['title']!r}, views {', '.join(s['tabs'])}")
PY
echo "stderr of the window: $(wc -l < "$WORK/app.log") lines"; head -5 "$WORK/app.log"
echo "screenshot: $WORK/window.png"
echo "OK: on a bare Debian 12 the README's two lists are what the window needs, and dbxray names what is missing"
