# quizprep: exercise=kv-cache
# source: onnx/onnx onnx/reference/ops/op_attention.py @ 04138e07da14f1eb60f5619f038e044eec365c1e (_compute_attention with past_key/past_value and is_causal: 3-D inputs reshaped to (B, S, heads, d) and transposed; present_key = np.concatenate((past_key, K), axis=2); _apply_causal(mask, past_sequence_length): np.triu(ones((q_len, total - past)), k=1) set to -inf and added to mask[..., :, past:]; K = np.repeat(K, q_num_heads // kv_num_heads, axis=1); Q * sqrt(scale) @ (K * sqrt(scale))ᵀ; _softmax with the row max)
# style: ONNX's NumPy reference operator: the scale split as √scale on Q and on K, a float bias with -inf written in place, the past concatenated on axis 2, heads repeated with np.repeat (interleaved)
# adapter: np.* rewritten as torch.* one for one (np.repeat → repeat_interleave, np.concatenate → torch.cat, the boolean-index assignment → masked_fill); Q, K, V come from x @ W.T as the operator's 3-D inputs with q_num_heads = H and kv_num_heads = G; present_key/present_value returned as the cache; the output's 3-D reshape then @ W_o.T
# expect: pass
from __future__ import annotations

import math

import torch


def _softmax(x: torch.Tensor, axis: int = -1) -> torch.Tensor:
    x_max = torch.amax(x, dim=axis, keepdim=True)
    tmp = torch.exp(x - x_max)
    s = torch.sum(tmp, dim=axis, keepdim=True)
    return tmp / s


def _apply_causal(mask, past_sequence_length):
    q_sequence_length, total_sequence_length = mask.shape[-2:]
    triu = torch.triu(
        torch.ones(
            (q_sequence_length, total_sequence_length - past_sequence_length),
            dtype=mask.dtype, device=mask.device,
        ),
        diagonal=1,
    )
    triu = triu.masked_fill(triu == 1, -math.inf)
    mask[..., :, past_sequence_length:] += triu
    return mask


def append_kv(cache_k, cache_v, k, v):
    present_key = torch.cat((cache_k, k), dim=2)
    present_value = torch.cat((cache_v, v), dim=2)
    return present_key, present_value


def _compute_attention(Q, K, V, past_key, past_value, q_num_heads, kv_num_heads):
    batch_size = Q.shape[0]
    head_size_q = int(Q.shape[2] / q_num_heads)
    Q = torch.reshape(Q, [batch_size, Q.shape[1], q_num_heads, head_size_q]).permute(0, 2, 1, 3)
    head_size_k = int(K.shape[2] / kv_num_heads)
    K = torch.reshape(K, [batch_size, K.shape[1], kv_num_heads, head_size_k]).permute(0, 2, 1, 3)
    head_size_v = int(V.shape[2] / kv_num_heads)
    V = torch.reshape(V, [batch_size, V.shape[1], kv_num_heads, head_size_v]).permute(0, 2, 1, 3)

    scale = 1 / math.sqrt(Q.shape[3])
    scale = math.sqrt(scale)

    present_key, present_value = append_kv(past_key, past_value, K, V)
    K = present_key
    V = present_value

    q_sequence_length = Q.shape[2]
    kv_sequence_length = K.shape[2]
    base = torch.zeros((q_sequence_length, kv_sequence_length), dtype=Q.dtype, device=Q.device)
    attn_bias = _apply_causal(base, past_sequence_length=past_key.shape[2])

    if q_num_heads != kv_num_heads:
        seq_reps = q_num_heads // kv_num_heads
        K = torch.repeat_interleave(K, repeats=seq_reps, dim=1)
        V = torch.repeat_interleave(V, repeats=seq_reps, dim=1)

    k_transpose = K.permute(0, 1, 3, 2)
    qk_matmul_output = torch.matmul(Q * scale, k_transpose * scale)
    qk_with_bias = qk_matmul_output + attn_bias
    qk_softmax = _softmax(qk_with_bias)
    output = torch.matmul(qk_softmax, V).to(Q.dtype)
    output = output.permute(0, 2, 1, 3)
    output = torch.reshape(output, (output.shape[0], output.shape[1], -1))
    return output, present_key, present_value


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    d_head = W_q.shape[0] // n_heads
    n_kv = W_k.shape[0] // d_head
    output, present_key, present_value = _compute_attention(
        x @ W_q.T, x @ W_k.T, x @ W_v.T, cache_k, cache_v, n_heads, n_kv
    )
    return output @ W_o.T, present_key, present_value
