"""`quizprep check`: validate question banks, and warn about progress the banks no longer ask."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from quizprep.cli.options import add_db_option, any_missing


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "check", help="validate question banks (default: the shipped ones)",
        description="Validate question banks. Exit 0 when clean, 1 on any error (or, with --strict, any "
                    "warning; with --similar, any pair of near-duplicate prompts), 2 on usage errors. "
                    "Warnings name answers given away by a question's form: a correct option longer than "
                    "the others or at one length rank too often, a predecessor that states the answer "
                    "(in the same words or, by BM25 similarity, in others), a slip the tolerance accepts; "
                    "and a line of code too wide for an 80-column screen.",
    )
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATH", help="bank files or folders")
    parser.add_argument("--json", action="store_true", help="print a JSON summary instead of text")
    parser.add_argument("--strict", action="store_true", help="treat warnings as errors")
    parser.add_argument("--similar", action="store_true",
                        help="also report pairs of questions, across all the banks given, "
                             "whose prompts are near-duplicates")
    parser.add_argument("--threshold", type=float, default=None, metavar="X",
                        help="with --similar: the share of distinct prompt words two questions must "
                             "have in common to be reported, in (0, 1] (default 0.6)")
    add_db_option(parser, "whose question ids are checked against the banks; left out, the default one is "
                          "checked when no PATH is given")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from quizprep.bank.audit import DEFAULT_SIMILARITY, audited_draws, similar_prompts, tolerance_leaks
    from quizprep.bank.chain_meaning import chain_giveaways
    from quizprep.bank.code_width import code_width_warnings
    from quizprep.bank.cues import form_cues
    from quizprep.bank.loader import load_banks, summarize

    if any_missing("check", args.paths, "file or folder"):
        return 2
    if args.threshold is not None and not (args.similar and 0 < args.threshold <= 1):
        print("quizprep check: --threshold takes a number in (0, 1] and needs --similar", file=sys.stderr)
        return 2
    result = load_banks(args.paths or None)
    evaluated = audited_draws(result.questions)
    leaks = list(tolerance_leaks(result.questions, evaluated))
    result.errors.extend(leak.error() for leak in leaks if leak.listed)
    warnings = [leak.error() for leak in leaks if not leak.listed] + list(form_cues(result.questions, evaluated))
    warnings += chain_giveaways(result.questions)
    warnings += code_width_warnings(result.questions)
    if args.strict:
        result.errors.extend(warnings)
        warnings = []
    threshold = DEFAULT_SIMILARITY if args.threshold is None else args.threshold
    similar = similar_prompts(result.questions, threshold) if args.similar else []
    summary = summarize(result)
    summary["warnings"] = [warning.to_json() for warning in warnings]
    if args.db or not args.paths:
        warn_lost_ids(args.db, {q.id for q in result.questions} | result.aliases.keys())
    if args.json:
        if args.similar:
            summary["similar"] = [pair.to_json() for pair in similar]
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        for line in [*result.errors, *similar]:
            print(line)
        for warning in warnings:
            print(f"warning: {warning}")
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(summary["by_kind"].items()))
        status = f"{len(result.errors)} error(s)" if result.errors else "no errors"
        if warnings:
            status += f", {len(warnings)} warning(s) (errors with --strict)"
        if args.similar:
            status += f", {len(similar)} near-duplicate pair(s) at ≥ {threshold:.0%} shared prompt words"
        print(f"{summary['questions']} questions ({kinds or 'none'}) in {len(result.banks)} bank(s): {status}")
    return 1 if result.errors or similar else 0


def warn_lost_ids(db: Path | None, known: set[str]) -> None:
    """Warn (on stderr) about question ids the learner's progress still references but no bank
    has, as an id or as the alias of a question it was merged into: their history is kept, keyed
    by id, but nothing asks them any more. No database, no warning."""
    from quizprep.study.dbpath import resolve_db_path
    from quizprep.study.store import Store, StoreError

    path = resolve_db_path(db)
    if not path.exists():
        return
    try:
        with Store.open(path, readonly=True) as store:
            referenced = set(store.cards()) | {a.question_id for a in store.answers()}
    except StoreError as error:
        print(f"warning: could not compare your progress with the banks: {error}", file=sys.stderr)
        return
    lost = sorted(referenced - known)
    if lost:
        print(f"warning: {path} holds history for {len(lost)} question id(s) that no bank has any more: "
              f"{', '.join(lost)}. Their history is kept and counts again if the id comes back; a "
              f"renamed question starts afresh.", file=sys.stderr)
