"""How long a scripted `meshdbg list --json` takes, against the floor `python -c "import grpc"`.

    python bench/bench_cli_start.py [--rounds 15]

A private `meshdbg serve` (loopback) holds no sessions; each round runs, in alternating order,
the floor and `meshdbg list --json` (the installed console script, as a script calls it) as
fresh processes from a neutral folder, and times each from start to exit. Bytecode caches are
on (as on a user's machine), written by one warm-up run of each. Prints one JSON line
per measure and a summary line with the median ratio, against the 1.5x target (issue 9).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_RATIO = 1.5


def _timed(argv: list[str], env: dict[str, str], cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    script = shutil.which("meshdbg", path=str(Path(sys.executable).parent)) or shutil.which("meshdbg")
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, MESHDBG_CONNECTION_FILE=str(Path(folder) / "conn.json"), MESHDBG_TOKEN="bench")
        env.pop("MESHDBG_ADDR", None)
        # As on a user's machine, Python keeps bytecode caches: the warm-up run writes them.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        server = subprocess.Popen([sys.executable, "-m", "meshdbg", "serve", "--port", "0"], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            env["MESHDBG_ADDR"] = server.stdout.readline().strip()
            floor_argv, cli_argv = [sys.executable, "-c", "import grpc"], [script, "list", "--json"]
            for argv in (floor_argv, cli_argv):  # warm the page cache
                _timed(argv, env, folder)
            floor, cli = [], []
            for index in range(args.rounds):
                pair = [(floor, floor_argv), (cli, cli_argv)]
                for samples, argv in (pair if index % 2 == 0 else pair[::-1]):
                    samples.append(_timed(argv, env, folder))
        finally:
            server.terminate()
            server.wait(timeout=10)
    results = {"import_grpc": floor, "list_json": cli}
    for name, samples in results.items():
        print(json.dumps({"name": name, "unit": "ms", "median": round(statistics.median(samples) * 1e3, 1),
                          "min": round(min(samples) * 1e3, 1), "rounds": len(samples)}))
    ratio = statistics.median(c / f for c, f in zip(cli, floor))
    print(json.dumps({"name": "summary", "list_over_import_grpc": round(ratio, 2), "target": TARGET_RATIO,
                      "met": ratio <= TARGET_RATIO}))


if __name__ == "__main__":
    main()
