# quizprep: exercise=attention-numpy
# source: onnx/onnx onnx/reference/ops/op_attention.py @ 04138e07da14f1eb60f5619f038e044eec365c1e (_compute_attention: scale = 1 / np.sqrt(head_size); scale = np.sqrt(scale); a boolean attn_mask turned into (1 - attn_mask).astype(Q.dtype) with the ones set to -np.inf and added to a zero bias; qk = np.matmul(Q * scale, np.transpose(K, (0, 1, 3, 2)) * scale); _softmax: np.exp(x - np.max(x, axis, keepdims=True)) / sum; qk_matmul_output_mode=3 returns the softmax; output .astype(Q.dtype))
# style: ONNX's NumPy reference operator: the scale split as √scale on Q and on K, the boolean mask turned into a float bias with -inf written by boolean indexing, everything computed in the input's dtype and cast back with astype
# adapter: the operator asserts 4-D (batch, heads, seq, d): leading dimensions (0 to 3) are flattened into the batch axis with heads = 1, the mask broadcast to them first; the weights are the operator's qk_matmul_output with qk_matmul_output_mode = 3 (the softmax, cast to Q's dtype); past_key, softcap and is_causal left out
# expect: pass
from __future__ import annotations

import numpy as np


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_max = np.max(x, axis=axis, keepdims=True)
    tmp = np.exp(x - x_max)
    s = np.sum(tmp, axis=axis, keepdims=True)
    return tmp / s


def _compute_attention(Q, K, V, attn_mask=None, scale=None, qk_matmul_output_mode=None):
    assert len(Q.shape) == 4 and len(K.shape) == 4 and len(V.shape) == 4

    if scale is None:
        q_head_size = Q.shape[3]
        scale = 1 / np.sqrt(q_head_size)
    scale = np.sqrt(scale)

    q_sequence_length = Q.shape[2]
    kv_sequence_length = K.shape[2]
    attn_bias = np.zeros((q_sequence_length, kv_sequence_length), dtype=Q.dtype)

    if attn_mask is not None:
        if attn_mask.dtype == np.bool_:
            attn_mask = (1 - attn_mask).astype(Q.dtype)
            attn_mask[attn_mask == 1] = -np.inf
        attn_bias = attn_bias + attn_mask

    k_transpose = np.transpose(K, (0, 1, 3, 2))
    qk_matmul_output = np.matmul(Q * scale, k_transpose * scale)
    qk_with_bias = qk_matmul_output + attn_bias
    qk_softmax = _softmax(qk_with_bias)
    if qk_matmul_output_mode == 3:
        qk_matmul_output = qk_softmax
    qk_matmul_output = qk_matmul_output.astype(Q.dtype)

    output = np.matmul(qk_softmax, V).astype(Q.dtype)
    return output, qk_matmul_output


def scaled_dot_product_attention(q, k, v, mask=None):
    lead = q.shape[:-2]
    n, m = q.shape[-2], k.shape[-2]
    Q = q.reshape((-1, 1) + q.shape[-2:])
    K = k.reshape((-1, 1) + k.shape[-2:])
    V = v.reshape((-1, 1) + v.shape[-2:])
    if mask is not None:
        mask = np.broadcast_to(mask, lead + (n, m)).reshape((-1, 1, n, m))
    out, weights = _compute_attention(Q, K, V, attn_mask=mask, qk_matmul_output_mode=3)
    return out.reshape(lead + out.shape[-2:]), weights.reshape(lead + (n, m))
