"""Choice keys for tests: choices are shown shuffled, so a test that means "the first choice of
the bank" asks which number key shows it now."""
from __future__ import annotations


def keys_for(app, *originals: int) -> list[str]:
    """The number keys that pick the bank's choices `originals` (0-based) on the question shown."""
    order = app.screen.showing.choice_order
    return [str(order.index(original) + 1) for original in originals]
