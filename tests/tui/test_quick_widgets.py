"""The question and feedback screens' flat Footer and quicker Markdown (issue 21, screen-change
latency) draw what Textual's own widgets draw, with fewer widgets."""
from __future__ import annotations

from collections.abc import Callable

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.pilot import Pilot
from textual.widgets import Footer, Markdown

from choices import keys_for
from quizprep.tui.app import QuizApp
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.widgets.flat_footer import FlatFooter
from quizprep.tui.widgets.quick import FlatBulletList, QuickMarkdown

TEXT = """### Pitfalls

- A long item that has to wrap over several lines at this width, with `inline code`, **bold**
  and *emphasis* in it, so the wrapped lines must hang under the text and not the bullet.
- Short.

A paragraph between the lists.

- Outer item
  - A nested item keeps Textual's own list.
"""


class Side(App[None]):
    def compose(self) -> ComposeResult:
        with Vertical(id="textual"):
            yield Markdown(TEXT)
        with Vertical(id="quick"):
            yield QuickMarkdown(TEXT)


def drawn(app: App, selector: str) -> list[list[tuple[str, object]]]:
    """What is seen in the region of `selector`: each cell's character and its colours and
    style (a blank's foreground colour is not seen)."""
    region = app.query_one(selector).region
    strips = app.screen._compositor.render_strips()
    return [[(char, (segment.style.bgcolor,) if char == " " else
              (segment.style.color, segment.style.bgcolor, segment.style.bold, segment.style.italic,
               segment.style.dim))
             for segment in strip.crop(region.x, region.right) for char in segment.text]
            for strip in strips[region.y:region.bottom]]


async def test_quick_markdown_draws_what_markdown_draws_with_one_widget_per_flat_list():
    app = Side()
    async with app.run_test(size=(50, 60)) as pilot:
        await pilot.pause()
        textual, quick = app.query_one("#textual Markdown"), app.query_one(QuickMarkdown)
        assert textual.region.height == quick.region.height
        assert drawn(app, "#quick") == drawn(app, "#textual")
        flat = list(quick.query(FlatBulletList))
        # the outer of two nested lists is composed
        assert [widget.items is not None for widget in flat] == [True, False, True]
        assert len(list(quick.walk_children())) < len(list(textual.walk_children()))


PICK = Binding.Group("Pick", compact=True)


class Keys(App[None]):
    """Keys as the question screen has them: a compact group, shown keys, a hidden one, a
    disabled one (check_action None), and one that comes and goes."""

    ENABLE_COMMAND_PALETTE = False
    CSS_PATH = QuizApp.CSS_PATH
    # FlatFooter leaves a space after a group's label, as the app once asked of Textual's Footer
    CSS = "Footer.-compact FooterLabel { margin: 0 1 0 0; }"
    BINDINGS = [*(Binding(str(n), f"pick({n})", f"Pick {n}", group=PICK) for n in range(1, 4)),
                Binding("enter", "submit", "Submit"), Binding("e", "edit", "Edit assessment"),
                Binding("z", "secret", "Hidden", show=False), Binding("ctrl+g", "skip", "Don't know"),
                Binding("x", "toggle", "Toggled")]
    shown = True

    def __init__(self, flat: bool) -> None:
        super().__init__()
        self.flat = flat

    def compose(self) -> ComposeResult:
        yield FlatFooter() if self.flat else Footer(compact=True)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "edit":
            return None
        return self.shown if action == "toggle" else True

    def action_skip(self) -> None:
        self.skipped = True


async def footer_cells(flat: bool, theme: str) -> list[list[tuple[str, object]]]:
    app = Keys(flat)
    async with app.run_test(size=(80, 3)) as pilot:
        app.theme = theme
        shown = await settled(app, pilot, lambda text: "Toggled" in text)
        app.shown = False
        app.refresh_bindings()
        return [shown, await settled(app, pilot, lambda text: "Toggled" not in text)]


async def settled(app: App[None], pilot: Pilot[None], ready: Callable[[str], bool]) -> list[list[tuple[str, object]]]:
    """The footer once `ready` holds of its text and two frames 50 ms apart draw the same: a theme's
    colours and each footer's keys (Textual's recomposes) arrive a frame or more later, and later
    still on a loaded machine."""
    before = None
    for _ in range(100):
        await pilot.pause(0.05)
        now = drawn(app, "Footer, FlatFooter")
        if now == before and ready("".join(char for char, _ in now[0])):
            break
        before = now
    return before


async def test_the_flat_footer_draws_what_the_compact_footer_draws():
    for theme in ("textual-dark", "textual-light"):
        flat = await footer_cells(True, theme)
        assert flat == await footer_cells(False, theme)
        assert "".join(char for char, _ in flat[0][0]).startswith(" 123 Pick ⏎ Submit e Edit assessment")
        assert "Toggled" not in "".join(char for char, _ in flat[1][0])


async def test_clicking_a_flat_footer_key_presses_it():
    app = Keys(True)
    async with app.run_test(size=(80, 3)) as pilot:
        await pilot.pause()
        text = "".join(char for char, _ in drawn(app, "FlatFooter")[0])
        await pilot.click(FlatFooter, offset=(text.index("^g") + 1, 0))
        assert getattr(app, "skipped", False)


async def test_the_feedback_scrolls_with_its_keys_without_focus(make_app):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=(80, 12)) as pilot:
        await pilot.press(*keys_for(app, 0), "enter")
        assert isinstance(app.screen, FeedbackScreen)
        body = app.screen.query_one("#feedback-body")
        assert app.screen.focused is None and body.max_scroll_y > 0
        await pilot.press("down")
        assert body.scroll_y == 1
        await pilot.press("end")
        assert body.scroll_y == body.max_scroll_y
        await pilot.press("home", "pagedown")
        assert body.scroll_y > 1
