#!/usr/bin/env python3
"""The CLI's start-up as a submission pays it: from spawning `cohort batch` to the first byte
it sends, next to spawning /bin/true until it has exited, from the same spawner.

A listener stands in for the controller (a copy of the instance's config points the CLI at
it), takes the first byte and closes, so nothing after the first byte is timed. Prints
"FIRST_BYTE_MS TRUE_MS", medians of RUNS alternating runs.

    first_byte.py COHORT_BIN CONFIG_JSON [RUNS]
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    cohort, config_path = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)  # bounds each wait: a CLI that never connects fails the run
    with open(config_path) as f:
        config = json.load(f)
    config["controller"] = {"host": "127.0.0.1", "port": listener.getsockname()[1], "backups": []}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(config, f)
        stand_in = f.name
    env = dict(os.environ, COHORT_CONF=stand_in)
    first_byte, true_exit = [], []
    try:
        for _ in range(runs):
            t0 = time.perf_counter_ns()
            child = subprocess.Popen([cohort, "batch", "-H", "--wrap", "true"], env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            conn, _ = listener.accept()
            conn.settimeout(10)
            conn.recv(1)
            first_byte.append(time.perf_counter_ns() - t0)
            conn.close()
            child.wait(timeout=10)

            # wait() without a timeout blocks in waitpid; with one it polls, adding its sleeps.
            t0 = time.perf_counter_ns()
            subprocess.Popen(["/bin/true"]).wait()
            true_exit.append(time.perf_counter_ns() - t0)
    finally:
        os.unlink(stand_in)
    print(f"{statistics.median(first_byte) / 1e6:.2f} {statistics.median(true_exit) / 1e6:.2f}")


if __name__ == "__main__":
    main()
