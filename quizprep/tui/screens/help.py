"""F1 (or `?` where it is not typed): the keys of the screen underneath, and how to type answers."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Markdown, Static

ANSWERING = """\
### Answering

- **Choices**: press the number of a choice, or move with **↑/↓** and press **Space**; when
  several are right, each press toggles one. **Enter** hands the pick in.
- **Numbers** accept units and scientific notation: `32 GiB`, `3.4e10 B`, `512 MB`, `2.7e8`,
  `268M`, `7B params`, `1.5 TFLOP`, `1.2 ms`; arithmetic such as `2*2048*2048 B`, `8*2^20`, `3e9/2`;
  `14.8%` for a fraction and `4x` for a factor. A bare number is in the unit the question asks
  for ("Answer in MiB": `8` is 8 MiB). The line under the field says what was understood.
  GiB/MiB are powers of 1024, GB/MB and the bare k, M, G powers of 1000; Mb, Gib, kb are bits.
- **Free responses**: write, then **Ctrl+S**; tick the rubric items your answer met with number keys.

- **Ctrl+G** "I don't know": counts as a wrong answer and shows the explanation.
- **Ctrl+F** flags the question as wrong; your reason goes to `flagged-questions.md` beside the
  progress database.
- **h** shows the question's answers, what the schedule made of each and why it is due (on a
  Home topic: each question of it). On a number or free response, press it on the feedback.
- On Home, **/** narrows everything to questions matching words and `#tags` (`#mem`: any tag
  starting mem); **l** sets how
  many questions a session asks; **d** sets the interview date, after which **i** practises
  what you would most likely have forgotten by then and **c** crams the weak questions.

- On the feedback, **1–4** rate the answer yourself (Again, Hard, Good, Easy) in place of the
  rating its verdict gave, and **Ctrl+Z** takes the answer back to answer it again; on the next
  question too, as in Anki (in a free answer's box it undoes typing first).

Every answer is saved the moment you give it, and a number or free response being typed is kept
as a draft that comes back with its question: quitting at any time loses nothing.
"""


def keys_markdown(screen: Screen) -> str:
    """The keys of `screen` as a list, a group of number keys as one line: also those the footer
    leaves out for room (a key's second binding, with the same description, is not repeated)."""
    lines = []
    seen: set[str] = set()
    for active in screen.active_bindings.values():
        binding = active.binding
        description = binding.group.description if binding.group else binding.description
        if not description or description in seen or not (binding.show or _ours(active.node, binding)):
            continue
        seen.add(description)
        keys = "number keys" if binding.group else screen.app.get_key_display(binding)
        lines.append(f"- **{keys}** {description}")
    return "### Keys here\n\n" + "\n".join(lines)


def _ours(node: object, binding: Binding) -> bool:
    """A key quizprep keeps out of the footer for room (not one of Textual's own hidden keys)."""
    own = vars(type(node)).get("BINDINGS", ()) if type(node).__module__.startswith("quizprep.") else ()
    return any(isinstance(b, Binding) and b.action == binding.action for b in own)


class HelpScreen(ModalScreen[None]):
    # Below 96 columns the box takes the whole width: a 76-column box left slivers of the
    # screen underneath on either side, read as part of the help (issue 32, item 10).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (96, "-wide")]
    BINDINGS = [Binding("escape,f1,question_mark,q", "close", "Close help")]

    def __init__(self, underneath: Screen) -> None:
        super().__init__()
        # Read now, while `underneath` is the app's screen: the app's own keys (h, Ctrl+F) are
        # offered according to the screen shown, which is this one once it is pushed.
        self.keys = keys_markdown(underneath)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static("quizprep help · Esc closes", id="help-title")
            yield Markdown(f"{self.keys}\n\n{ANSWERING}")

    def action_close(self) -> None:
        self.dismiss(None)
