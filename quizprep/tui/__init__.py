"""The Textual quiz app (`quizprep quiz`): screens, widgets and one stylesheet."""
