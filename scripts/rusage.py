#!/usr/bin/env python3
"""Runs a command N times and prints one Markdown table row of its mean wall
time, mean CPU time (user + system, from wait4's rusage, in microseconds
rather than GNU time's hundredths) and largest peak RSS.

    scripts/rusage.py NAME N cmd [args...]
"""
import os
import subprocess
import sys
import time


def main():
    name, n, cmd = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    walls, cpus, rss = [], [], 0
    for _ in range(n):
        start = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        walls.append(time.monotonic() - start)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{cmd[0]} exited with {os.waitstatus_to_exitcode(status)}")
        cpus.append(ru.ru_utime + ru.ru_stime)
        rss = max(rss, ru.ru_maxrss)  # KiB on Linux
    cpus.sort()
    print(f"| {name} | {sum(walls) / n * 1000:.1f} | {sum(cpus) / n * 1000:.1f} | {cpus[n // 2] * 1000:.1f} | {rss / 1024:.1f} |")


if __name__ == "__main__":
    main()
