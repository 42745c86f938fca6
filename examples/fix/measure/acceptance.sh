#!/bin/sh
# Runs QuickFIX's own acceptance suite (its Ruby runner and the
# definitions of test/definitions/server/) against `perfkit fix acceptor`
# with examples/fix/acceptance.cfg, and prints passed/failed per version.
#
# Usage: acceptance.sh PERFKIT QUICKFIX_SOURCE [PORT]
#   QUICKFIX_SOURCE: a QuickFIX/C++ source tree at v1.15.1 (test/ and spec/),
#   e.g. `git clone -b v1.15.1 https://github.com/quickfix/quickfix`.
#   Needs ruby. The XML reports are left in ./acceptance-<version>.xml.
set -eu
pk=$1; qf=$(cd "$2" && pwd); port=${3:-5611}
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(pwd)
work=$(mktemp -d)
trap 'kill $acc 2>/dev/null; rm -rf "$work"' EXIT
ln -s "$qf/spec" "$work/spec"
sed "s/^SocketAcceptPort=.*/SocketAcceptPort=$port/" "$here/acceptance.cfg" > "$work/at.cfg"
(cd "$work" && exec "$pk" fix acceptor at.cfg --app echo 2>"$work/acceptor.err") &
acc=$!
sleep 1
cd "$qf/test"
for v in fix42 fix44 fix50sp2; do
    ruby -I. Runner.rb 127.0.0.1 "$port" definitions/server/$v/*.def > "$out/acceptance-$v.xml" || true
    echo "$v: $(grep -c "result='success'" "$out/acceptance-$v.xml") passed, $(grep -c "result='failure'" "$out/acceptance-$v.xml") failed"
done
