"""The exercise grader: `quizprep grade PATH` runs learner code in isolation against a reference.

Map of the package (what runs where):

* grader process — :mod:`grade` (runs checks, builds the report), :mod:`reference` (float64
  engine), :mod:`mistakes` (classic bugs as hypotheses), :mod:`compare` (tolerances and
  localisation), :mod:`problem` (cases, shrinking, diagnosis), :mod:`report` (Rich / JSON),
  :mod:`command` (the CLI; imports torch only inside handlers), :mod:`lessons` (quiz ids).
* learner process — :mod:`worker`, started by :mod:`session` as a script, speaking
  :mod:`protocol` over two private pipes. It never holds a reference result.

Adding an exercise: see :mod:`quizprep.grader.exercises` (one module per exercise defining
``SPEC``) and :mod:`quizprep.grader.spec` (the interface; ``ExerciseSpec.perf`` is where a
timing phase plugs in: it receives the same :class:`~quizprep.grader.context.CheckContext`
after every check has passed).
"""
