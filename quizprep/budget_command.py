"""`quizprep budget`: weights, KV cache, score memory and FLOPs for a model, GQA beside MHA."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from quizprep import budget
from quizprep.budget import ModelBudget, ModelConfig

DEFAULT_SEQ = 4096
_ARCH_FLAGS = ("layers", "heads", "kv_heads", "head_dim")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "budget",
        help="memory and FLOPs of a model's attention: weights, KV cache, scores",
        description=(
            "Weights, KV cache per token and in total, score-matrix memory if materialised, "
            "and forward FLOPs per token for prefill and decode, with the model's grouped-query "
            "attention beside multi-head attention. Bytes are exact; GiB = 2^30 bytes; "
            "one multiply-add = 2 FLOPs."
        ),
        epilog="presets: " + ", ".join(config.name for config in budget.PRESETS.values()),
    )
    parser.add_argument("--model", help="a preset name, e.g. llama-3-8b (see the list below)")
    architecture = parser.add_argument_group("or describe the attention yourself")
    architecture.add_argument("--layers", type=_positive_int, metavar="L")
    architecture.add_argument("--heads", type=_positive_int, metavar="H", help="query heads")
    architecture.add_argument("--kv-heads", type=_positive_int, metavar="G",
                              help="K/V heads: G = H is MHA, G = 1 is MQA, between is GQA")
    architecture.add_argument("--head-dim", type=_positive_int, metavar="D")
    architecture.add_argument("--d-model", type=_positive_int, help="default: H × D")
    architecture.add_argument("--ffn", type=_positive_int, help="SwiGLU MLP width (whole-model numbers)")
    architecture.add_argument("--vocab", type=_positive_int, help="vocabulary size (whole-model numbers)")
    architecture.add_argument("--window", type=_positive_int, metavar="W",
                              help="sliding window: keys a query may attend, itself included")
    parser.add_argument("--seq", type=_token_count, default=DEFAULT_SEQ, metavar="N",
                        help=f"tokens per sequence (default {DEFAULT_SEQ}); k = 1,000 and M = 1,000,000, "
                             "so 128k is 128,000: write 131072 or 2^17 for 128 × 1,024")
    parser.add_argument("--batch", type=_positive_int, default=1, metavar="B", help="default 1")
    parser.add_argument("--dtype", default="bf16", type=_dtype_name,
                        help="bf16, fp16, fp32, fp8, ... (default bf16)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run, budget_parser=parser)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value}")
    return value


def _token_count(text: str) -> int:
    """A positive whole number of tokens, also as "128k", "1M" or "2^17"."""
    from quizprep.bank.units import UnitError, parse_quantity

    try:
        value = parse_quantity(text, "").value
    except UnitError:
        raise argparse.ArgumentTypeError(f"expected a whole number such as 4096, 128k or 2^17, got {text!r}") from None
    if not value.is_integer():
        raise argparse.ArgumentTypeError(f"expected a whole number of tokens, got {text!r} = {value:g}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value:g}")
    return int(value)


def _dtype_name(text: str) -> str:
    try:
        budget.dtype_bytes(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def config_from_args(args: argparse.Namespace) -> ModelConfig:
    """The model the flags describe; raises ValueError with a sentence a user can act on."""
    given = [flag for flag in _ARCH_FLAGS if getattr(args, flag) is not None]
    if args.model:
        if given or args.d_model or args.ffn or args.vocab or args.window:
            raise ValueError("give either --model or --layers/--heads/--kv-heads/--head-dim, not both")
        try:
            return budget.preset(args.model)
        except KeyError as error:
            raise ValueError(error.args[0]) from None
    missing = [flag for flag in _ARCH_FLAGS if getattr(args, flag) is None]
    if missing:
        names = ", ".join("--" + flag.replace("_", "-") for flag in missing)
        raise ValueError(f"give --model NAME, or all of --layers --heads --kv-heads --head-dim (missing {names})")
    if args.heads % args.kv_heads:
        raise ValueError(f"--heads ({args.heads}) must be a multiple of --kv-heads ({args.kv_heads})")
    return ModelConfig(
        name=f"L={args.layers} H={args.heads} G={args.kv_heads} D={args.head_dim}",
        layers=args.layers,
        d_model=args.d_model or args.heads * args.head_dim,
        heads=args.heads,
        kv_heads=args.kv_heads,
        head_dim=args.head_dim,
        ffn_dim=args.ffn,
        vocab=args.vocab,
        sliding_window=args.window,
    )


def seq_warnings(config: ModelConfig, seq: int) -> list[str]:
    """What a user should know before trusting the numbers for this sequence length."""
    if config.context_length is None or seq <= config.context_length:
        return []
    return [f"--seq {seq:,} exceeds {config.name}'s context length of {config.context_length:,} "
            "tokens (max_position_embeddings in its config.json); the numbers are extrapolated."]


def run(args: argparse.Namespace) -> int:
    try:
        config = config_from_args(args)
    except ValueError as error:
        args.budget_parser.error(str(error))  # exits with status 2
    ours = budget.model_budget(config, args.seq, args.batch, args.dtype)
    # MLA's cache is not a number of KV heads, so an MHA column would compare nothing real.
    mha = None if config.kv_heads == config.heads or config.mla else budget.model_budget(
        config.as_mha(), args.seq, args.batch, args.dtype
    )
    warnings = seq_warnings(config, args.seq)
    for warning in warnings:
        print(f"quizprep budget: warning: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps({**to_json(config, ours, mha), "warnings": warnings}, indent=2))
    else:
        from rich.console import Console

        Console().print(render(config, ours, mha))
    return 0


def to_json(config: ModelConfig, ours: ModelBudget, mha: ModelBudget | None) -> dict:
    return {
        "model": config.name,
        "source": config.source or None,
        "config": {
            "layers": config.layers, "d_model": config.d_model, "heads": config.heads,
            "kv_heads": config.kv_heads, "head_dim": config.head_dim,
            "ffn_dim": config.ffn_dim, "vocab": config.vocab,
            "sliding_window": config.sliding_window, "global_layers": config.global_layers,
            "context_length": config.context_length, "attention": config.attention_kind,
            "mla": asdict(config.mla) if config.mla else None,
            "moe": asdict(config.moe) if config.moe else None,
        },
        "seq": ours.seq,
        "batch": ours.batch,
        "dtype": ours.dtype,
        "bytes_per_element": budget.dtype_bytes(ours.dtype),
        "conventions": {"GiB": 2**30, "flops_per_multiply_add": 2},
        "model_attention": _numbers(ours),
        "mha": _numbers(mha) if mha else None,
    }


def _numbers(result: ModelBudget) -> dict:
    numbers = asdict(result)
    for key in ("model", "seq", "batch", "dtype"):
        numbers.pop(key)
    return numbers


def render(config: ModelConfig, ours: ModelBudget, mha: ModelBudget | None):
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    kind = {
        "MLA": "MLA",
        "MHA": "MHA",
        "MQA": f"MQA, all {config.heads} query heads share one KV head",
        "GQA": f"GQA, {config.heads // config.kv_heads} query heads per KV head",
    }[config.attention_kind]
    window = config.sliding_window
    heads = (f"{config.heads} heads (keys {config.qk_dim}, values {config.v_dim}), "
             f"{kind}: a {config.mla.kv_lora_rank}-element latent and a {config.mla.rope_dim}-element "
             "RoPE key per token, shared by every head" if config.mla else
             f"{config.heads} heads × {config.head_dim}, "
             f"{config.kv_heads} KV head{'' if config.kv_heads == 1 else 's'} ({kind})")
    title = (
        f"{config.name} — {config.layers} layers, {heads}"
        + (f", sliding window {window:,}" if window else "")
        + (f" in {config.local_layers} of {config.layers} layers" if config.global_layers else "")
    )
    rolling = window is not None and ours.seq > window
    table = Table(title=title, title_justify="left", header_style="bold")
    table.add_column("")
    table.add_column(f"{config.name}", justify="right")
    if mha is not None:
        table.add_column(f"as MHA ({config.heads} KV heads)", justify="right")
        table.add_column("MHA ÷ model", justify="right")

    def row(label: str, value_of, formatter) -> None:
        value = value_of(ours)
        cells = [label, "—" if value is None else formatter(value)]
        if mha is not None:
            other = value_of(mha)
            cells.append("—" if other is None else formatter(other))
            cells.append(f"{other / value:.2f}×" if value and other is not None else "")
        table.add_row(*cells)

    def flops(value: int) -> str:
        return budget.format_count(value, "FLOP")

    row("parameters", lambda r: r.params, budget.format_count)
    if config.moe is not None:
        row("  of which active per token", lambda r: r.active_params, budget.format_count)
    row(f"weights ({ours.dtype})", lambda r: r.weights_bytes, budget.format_bytes)
    row("attention weights per layer", lambda r: r.attention_weights_bytes_per_layer, budget.format_bytes)
    row("KV cache per token", lambda r: r.kv_cache_bytes_per_token, budget.format_bytes)
    buffer = ""
    if rolling:
        buffer = (f" ({config.local_layers} windowed layers keep {window:,})" if config.global_layers
                  else " (rolling buffer)")
    row(f"KV cache, {ours.batch} × {ours.kv_cache_tokens} tokens{buffer}", lambda r: r.kv_cache_bytes,
        budget.format_bytes)
    row("score matrix per layer, if materialised", lambda r: r.scores_bytes_per_layer, budget.format_bytes)
    row(f"prefill FLOPs per token (prompt of {ours.seq})", lambda r: r.prefill_flops_per_token, flops)
    attends = f", attends the last {window:,}" if rolling else ""
    row(f"decode FLOPs per token (context {ours.seq}{attends})", lambda r: r.decode_flops_per_token, flops)
    row("  of which attention (QKᵀ and PV)", lambda r: r.decode_attention_flops_per_token, flops)

    size = budget.dtype_bytes(ours.dtype)
    per_element = f"{size} byte{'' if size == 1 else 's'}"  # fp8: "1 byte"
    notes = [
        f"{per_element} per element; GiB = 2^30 bytes; "
        "1 multiply-add = 2 FLOPs; causal attention counts only the pairs a query may attend.",
        _kv_note(config, ours, per_element),
        f"Score matrix = B·H·n·n·bytes = {ours.batch}·{config.heads}·{ours.seq}·{ours.seq}·"
        f"{budget.dtype_bytes(ours.dtype)}: what a naive implementation holds per layer; "
        "FlashAttention never stores it.",
    ]
    if window is not None:
        layers = (f"in {config.local_layers} of {config.layers} layers (the other {config.global_layers} "
                  "attend globally) a" if config.global_layers else "A")
        notes.append(
            f"Sliding window W = {window:,}: {layers} query attends at most W keys, itself included, so "
            f"those layers keep a rolling buffer of min(seq, W) = {config.cached_tokens(ours.seq):,} "
            "positions per sequence and a decode step there attends min(context, W) keys."
        )
    if config.mla is not None:
        mla = config.mla
        notes.append(f"Prefill attention FLOPs count each head's keys and values rebuilt from the latent "
                     f"({config.qk_dim}-element keys, {config.v_dim}-element values); decode counts the "
                     f"absorbed path, where each head reads the {mla.cached_elements}-element cached latent "
                     f"and RoPE key for its score and sums {mla.kv_lora_rank}-element latents: "
                     f"2·H·({mla.cached_elements} + {mla.kv_lora_rank}) FLOPs per attended token.")
    if config.note:
        notes.append(config.note)
    if not config.is_complete:
        notes.append("Whole-model weights and FLOPs need --ffn and --vocab.")
    if config.source:
        notes.append(f"Source: {config.source}")
    return Group(table, *(Text(note, style="dim") for note in notes))


def _kv_note(config: ModelConfig, ours: ModelBudget, per_element: str) -> str:
    per_token = budget.format_bytes(ours.kv_cache_bytes_per_token)
    if config.mla is not None:
        return (f"KV cache = {config.layers} layers × ({config.mla.kv_lora_rank} latent + "
                f"{config.mla.rope_dim} RoPE key) × {per_element} = {per_token} per token: "
                "one latent serves K and V of every head.")
    return (f"KV cache = 2 (K and V) × {config.layers} layers × {config.kv_heads} KV heads × "
            f"{config.head_dim} × {per_element} = {per_token} per token.")
