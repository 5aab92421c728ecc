"""What a screen dismisses with when it is not an answer: go on, the mock round's time ran out,
or the answer before the question shown was taken back (Ctrl+Z on a question)."""
NEXT = "next"
TIME_UP = "time-up"
TAKEN_BACK = "taken-back"
