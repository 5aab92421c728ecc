"""A held-out set for the Triton track (issue 31): three correct kernels adapted from public code
(triton_heldout/*_pass.py, each names its source) and one-line slips planted in them, of the kinds
issue 31 found unnamed or misnamed, plus a flash_attention that launches no kernel.

Graded by benchmarks/triton_kernels.py --heldout and tests/grader/test_triton_heldout.py. The
crossed K/V strides of `flag_strides_crossed` stood in FlagAttention's flash.py as published."""
from __future__ import annotations

from pathlib import Path

from triton_kernels import KernelEdit
from triton_kernels import edit as _edit

FOLDER = Path(__file__).resolve().parent / "triton_heldout"
DAO, FLAG, TUTORIAL = (FOLDER / f"{name}_pass.py" for name in ("dao_fwd", "flagattn_exp2", "tutorial_two_stage"))
DAO_K = "k = tl.load(k_ptrs + start_n * stride_kn, mask=(start_n + offs_n)[:, None] < seqlen_k, other=0.0)"
DAO_RAGGED = """        if not EVEN_N:
            qk += tl.where((start_n + offs_n)[None, :] < seqlen_k, 0, float("-inf"))
"""


BUGS = (
    _edit(DAO, "dao_no_scale", "forward", "triton-no-scale",
          ("q, k, v, o, lse, 1.0 / math.sqrt(d),", "q, k, v, o, lse, 1.0,")),
    _edit(DAO, "dao_causal_strict", "causal", "triton-causal-strict",
          ("offs_m[:, None] >= (start_n + offs_n)[None, :]", "offs_m[:, None] > (start_n + offs_n)[None, :]")),
    _edit(DAO, "dao_grid_swapped", "forward", "triton-grid-swapped",
          ("grid = (triton.cdiv(seqlen_q, BLOCK), batch * nheads)",
           "grid = (batch * nheads, triton.cdiv(seqlen_q, BLOCK))")),
    _edit(DAO, "dao_unmasked_store", "forward", "triton-unmasked-store",
          ("tl.store(out_ptrs, acc_o, mask=offs_m[:, None] < seqlen_q)", "tl.store(out_ptrs, acc_o)")),
    _edit(DAO, "dao_lse_ignores_batch", "forward", "triton-lse-batch",
          ("Lse + off_hb * seqlen_q_rounded", "Lse + off_h * seqlen_q_rounded")),
    _edit(DAO, "dao_k_other_inf", "forward", "triton-k-other-inf",
          (DAO_K, DAO_K.replace("other=0.0", 'other=float("-inf")')), (DAO_RAGGED, "")),
    _edit(DAO, "dao_no_rescale", "forward", "triton-no-rescale",
          ("        acc_o = acc_o * acc_o_scale[:, None]\n", "")),
    _edit(FLAG, "flag_strides_crossed", "strides", "triton-wrong-strides",
          ("k_ptrs = K + (offs_k[:, None] * stride_kk + offs_n_init[None, :] * stride_kn)",
           "k_ptrs = K + (offs_k[:, None] * stride_vk + offs_n_init[None, :] * stride_vn)"),
          ("v_ptrs = V + (offs_n_init[:, None] * stride_vn + offs_k[None, :] * stride_vk)",
           "v_ptrs = V + (offs_n_init[:, None] * stride_kn + offs_k[None, :] * stride_kk)")),
    _edit(FLAG, "flag_one_set_of_strides", "strides", "triton-wrong-strides",
          ("        k.stride(0), k.stride(1), k.stride(2), k.stride(3),\n"
           "        v.stride(0), v.stride(1), v.stride(2), v.stride(3),\n",
           "        q.stride(0), q.stride(1), q.stride(2), q.stride(3),\n"
           "        q.stride(0), q.stride(1), q.stride(2), q.stride(3),\n")),
    _edit(FLAG, "flag_exp2_no_log2e", "forward", "triton-exp2-no-log2e",
          ("qk_scale = sm_scale * log2e", "qk_scale = sm_scale")),
    _edit(FLAG, "flag_sum_not_rescaled", "forward", "triton-sum-not-rescaled",
          ("l_i = l_i * alpha + tl.sum(p, 1)", "l_i = l_i + tl.sum(p, 1)")),
    _edit(FLAG, "flag_max_init_zero", "stability", "triton-max-init-zero",
          ('m_i = tl.full([BLOCK_M], value=-float("inf"), dtype=tl.float32)',
           "m_i = tl.full([BLOCK_M], value=0.0, dtype=tl.float32)")),
    _edit(FLAG, "flag_diagonal_unmasked", "causal", "triton-diagonal-unmasked",
          ("""            causal_mask = offs_m[:, None] >= offs_n[None, :]
            s = tl.where(causal_mask, s, float("-inf"))
""", "            pass\n")),
    _edit(TUTORIAL, "tutorial_off_band_one_past", "causal", "triton-causal-loop-bound",
          ("lo, hi = 0, start_m * BLOCK_M", "lo, hi = 0, (start_m + 1) * BLOCK_M")),
    _edit(TUTORIAL, "tutorial_log2e_with_exp", "forward", "triton-log2e-with-exp",
          ("p = tl.math.exp2(qk)", "p = tl.exp(qk)"),
          ("alpha = tl.math.exp2(m_i - m_ij)", "alpha = tl.exp(m_i - m_ij)"),
          ("m_i += tl.math.log2(l_i)", "m_i += tl.log(l_i)"),
          ("return o, M * math.log(2.0)", "return o, M")),
    _edit(TUTORIAL, "tutorial_no_scale", "forward", "triton-no-scale",
          ("qk_scale = sm_scale\n", "qk_scale = 1.0\n")),
    _edit(TUTORIAL, "tutorial_lse_log2_units", "forward", "triton-wrong-lse",
          ("return o, M * math.log(2.0)", "return o, M")),
    _edit(TUTORIAL, "tutorial_unmasked_store", "forward", "triton-unmasked-store",
          ("             acc.to(Out.type.element_ty), mask=offs_m[:, None] < N_CTX)",
           "             acc.to(Out.type.element_ty))")),
    _edit(TUTORIAL, "tutorial_ragged_edge", "forward", "triton-ragged-edge",
          ('        qk = tl.where(cols[None, :] < N_CTX, qk, float("-inf"))\n', "")),
    KernelEdit("torch_no_kernel", "forward", "triton-no-launch", (), FOLDER / "torch_no_kernel.py"),
)
CORRECT = (DAO, FLAG, TUTORIAL)
