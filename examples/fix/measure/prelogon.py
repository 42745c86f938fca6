#!/usr/bin/env python3
"""Holds 1,000 connections to `perfkit fix acceptor` that each send 1 MB of
an unfinished message (BodyLength 1,000,000) before any Logon, and prints
the acceptor's thread count and peak RSS.

Usage: prelogon.py PERFKIT DIR   (port 29410, loopback; needs ulimit -n 4096)
"""
import socket, subprocess, sys, time, os
pk = sys.argv[1]; d = sys.argv[2]; port = 29410
os.makedirs(d, exist_ok=True)
open(d + "/acc.cfg", "w").write(f"[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\nStartTime=00:00:00\nEndTime=00:00:00\nUseDataDictionary=N\n\n[SESSION]\nBeginString=FIX.4.4\nSenderCompID=EXCH\nTargetCompID=BENCH\n")
p = subprocess.Popen([pk, "fix", "acceptor", d + "/acc.cfg"], stderr=subprocess.DEVNULL)
time.sleep(1)
def status(k):
    for l in open(f"/proc/{p.pid}/status"):
        if l.startswith(k): return l.split()[1]
conns = []
chunk = b"8=FIX.4.4\x019=1000000\x01" + b"x" * (1 << 20)
for i in range(1000):
    try:
        c = socket.create_connection(("127.0.0.1", port)); c.setblocking(False)
        try: c.send(chunk)
        except OSError: pass
        conns.append(c)
    except OSError as e:
        print("connect failed", e); break
time.sleep(2)
print(f"1000 connections x 1 MB unfinished: threads {status('Threads:')}, peak RSS {int(status('VmHWM:'))//1024} MiB")
p.kill()
