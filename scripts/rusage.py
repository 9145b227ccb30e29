#!/usr/bin/env python3
"""Runs a command N times and prints one Markdown table row of its mean wall
time, mean and median CPU time (user + system, from wait4's rusage, in
microseconds rather than GNU time's hundredths) and largest peak RSS.

    scripts/rusage.py NAME N cmd [args...]

The command runs under GNU time, which reports its peak RSS: a process
started from this one (vfork and exec) would count this Python process's
memory in its own ru_maxrss (the kernel keeps the high-water mark of the
memory it replaced at exec), about 13 MiB. The CPU time includes GNU
time's own, a fraction of a millisecond.
"""
import os
import subprocess
import sys
import tempfile
import time


def main():
    name, n, cmd = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    if not os.access("/usr/bin/time", os.X_OK):
        sys.exit("needs GNU time: apt-get install -y time")
    walls, cpus, rss = [], [], 0
    out = tempfile.NamedTemporaryFile(prefix="rusage")
    for _ in range(n):
        start = time.monotonic()
        p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", out.name] + cmd, stdout=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        walls.append(time.monotonic() - start)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{cmd[0]} exited with {os.waitstatus_to_exitcode(status)}")
        cpus.append(ru.ru_utime + ru.ru_stime)
        with open(out.name) as f:
            rss = max(rss, int(f.read().split()[-1]))  # KiB
    cpus.sort()
    print(f"| {name} | {sum(walls) / n * 1000:.1f} | {sum(cpus) / n * 1000:.1f} | {cpus[n // 2] * 1000:.1f} | {rss / 1024:.1f} |")


if __name__ == "__main__":
    main()
