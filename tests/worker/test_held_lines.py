"""StreamedOutput.send_held_lines: a running command's complete lines go out once they have
waited HELD_S; the text after the last newline (pdb's prompt among it) stays for the prompt."""

from __future__ import annotations

from meshdbg.worker import output
from meshdbg.worker.output import StreamedOutput


class Remote:
    owned = True

    def __init__(self) -> None:
        self.sent: list[str] = []

    def send_output(self, text: str) -> None:
        self.sent.append(text)


def aged(sink: StreamedOutput) -> None:
    """As if what it holds had waited HELD_S."""
    sink._held_since -= output.HELD_S  # type: ignore[attr-defined]


def test_only_lines_that_waited_go_out_and_the_prompt_stays_for_take() -> None:
    remote = Remote()
    sink = StreamedOutput(lambda: remote)  # type: ignore[arg-type,return-value]
    sink.write("line 0\n")
    sink.send_held_lines()
    assert remote.sent == []  # not held long enough yet
    aged(sink)
    sink.send_held_lines()
    assert remote.sent == ["line 0\n"]
    sink.write("line 1\nhal")
    sink.write("f\n")
    sink.write("(Pdb) ")  # the command ended: pdb wrote its prompt, and reads next
    aged(sink)
    sink.send_held_lines()
    assert remote.sent == ["line 0\n", "line 1\nhalf\n"]
    sink.program_wrote("printed meanwhile\n")  # still goes above the prompt
    assert sink.take() == "printed meanwhile\n(Pdb) "


def test_a_partial_line_alone_waits() -> None:
    remote = Remote()
    sink = StreamedOutput(lambda: remote)  # type: ignore[arg-type,return-value]
    sink.write("no newline yet")
    aged(sink)
    sink.send_held_lines()
    assert remote.sent == [] and sink.take() == "no newline yet"
