#!/usr/bin/env bash
# Builds the .deb from a build tree, unpacks it into an empty root and checks what a desktop and
# a shell get from it: the tools run from there and find their resources beside themselves (not
# in the source tree), the desktop file, AppStream metainfo, MIME types, icons, man pages and
# bash completion are installed and valid.
#   test_deb.sh BUILD_DIR CPACK
set -euo pipefail
build=$(cd "$1" && pwd)
cpack=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

(cd "$work" && "$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$work/pkg" > cpack.log) ||
    { cat "$work/cpack.log"; fail "cpack -G DEB"; }
deb=$(ls "$work"/pkg/*.deb)
info=$(dpkg-deb --info "$deb")
for dep in libqt6widgets6 libqt6svg6 libsqlite3-0; do
    [[ $info == *"Depends: "*"$dep"* ]] || fail "the package does not depend on $dep: $info"
done
dpkg-deb -x "$deb" "$work/root"
usr=$work/root/usr
for f in bin/tmmu bin/tmmu-studio share/applications/tmmu-studio.desktop \
         share/metainfo/tmmu-studio.metainfo.xml share/mime/packages/tmmu-studio.xml \
         share/icons/hicolor/scalable/apps/tmmu-studio.svg share/man/man1/tmmu.1 \
         share/man/man1/tmmu-studio.1 share/bash-completion/completions/tmmu \
         share/bash-completion/completions/tmmu-studio share/tmmu/models/gpt2-small.json \
         share/tmmu/docs/outputs.md share/tmmu/docs/user-guide.md \
         share/tmmu/docs/guide/window.png; do
    [ -e "$usr/$f" ] || fail "the package lacks /usr/$f"
done
for size in 16 24 32 48 64 128 256; do
    png=$usr/share/icons/hicolor/${size}x${size}/apps/tmmu-studio.png
    [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ] || fail "$png is not a PNG"
done

# The installed tools, run from the unpacked root: resources found beside the binary.
unset TMMU_RESOURCES
version=$("$usr/bin/tmmu" --version)
[ "${version#tmmu }" = "$("$usr/bin/tmmu-studio" --version | sed 's/^tmmu-studio //')" ] ||
    fail "tmmu and tmmu-studio disagree on the version"
# Captured first: grep -q stops reading at the match, and a help text longer than one stdio
# buffer (4 KiB) would then die of SIGPIPE under pipefail.
help=$("$usr/bin/tmmu-studio" --help)
grep -q -- "--open-session" <<< "$help" || fail "tmmu-studio --help"
summary=$("$usr/bin/tmmu" plan --mode inference --batch 1 --seq 64)
echo "$summary" | grep -q "^model      $usr/share/tmmu/models/gpt2-small.json" ||
    fail "the installed tmmu did not plan its own bundled model: $summary"

# A session exported as JSON opens in the installed studio (what a file manager runs for it).
"$usr/bin/tmmu" plan --mode inference --batch 1 --seq 64 --record --sessions "$work/s.db" \
    > /dev/null
"$usr/bin/tmmu" export 1 --format json --sessions "$work/s.db" --out "$work/session.json"
QT_QPA_PLATFORM=offscreen "$usr/bin/tmmu-studio" "$work/session.json" \
    --screenshot "$work/session.png" 2> "$work/studio.log" ||
    { cat "$work/studio.log"; fail "the installed studio did not open an exported session"; }
[ -s "$work/session.png" ] || fail "no screenshot of the exported session"

# Desktop integration files validate.
appstreamcli validate --no-net "$usr/share/metainfo/tmmu-studio.metainfo.xml" > /dev/null ||
    fail "appstreamcli validate"
desktop-file-validate "$usr/share/applications/tmmu-studio.desktop" || fail "desktop file"
update-mime-database "$usr/share/mime" > /dev/null
for type in application/x-tmmu-ir+json text/x-tmmu-offsets+csv application/x-tmmu-session+json \
            application/x-tmmu-lazy-program+json application/x-onnx; do
    grep -qx "$type" "$usr/share/mime/types" || fail "MIME type $type not registered"
    grep -q "$type" "$usr/share/applications/tmmu-studio.desktop" || fail "desktop file lacks $type"
done

# Man pages render without warnings and name every command; completion offers every command.
commands=$("$usr/bin/tmmu" --help | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p' | sort -u)
[ -n "$commands" ] || fail "no commands in tmmu --help"
for page in tmmu tmmu-studio; do
    warnings=$(man --warnings -l "$usr/share/man/man1/$page.1" 2>&1 > /dev/null)
    [ -z "$warnings" ] || fail "man page $page: $warnings"
done
page=$(MANWIDTH=200 man -l "$usr/share/man/man1/tmmu.1" 2> /dev/null)
for c in $commands; do
    echo "$page" | grep -qE "^ {7}$c( |$)" || fail "tmmu.1 does not describe '$c'"
    got=$(bash -c 'source "$1"; COMP_WORDS=("$2" "${3:0:3}"); COMP_CWORD=1; _tmmu; echo "${COMPREPLY[@]}"' \
          _ "$usr/share/bash-completion/completions/tmmu" "$usr/bin/tmmu" "$c")
    [[ " $got " == *" $c "* ]] || fail "completion of '${c:0:3}' lacks $c (got: $got)"
done
echo "package $(basename "$deb") ok: $version, $(echo $commands | wc -w) commands"
