"""`meshdbg run --dap`: how long a rank's printed line takes to reach the IDE as an `output` event.

    python bench/bench_dap_output.py [--ranks 2] [--lines 200]

Each rank of a `run --dap 0 --mesh gpus=RANKS` job prints LINES lines, one every 10 ms, each
with the time it was printed; a scripted IDE (tests/dap/ide.py) attached as the parent session
notes when each line's event arrives (same machine, same clock). Prints one JSON object: the
median, p90 and max in ms over the lines that came after the IDE attached. The job is stopped
in a `finally`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path[:0] = [str(TESTS), str(TESTS / "dap")]

from ide import Ide, attach  # noqa: E402

PROGRAM = """import sys, time
for beat in range(int(sys.argv[1])):
    print(f"at={time.time():.6f}", flush=True)
    time.sleep(0.01)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--lines", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="meshdbg-bench-") as folder:
        program = Path(folder) / "printer.py"
        program.write_text(PROGRAM)
        job = subprocess.Popen([sys.executable, "-m", "meshdbg", "run", "--dap", "0", "--mesh", f"gpus={args.ranks}",
                                str(program), str(args.lines)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, cwd=folder)
        try:
            lines = iter(job.stderr.readline, "")
            port = int(next(line for line in lines if line.startswith("meshdbg dap: listening")).rsplit(":", 1)[1])
            token = "".join(next(lines) for _ in range(11)).split('"token": "')[1].split('"')[0]
            threading.Thread(target=lambda: [None for _ in lines], daemon=True).start()  # keeps stderr flowing
            ide = Ide(port)
            attach(ide, {"meshdbg": {"token": token}})
            delays = []
            while (message := ide.next(30)) is not None:
                if message.get("event") == "output":
                    arrived = time.time()
                    delays += [arrived - float(line.split("at=")[1]) for line in message["body"]["output"].splitlines()
                               if "at=" in line]
            delays.sort()
            print(json.dumps({"metric": "print_to_output_event", "ranks": args.ranks, "lines": len(delays),
                              "median_ms": round(statistics.median(delays) * 1000, 2),
                              "p90_ms": round(delays[int(len(delays) * 0.9)] * 1000, 2),
                              "max_ms": round(delays[-1] * 1000, 2)}))
        finally:
            job.terminate()  # (a job that ended already: nothing)
            job.wait(timeout=30)


if __name__ == "__main__":
    main()
