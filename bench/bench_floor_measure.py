"""How bench_floor.py measures: interleaved repetitions, and ratios reported against targets.

Every path of issue 22 is a measure of meshdbg and a measure of its floor, alternated (the
order rotated every repetition) so that load hits both; the figure is the ratio of the
medians, printed as a JSON line, with a `FAIL` line when it is past the path's target.
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Awaitable, Callable

TARGETS = {"attach_p_api": 1.1, "attach_p_plain": 1.2, "run_p": 1.3, "cast": 1.2, "continue": 1.2, "cast_big": 1.5,
           "continue_big": 1.5, "list_api": 1.2, "list_cli": 1.2, "memory": 1.1, "cli_start": 1.3, "schedule": 1.5}
STOP_TIMEOUT_S = 60.0  # every session of a phase stopped (again), every stream of a floor connected

Measure = Callable[[], Awaitable[list[float]]]


async def interleaved(measures: dict[str, Measure], reps: int) -> dict[str, list[float]]:
    """Seconds of each measure over `reps` repetitions, their order rotated every repetition."""
    names = list(measures)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for rep in range(reps):
        for name in names[rep % len(names):] + names[:rep % len(names)]:
            samples[name].extend(await measures[name]())
    return samples


class Report:
    """Ratios as JSON lines, a FAIL line for each past its target."""

    def __init__(self) -> None:
        self.failed: list[str] = []
        self.ratios: dict[str, float] = {}

    def ratio(self, path: str, target_key: str, ours: list[float], floor: list[float], floor_name: str,
              **extra: object) -> None:
        """The ratio of the medians of two lists of seconds."""
        ours_ms, floor_ms = statistics.median(ours) * 1e3, statistics.median(floor) * 1e3
        self.record(path, target_key, {"ours_ms": round(ours_ms, 3), "floor_ms": round(floor_ms, 3)},
                    ours_ms / floor_ms, floor_name, n=len(ours), **extra)

    def record(self, path: str, target_key: str, figures: dict[str, float], ratio: float, floor_name: str,
               **extra: object) -> None:
        """One path's JSON line (its `figures`, the ratio, the target), and FAIL past the target."""
        target, ratio = TARGETS[target_key], round(ratio, 2)  # judged as printed: 1.204 is 1.2, within 1.2
        self.ratios[path] = ratio
        print(json.dumps({"path": path, **figures, "floor": floor_name, "ratio": ratio, "target": target, **extra}),
              flush=True)
        if ratio > target:
            self.failed.append(path)
            print(f"FAIL {path} ratio {ratio:.2f} > target {target}", flush=True)


def timed(work: Callable[[], Awaitable[object]]) -> Measure:
    """A measure of one call of `work`."""
    async def measure() -> list[float]:
        start = time.perf_counter()
        await work()
        return [time.perf_counter() - start]

    return measure


def blocks(work: Callable[[], Awaitable[object]], count: int) -> Measure:
    """A measure of `count` calls of `work`, one sample each."""
    async def measure() -> list[float]:
        samples = []
        for _ in range(count):
            start = time.perf_counter()
            await work()
            samples.append(time.perf_counter() - start)
        return samples

    return measure
