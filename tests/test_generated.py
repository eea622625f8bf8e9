"""The committed generated protobuf code matches protos/ (regenerated with the documented command)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_generated_code_is_fresh(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "protos", tmp_path / "protos")
    protos = sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / "protos").glob("*.proto"))
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-Idebugger/proto=protos", "--python_out=.",
                    "--pyi_out=.", "--grpc_python_out=.", *protos], cwd=tmp_path, check=True)
    generated = sorted((tmp_path / "debugger" / "proto").glob("*.py*"))
    assert generated
    for fresh in generated:
        committed = ROOT / "debugger" / "proto" / fresh.name
        assert committed.exists(), f"{fresh.name} is generated but not committed"
        assert committed.read_text() == fresh.read_text(), f"debugger/proto/{fresh.name} is stale: regenerate it"


def test_generated_code_imports_nothing_of_ours() -> None:
    for module in (ROOT / "debugger" / "proto").glob("*_pb2*.py"):
        for line in module.read_text().splitlines():
            if line.startswith(("import ", "from ")) and "debugger" in line:
                assert "debugger.proto" in line, f"{module.name}: {line}"


def test_worker_side_imports_stay_light() -> None:
    code = ("import sys, worker, worker.hook, worker.pdb_wrapper; "
            "bad = [m for m in sys.modules if m.startswith(('prompt_toolkit', 'debugger.console', 'debugger.cli'))]; "
            "print(bad)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
