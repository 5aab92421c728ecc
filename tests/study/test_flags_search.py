"""Flagging a question as wrong (a Markdown file beside the database, `quizprep flags`), and
finding questions by words and tags."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from quizprep import cli
from quizprep.study.flags import FLAG_FILE, flag_question, flags_path
from quizprep.study.search import search

NOW = datetime(2026, 11, 24, 1, 30, tzinfo=timezone.utc)


def test_flags_are_appended_beside_the_database_and_printed(tmp_path, capsys):
    db = tmp_path / "data" / "progress.sqlite3"
    path = flags_path(db)
    assert path == tmp_path / "data" / FLAG_FILE
    assert flag_question("gqa-kv-bytes", "The answer ignores\nthe batch size.", now=NOW, path=path,
                         source="questions/gqa.yaml:12") == path
    flag_question("mla-latent", "typo in choice 2", now=NOW.replace(hour=2), path=path)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Flagged questions\n") and text.count("# Flagged questions") == 1
    assert "## gqa-kv-bytes (questions/gqa.yaml:12)\n\nFlagged 2026-11-24 01:30 UTC:\n\n" \
           "> The answer ignores\n> the batch size.\n" in text
    assert text.index("gqa-kv-bytes") < text.index(
        "## mla-latent\n\nFlagged 2026-11-24 02:30 UTC:\n\n> typo in choice 2\n")
    assert cli.main(["flags", "--db", str(db)]) == 0
    assert capsys.readouterr().out == f"{path}\n\n{text}"


def test_an_empty_reason_is_refused_and_nothing_written(tmp_path, capsys):
    path = tmp_path / FLAG_FILE
    with pytest.raises(ValueError, match="say what is wrong"):
        flag_question("q", "  \n ", now=NOW, path=path)
    assert not path.exists()
    assert cli.main(["flags", "--db", str(tmp_path / "p.sqlite3")]) == 0
    assert capsys.readouterr().out == f"No question has been flagged yet (flags are written to {path}).\n"


def ids(found):
    return [q.id for q in found]


def test_search_matches_every_word_in_id_prompt_topic_or_tags(questions):
    assert ids(search(questions, "FIRST")) == ["alpha-one", "alpha-many"]  # prompts, any case
    assert ids(search(questions, "pick third")) == ["alpha-many"]  # every word, anywhere
    assert ids(search(questions, "beta")) == ["beta-one", "beta-two"]  # ids and topic
    assert ids(search(questions, "first", tags=["nothing"])) == []
    assert search(questions) == list(questions)


def test_search_by_tag_keeps_questions_with_any_of_the_tags(questions):
    import dataclasses

    tagged = [dataclasses.replace(q, tags=("KV-Cache",) if q.id == "alpha-one" else ("masks",) if q.id == "beta-two"
                                  else ()) for q in questions]
    assert ids(search(tagged, tags=["kv-cache"])) == ["alpha-one"]
    assert ids(search(tagged, tags=["kv-cache", "masks"])) == ["alpha-one", "beta-two"]
    assert ids(search(tagged, "kv-cache")) == ["alpha-one"]  # the text looks at tags too
    assert ids(search(tagged, tags=["kv", "MASK"])) == ["alpha-one", "beta-two"]  # a tag's start, as Anki's tag:kv*
    assert ids(search(tagged, tags=["cache"])) == []  # its start, not any part of it
