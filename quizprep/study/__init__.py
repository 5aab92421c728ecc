"""The learning layer, without a UI: progress store, FSRS scheduling, sessions, stats, reports.

Nothing here imports Textual or torch, and importing this package is cheap: submodules load
`fsrs`, `platformdirs` and the numeric judge only when they are used. Import from the submodules:

store — `quizprep.study.store`
    `Store.open(path=None) -> Store`   path: `--db` value or None (then `$QUIZPREP_DB`, else
        progress.sqlite3 in the platformdirs user data dir; see `quizprep.study.dbpath`). Creates and
        migrates the database. A damaged quizprep database or a newer-version one is moved aside,
        never overwritten, and the answers that still read are copied into the new one; a file
        that is not a quizprep database is refused and left as it is. Show every line of
        `store.notices` to the learner (it says where an old file went and which rows were set
        aside as damaged). Raises `StoreError` (message ready to show) when the database cannot
        be opened at all or another program holds the write lock.
    `store.close()` (or `with Store.open(...) as store:`). Safe to use from worker threads.
    Read-only helpers the UI may want: `store.answers(question_id=, session_id=, since=)`,
    `store.card(question_id)`, `store.path`. The store reviews and rebuilds each question's FSRS
    card through `quizprep.study.cards`.

sessions — `quizprep.study.session` (values in `.showing`; the builders below in `quizprep.study.builders`)
    Build: `practice(store, questions, topics=(), limit=None, now=utc_now, rng=None)`,
           `review(store, questions, topics=(), limit=None, ...)`   (due cards, oldest first),
           `mock(store, questions, topics=(), count=8, minutes=20, ...)` (timed, follow-ups chained).
        `questions` is `load_banks(...).questions`; `now` is a clock returning aware UTC datetimes.
    Loop:
        showing = session.next()            # Showing | None (None: queue empty or time is up)
        showing.question / .prompt (numbers filled in) / .draw / .number / .follow_up_of
        choice:  fb = session.answer_choice(showing, {0, 2})          # 0-based indices
        numeric: session.understand(showing, text) -> "what it understood" (live preview)
                 fb = session.answer_numeric(showing, text)
                 # both raise InputError (nothing recorded) for unreadable input: show str(error)
        free:    pending = session.answer_free(showing, text)         # committed right away
                 fb = session.assess(pending, [True, False, ...])     # one bool per rubric item
        Every answer_*/assess call commits before it returns; if another instance holds the
        database locked for over 10 s it raises StoreError (nothing recorded, the learner may retry).
        fb: Feedback — .correct .score (0..1) .rating (fsrs Rating; .name) .slow .elapsed_s
            .explanation (numbers filled in) .next_due .picked .verdict (NumericVerdict: .understood
            .expected .diagnosis) .worked (worked computation lines) .missed (RubricItems missed)
    Timer/progress: `session.remaining_time()` (timedelta | None), `session.finished`,
        `len(session.shown)`, `session.total`.
    End: `report = session.end()` -> SessionReport: .topics (TopicScore: topic, answered,
        fraction), .score (over the answers given), .round_score (a mock round's, over all its
        .round_size questions), .missed ((question_id, criterion), ...), .unanswered, .out_of_time.
    Resume: `unassessed(store, questions)` lists free responses committed but never self-assessed
        (app closed in between); finish one with `assess_answer(store, pending, met, now)`.

scheduling — `quizprep.study.scheduling`: how answers become FSRS ratings (thresholds documented
    there); `slow_after(kind, difficulty)` if the UI wants to show a pace hint.

stats — `quizprep.study.stats`
    `compute_stats(store, questions, now=None, tz=None, titles=None) -> Stats`: .topics
        (TopicStats: topic, title, questions, seen, due, attempts, accuracy, mastery), .streak_days,
        .history (DayCount: day, answers, correct; last 30 days), .due_ahead ((date, count) for
        the next 7 days), .missed_criteria (MissedCriterion: question_id, criterion, missed, assessed).
    `topic_overview(store, questions, now=None, titles=None) -> list[TopicStats]` for the home screen.
    `bank_warnings(load_result) -> list[str]`: one "file:line: [id] message" line per invalid
        question that was skipped; show them, the app still starts.

interview — `quizprep.study.interview`: `forecast(store, questions, on, now, titles) -> Forecast`
    (.on .days_left .topics: TopicForecast topic, title, recall (None: nothing answered), seen,
    total; lowest recall first); builders `builders.interview(..., on=date)` and `builders.cram(...)`
    (mode "cram": answers recorded, cards untouched). Settings: `store.setting(key)`,
    `store.set_setting(key, value)`.
history — `quizprep.study.history`: `card_history(store, question_id) -> [HistoryEntry]`,
    `why_due(store, question, now) -> str`.
flags — `quizprep.study.flags`: `flag_question(question_id, reason, now=, path=flags_path(store.path),
    source=None) -> Path` appends to flagged-questions.md; `quizprep flags` prints it.
search — `quizprep.study.search`: `search(questions, text="", tags=()) -> [Question]`.

drafts, rubric — `quizprep.study.drafts` (`Drafts`: answers being typed, kept across runs) and
    `quizprep.study.rubric` (`rubric_verdict`: a self-assessment's score, rating and pass), both
    used by sessions.

reports — `quizprep.study.report`: `build_report(store, questions, ...) -> Report`,
    `render_markdown(report)`, `render_html(report)`, `write_report(path, report)`;
    `quizprep stats` and `quizprep report --out FILE.md|FILE.html` (`quizprep.cli.progress`)
    render and write them.
"""
