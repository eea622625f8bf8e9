"""The SVG Gantt chart and the Perfetto trace describe the simulated timeline."""

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from meshdbg.worker.pipelining.lowering import lower
from meshdbg.worker.pipelining.picture import to_svg, to_trace
from meshdbg.worker.pipelining.schedules import generate
from meshdbg.worker.pipelining.simulator import simulate

SVG = "{http://www.w3.org/2000/svg}"
EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "schedule.svg"


def example_svg() -> str:
    """docs/schedule.svg: interleaved-1f1b, 4 ranks, 2 stages per rank, 8 microbatches."""
    schedule = generate("interleaved-1f1b", 4, 2, 8)
    return to_svg(schedule, simulate(schedule))


def test_svg_has_a_box_per_timed_action_and_microbatch_labels() -> None:
    schedule = generate("zbv", 2, 2, 3)
    root = ET.fromstring(to_svg(schedule, simulate(schedule)))
    boxes = root.findall(f"{SVG}g/{SVG}rect")
    assert len(boxes) == sum(len(rank) for rank in schedule.actions)
    assert {box.find(f"{SVG}title").text for box in boxes} == {str(a) for r in schedule.actions for a in r}
    assert len({box.get("fill") for box in boxes}) == 3  # F, I, W
    labels = [t.text for t in root.iter(f"{SVG}text")]
    assert "rank 1" in labels and "2" in labels


def test_free_communication_is_drawn_as_ticks() -> None:
    schedule = lower(generate("1f1b", 2, 1, 2))
    root = ET.fromstring(to_svg(schedule, simulate(schedule)))
    assert len(root.findall(f"{SVG}line")) == 8  # 2 microbatches x 4 SEND/RECV


def test_trace_events_match_the_timeline() -> None:
    schedule = lower(generate("1f1b", 2, 1, 2))
    result = simulate(schedule)
    trace = json.loads(json.dumps(to_trace(schedule, result)))
    slices = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(slices) == sum(len(rank) for rank in schedule.actions)
    first = next(e for e in slices if e["tid"] == 1 and e["name"] == "1F0")
    assert (first["ts"], first["dur"], first["cat"]) == (1000.0, 1000.0, "F")
    names = {e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M"}
    assert names == {"rank 0", "rank 1"}


def test_docs_example_is_current() -> None:
    assert EXAMPLE.read_text(encoding="utf-8") == example_svg()


def test_an_overlap_is_one_box_labelled_with_both_microbatches() -> None:
    schedule = generate("dualpipev", 2, 2, 4)
    root = ET.fromstring(to_svg(schedule, simulate(schedule)))
    titles = {box.find(f"{SVG}title").text: box for box in root.findall(f"{SVG}g/{SVG}rect")}
    assert titles["(0F3;3B1)OVERLAP_F_B"].get("width") == "72"  # F + B = 3 units of 24 px
    assert "3/1" in [t.text for t in root.iter(f"{SVG}text")]
    trace = to_trace(schedule, simulate(schedule))
    args = next(e["args"] for e in trace["traceEvents"] if e.get("name") == "(0F3;3B1)OVERLAP_F_B")
    assert args == {"forward": "0F3", "backward": "3B1"}
