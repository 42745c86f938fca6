#!/usr/bin/env python3
"""End to end, one ordinary zstd frame: `zstd -d` beside `perfkit decompress
-T1` (libzstd), and `-T2` and `-T0` with `--decoder=perfkit` (the pipeline),
to a file and to /dev/null, N interleaved runs (each run every side in
turn), as docs/compress.md's table gives them.

Wall is the time from fork to wait4 (perf_counter); CPU is the child's user
+ sys from wait4's rusage (microseconds, where GNU time gives hundredths);
peak RSS from the same rusage. Prints the median and the range of each,
the load average before and after, and T2's wall ratios to zstd -d and -T1.

usage: e2e.py PERFKIT [-n RUNS] [--sides zstd,T1,T2,T0] [--outs file,null]
              [--work DIR] [--fresh] [--gap SECONDS] [--base OLD] [--copies]
              [FILE.zst ...]
--base OLD adds a side, `base`: another build's -T2, in the same rounds,
so a change to the pipeline is measured beside the build before it.
--copies adds a byte-for-byte copy of each build's -T2 (`copy`, and
`bcopy` with --base), so the same rounds give the spread of a build
against itself beside the change.
Without files, makes (once, kept in --work, default ./zstd-e2e) 64 MiB tars
of ~/.cargo/registry/src ("src") and /usr/lib/x86_64-linux-gnu's shared
libraries ("bin"), compresses each with the zstd CLI at -3 and -19, and
measures the four: src3.zst src19.zst bin3.zst bin19.zst.

Every side writes the same output file with -f, so by default each run
replaces the previous run's 64 MiB output, and freeing its page cache
(about 29 ms here, inside the rename or truncation that replaces it) is
part of the run. --fresh removes the output before each run, untimed, so
a run measures decoding into a new file, as `zstd -d F.zst` usually does.

Back to back, a run's fresh memory is often the memory the run before it
freed. On a VM whose balloon reports free pages to the host (this
machine's), memory left free for a couple of seconds is handed back and
costs a host fault per 4 KiB page when touched again, most of all as huge
pages. A user's one command meets that; a run right after another does
not. --gap sleeps that long (untimed) before each run, so each meets
memory as a lone command would.
"""
import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SIZE = 64 << 20


def make_inputs(work):
    os.makedirs(work, exist_ok=True)
    sources = {
        "src": ["tar", "-cf", "-", "-C", os.path.expanduser("~/.cargo/registry"), "src"],
        "bin": ["tar", "-cf", "-"] + sorted(glob.glob("/usr/lib/x86_64-linux-gnu/*.so*")),
    }
    files = []
    for name, cmd in sources.items():
        tar = os.path.join(work, name + ".tar")
        if not os.path.exists(tar) or os.path.getsize(tar) != SIZE:
            with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as p:
                data = p.stdout.read(SIZE)
                p.kill()
            if len(data) != SIZE:
                sys.exit(f"{name}: only {len(data)} bytes to tar, {SIZE} wanted")
            with open(tar, "wb") as f:
                f.write(data)
        for level in (3, 19):
            out = os.path.join(work, f"{name}{level}.zst")
            if not os.path.exists(out):
                subprocess.run(["zstd", "-q", f"-{level}", tar, "-o", out], check=True)
            files.append(out)
    return files


def argv(perfkit, side, path, out, out_file, builds):
    o = ["-o", out_file] if out == "file" else ["-c"]
    if side == "zstd":
        return ["zstd", "-q", "-d", "-f", path] + o
    if side in builds:
        perfkit, side = builds[side], "T2"
    # The pipeline runs only when asked for by name: by default one frame
    # goes to libzstd whatever -T says.
    pipeline = [] if side == "T1" else ["--decoder=perfkit"]
    return [perfkit, "decompress", "-q", "-f", "-" + side, *pipeline, path] + o


def run(cmd, fresh=None):
    if fresh and os.path.exists(fresh):
        os.remove(fresh)
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        fd = os.open("/dev/null", os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.execvp(cmd[0], cmd)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        sys.exit(f"{' '.join(cmd)}: exit status {status}")
    return wall * 1e3, (usage.ru_utime + usage.ru_stime) * 1e3, usage.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("perfkit")
    ap.add_argument("-n", type=int, default=5)
    ap.add_argument("--sides", default="zstd,T1,T2,T0")
    ap.add_argument("--outs", default="file,null")
    ap.add_argument("--work", default="zstd-e2e")
    ap.add_argument("--fresh", action="store_true",
                    help="remove the output file (untimed) before each run")
    ap.add_argument("--gap", type=float, default=0.0,
                    help="seconds to sleep (untimed) before each run")
    ap.add_argument("--base", help="another build, whose -T2 runs as the side `base`")
    ap.add_argument("--copies", action="store_true",
                    help="also run a copy of each build's -T2 (sides `copy`, `bcopy`)")
    ap.add_argument("files", nargs="*")
    a = ap.parse_intermixed_args()
    files = a.files or make_inputs(a.work)
    out_file = os.path.join(a.work if not a.files else ".", "e2e-out.bin")
    sides, outs = a.sides.split(","), a.outs.split(",")
    builds = {}
    if a.base:
        builds["base"] = a.base
    # Removed however the script ends: a failed run exits through sys.exit.
    copies = tempfile.TemporaryDirectory(prefix="e2e-copies-")
    if a.copies:
        for side, build in [("copy", a.perfkit), ("bcopy", a.base)]:
            if build:
                builds[side] = shutil.copy2(build, os.path.join(copies.name, side))
    sides += list(builds)
    for path in files:
        load = open("/proc/loadavg").read().split()[:3]
        runs = {(s, o): [] for s in sides for o in outs}
        for _ in range(a.n):
            for o in outs:
                for s in sides:
                    fresh = out_file if a.fresh and o == "file" else None
                    time.sleep(a.gap)
                    cmd = argv(a.perfkit, s, path, o, out_file, builds)
                    runs[(s, o)].append(run(cmd, fresh))
        after = open("/proc/loadavg").read().split()[:3]
        gap = f", {a.gap:g} s apart" if a.gap else ""
        print(f"== {path} ({os.path.getsize(path)} bytes), {a.n} interleaved runs{gap}, "
              f"load {' '.join(load)} -> {' '.join(after)}")
        for o in outs:
            wall = {}
            for s in sides:
                w = sorted(r[0] for r in runs[(s, o)])
                c = sorted(r[1] for r in runs[(s, o)])
                rss = statistics.median(r[2] for r in runs[(s, o)])
                wall[s] = statistics.median(w)
                print(f"  {s:5} {o:5} wall {wall[s]:7.1f} ms [{w[0]:.0f}-{w[-1]:.0f}]  "
                      f"cpu {statistics.median(c):7.1f} ms [{c[0]:.0f}-{c[-1]:.0f}]  "
                      f"rss {rss:6.1f} MiB")
            if "T2" in wall:
                ratios = [f"T2 vs {s} x{wall[s] / wall['T2']:.2f}"
                          for s in ("zstd", "T1", "base", "copy") if s in wall]
                if "bcopy" in wall:
                    ratios.append(f"base vs bcopy x{wall['bcopy'] / wall['base']:.2f}")
                print(f"  {o}: wall " + ", ".join(ratios))
    if os.path.exists(out_file):
        os.remove(out_file)
    copies.cleanup()


if __name__ == "__main__":
    main()
