# quizprep: exercise=budget
# source: AI-Hypercomputer/maxtext MaxText/maxtext_utils.py @ 33339821e96327d25613ace9d28c7a8789698586 (calculate_tflops_training_per_device, non-MLA branch: qkv_flops = 2 * per_device_batch_size * max_target_length * emb_dim * (num_query_heads + 2 * num_kv_heads) * head_dim; attention_flops = 4 * per_device_batch_size * max_target_length**2 * num_query_heads * head_dim; projection_flops = 2 * per_device_batch_size * max_target_length * emb_dim * num_query_heads * head_dim; "megatron tflops calculation does not account for causality in attention")
# style: a JAX trainer's MFU accounting: FLOPs per projection written as 2 · tokens · in · out, the attention term 4 · B · S² · H · D for the two matmuls, everything on a config object
# adapter: the config built from the call (per_device_batch_size = batch, num_query_heads = heads, head_dim = head_dim, emb_dim = d_model, num_kv_heads = n_kv_heads); attention_flops's max_target_length**2 written max_target_length * kv_length (max_target_length = n, kv_length = m) so that queries and keys may differ; attention_params derived from the same version's qkv_flops and projection_flops divided by 2 · batch · tokens (2 FLOPs per weight per token), with bias vectors (MaxText's projections have none) added at their widths; attention_scores_bytes and kv_cache_bytes, which MaxText does not compute, written as the stub states them with a byte-size table
# expect: fail diagnosis=causal-ignored
# bug: as published: the attention FLOPs are 4 · B · H · n · m · d whether or not the attention is causal (the Megatron convention the comment cites), so a causal call counts every masked (query, key) pair; fixed in MaxText 2adc3bab1cea2e5a335b9e4c053c868155da2089 (PR #1988, issue #1972: "Divide FLOPs by two due to causal masks")
from __future__ import annotations

from types import SimpleNamespace

DTYPE_BYTES = {"float64": 8, "float32": 4, "bfloat16": 2, "float16": 2, "int8": 1, "float8_e4m3fn": 1}


def calculate_attention_flops_per_device(config):
    # Attention flops
    qkv_flops = (
        2
        * config.per_device_batch_size
        * config.max_target_length
        * config.emb_dim
        * (config.num_query_heads + 2 * config.num_kv_heads)
        * config.head_dim
    )
    attention_flops = (
        4 * config.per_device_batch_size * config.max_target_length * config.kv_length * config.num_query_heads * config.head_dim
    )
    projection_flops = (
        2
        * config.per_device_batch_size
        * config.max_target_length
        * config.emb_dim
        * config.num_query_heads
        * config.head_dim
    )
    return qkv_flops, attention_flops, projection_flops


class _Config(SimpleNamespace):
    pass


def attention_flops(batch, heads, n, m, head_dim, causal):
    config = _Config(per_device_batch_size=batch, max_target_length=n, kv_length=m, emb_dim=heads * head_dim,
                     num_query_heads=heads, num_kv_heads=heads, head_dim=head_dim)
    _, attention_flops, _ = calculate_attention_flops_per_device(config)
    # megatron tflops calculation does not account for causality in attention
    return attention_flops


def attention_params(d_model, n_heads, n_kv_heads, bias):
    d_head = d_model // n_heads
    config = _Config(per_device_batch_size=1, max_target_length=1, kv_length=1, emb_dim=d_model,
                     num_query_heads=n_heads, num_kv_heads=n_kv_heads, head_dim=d_head)
    qkv_flops, _, projection_flops = calculate_attention_flops_per_device(config)
    tokens = config.per_device_batch_size * config.max_target_length
    weights = (qkv_flops + projection_flops) // (2 * tokens)
    biases = (n_heads * d_head + 2 * n_kv_heads * d_head + d_model) if bias else 0
    return weights + biases


def attention_scores_bytes(batch, heads, n, m, dtype):
    return batch * heads * n * m * DTYPE_BYTES[dtype]


def kv_cache_bytes(layers, kv_heads, head_dim, seq_len, batch, dtype):
    return 2 * layers * kv_heads * head_dim * seq_len * batch * DTYPE_BYTES[dtype]
