#!/bin/sh
# The CPU of a pipeline's busiest thread (its executor) and of the whole
# process, one decode each, interleaved round by round between binaries:
# task-clock samples at 5 kHz (perf record), counted per thread, medians
# and ranges in ms. Each binary is zstdblock's pipeline example
# (cargo build --release -p zstdblock --example pipeline), run as
# `pipeline --rss FILE 2 1` (a decode on 2 threads of the file read whole).
#
# Usage: busiest-thread.sh FILE.zst ROUNDS PIPELINE_BINARY...
# Needs perf and python3.
set -eu
file=$1; rounds=$2; shift 2
data=$(mktemp)
trap 'rm -f "$data"' EXIT
r=0
while [ "$r" -lt "$rounds" ]; do
    for bin in "$@"; do
        perf record -q -e task-clock -F 5000 -o "$data" "$bin" --rss "$file" 2 1 >/dev/null 2>&1
        tids=$(perf script -i "$data" -F tid 2>/dev/null | sort | uniq -c | sort -rn)
        top=$(echo "$tids" | head -1 | awk '{print $1}')
        all=$(echo "$tids" | awk '{s += $1} END {print s}')
        echo "$bin $top $all"
    done
    r=$((r + 1))
done | python3 -c '
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in sys.stdin:
    name, top, whole = line.split()
    runs[name].append((int(top) / 5, int(whole) / 5))
for name, v in runs.items():
    t = sorted(x[0] for x in v); a = sorted(x[1] for x in v)
    print(f"{name}: busiest thread {statistics.median(t):.1f} ms [{t[0]:.0f}-{t[-1]:.0f}], "
          f"process {statistics.median(a):.1f} ms [{a[0]:.0f}-{a[-1]:.0f}]")
'
