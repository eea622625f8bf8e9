"""Short garbage-collection pauses for a server holding thousands of sessions (`serve`, `run`).

A full collection walks every tracked object; with 10,000 live streams that is a pause of
around a second, during which no worker or client is answered. So the server freezes what it
holds (gc.freeze: later collections skip those objects): the start-up objects at once, and
the survivors of each full collection soon after it, so each full collection only walks what
was made since the last one (frozen from the collector's own callback, at once). Frozen objects still die by reference counting; only reference
cycles among them wait, until the server is idle (no session): then everything is unfrozen
and left to the collector, when a pause costs no one anything.
"""

from __future__ import annotations

import asyncio
import gc
from typing import Callable

CHECK_S = 1.0


async def keep_gc_pauses_short(idle: Callable[[], bool]) -> None:
    """Run for the server's life (cancel to stop); `idle()` says no session is open."""
    def on_collection(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            gc.freeze()  # the collection is over: its survivors move to the permanent generation

    gc.freeze()
    gc.callbacks.append(on_collection)
    try:
        while True:
            await asyncio.sleep(CHECK_S)
            if idle() and gc.get_freeze_count():
                gc.unfreeze()
    finally:
        gc.callbacks.remove(on_collection)
        gc.unfreeze()
