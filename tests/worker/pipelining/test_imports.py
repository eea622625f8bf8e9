"""The scheduler stays light: importing all of it pulls in neither grpc nor torch, nor numpy
(which the simulator loads for a large schedule only)."""

import subprocess
import sys
from pathlib import Path

MODULES = ["ir", "errors", "schedules", "greedy", "lowering", "validation", "simulator", "render", "picture", "loaded",
           "cli"]


def test_scheduler_imports_neither_grpc_nor_torch() -> None:
    code = "; ".join(f"import meshdbg.worker.pipelining.{m}" for m in MODULES) + (
        "; import sys; print(sorted(m for m in sys.modules if m.split('.')[0] in ('grpc', 'torch', 'numpy')))"
    )
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_runtime_without_torch_says_which_extra_to_install() -> None:
    code = ("import sys; sys.modules['torch'] = None\n"  # as if torch were not installed
            "try:\n    import meshdbg.worker.pipelining.runtime\nexcept ImportError as exc:\n    print(exc)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "the pipeline runtime needs torch: pip install 'meshdbg[torch]'"
