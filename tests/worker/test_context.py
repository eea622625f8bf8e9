"""Session context labels (pure logic)."""

from __future__ import annotations

import pytest

from meshdbg.worker.context import context_of, current_context, debug_context


def test_labels_nest_and_unwind() -> None:
    assert current_context() == {}
    with debug_context(stage=2):
        with debug_context(microbatch=3, action="2F3"):
            assert current_context() == {"stage": "2", "microbatch": "3", "action": "2F3"}
        assert current_context() == {"stage": "2"}
    assert current_context() == {}


def test_an_error_remembers_where_it_was_raised_through_its_chain() -> None:
    with pytest.raises(KeyError) as caught:
        with debug_context(stage=1):
            try:
                with debug_context(microbatch=4):
                    raise ValueError("inner")
            except ValueError as exc:
                raise KeyError("outer") from exc
    assert context_of(caught.value) == {"stage": "1"}
    assert context_of(caught.value.__cause__) == {"stage": "1", "microbatch": "4"}
    assert context_of(RuntimeError("elsewhere")) == {}
