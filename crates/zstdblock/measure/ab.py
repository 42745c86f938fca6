#!/usr/bin/env python3
"""Two builds of perfkit (and zstd -d, and any other command) on one .zst
file, interleaved: N rounds, each side once per round, a fresh process
each run. Prints each side's median wall (perf_counter from fork to
wait4) with its range and its speed against the first side, the median
CPU (user + sys from wait4) and the median peak RSS.

usage: ab.py N GAP OUT FILE.zst LABEL=SIDE ...
  N      rounds
  GAP    seconds slept (untimed) before each run: 0 runs them back to
         back, 3 lets freed memory go back to the host first on a VM
         that reports free pages (see e2e.py)
  OUT    null (stdout to /dev/null) or file (a new file each run, the
         old one removed untimed)
  SIDE   `zstd` for `zstd -d`, or BIN or BIN:ARGS (default ARGS:
         `decompress -T2 --decoder=perfkit`), e.g.
         old=/tmp/pk-old new=target/release/perfkit T1=/tmp/pk-old:"decompress -T1"
"""
import os
import statistics
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    n, gap, out, path = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
    sides = []
    for spec in sys.argv[5:]:
        label, rest = spec.split("=", 1)
        binary, *args = rest.split(":", 1)
        sides.append((label, binary, args[0].split() if args else ["decompress", "-T2", "--decoder=perfkit"]))
    dst = os.path.join(os.path.dirname(os.path.abspath(path)), "ab-out.bin")
    runs = {label: [] for label, _, _ in sides}
    for _ in range(n):
        for label, binary, args in sides:
            if out == "file":
                if os.path.exists(dst):
                    os.unlink(dst)
                if binary == "zstd":
                    cmd = ["zstd", "-d", "-q", "-f", path, "-o", dst]
                else:
                    cmd = [binary, *args, "-q", "-f", path, "-o", dst]
            else:
                cmd = ["zstd", "-d", "-q", "-c", path] if binary == "zstd" else [binary, *args, "-c", path]
            if gap:
                time.sleep(gap)
            start = time.perf_counter()
            child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
            _, status, usage = os.wait4(child.pid, 0)
            wall = time.perf_counter() - start
            if status != 0:
                sys.exit(f"{' '.join(cmd)}: exit status {status}")
            runs[label].append((wall * 1e3, (usage.ru_utime + usage.ru_stime) * 1e3, usage.ru_maxrss / 1024))
    if os.path.exists(dst):
        os.unlink(dst)
    first = None
    for label, samples in runs.items():
        walls = [w for w, _, _ in samples]
        median = statistics.median(walls)
        first = first or median
        cpu = statistics.median(c for _, c, _ in samples)
        rss = statistics.median(r for _, _, r in samples)
        print(
            f"{os.path.basename(path):12} {out:4} {label:8} wall {median:6.1f} ms "
            f"[{min(walls):.1f}-{max(walls):.1f}] x{first / median:4.2f}  cpu {cpu:6.1f} ms  rss {rss:5.1f} MiB"
        )


if __name__ == "__main__":
    main()
