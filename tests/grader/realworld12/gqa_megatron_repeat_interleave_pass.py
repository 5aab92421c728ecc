# quizprep: exercise=gqa
# source: NVIDIA/Megatron-LM megatron/model/transformer.py and megatron/model/fused_softmax.py, megatron/model/utils.py @ 750f416b95aeeb6ebd1841d4f881225f64497564 (ParallelAttention.forward for self-attention: mixed_x_layer = query_key_value(hidden_states) viewed [sq, b, np + 2*ng, hn] and split into np query heads and ng key and value groups, keys and values expanded to np heads, then CoreAttention.forward: baddbmm(q, k^T, beta=0, alpha=1/norm_factor), scale_mask_softmax with attention_mask_func (masked_fill_(mask, -10000.0)), bmm with v, permute back to [sq, b, hp]; then the dense output layer)
# style: Megatron-LM's sequence-first [s, b, h] layout: one fused QKV matmul viewed as [sq, b, np + 2*ng, hn] and split by heads, heads folded into the batch for baddbmm with alpha = 1/norm_factor into a preallocated buffer, a boolean mask where True means MASKED filled in place with -10000.0, the softmax upcast to float32 for fp16/bf16 and cast back
# adapter: query_key_value is the contract's W_q, W_k, W_v stacked row-wise (Megatron's [np + 2*ng] head order: all query heads, then the key groups, then the value groups); x transposed from (B, T, d) to [s, b, h] and back; mpu.get_global_memory_buffer().get_tensor → torch.empty (baddbmm with beta=0.0 ignores it); view → reshape where the split/repeated layers are not viewable; FusedScaleMaskSoftmax's torch path (the CUDA kernels are for fp16/bf16 on a GPU) with apply_query_key_layer_scaling off (scale None, norm_factor = sqrt(hn)); the contract's mask (True = may attend) inverted into Megatron's (True = masked); no RoPE, no inference KV memory, no tensor parallelism (partition sizes = full sizes), dropout 0; self.dense is W_o
# expect: pass
from __future__ import annotations

import math

import torch
from torch import nn


def attention_mask_func(attention_scores, attention_mask):
    attention_scores.masked_fill_(attention_mask, -10000.0)
    return attention_scores


class FusedScaleMaskSoftmax(nn.Module):
    """The forward_torch_softmax path (the fused CUDA kernels need a GPU and fp16/bf16)."""

    def __init__(self, input_in_fp16, input_in_bf16, mask_func, softmax_in_fp32, scale):
        super().__init__()
        self.input_in_fp16 = input_in_fp16
        self.input_in_bf16 = input_in_bf16
        self.input_in_float16 = self.input_in_fp16 or self.input_in_bf16
        self.mask_func = mask_func
        self.softmax_in_fp32 = softmax_in_fp32
        self.scale = scale

    def forward(self, input, mask):
        if self.input_in_float16 and self.softmax_in_fp32:
            input = input.float()

        if self.scale is not None:
            input = input * self.scale
        mask_output = self.mask_func(input, mask) if mask is not None else input
        probs = torch.nn.Softmax(dim=-1)(mask_output)

        if self.input_in_float16 and self.softmax_in_fp32:
            if self.input_in_fp16:
                probs = probs.half()
            else:
                probs = probs.bfloat16()

        return probs


def core_attention(query_layer, key_layer, value_layer, attention_mask, norm_factor,
                   hidden_size_per_partition):
    # ===================================
    # Raw attention scores. [b, np, s, s]
    # ===================================

    # [b, np, sq, sk]
    output_size = (query_layer.size(1),
                   query_layer.size(2),
                   query_layer.size(0),
                   key_layer.size(0))

    # [sq, b, np, hn] -> [sq, b * np, hn]
    query_layer = query_layer.reshape(output_size[2],
                                      output_size[0] * output_size[1], -1)
    # [sk, b, np, hn] -> [sk, b * np, hn]
    key_layer = key_layer.reshape(output_size[3],
                                  output_size[0] * output_size[1], -1)

    # preallocting input tensor: [b * np, sq, sk]
    matmul_input_buffer = torch.empty(
        (output_size[0]*output_size[1], output_size[2], output_size[3]),
        dtype=query_layer.dtype, device=query_layer.device)

    # Raw attention scores. [b * np, sq, sk]
    matmul_result = torch.baddbmm(
        matmul_input_buffer,
        query_layer.transpose(0, 1),   # [b * np, sq, hn]
        key_layer.transpose(0, 1).transpose(1, 2),  # [b * np, hn, sk]
        beta=0.0, alpha=(1.0/norm_factor))

    # change view to [b, np, sq, sk]
    attention_scores = matmul_result.view(*output_size)

    # ===========================
    # Attention probs and dropout
    # ===========================

    # attention scores and attention mask [b, np, sq, sk]
    scale_mask_softmax = FusedScaleMaskSoftmax(
        query_layer.dtype == torch.float16, query_layer.dtype == torch.bfloat16,
        attention_mask_func, softmax_in_fp32=True, scale=None)
    attention_probs = scale_mask_softmax(attention_scores, attention_mask)

    # =========================
    # Context layer. [sq, b, hp]
    # =========================

    # value_layer -> context layer.
    # [sk, b, np, hn] --> [b, np, sq, hn]

    # context layer shape: [b, np, sq, hn]
    output_size = (value_layer.size(1),
                   value_layer.size(2),
                   query_layer.size(0),
                   value_layer.size(3))

    # change view [sk, b * np, hn]
    value_layer = value_layer.reshape(value_layer.size(0),
                                      output_size[0] * output_size[1], -1)

    # change view [b * np, sq, sk]
    attention_probs = attention_probs.view(output_size[0] * output_size[1],
                                           output_size[2], -1)

    # matmul: [b * np, sq, hn]
    context_layer = torch.bmm(attention_probs, value_layer.transpose(0, 1))

    # change view [b, np, sq, hn]
    context_layer = context_layer.view(*output_size)

    # [b, np, sq, hn] --> [sq, b, np, hn]
    context_layer = context_layer.permute(2, 0, 1, 3).contiguous()

    # [sq, b, np, hn] --> [sq, b, hp]
    new_context_layer_shape = context_layer.size()[:-2] + \
        (hidden_size_per_partition,)
    context_layer = context_layer.view(*new_context_layer_shape)

    return context_layer


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.num_attention_heads_per_partition = n_heads
        self.num_query_groups_per_partition = n_kv_heads
        self.hidden_size_per_attention_head = d_model // n_heads
        self.hidden_size_per_partition = n_heads * self.hidden_size_per_attention_head
        self.norm_factor = math.sqrt(self.hidden_size_per_attention_head)
        kv = n_kv_heads * self.hidden_size_per_attention_head
        self.W_q = nn.Linear(d_model, self.hidden_size_per_partition, bias=False)
        self.W_k = nn.Linear(d_model, kv, bias=False)
        self.W_v = nn.Linear(d_model, kv, bias=False)
        self.W_o = nn.Linear(self.hidden_size_per_partition, d_model, bias=False)

    def query_key_value(self, hidden_states):
        weight = torch.cat([self.W_q.weight, self.W_k.weight, self.W_v.weight], dim=0)
        return hidden_states @ weight.T, None

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        # hidden_states: [sq, b, h]
        hidden_states = x.transpose(0, 1)
        attention_mask = None if mask is None else ~mask

        # Attention heads [sq, b, h] --> [sq, b, (np * 1 * hn + ng * 2 * hn)]
        mixed_x_layer, _ = self.query_key_value(hidden_states)

        # [sq, b, hp] --> [sq, b, np + 2 * ng, hn]
        new_tensor_shape = mixed_x_layer.size()[:-1] + (
            self.num_attention_heads_per_partition + 2 * self.num_query_groups_per_partition,
            self.hidden_size_per_attention_head,
        )
        mixed_x_layer = mixed_x_layer.view(*new_tensor_shape)

        # [sq, b, np + 2 * ng, hn] --> [sq, b, np, hn], [sq, b, ng, hn], [sq, b, ng, hn]
        (query_layer,
        key_layer,
        value_layer) = torch.split(mixed_x_layer, [self.num_attention_heads_per_partition,
                                                   self.num_query_groups_per_partition,
                                                   self.num_query_groups_per_partition],
                                                   dim=2)

        # expand the key_layer and value_layer [sk, b, ng, hn] -> [sk, b, np, hn]
        key_layer = key_layer.repeat_interleave(int(self.num_attention_heads_per_partition / self.num_query_groups_per_partition),
                                            dim = 2)
        value_layer = value_layer.repeat_interleave(int(self.num_attention_heads_per_partition / self.num_query_groups_per_partition),
                                            dim = 2)
        context_layer = core_attention(query_layer, key_layer, value_layer, attention_mask,
                                       self.norm_factor, self.hidden_size_per_partition)

        # Output. [sq, b, h]
        output = self.W_o(context_layer)
        return output.transpose(0, 1)
