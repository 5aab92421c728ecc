"""The question and feedback screens' quicker Footer and Markdown (issue 21, screen-change
latency) draw what Textual's own widgets draw, with fewer widgets and fewer re-compositions."""
from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Markdown

from choices import keys_for
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.widgets.quick import FlatBulletList, QuickFooter, QuickMarkdown

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
              (segment.style.color, segment.style.bgcolor, segment.style.bold, segment.style.italic))
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
        assert [widget.items is not None for widget in flat] == [True, False, True]  # the outer of two nested lists is composed
        assert len(list(quick.walk_children())) < len(list(textual.walk_children()))


class Keys(App[None]):
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [Binding("a", "toggle", "A key")]
    shown = True

    def compose(self) -> ComposeResult:
        yield QuickFooter(compact=True)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.shown if action == "toggle" else True


async def test_the_footer_recomposes_only_when_its_keys_change():
    app = Keys()
    async with app.run_test() as pilot:
        await pilot.pause()
        footer = app.query_one(QuickFooter)
        first = list(footer.children)
        assert first
        app.refresh_bindings()
        await pilot.pause()
        assert list(footer.children) == first  # nothing changed: the same key widgets
        app.shown = False
        app.refresh_bindings()
        await pilot.pause()
        assert not footer.children


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
