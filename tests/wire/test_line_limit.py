"""One limit for a typed pdb line, in UTF-8 bytes as gRPC counts them, at every entry point."""

import pytest

from meshdbg.wire.chunks import MAX_LINE_BYTES, check_line
from meshdbg.wire.errors import UsageError


def test_a_line_is_measured_in_utf8_bytes_not_characters() -> None:
    assert check_line("x" * MAX_LINE_BYTES) == "x" * MAX_LINE_BYTES
    assert check_line("é" * (MAX_LINE_BYTES // 2)) == "é" * (MAX_LINE_BYTES // 2)
    with pytest.raises(UsageError, match=r"limited to 3 MiB of UTF-8 \(this one has 4\.5 MiB\)"):
        check_line("€" * (MAX_LINE_BYTES // 2))  # 1.5 Mi characters of 3 bytes each


def test_a_line_is_made_wire_safe() -> None:
    assert check_line("p 'bad \udcff'") == "p 'bad \\udcff'"
