"""quizprep: interview preparation for attention — a terminal quiz app and an exercise grader."""

__version__ = "0.1.0"
