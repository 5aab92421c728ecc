"""A second held-out set for the Triton track (issue 31), from sources the first set
(triton_heldout_kernels.py) did not draw on: three correct kernels adapted from public code
(triton_heldout2/*_pass.py, each names its source and what the adapter changed), one-line slips of the
issue's kinds planted in them, two bugs as published upstream, and a kernel that is written but never
launched.

As published: FlagGems' key mask computed once for the first tile and never advanced (a ragged last key
tile is read past n, its scores unmasked), and triton-lang/kernels' K and V (batch, head) offsets found
through q's strides.

Graded by benchmarks/triton_kernels.py --heldout2 and tests/grader/test_triton_heldout2.py."""
from __future__ import annotations

from pathlib import Path

from triton_kernels import KernelEdit
from triton_kernels import edit as _edit

FOLDER = Path(__file__).resolve().parent / "triton_heldout2"
FA1, GEMS, KERNELS = (FOLDER / f"{name}_pass.py" for name in ("colossal_fa1", "flaggems", "tritonlang_kernels"))
FA1_K = "k = tl.load(k_ptrs + start_n * stride_kn, mask=(start_n + offs_n)[:, None] < N_CTX, other=0.0)"
FA1_COLUMNS = '        qk += tl.where((start_n + offs_n)[None, :] < N_CTX, 0, float("-inf"))\n'
KERNELS_GRID = "grid = (cdiv(q.shape[2], BLOCK_M), q.shape[0] * q.shape[1], 1)"
GEMS_GRID = "grid = (triton.cdiv(query.shape[2], BLOCK_M), query.shape[0] * query.shape[1], 1)"


FA1_BUGS = (
    _edit(FA1, "fa1_no_scale", "forward", "triton-no-scale",
          ("q, k, v, 1.0 / math.sqrt(Lk), lse, o,", "q, k, v, 1.0, lse, o,")),
    _edit(FA1, "fa1_causal_strict", "causal", "triton-causal-strict",
          ("offs_m[:, None] >= (start_n + offs_n[None, :])", "offs_m[:, None] > (start_n + offs_n[None, :])")),
    _edit(FA1, "fa1_grid_swapped", "forward", "triton-grid-swapped",
          ("grid = (triton.cdiv(q.shape[2], BLOCK), q.shape[0] * q.shape[1])",
           "grid = (q.shape[0] * q.shape[1], triton.cdiv(q.shape[2], BLOCK))")),
    _edit(FA1, "fa1_unmasked_store", "forward", "triton-unmasked-store",
          ("tl.store(out_ptrs, acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < N_CTX)",
           "tl.store(out_ptrs, acc.to(Out.dtype.element_ty))")),
    _edit(FA1, "fa1_lse_ignores_batch", "forward", "triton-lse-batch",
          ("l_ptrs = Lse + off_hz * N_CTX + offs_m", "l_ptrs = Lse + off_h * N_CTX + offs_m")),
    _edit(FA1, "fa1_max_init_zero", "stability", "triton-max-init-zero",
          ('m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")',
           "m_i = tl.zeros([BLOCK_M], dtype=tl.float32)")),
    _edit(FA1, "fa1_sum_not_rescaled", "forward", "triton-sum-not-rescaled",
          ("l_i_new = alpha * l_i + beta * l_ij", "l_i_new = l_i + beta * l_ij")),
    _edit(FA1, "fa1_acc_not_rescaled", "forward", "triton-no-rescale",
          ("acc_scale = l_i / l_i_new * alpha", "acc_scale = l_i / l_i_new")),
    _edit(FA1, "fa1_causal_stops_early", "causal", "triton-causal-loop-bound",
          ("hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX) if IS_CAUSAL else N_CTX",
           "hi = tl.minimum(start_m * BLOCK_M, N_CTX) if IS_CAUSAL else N_CTX")),
    _edit(FA1, "fa1_k_other_inf", "forward", "triton-k-other-inf",
          (FA1_K, FA1_K.replace("other=0.0", 'other=float("-inf")')), (FA1_COLUMNS, "")),
)
GEMS_BUGS = (
    _edit(GEMS, "gems_exp2_no_log2e", "forward", "triton-exp2-no-log2e",
          ("qk = qk * qk_scale * LOG2E + tl.where(mask, 0, -1.0e6)", "qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)"),
          ("qk = qk * qk_scale * LOG2E + tl.where(kv_load_mask[None, :], 0, -1.0e6)",
           "qk = qk * qk_scale + tl.where(kv_load_mask[None, :], 0, -1.0e6)")),
    _edit(GEMS, "gems_log2e_with_exp", "forward", "triton-log2e-with-exp",
          ("p = tl.math.exp2(qk)", "p = tl.exp(qk)"),
          ("alpha = tl.math.exp2(m_i - m_ij)", "alpha = tl.exp(m_i - m_ij)"),
          ("(m_i + tl.math.log2(l_i)) * 0.6931471805599453", "m_i + tl.log(l_i)")),
    _edit(GEMS, "gems_off_band_one_past", "causal", "triton-causal-loop-bound",
          ("lo, hi = 0, start_m * BLOCK_M", "lo, hi = 0, (start_m + 1) * BLOCK_M")),
    _edit(GEMS, "gems_diagonal_unmasked", "causal", "triton-diagonal-unmasked",
          ("qk = qk * qk_scale * LOG2E + tl.where(mask, 0, -1.0e6)", "qk = qk * qk_scale * LOG2E")),
    _edit(GEMS, "gems_strides_crossed", "strides", "triton-wrong-strides",
          ("offs_n[None, :] * stride_k_seqlen + offs_headsize[:, None] * stride_k_headsize",
           "offs_n[None, :] * stride_v_seqlen + offs_headsize[:, None] * stride_v_headsize"),
          ("offs_n[:, None] * stride_v_seqlen + offs_headsize[None, :] * stride_v_headsize",
           "offs_n[:, None] * stride_k_seqlen + offs_headsize[None, :] * stride_k_headsize")),
    _edit(GEMS, "gems_key_mask_not_advanced", "forward", "triton-ragged-edge",  # as published
          ("    for start_n in range(lo, hi, BLOCK_N):\n        kv_load_mask = start_n + offs_n < KV_CTX\n",
           "    kv_load_mask = lo + offs_n < KV_CTX\n    for start_n in range(lo, hi, BLOCK_N):\n")),
    _edit(GEMS, "gems_sum_not_rescaled", "forward", "triton-sum-not-rescaled",
          ("l_i = l_i * alpha + l_ij", "l_i = l_i + l_ij")),
    _edit(GEMS, "gems_grid_swapped", "forward", "triton-grid-swapped",
          (GEMS_GRID, "grid = (query.shape[0] * query.shape[1], triton.cdiv(query.shape[2], BLOCK_M), 1)")),
)
KERNELS_BUGS = (
    _edit(KERNELS, "kernels_rows_through_q_strides", "strides", "triton-wrong-strides",  # as published
          ("    k_offset = off_z * stride_kz + off_h * stride_kh\n"
           "    v_offset = off_z * stride_vz + off_h * stride_vh\n",
           "    k_offset = off_z * stride_qz + off_h * stride_qh\n"
           "    v_offset = off_z * stride_qz + off_h * stride_qh\n")),
    _edit(KERNELS, "kernels_lse_ignores_batch", "forward", "triton-lse-batch",
          ("l_ptrs = L + off_hz * N_CTX + offs_m", "l_ptrs = L + off_h * N_CTX + offs_m")),
    _edit(KERNELS, "kernels_exp2_no_log2e", "forward", "triton-exp2-no-log2e",
          ("qk_scale = sm_scale * 1.44269504", "qk_scale = sm_scale")),
    _edit(KERNELS, "kernels_lse_log2_units", "forward", "triton-wrong-lse",
          ("return o, (L * math.log(2.0)).view(", "return o, L.view(")),
    _edit(KERNELS, "kernels_causal_strict", "causal", "triton-causal-strict",
          ("offs_m[:, None] >= (start_n + offs_n[None, :])", "offs_m[:, None] > (start_n + offs_n[None, :])")),
    _edit(KERNELS, "kernels_acc_not_rescaled", "forward", "triton-no-rescale",
          ("        acc *= alpha[:, None]\n", "")),
    _edit(KERNELS, "kernels_unmasked_store", "forward", "triton-unmasked-store",
          ("tl.store(O_ptrs, acc.to(K.dtype.element_ty), mask=offs_m[:, None] < N_CTX)",
           "tl.store(O_ptrs, acc.to(K.dtype.element_ty))")),
    _edit(KERNELS, "kernels_no_scale", "forward", "triton-no-scale",
          ("q, k, v, 1.0 / math.sqrt(Lk), L, o,", "q, k, v, 1.0, L, o,")),
)
BUGS = FA1_BUGS + GEMS_BUGS + KERNELS_BUGS + (
    KernelEdit("kernel_never_launched", "forward", "triton-no-launch", (), FOLDER / "kernel_never_launched.py"),
)
CORRECT = (FA1, GEMS, KERNELS)
