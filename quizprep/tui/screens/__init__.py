"""The screens of the quiz app, one per module."""
