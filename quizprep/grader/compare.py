"""Dtype-aware tolerances and mismatch localisation (in the spirit of `torch.testing`).

Tolerance model (documented in exercises/README.md): an element passes when
``|actual - expected| <= atol``, with

    atol = c[dtype] · u[dtype] · (1 + L) · max(1, max|expected|)

``u`` is the dtype's unit roundoff, ``L`` the largest |scaled logit| the case produces (rounding
a score s costs about u·|s| before the softmax amplifies it), and ``c`` a safety factor
calibrated so that straightforward correct implementations (naive, upcast to fp32, einsum,
additive masks, SDPA) stay below half the tolerance on every check input, while returning
zeros or the mean of V lands far outside it. ``tests/grader/test_tolerances.py`` re-measures
both sides.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

UNIT_ROUNDOFF = {
    torch.float64: 2.0**-53,
    torch.float32: 2.0**-24,
    torch.bfloat16: 2.0**-8,
    torch.float16: 2.0**-11,
}
SAFETY = {torch.float64: 4096.0, torch.float32: 32.0, torch.bfloat16: 2.0, torch.float16: 4.0}
# The least precise arithmetic a correct attention may use for inputs of each dtype. Production
# code (Llama, Hugging Face) runs the softmax in float32 on purpose, whatever the input dtype, so
# float64 inputs are held to float32's tolerance; half inputs to their own.
WORKING_PRECISION = {torch.float64: torch.float32, torch.float32: torch.float32,
                     torch.bfloat16: torch.bfloat16, torch.float16: torch.float16}
# Coarser precisions an error may be traced to, finest first.
COARSER = (torch.float32, torch.float16, torch.bfloat16)


@dataclass(frozen=True)
class Tolerance:
    atol: float
    magnitude: float = 1.0  # atol / (c·u) of its dtype: the same rule at another precision

    @classmethod
    def for_dtype(cls, dtype: torch.dtype, logit_scale: float = 0.0, value_scale: float = 1.0,
                  factor: float = 1.0) -> Tolerance:
        """The documented tolerance for outputs of this dtype at this logit and value scale."""
        magnitude = factor * (1.0 + logit_scale) * max(1.0, value_scale)
        return cls(SAFETY[dtype] * UNIT_ROUNDOFF[dtype] * magnitude, magnitude)

    @classmethod
    def working(cls, dtype: torch.dtype, logit_scale: float = 0.0, value_scale: float = 1.0,
                factor: float = 1.0) -> Tolerance:
        """The tolerance for attention outputs of inputs in `dtype`, at the working precision."""
        return cls.for_dtype(WORKING_PRECISION[dtype], logit_scale, value_scale, factor)

    def scaled(self, factor: float) -> Tolerance:
        return Tolerance(self.atol * factor, self.magnitude * factor)

    def at_precision(self, dtype: torch.dtype) -> Tolerance:
        return Tolerance(SAFETY[dtype] * UNIT_ROUNDOFF[dtype] * self.magnitude, self.magnitude)


def precision_explaining(actual: Tensor, expected: Tensor, tolerance: Tolerance) -> torch.dtype | None:
    """The finest precision coarser than `tolerance`'s whose rounding accounts for every
    difference: errors of that size mean something ran in that dtype. Only where that rounding
    is small beside the outputs: at huge logits a coarse dtype may legitimately move an output
    as far as a real bug does, and the error's size then tells them apart no longer."""
    scale = max(1.0, float(expected.double().abs().nan_to_num(0.0).max())) if expected.numel() else 1.0
    for dtype in COARSER:
        wider = tolerance.at_precision(dtype)
        if wider.atol > 0.1 * scale:
            break
        if wider.atol > tolerance.atol and bool(close_elements(actual, expected, wider).all()):
            return dtype
    return None


def close_elements(actual: Tensor, expected: Tensor, tolerance: Tolerance) -> Tensor:
    """True where `actual` is within tolerance, or where the expected value is undefined (NaN)."""
    actual, expected = actual.double(), expected.double()
    undefined = torch.isnan(expected)
    same_inf = torch.isinf(expected) & (actual == expected)
    near = (actual - expected).abs() <= tolerance.atol
    return undefined | same_inf | (near & torch.isfinite(actual))


@dataclass(frozen=True)
class Mismatch:
    """Where and by how much an output differs from what was expected, kept as numbers (as
    torch.testing does) and rendered here once, for the text, JSON and Exercism reports alike."""

    name: str
    shape: tuple[int, ...]
    expected_shape: tuple[int, ...]
    count: int = 0
    total: int = 0
    tolerance: float = 0.0  # the absolute tolerance every element was held to
    max_error: float = 0.0  # the largest absolute difference (inf where a value is not finite)
    max_relative: float = 0.0  # that difference relative to the expected value there
    index: tuple[int, ...] = ()  # where the largest difference is
    dims: tuple[str, ...] = ()  # the name of each axis of `index`
    got: float = 0.0
    expected: float = 0.0
    details: tuple[str, ...] = ()  # where else: the rows, heads or regions the differences fall in

    @property
    def headline(self) -> str:
        """What differs, in one clause: the shape, or how many elements at which tolerance."""
        if self.shape != self.expected_shape:
            return f"{self.name} has shape {self.shape}, expected {self.expected_shape}"
        return f"{self.name}: {self.count} of {self.total} elements differ (tolerance {self.tolerance:.2g})"

    @property
    def summary(self) -> str:
        """The headline and the largest difference, located."""
        if self.shape != self.expected_shape:
            return self.headline
        at = ", ".join(f"{dim}={i}" for dim, i in dict(zip(self.dims, self.index)).items())  # a name once
        return (f"{self.headline}; largest error {self.max_error:.3g} at {at} "
                f"(got {self.got:.6g}, expected {self.expected:.6g})")

    def describe(self) -> str:
        return "\n".join([self.summary, *self.details])


def find_mismatch(name: str, actual: Tensor, expected: Tensor, tolerance: Tolerance,
                  dims: tuple[str, ...] = (), regions: dict[str, Tensor] | None = None) -> Mismatch | None:
    """None when `actual` matches; otherwise a localised description of the difference."""
    if tuple(actual.shape) != tuple(expected.shape):
        return Mismatch(name, tuple(actual.shape), tuple(expected.shape))
    ok = close_elements(actual, expected, tolerance)
    if bool(ok.all()):
        return None
    bad = ~ok
    count, total = int(bad.sum()), bad.numel()
    error = (actual.double() - expected.double()).abs()
    error = torch.where(torch.isnan(error) | torch.isinf(error), torch.full_like(error, float("inf")), error)
    error = error.masked_fill(ok, 0.0)
    flat = int(error.reshape(-1).argmax())
    index = _unravel(flat, tuple(actual.shape))
    names = _dim_names(dims, actual.dim())
    worst = float(error.reshape(-1)[flat])
    got, want = float(actual.double().reshape(-1)[flat]), float(expected.double().reshape(-1)[flat])
    details = _localise(bad, names, actual)
    for label, region in (regions or {}).items():
        region = region.expand_as(bad) if region.shape != bad.shape else region
        inside = int((bad & region).sum())
        if inside:
            details.append(f"{inside} of the differing elements are {label}")
    return Mismatch(name, tuple(actual.shape), tuple(expected.shape), count, total, tolerance.atol, worst,
                    worst / abs(want) if want else float("inf"), index, tuple(names), got, want, tuple(details))


def _dim_names(dims: tuple[str, ...], rank: int) -> list[str]:
    names = list(dims[-rank:]) if len(dims) >= rank else [f"batch{i}" for i in range(rank - len(dims))] + list(dims)
    return names[-rank:] if rank else []


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    index = []
    for size in reversed(shape):
        index.append(flat % size)
        flat //= size
    return tuple(reversed(index))


def _localise(bad: Tensor, names: list[str], actual: Tensor) -> list[str]:
    details, everywhere = [], []
    nonfinite = int((~torch.isfinite(actual.double()) & bad).sum())
    if nonfinite:
        details.append(f"{nonfinite} of them are NaN or infinite")
    for axis, name in enumerate(names):
        if name not in {"head", "query", "row", "key", "kv head"} or bad.dim() == 0:
            continue
        indices = indices_along(bad, axis)
        if len(indices) < bad.shape[axis]:
            details.append(f"only {plural(name)} {index_ranges(indices)} of 0–{bad.shape[axis] - 1} differ")
        elif bad.shape[axis] > 1:
            everywhere.append(name)
    if everywhere:
        details.append("differences in every " + " and every ".join(everywhere))
    return details


def indices_along(bad: Tensor, axis: int) -> list[int]:
    """The indices along `axis` where any element is marked."""
    others = [d for d in range(bad.dim()) if d != axis]
    hit = bad.any(dim=others) if others else bad
    return [int(i) for i in torch.nonzero(hit).reshape(-1)]


def plural(name: str) -> str:
    return "queries" if name == "query" else f"{name}s"


def index_ranges(indices: list[int]) -> str:
    """0, 2–5, 9: sorted indices written as runs."""
    parts, start = [], None
    for i, value in enumerate(indices):
        if start is None:
            start = value
        if i + 1 == len(indices) or indices[i + 1] != value + 1:
            parts.append(str(start) if start == value else f"{start}–{value}")
            start = None
    return ", ".join(parts)
