"""The code that runs inside the learner's process: stdlib and torch only, never quizprep.

The worker (`worker.py`) and the perf phase's worker (`perf_worker.py`) are started as scripts
and the fork server (`forkserver.py`) forks workers; they load the other modules here by file
path, so learner code cannot reach the grader through `import quizprep`. The grader's own side
(`quizprep.grader.worker_session`, `perf`, `cohort`) imports the shared ones by name: the pipe
framing (`protocol`), the confinement rules (`sandbox`), the fork server, the memory audit
(`memaudit`) and the perf phase's timing code (`perf_runner`, `perf_clocks`). These import no
sibling: where one needs another, whoever loaded both hands it over (the case runner is given
`memaudit.audit`). This file imports nothing, so importing one of them loads no more of the
learner side than it.
"""
