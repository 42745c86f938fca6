#!/bin/sh
# Measures issue 35's figures, whole process, interleaved round by round:
# `perfkit decompress -T 2` on a seekable file beside `zstd -d` on the same
# file; on pzstd's own output beside `pzstd -d -p 2`; `--range` of 1 MiB in
# the middle beside a full decompression; and the size cost of
# `--seekable` at the default frame size beside a single frame. Every
# output goes to /dev/null. Prints the median wall and CPU (user + sys)
# time and peak RSS of each case, and the ratios.
#
# Usage: parallel.sh PERFKIT [WORKDIR] [ROUNDS]
#   WORKDIR keeps the 1 GiB input (a tar of /usr/lib and /usr/share cut to
#   1 GiB) and its compressed forms between runs (default ./zstd-parallel).
#   Needs zstd, pzstd and GNU time (/usr/bin/time).
set -eu
pk=$1; work=${2:-zstd-parallel}; rounds=${3:-5}
mkdir -p "$work"; cd "$work"
if [ ! -s in ]; then
    tar -cf - /usr/lib /usr/share 2>/dev/null | head -c 1073741824 > in || true
fi
[ "$(stat -c %s in)" -eq 1073741824 ] || { echo "in: not 1 GiB" >&2; exit 1; }
[ -s seek.zst ] || "$pk" compress -q -3 --seekable -T 2 in -o seek.zst
[ -s one.zst ] || "$pk" compress -q -3 in -o one.zst
[ -s in.pzst ] || pzstd -q -3 -p 2 in -o in.pzst

# run NAME COMMAND...: one timed run, appended to NAME.times as
# "wall_s cpu_s rss_kib" (wall from the shell's nanosecond clock: GNU
# time's is in hundredths; CPU is user + sys, in hundredths).
run() {
    name=$1; shift
    t0=$(date +%s%N)
    /usr/bin/time -f '%U %S %M' -o t.out "$@" > /dev/null 2> err.out || {
        echo "$name failed:" >&2; cat err.out >&2; exit 1; }
    t1=$(date +%s%N)
    awk -v us=$(( (t1 - t0) / 1000 )) '{ printf "%.4f %.2f %s\n", us / 1e6, $1 + $2, $3 }' \
        t.out >> "$name.times"
}
rm -f ./*.times
i=0
while [ "$i" -lt "$rounds" ]; do
    run zstd_d zstd -q -d -c seek.zst
    run perfkit_T2 "$pk" decompress -T 2 -c seek.zst
    run pzstd_p2 pzstd -q -d -p 2 -c in.pzst
    run perfkit_T2_pzst "$pk" decompress -T 2 -c in.pzst
    run perfkit_full "$pk" decompress -c seek.zst
    run perfkit_range "$pk" decompress -v --range 512M..513M -c seek.zst
    i=$((i + 1))
done
# The compressed bytes a range read, from its -v line.
read_bytes=$(sed -n 's/.*, \([0-9]*\) bytes of the file read/\1/p' err.out)

# median NAME COLUMN
median() {
    cut -d' ' -f"$2" "$1.times" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
printf '%-16s %8s %8s %10s   (median of %s, interleaved)\n' case wall_s cpu_s rss_MiB "$rounds"
for n in zstd_d perfkit_T2 pzstd_p2 perfkit_T2_pzst perfkit_full perfkit_range; do
    printf '%-16s %8s %8s %10s\n' "$n" "$(median $n 1)" "$(median $n 2)" \
        "$(median $n 3 | awk '{ printf "%.0f", $1 / 1024 }')"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "perfkit -T 2 vs zstd -d (seekable file, wall): $(ratio "$(median zstd_d 1)" "$(median perfkit_T2 1)")x faster"
echo "perfkit -T 2 vs pzstd -d -p 2 (pzstd's output, wall): $(ratio "$(median pzstd_p2 1)" "$(median perfkit_T2_pzst 1)")x faster"
echo "--range 1 MiB vs full decompression (wall): 1/$(ratio "$(median perfkit_full 1)" "$(median perfkit_range 1)")"
echo "--range 1 MiB read ${read_bytes:-?} bytes of $(stat -c %s seek.zst)"
echo "--seekable size: $(stat -c %s seek.zst) bytes vs $(stat -c %s one.zst) as one frame:" \
    "+$(awk -v a="$(stat -c %s seek.zst)" -v b="$(stat -c %s one.zst)" 'BEGIN { printf "%.2f", (a / b - 1) * 100 }') %"
