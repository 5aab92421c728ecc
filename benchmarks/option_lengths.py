"""How often the longest option is the right one, in the shipped banks (issue 22).

For single-answer questions: the share whose correct option is strictly the longest, against
the target of chance plus 10 points (chance is the mean of 1 / number of options). For select-all
questions: how many have every correct option longer than every wrong one. Run from the
repository root: `python benchmarks/option_lengths.py [PATH …] [--json]`."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from quizprep.bank import ChoiceQuestion, load_banks

MARGIN_OVER_CHANCE = 0.10


def figures(paths: list[Path] | None = None) -> dict[str, object]:
    questions = [q for q in load_banks(paths or None).questions if isinstance(q, ChoiceQuestion)]
    single = [q for q in questions if not q.multiple]
    select_all = [q for q in questions if q.multiple and len(q.correct_indices) < len(q.choices)]
    longest = [q.id for q in single if _correct_strictly_longest(q)]
    chance = sum(1 / len(q.choices) for q in single) / len(single)
    outrun = [q.id for q in select_all if _correct_all_longer(q)]
    share = len(longest) / len(single)
    return {
        "single_answer": len(single),
        "correct_longest": len(longest),
        "share": round(share, 3),
        "chance": round(chance, 3),
        "target": round(chance + MARGIN_OVER_CHANCE, 3),
        "met": share <= chance + MARGIN_OVER_CHANCE,
        "select_all": len(select_all),
        "select_all_correct_longer": len(outrun),
        "correct_longest_ids": longest,
        "select_all_correct_longer_ids": outrun,
    }


def _correct_strictly_longest(question: ChoiceQuestion) -> bool:
    right = max(len(c.text) for c in question.choices if c.correct)
    return right > max(len(c.text) for c in question.choices if not c.correct)


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
    print(f"single-answer questions whose correct option is strictly the longest: "
          f"{result['correct_longest']} of {result['single_answer']} ({result['share']:.1%}); "
          f"chance {result['chance']:.1%}, target ≤ {result['target']:.1%}: "
          f"{'met' if result['met'] else 'NOT met'}")
    print(f"select-all questions whose every correct option is longer than every wrong one: "
          f"{result['select_all_correct_longer']} of {result['select_all']}")


if __name__ == "__main__":
    main()
