"""The exercise grader: `quizprep grade PATH` runs learner code in isolation against a reference.

Map of the package (what runs where):

* grader process — :mod:`grade` (runs checks, builds the report), :mod:`device` (where the
  learner's code runs, decided once), :mod:`reference` (float64 engine), :mod:`mistakes` (classic
  bugs as hypotheses), :mod:`compare` (tolerances and localisation), :mod:`problem` (cases,
  shrinking, diagnosis), :mod:`report` (Rich / JSON), :mod:`lessons` (quiz ids),
  :mod:`worker_session` (starts and drives a worker); :mod:`perf` times against SDPA. The command
  line that calls it is :mod:`quizprep.cli.grade_command`.
* learner process — :mod:`learner_side` (the worker, started as a script, speaking its
  protocol over two private pipes, its sandbox and guards). It never holds a reference result
  and imports nothing of quizprep.

Adding an exercise: see :mod:`quizprep.grader.exercises` (one module per exercise defining
``SPEC``) and :mod:`quizprep.grader.spec` (the interface; ``ExerciseSpec.perf`` is where a
timing phase plugs in: it receives the same :class:`~quizprep.grader.context.CheckContext`
after every check has passed).
"""
