"""Where the correct option falls by length in the shipped banks (issues 22 and 33).

For single-answer questions: every length rank (longest, second longest, …) with the share of
keys it holds, against the limit of chance plus 10 points (chance is the mean of 1 / number of
options over the questions that have that rank), and the banks where one rank is past it beyond
luck (`quizprep.bank.length_ranks`). For select-all questions: how many have every correct
option longer than every wrong one. Run from the repository root:
`python benchmarks/option_lengths.py [PATH …] [--json]`."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from quizprep.bank import ChoiceQuestion, load_banks
from quizprep.bank.length_ranks import MAX_LUCK, length_ranks, rank_figures, single_answer


def figures(paths: list[Path] | None = None) -> dict[str, object]:
    questions = load_banks(paths or None).questions
    single = single_answer(questions)
    select_all = [q for q in questions if isinstance(q, ChoiceQuestion) and q.multiple
                  and len(q.correct_indices) < len(q.choices)]
    ranks = rank_figures(single)
    outrun = [q.id for q in select_all if _correct_all_longer(q)]
    by_bank: dict[str, list[ChoiceQuestion]] = {}
    for question in single:
        by_bank.setdefault(Path(question.source.file).name, []).append(question)
    return {
        "single_answer": len(single),
        "ranks": [{**figure.to_json(), "ids": [q.id for q in single if length_ranks(q).get(figure.rank, 0) > 0.5]}
                  for figure in ranks],
        "met": not any(figure.over_margin for figure in ranks),
        "banks_over_limit": {bank: [f.name for f in rank_figures(qs) if f.over_margin and f.luck < MAX_LUCK]
                             for bank, qs in by_bank.items()
                             if any(f.over_margin and f.luck < MAX_LUCK for f in rank_figures(qs))},
        "select_all": len(select_all),
        "select_all_correct_longer": len(outrun),
        "select_all_correct_longer_ids": outrun,
    }


def _correct_all_longer(question: ChoiceQuestion) -> bool:
    right = min(len(c.text) for c in question.choices if c.correct)
    return right > max(len(c.text) for c in question.choices if not c.correct)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = figures(args.paths)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"single-answer questions: {result['single_answer']}; the correct option is the "
          f"(options of equal length share their ranks)")
    for rank in result["ranks"]:  # type: ignore[attr-defined]
        print(f"  {rank['name']:>15}: {rank['count']:5.1f} ({rank['share']:.1%}); chance {rank['chance']:.1%}, "
              f"limit {rank['limit']:.1%}: {'OVER' if rank['over_limit'] else 'ok'}")
    print(f"every rank within chance + 10 points: {'met' if result['met'] else 'NOT met'}")
    for bank, names in result["banks_over_limit"].items():  # type: ignore[attr-defined]
        print(f"  {bank}: {', '.join(names)} past the limit beyond luck")
    print(f"select-all questions whose every correct option is longer than every wrong one: "
          f"{result['select_all_correct_longer']} of {result['select_all']}")


if __name__ == "__main__":
    main()
