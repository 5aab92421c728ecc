"""Home starts with the app's own rules only; every other screen brings the rest of the stylesheet
(screens.tcss) when it first opens, so a start does not parse rules Home never uses."""
from __future__ import annotations

import importlib
import inspect
import pkgutil

from textual.screen import Screen

import quizprep.tui.screens as screens_package
from quizprep.tui.app import QuizApp
from quizprep.tui.screens import SCREENS_CSS
from quizprep.tui.screens.home import HomeScreen

WIDE = (120, 40)


def screen_classes() -> set[type[Screen]]:
    """Every Screen class defined in quizprep.tui.screens, Home included."""
    found: set[type[Screen]] = set()
    for module_info in pkgutil.iter_modules(screens_package.__path__):
        module = importlib.import_module(f"{screens_package.__name__}.{module_info.name}")
        found |= {cls for _, cls in inspect.getmembers(module, inspect.isclass)
                  if issubclass(cls, Screen) and cls.__module__ == module.__name__}
    return found


def test_every_screen_but_home_brings_the_rest_of_the_stylesheet() -> None:
    others = screen_classes() - {HomeScreen}
    assert len(others) >= 10  # all the modules were found, not only the ones already imported
    assert {cls.__name__ for cls in others if cls.CSS_PATH != SCREENS_CSS} == set()
    assert HomeScreen.CSS_PATH is None and QuizApp.CSS_PATH != SCREENS_CSS


def has_screen_rules(app: QuizApp) -> bool:
    return app.stylesheet.has_source(str(SCREENS_CSS), "")


async def test_the_other_screens_rules_are_read_when_the_first_of_them_opens(make_app) -> None:
    app = make_app()
    async with app.run_test(size=WIDE) as pilot:
        assert isinstance(app.screen, HomeScreen) and not has_screen_rules(app)
        await pilot.press("f1")
        assert has_screen_rules(app)
        assert app.screen.query_one("#help-box").outer_size.width == 76  # screens.tcss: width 76


async def test_a_session_screen_is_styled_by_the_rules_read_for_it(make_app) -> None:
    app = make_app()
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("a")
        await pilot.pause()
        bar = app.screen.query_one("#question-bar")
        assert bar.outer_size.height == 1  # screens.tcss: the bar above a question is one row
