"""The cycle collector is paused only while the first screen is built (quizprep/tui/app.py)."""
from __future__ import annotations

import gc

from textual.css.stylesheet import Stylesheet
from textual.widgets import DataTable

from quizprep.tui.screens.home import HomeScreen
from quizprep.tui.widgets.flat_footer import FlatFooter


async def test_the_collector_runs_again_once_home_is_up(make_app):
    assert gc.isenabled()
    app = make_app()
    async with app.run_test() as pilot:
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        assert gc.isenabled()


async def test_the_collector_runs_again_when_the_app_cannot_start(make_app, tmp_path):
    foreign = tmp_path / "notes.md"
    foreign.write_text("not a quizprep database\n")
    app = make_app(db=foreign)
    async with app.run_test():
        pass
    assert app.return_code == 1
    assert gc.isenabled()


async def test_home_is_laid_out_for_a_short_terminal_before_its_first_frame(make_app, monkeypatch):
    """At 24 rows Home drops the spacer under its summary; doing it only on the first Resize
    made the table grow a row after its first layout and draw every cell a second time."""
    resized: list[int] = []
    on_resize = DataTable._on_resize

    def count(table: DataTable, event) -> None:
        resized.append(table.size.height)
        on_resize(table, event)

    monkeypatch.setattr(DataTable, "_on_resize", count)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.screen.has_class("-short")
        assert len(resized) == 1, f"the topics table was sized {resized}"


async def test_homes_widgets_are_styled_once_as_they_mount(make_app, monkeypatch):
    """The class for 24 rows is set before Home's widgets mount: set once they had mounted, it
    restyled the whole screen before the first frame (a few ms of every start). Nor does Home's
    first ScreenResume restyle them (Textual's default), just after they mounted (issue 32)."""
    restyled: list[str] = []
    update_nodes = Stylesheet.update_nodes

    def record(stylesheet: Stylesheet, nodes, animate: bool = False) -> None:
        nodes = list(nodes)
        restyled.extend(node.id for node in nodes if node.id == "home-summary")
        update_nodes(stylesheet, nodes, animate=animate)

    monkeypatch.setattr(Stylesheet, "update_nodes", record)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.screen.has_class("-short")
        assert not restyled, f"Home's summary was restyled {len(restyled)} times"


async def test_homes_footer_is_drawn_once_as_the_table_takes_focus(make_app, monkeypatch):
    """The table taking focus as Home comes up changes no key the footer shows; the footer drew
    itself a second time for it before the first frame was done (issue 32)."""
    renders: list[str] = []
    render = FlatFooter.render

    def record(footer: FlatFooter):
        drawn = render(footer)
        renders.append(drawn.plain)
        return drawn

    monkeypatch.setattr(FlatFooter, "render", record)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen) and app.focused is app.query_one(DataTable)
        assert len(renders) == 1 and "Help" in renders[0]
