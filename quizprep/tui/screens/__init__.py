"""The screens of the quiz app, one per module."""
from pathlib import Path

# The rules of every screen but Home. Each of those screens names it as its CSS_PATH, so Textual
# reads it when the first of them opens: parsing it with the app's stylesheet delayed every start.
SCREENS_CSS = Path(__file__).parent.parent / "screens.tcss"
