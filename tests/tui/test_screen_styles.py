"""Only Home's rules are parsed before the first frame (issue 32, item 11): every other screen's
come from screens.tcss just after it, or at once when another screen opens first. Home is never
restyled for them, so none of them may apply to a widget Home shows."""
from __future__ import annotations

import pytest
from textual.css.stylesheet import Stylesheet
from textual.widgets import Static

from quizprep.tui import app as app_module
from quizprep.tui.screens.home import HomeScreen

SIZE = (80, 24)


def screens_rules(app):
    """screens.tcss's rules parsed alone, with the app's theme variables."""
    sheet = Stylesheet(variables=app.stylesheet._variables)
    sheet.read(app_module.SCREENS_CSS)
    sheet.parse()
    return sheet.rules


def help_box_styled(app) -> bool:
    """Whether Help's box has screens.tcss's round border and height."""
    box = app.screen.query_one("#help-box")
    return box.styles.border.top[0] == "round" and box.styles.height.value == 22


async def test_no_rule_of_the_other_screens_applies_to_anything_on_home(make_app):
    app = make_app(search_text="alpha")  # Home with its search field and a notice of the filter
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        nodes = [app, *app.screen.walk_children(with_self=True)]
        assert len(nodes) > 8
        rules = screens_rules(app)
        assert len(rules) > 50
        applied = [(node, rule.selector_set) for node in nodes for rule in rules
                   if list(Stylesheet._check_rule(rule, node.css_path_nodes))]
        assert applied == []


async def test_a_screen_opened_before_the_rules_are_read_gets_them_at_once(make_app, monkeypatch):
    monkeypatch.setattr(app_module.QuizApp, "AFTER_FIRST_FRAME_S", 60.0)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        assert not app.screen_styles_loaded
        await pilot.press("f1")
        await pilot.pause()
        assert app.screen_styles_loaded
        assert help_box_styled(app)


@pytest.mark.parametrize("theme_first", [False, True])
async def test_the_rules_are_read_once_after_homes_first_frame_and_leave_home_as_it_was(
        make_app, monkeypatch, theme_first):
    monkeypatch.setattr(app_module.QuizApp, "AFTER_FIRST_FRAME_S", 0.001)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        if theme_first:  # a theme change re-parses every source read so far
            await pilot.press("ctrl+t")
        await pilot.pause(0.05)
        assert app.screen_styles_loaded
        sources = [path for path, _ in app.stylesheet.source if path == str(app_module.SCREENS_CSS)]
        assert len(sources) == 1
        title = app.screen.query_one("#home-title", Static)
        assert title.styles.text_style.bold and title.styles.padding.left == 1
        await pilot.press("f1")
        await pilot.pause()
        assert help_box_styled(app)
