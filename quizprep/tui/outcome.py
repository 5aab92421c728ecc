"""What a screen dismisses with when it is not an answer: go on, or the mock round's time ran out."""
NEXT = "next"
TIME_UP = "time-up"
