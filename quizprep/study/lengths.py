"""How many questions a session asks when the learner chose no length, and a mock's time. Its own
module, without imports, because Home names them at start-up, where the session modules are not
loaded yet."""

MOCK_QUESTIONS = 8
MOCK_MINUTES = 20
INTERVIEW_QUESTIONS = 20  # interview practice without a chosen length: the weakest, a session's worth
