"""Exercise stubs that learners fill in; `quizprep init DIR` copies them."""
