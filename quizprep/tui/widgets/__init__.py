"""Widgets of the quiz app that carry behaviour of their own, one per module."""
