"""Regenerate meshdbg's wire code (`meshdbg.wire.proto`) from protos/*.proto.

    python protos/generate.py               rewrite wire/proto/*_pb2*.py(i) in place
    python protos/generate.py --out DIR     write them into DIR instead (the freshness test)

protoc names a generated module's imports after the path its .proto is given under, so the
protos are mapped to `meshdbg/wire/proto` (the package's import path) and generated into a
scratch folder; the files then land in wire/proto, where that package lives in this repository.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "meshdbg/wire/proto"


def generate(out: Path) -> list[Path]:
    """Generate every protos/*.proto into `out`; the files written, sorted by name."""
    protos = sorted(path.name for path in (ROOT / "protos").glob("*.proto"))
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{PACKAGE}={ROOT / 'protos'}",
                        f"--python_out={scratch}", f"--pyi_out={scratch}", f"--grpc_python_out={scratch}",
                        *(str(ROOT / "protos" / name) for name in protos)], check=True)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for generated in sorted((Path(scratch) / PACKAGE).iterdir()):
            written.append(Path(shutil.copy(generated, out / generated.name)))
        return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "wire" / "proto", help="where to write (default: wire/proto)")
    for path in generate(parser.parse_args().out):
        print(path)


if __name__ == "__main__":
    main()
