"""Home lists the two topics of issue 22 item 3 from the shipped banks, with their question counts."""
from __future__ import annotations

from textual.widgets import DataTable

from quizprep.bank.loader import default_bank_dir, load_banks

NEW_BANKS = ("beyond_softmax.yaml", "kv_shrink.yaml")


async def test_home_lists_the_new_topics(make_app):
    app = make_app(banks=[default_bank_dir() / name for name in NEW_BANKS])
    async with app.run_test(size=(160, 48)):
        table = app.screen.query_one(DataTable)
        rows = {str(key.value): [str(cell) for cell in table.get_row(key)] for key in table.rows}
        assert set(rows) == {"beyond_softmax", "kv_shrink"}
        assert rows["beyond_softmax"][0].startswith("Beyond softmax attention")
        assert rows["kv_shrink"][0].startswith("Shrinking the KV cache")
        banks = load_banks(default_bank_dir() / name for name in NEW_BANKS).banks
        counts = {bank.topic: len(bank.questions) for bank in banks}
        assert counts["beyond_softmax"] >= 17 and counts["kv_shrink"] >= 15  # issue 33 added to both
        assert (rows["beyond_softmax"][1], rows["kv_shrink"][1]) == (f"0/{counts['beyond_softmax']}",
                                                                     f"0/{counts['kv_shrink']}")
