"""`quizprep export`: an Anki deck read back from its SQLite, stable GUIDs, and the JSON beside it."""
from __future__ import annotations

import json
import sqlite3
import zipfile
from pathlib import Path

import genanki
import pytest

from quizprep import cli
from quizprep.bank import load_banks
from quizprep.bank.numeric import draw, expected_text, worked_steps
from quizprep.export import EXPORT_SEED, back_html, front_html, markdown_html

BANK = """\
topic: demo
title: Demo bank for the export tests
questions:
  - id: demo-choice
    kind: choice
    difficulty: 1
    tags: [scaling, fundamentals]
    prompt: |
      Why is `softmax(QKᵀ/√d_k)` scaled, when scores < 0 & > 0 both occur?

      ```python
      scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
      ```
    explanation: Var(q·k) = d_k for **unit-variance** components.
    references: ["Vaswani et al. 2017, §3.2.1"]
    choices:
      - text: To keep the variance of the scores near 1
        correct: true
        why: Var(q·k) = d_k when q and k have unit-variance components.
      - text: To save FLOPs
        why: The scaling is one elementwise multiply; it saves nothing.
  - id: demo-numeric
    kind: numeric
    difficulty: 2
    tags: [kv-cache]
    prompt: KV cache in bf16 for {{layers}} layers, {{kv_heads}} KV heads of dim {{head_dim}}, {{seq}} tokens?
    explanation: Both K and V are cached, {{per_token}} bytes per token.
    references: ["Llama-3-8B config.json"]
    params:
      layers: 32
      kv_heads: 8
      head_dim: 128
      seq: {choices: [4096, 8192]}
      bytes: 2
    derived:
      per_token: 2 * layers * kv_heads * head_dim * bytes
    answer: per_token * seq
    unit: B
    display_unit: GiB
    tolerance: 0.01
  - id: demo-free
    kind: free
    difficulty: 3
    tags: []
    prompt: Explain why the scores are divided by √d_k.
    explanation: The variance argument, then saturation.
    references: ["Vaswani et al. 2017, footnote 4"]
    model_answer: q·k has variance d_k; large scores saturate the softmax and its gradients vanish.
    rubric:
      - criterion: derives Var(q·k) = d_k
        weight: 2
      - criterion: mentions softmax saturation
        weight: 1
      - criterion: mentions vanishing gradients
        weight: 1
"""
IDS = ("demo-choice", "demo-numeric", "demo-free")


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    path = tmp_path / "demo.yaml"
    path.write_text(BANK, encoding="utf-8")
    return path


def notes_of(deck: Path, unpack_to: Path) -> dict[str, tuple[str, list[str], str]]:
    """question id → (GUID, [Id, Front, Back], tags), read from the SQLite inside the .apkg."""
    with zipfile.ZipFile(deck) as package:
        name = next(n for n in package.namelist() if n.startswith("collection.anki2"))
        package.extract(name, unpack_to)
    connection = sqlite3.connect(unpack_to / name)
    try:
        rows = connection.execute("SELECT guid, flds, tags FROM notes").fetchall()
    finally:
        connection.close()
    notes = {}
    for guid, fields, tags in rows:
        values = fields.split("\x1f")
        notes[values[0]] = (guid, values, tags)
    return notes


def test_deck_round_trips_with_stable_guids(bank: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "deck.apkg", tmp_path / "deck-again.apkg"
    first.parent.mkdir()  # an export names a folder that is there; it makes none
    assert cli.main(["export", "--anki", str(first), "--bank", str(bank)]) == 0
    assert cli.main(["export", "--anki", str(second), "--bank", str(bank)]) == 0
    notes = notes_of(first, tmp_path / "unpacked-a")
    assert sorted(notes) == sorted(IDS)
    assert {qid: note[0] for qid, note in notes.items()} == {qid: genanki.guid_for(qid) for qid in IDS}
    assert notes == notes_of(second, tmp_path / "unpacked-b")  # same GUIDs, fields and tags
    assert notes["demo-choice"][2].split() == ["quizprep::demo", "scaling", "fundamentals"]


def test_cards_carry_the_answer_worked_for_one_draw(bank: Path, tmp_path: Path) -> None:
    deck = tmp_path / "deck.apkg"
    assert cli.main(["export", "--anki", str(deck), "--bank", str(bank)]) == 0
    notes = notes_of(deck, tmp_path / "unpacked")
    numeric = next(q for q in load_banks([bank]).questions if q.id == "demo-numeric")
    shown = draw(numeric, EXPORT_SEED)
    assert shown.answer == 131_072 * shown.values["seq"]  # 2·32·8·128·2 bytes per token
    _, (_, front, back), _ = notes["demo-numeric"]
    assert f"{shown.values['seq']:,} tokens?" in front and "{{" not in front
    assert f"<b>{expected_text(numeric, shown)}</b> (tolerance ±1%)" in back
    for step in worked_steps(numeric, shown):
        assert step in back
    assert "131,072 bytes per token" in back

    _, (_, front, back), _ = notes["demo-choice"]
    assert "scores &lt; 0 &amp; &gt; 0" in front and "<code>softmax(QKᵀ/√d_k)</code>" in front
    assert "<pre><code>scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)</code></pre>" in front
    assert "✓" not in front and "✓ To keep the variance of the scores near 1" in back
    assert "✗ To save FLOPs" in back and "<b>unit-variance</b>" in back

    _, (_, front, back), _ = notes["demo-free"]
    assert "Explain why the scores are divided by √d_k." in front
    assert "large scores saturate the softmax" in back
    assert "derives Var(q·k) = d_k <small>(weight 2)</small>" in back
    assert "mentions softmax saturation <small>(weight 1)</small>" in back


def test_json_holds_the_same_cards(bank: Path, tmp_path: Path) -> None:
    deck, cards_file = tmp_path / "deck.apkg", tmp_path / "cards.json"
    assert cli.main(["export", "--anki", str(deck), "--json", str(cards_file), "--bank", str(bank)]) == 0
    exported = json.loads(cards_file.read_text(encoding="utf-8"))
    notes = notes_of(deck, tmp_path / "unpacked")
    assert exported["seed"] == EXPORT_SEED and [c["id"] for c in exported["cards"]] == list(IDS)
    for content in exported["cards"]:
        assert notes[content["id"]][1][1:] == [front_html(content), back_html(content)]
    numeric = next(c for c in exported["cards"] if c["kind"] == "numeric")
    assert numeric["answer"]["value"] in (131_072 * 4096, 131_072 * 8192) and numeric["answer"]["unit"] == "B"
    free = next(c for c in exported["cards"] if c["kind"] == "free")
    assert free["rubric"] == [{"criterion": "derives Var(q·k) = d_k", "weight": 2},
                              {"criterion": "mentions softmax saturation", "weight": 1},
                              {"criterion": "mentions vanishing gradients", "weight": 1}]


def test_every_shipped_question_exports(tmp_path: Path) -> None:
    deck = tmp_path / "deck.apkg"
    assert cli.main(["export", "--anki", str(deck)]) == 0
    shipped = [q.id for q in load_banks().questions]
    notes = notes_of(deck, tmp_path / "unpacked")
    assert sorted(notes) == sorted(shipped)
    assert len({note[0] for note in notes.values()}) == len(shipped)


@pytest.mark.parametrize(("argv", "message"), [
    ((), "give --anki FILE, --json FILE or both"),
    (("--json", "x.json", "--topic", "attention"),
     "no questions to export in topic(s) attention; the topics are: demo\n"),
    (("--json", "x.json", "--bank", "no/such.yaml"), "no such bank file or folder: no/such.yaml"),
    # issue 32, item 10: a deck written under .txt, and a mistyped folder created without a word
    (("--anki", "x.txt"), "Anki imports only as .apkg: x.apkg?"),
    (("--json", "no-such-folder/x.json"), "no such folder: no-such-folder (create it first)"),
])
def test_usage_errors(capsys: pytest.CaptureFixture[str], bank: Path, argv: tuple[str, ...], message: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["export", "--bank", str(bank), *argv])
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_a_failed_export_leaves_the_earlier_deck(bank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deck = tmp_path / "deck.apkg"
    deck.write_bytes(b"an earlier deck")

    def fail(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(genanki.Package, "write_to_file", fail)
    with pytest.raises(OSError, match="disk full"):
        cli.main(["export", "--anki", str(deck), "--bank", str(bank)])
    assert deck.read_bytes() == b"an earlier deck"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deck.apkg", "demo.yaml"]  # no partial file left


@pytest.mark.parametrize(("markdown", "html"), [
    ("a `x*y*z` and 2 * 3 * 4", "<p>a <code>x*y*z</code> and 2 * 3 * 4</p>"),
    ("an *IO-aware* **kernel**", "<p>an <i>IO-aware</i> <b>kernel</b></p>"),
    ("one\nline\n\nnext", "<p>one line</p><p>next</p>"),
    ("steps:\n- first\n- second", "<p>steps:<br>- first<br>- second</p>"),
    ("a lone ` stays", "<p>a lone ` stays</p>"),
    ("  ```\n  if a < b:\n      pass\n  ```", "<pre><code>if a &lt; b:\n    pass</code></pre>"),
])
def test_markdown_becomes_readable_html(markdown: str, html: str) -> None:
    assert markdown_html(markdown) == html
