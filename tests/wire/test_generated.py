"""The committed generated protobuf code matches protos/ (regenerated with the documented command)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "wire" / "proto"


def test_generated_code_is_fresh(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(ROOT / "protos" / "generate.py"), "--out", str(tmp_path)],
                   check=True, capture_output=True)
    generated = sorted(tmp_path.glob("*.py*"))
    assert generated
    for fresh in generated:
        committed = GENERATED / fresh.name
        assert committed.exists(), f"{fresh.name} is generated but not committed"
        assert committed.read_text() == fresh.read_text(), f"wire/proto/{fresh.name} is stale: run python protos/generate.py"


def test_generated_code_imports_nothing_of_ours() -> None:
    for module in GENERATED.glob("*_pb2*.py"):
        for line in module.read_text().splitlines():
            if line.startswith(("import ", "from ")) and "meshdbg" in line:
                assert line.startswith("from meshdbg.wire.proto import"), f"{module.name}: {line}"
