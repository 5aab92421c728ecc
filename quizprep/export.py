"""`quizprep export`: the question banks as flashcards, an Anki deck or JSON for other tools.

Cards are keyed by question id: a note's Anki GUID is `genanki.guid_for(id)`, so importing a
newer export of an edited bank updates the cards in place and keeps their review history. A
numeric card shows one fixed draw of its parameters (seed `EXPORT_SEED`) with the worked answer.
genanki is imported only when a deck is written: this module is registered with the other
commands, and only the export itself needs it.
"""
from __future__ import annotations

import argparse
import html
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, Iterable

from quizprep.bank.model import ChoiceQuestion, FreeQuestion, NumericQuestion, Question

EXPORT_SEED = 1
# Anki knows a note type and a deck by these numbers; fixed (drawn once at random) so that every
# export updates the same deck instead of adding a new one.
ANKI_MODEL_ID = 1_488_726_888
ANKI_DECK_ID = 1_502_363_045
DECK_NAME = "quizprep: attention in LLMs"
CARD_CSS = """.card { font-family: sans-serif; font-size: 18px; text-align: left; }
pre { background: #f4f4f4; color: #222; padding: 8px; overflow-x: auto; }
.worked { font-family: monospace; }"""

FENCE = re.compile(r"^[ \t]*```[\w+-]*[ \t]*\n(.*?)^[ \t]*```[ \t]*$", re.MULTILINE | re.DOTALL)
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
ITALIC = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export", help="the question banks as an Anki deck or JSON",
        description="Write every question as a flashcard: choice questions with the right answer and "
                    "why, numeric ones with one worked draw, free responses with the model answer and "
                    "rubric. Cards keep their identity across exports (keyed by question id).",
        epilog="examples:\n  quizprep export --anki attention.apkg\n"
               "  quizprep export --json cards.json --topic memory",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--anki", type=Path, metavar="FILE", help="write an Anki deck (.apkg)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the cards as JSON ('-': print them)")
    parser.add_argument("--bank", action="append", default=[], type=Path, metavar="PATH",
                        help="a bank file or folder instead of the shipped banks (repeatable)")
    parser.add_argument("--topic", action="append", default=[], metavar="T", help="only this topic (repeatable)")
    parser.set_defaults(handler=run, export_parser=parser)


def run(args: argparse.Namespace) -> int:
    from quizprep.bank.loader import load_banks

    if args.anki is None and args.json is None:
        args.export_parser.error("give --anki FILE, --json FILE or both")
    missing = [str(path) for path in args.bank if not path.exists()]
    if missing:
        args.export_parser.error(f"no such bank file or folder: {', '.join(missing)}")
    problem = target_problem(args.anki, args.json)
    if problem:
        args.export_parser.error(problem)
    loaded = load_banks(args.bank or None)
    questions = [q for q in loaded.questions if not args.topic or q.topic in args.topic]
    if not questions:
        topics = ", ".join(sorted({q.topic for q in loaded.questions})) or "none"
        args.export_parser.error(f"no questions to export in topic(s) {', '.join(args.topic)}; the topics are: {topics}"
                                 if args.topic else "no questions to export")
    if loaded.errors:
        print(f"quizprep export: {len(loaded.errors)} problem(s) in the banks; the questions they affect "
              "are left out (`quizprep check` lists them)", file=sys.stderr)
    cards = [card(question) for question in questions]
    if args.json is not None:
        text = json.dumps({"seed": EXPORT_SEED, "cards": cards}, ensure_ascii=False, indent=2) + "\n"
        if str(args.json) == "-":
            sys.stdout.write(text)
        else:
            _write_atomically(args.json, lambda path: path.write_text(text, encoding="utf-8"))
    if args.anki is not None:
        _write_atomically(args.anki, lambda path: write_anki(cards, path))
    written = [str(path) for path in (args.anki, args.json) if path is not None and str(path) != "-"]
    if written:
        print(f"{len(cards)} cards written to {' and '.join(written)}", file=sys.stderr)
    return 0


def target_problem(anki: Path | None, json_file: Path | None) -> str | None:
    """Why the files asked for cannot be written as asked, or None: Anki imports a deck only
    from a .apkg file, and a folder that does not exist is more likely a typo than a wish."""
    if anki is not None and anki.suffix.casefold() != ".apkg":
        return f"--anki writes an Anki package, which Anki imports only as .apkg: {anki.with_suffix('.apkg')}?"
    folders = [path.parent for path in (anki, json_file) if path is not None and str(path) != "-"]
    absent = sorted({str(folder) for folder in folders if not folder.is_dir()})
    return f"no such folder: {', '.join(absent)} (create it first)" if absent else None


def _write_atomically(target: Path, write: Callable[[Path], object]) -> None:
    """An export that fails half-way leaves an earlier file at `target` as it was."""
    # Not mkstemp: its file is private (0600); this one gets the usual permissions.
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        write(partial)
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


# -- card content (plain data: what --json writes and the deck is made from) ------------------

def card(question: Question) -> dict[str, Any]:
    """One question as a card: Markdown text as in the bank, the answer worked out."""
    content: dict[str, Any] = {
        "id": question.id, "topic": question.topic, "kind": question.kind,
        "difficulty": question.difficulty, "tags": list(question.tags),
        "prompt": question.prompt.strip(), "explanation": question.explanation.strip(),
        "references": list(question.references),
    }
    if isinstance(question, ChoiceQuestion):
        content["multiple"] = question.multiple
        content["choices"] = [{"text": c.text, "correct": c.correct, "why": c.why} for c in question.choices]
    elif isinstance(question, NumericQuestion):
        content.update(_numeric(question))
    elif isinstance(question, FreeQuestion):
        content["model_answer"] = question.model_answer.strip()
        content["rubric"] = [{"criterion": item.criterion, "weight": item.weight} for item in question.rubric]
    return content


def _numeric(question: NumericQuestion) -> dict[str, Any]:
    from quizprep.bank.numeric import draw, expected_text, fill_placeholders, tolerance_text, worked_steps

    shown = draw(question, EXPORT_SEED)
    return {
        "prompt": fill_placeholders(question.prompt, shown).strip(),
        "explanation": fill_placeholders(question.explanation, shown).strip(),
        "answer": {"value": float(shown.answer), "unit": question.unit, "text": expected_text(question, shown),
                   "tolerance": tolerance_text(question), "worked": worked_steps(question, shown)},
    }


# -- HTML for Anki ------------------------------------------------------------------------

def front_html(content: dict[str, Any]) -> str:
    parts = [markdown_html(content["prompt"])]
    if content["kind"] == "choice":
        hint = "Select all that apply." if content["multiple"] else "Pick one."
        items = "".join(f"<li>{_inline(choice['text'])}</li>" for choice in content["choices"])
        parts.append(f"<ol>{items}</ol><p><i>{hint}</i></p>")
    return "".join(parts)


def back_html(content: dict[str, Any]) -> str:
    kind = content["kind"]
    if kind == "choice":
        rows = "".join(
            f"<li>{'✓' if choice['correct'] else '✗'} {_inline(choice['text'])}"
            f"<br><small>{_inline(choice['why'])}</small></li>"
            for choice in content["choices"]
        )
        parts = [f"<ol>{rows}</ol>"]
    elif kind == "numeric":
        answer = content["answer"]
        worked = "<br>".join(html.escape(step) for step in answer["worked"])
        parts = [f"<p><b>{html.escape(answer['text'])}</b> (tolerance {html.escape(answer['tolerance'])})</p>",
                 f"<p class=worked>{worked}</p>"]
    else:
        rubric = "".join(f"<li>{_inline(item['criterion'])} <small>(weight {item['weight']:g})</small></li>"
                         for item in content["rubric"])
        parts = [f"<p><b>Model answer</b></p>{markdown_html(content['model_answer'])}",
                 f"<p><b>Rubric</b></p><ul>{rubric}</ul>"]
    if content["explanation"]:
        parts.append(f"<hr>{markdown_html(content['explanation'])}")
    if content["references"]:
        parts.append("<p><small>" + "<br>".join(html.escape(ref) for ref in content["references"]) + "</small></p>")
    return "".join(parts)


def markdown_html(text: str) -> str:
    """The Markdown the banks use, as HTML: code blocks in <pre>, paragraphs, list lines,
    `code`, **bold** and *italic*. Unicode math (QKᵀ/√d_k) is kept as written."""
    out, last = [], 0
    for fence in FENCE.finditer(text):
        out.append(_paragraphs(text[last:fence.start()]))
        out.append(f"<pre><code>{html.escape(_dedent(fence.group(1)))}</code></pre>")
        last = fence.end()
    out.append(_paragraphs(text[last:]))
    return "".join(out)


def _paragraphs(text: str) -> str:
    rendered = []
    for paragraph in re.split(r"\n\s*\n", text.strip()):
        lines = [line.strip() for line in paragraph.splitlines() if line.strip()]
        if lines:
            # Bank text is wrapped at ~100 columns: lines join with a space, except list items.
            joined = lines[0] + "".join(("\n" if LIST_ITEM.match(line) else " ") + line for line in lines[1:])
            rendered.append(f"<p>{_inline(joined).replace(chr(10), '<br>')}</p>")
    return "".join(rendered)


def _inline(text: str) -> str:
    pieces = text.split("`")
    out = []
    for index, piece in enumerate(pieces):
        if index % 2 and index < len(pieces) - 1:  # between a pair of backticks
            out.append(f"<code>{html.escape(piece)}</code>")
            continue
        escaped = html.escape(piece if index % 2 == 0 else "`" + piece)  # an unpaired backtick stays
        out.append(ITALIC.sub(r"<i>\1</i>", BOLD.sub(r"<b>\1</b>", escaped)))
    return "".join(out)


def _dedent(code: str) -> str:
    import textwrap

    return textwrap.dedent(code).rstrip("\n")


def write_anki(cards: Iterable[dict[str, Any]], path: Path) -> None:
    import genanki

    model = genanki.Model(
        ANKI_MODEL_ID, "quizprep card",
        fields=[{"name": "Id"}, {"name": "Front"}, {"name": "Back"}],
        templates=[{"name": "Card", "qfmt": "{{Front}}", "afmt": "{{FrontSide}}<hr id=answer>{{Back}}"}],
        css=CARD_CSS, sort_field_index=0,
    )
    deck = genanki.Deck(ANKI_DECK_ID, DECK_NAME)
    for content in cards:
        tags = [f"quizprep::{content['topic']}", *content["tags"]]
        deck.add_note(genanki.Note(
            model=model, fields=[content["id"], front_html(content), back_html(content)],
            tags=[tag.replace(" ", "_") for tag in tags], guid=genanki.guid_for(content["id"]),
        ))
    genanki.Package(deck).write_to_file(str(path))
