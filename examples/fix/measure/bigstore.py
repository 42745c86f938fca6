#!/usr/bin/env python3
"""Measures `perfkit fix acceptor` on a large QuickFIX-layout file store.

Usage: bigstore.py MESSAGES PERFKIT DIR

Writes DIR/store/FIX.4.4-EXCH-BENCH.{body,header,seqnums,session} with
MESSAGES ExecutionReports (once; kept for later runs), starts the acceptor
on it (port 29400), and prints: how long until it listens and its peak RSS
then; after a ResendRequest 1..0, the time to the first resent byte, how
much was resent in 8 s and the peak RSS. Loopback only; stops by itself.
"""
import os, socket, subprocess, sys, time
N = int(sys.argv[1]); pk = sys.argv[2]; d = sys.argv[3]
os.makedirs(d + "/store", exist_ok=True)
pre = d + "/store/FIX.4.4-EXCH-BENCH"
def framed(body):
    m = b"8=FIX.4.4\x019=%d\x01" % len(body) + body
    return m + b"10=%03d\x01" % (sum(m) % 256)
if not os.path.exists(pre + ".seqnums"):
    with open(pre + ".body", "wb") as b, open(pre + ".header", "wb") as h:
        off = 0
        for i in range(1, N + 1):
            m = framed(b"35=8\x0134=%d\x0149=EXCH\x0152=20261124-10:00:00.000\x0156=BENCH\x0137=O%d\x0111=%d\x0117=E%d\x01150=2\x0139=2\x0155=MSFT\x0154=1\x0138=100\x0132=100\x0131=10\x01" % (i, i, i, i))
            b.write(m); h.write(b"%d,%d,%d " % (i, off, len(m))); off += len(m)
    open(pre + ".seqnums", "w").write("%010d : %010d" % (N + 1, 1))
    open(pre + ".session", "w").write("20261124-10:00:00")
port = 29400
open(d + "/acc.cfg", "w").write(f"[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\nStartTime=00:00:00\nEndTime=00:00:00\nUseDataDictionary=N\nFileStorePath={d}/store\n\n[SESSION]\nBeginString=FIX.4.4\nSenderCompID=EXCH\nTargetCompID=BENCH\n")
def hwm(pid):
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmHWM"): return int(l.split()[1]) // 1024
t0 = time.time()
p = subprocess.Popen([pk, "fix", "acceptor", d + "/acc.cfg"], stderr=subprocess.DEVNULL)
while True:
    try:
        s = socket.create_connection(("127.0.0.1", port)); break
    except OSError: time.sleep(0.05)
print(f"messages {N}  body {os.path.getsize(pre + '.body') >> 20} MiB  listening after {time.time() - t0:.2f} s  peak RSS {hwm(p.pid)} MiB")
def msg(f):
    ts = time.strftime("%Y%m%d-%H:%M:%S.000", time.gmtime())
    return framed(f.replace("NOW", ts).encode())
s.sendall(msg("35=A\x0134=1\x0149=BENCH\x0152=NOW\x0156=EXCH\x0198=0\x01108=30\x01"))
got = s.recv(65536)
t1 = time.time()
s.sendall(msg("35=2\x0134=2\x0149=BENCH\x0152=NOW\x0156=EXCH\x017=1\x0116=0\x01"))
total = 0; first = None
s.settimeout(0.5)
while time.time() - t1 < 8:
    try:
        b = s.recv(1 << 20)
    except socket.timeout:
        continue
    if not b: break
    if first is None: first = time.time() - t1
    total += len(b)
print(f"ResendRequest 1..0: first byte after {first*1000:.1f} ms, {total >> 20} MiB resent in 8 s, peak RSS {hwm(p.pid)} MiB")
p.kill()
