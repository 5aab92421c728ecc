# quizprep: exercise=budget
# source: cli99/llm-analysis llm_analysis/analysis.py and llm_analysis/constant.py @ 0c29a9ee3b3b3b8158d0d5e42bb9c4c1a9d1dc3d (LLMAnalysis.get_memory_kv_cache_per_layer: head_dim = hidden_dim / n_head, num_heads_per_gpu = max(num_key_value_heads / tp_size, 1), 2 * batch_size * seq_len * head_dim * num_heads_per_gpu * kv_cache_dtype_bytes with kv_cache_dtype_bytes = activation_bits / BITS_PER_BYTE, times num_layers by its caller; get_num_params_per_layer_attn: 4 * hidden_dim**2; get_memory_activation_per_layer_attn: selective_compute_elems = 2 * n_head * seq_len**2 * batch_size / tp_size (QKᵀ and its softmax) times bytes_per_activation; get_num_flops_fwd_per_layer_attn's compute_attn term 4 * batch_size * seq_len**2 * hidden_dim)
# style: an LLM memory/latency calculator: per-layer methods on a model config, sizes from a bits table divided by BITS_PER_BYTE, tensor-parallel sharding folded into every formula, float arithmetic throughout
# adapter: the methods kept on small config classes (llm-analysis's dataclasses written as plain classes) built per call (tp_size = 1; for the KV cache n_head = kv_heads and hidden_dim = kv_heads · head_dim, so that hidden_dim / n_head is the given head_dim); float results returned as int; the bits table extended with float64 (64) and float8_e4m3fn (8, as BITS_INT8); the score matrix is one of the two matrices selective_compute_elems counts, seq_len**2 read as n · m; the compute_attn term's seq_len**2 read as the (query, key) pairs, counted for causal=True with the stub's rule (query i sees m - n + i + 1 keys), since llm-analysis always counts the full square; bias vectors (which llm-analysis leaves out) added to the parameter count at their widths
# expect: fail diagnosis=params-gqa-ignored
# bug: as published: the attention parameters are 4 * hidden_dim**2, K and V projections counted d_model wide, although the same version (Llama 2 support, 7a949f0, and #4) sizes the KV cache by num_key_value_heads: for GQA/MQA it overcounts 2 · d_model · (d_model − n_kv_heads · d_head); fixed in llm-analysis 54b51aabc8b89cf2ebd1479e47e80ef5d0a50962 (PR #9), 2 * h**2 + 2 * h * (h * num_key_value_heads / n_head)
from __future__ import annotations

BITS_PER_BYTE = 8  # number of bits in a byte

BITS_FP32 = 32  # number of bits in FP32 data type
BITS_FP16 = 16  # number of bits in FP16 data type
BITS_BP16 = 16  # number of bits in BP16 data type
BITS_INT8 = 8  # number of bits in INT8 data type

DTYPE_BITS = {
    "float64": 64,
    "float32": BITS_FP32,
    "float16": BITS_FP16,
    "bfloat16": BITS_BP16,
    "int8": BITS_INT8,
    "float8_e4m3fn": BITS_INT8,
}


class ModelConfig:
    def __init__(self, hidden_dim: int, n_head: int, num_key_value_heads: int):
        self.hidden_dim = hidden_dim
        self.n_head = n_head
        self.num_key_value_heads = num_key_value_heads


class DtypeConfig:
    def __init__(self, activation_bits: int):
        self.activation_bits = activation_bits


class ParallelismConfig:
    def __init__(self, tp_size: int = 1):
        self.tp_size = tp_size


class LLMAnalysis:
    def __init__(self, model_config, dtype_config, parallelism_config=None):
        self.model_config = model_config
        self.dtype_config = dtype_config
        self.parallelism_config = parallelism_config or ParallelismConfig()

    def get_num_params_per_layer_attn(self) -> int:
        """Get the number of parameters in the attention linear layers,
        including the query/key/value projection and output matrices.

        Returns:
            int: the number of parameters in the attention linear layers
        """
        return 4 * self.model_config.hidden_dim**2

    def get_memory_attn_compute(self, batch_size, seq_len_sq):
        tp_size = self.parallelism_config.tp_size
        n_head = self.model_config.n_head
        bytes_per_activation = (self.dtype_config.activation_bits /
                                BITS_PER_BYTE)
        memory_attn_compute = 2 * n_head * seq_len_sq * batch_size * bytes_per_activation / tp_size
        return memory_attn_compute

    def get_memory_kv_cache_per_layer(
        self,
        batch_size: int,
        seq_len: int,
        kv_cache_dtype_bytes: int = None,
    ) -> float:
        if kv_cache_dtype_bytes is None:
            kv_cache_dtype_bytes = (self.dtype_config.activation_bits /
                                    BITS_PER_BYTE)
        head_dim = self.model_config.hidden_dim / self.model_config.n_head
        num_heads_per_gpu = max(
            self.model_config.num_key_value_heads /
            self.parallelism_config.tp_size,
            1)  # At least on attention head on each tensor-parallel GPU

        memory_kv_cache_per_layer = (2 * batch_size * seq_len * head_dim *
                                     num_heads_per_gpu) * kv_cache_dtype_bytes
        return memory_kv_cache_per_layer

    def get_num_flops_attn_compute(self, batch_size, seq_len_sq):
        return 4 * batch_size * seq_len_sq * self.model_config.hidden_dim


def _causal_pairs(n, m):
    return sum(max(0, min(m, m - n + i + 1)) for i in range(n))


def attention_scores_bytes(batch, heads, n, m, dtype):
    a = LLMAnalysis(ModelConfig(hidden_dim=heads, n_head=heads, num_key_value_heads=heads),
                    DtypeConfig(activation_bits=DTYPE_BITS[dtype]))
    return int(round(a.get_memory_attn_compute(batch, n * m) / 2))


def kv_cache_bytes(layers, kv_heads, head_dim, seq_len, batch, dtype):
    a = LLMAnalysis(ModelConfig(hidden_dim=kv_heads * head_dim, n_head=kv_heads, num_key_value_heads=kv_heads),
                    DtypeConfig(activation_bits=DTYPE_BITS[dtype]))
    return int(round(a.get_memory_kv_cache_per_layer(batch, seq_len) * layers))


def attention_params(d_model, n_heads, n_kv_heads, bias):
    a = LLMAnalysis(ModelConfig(hidden_dim=d_model, n_head=n_heads, num_key_value_heads=n_kv_heads),
                    DtypeConfig(activation_bits=BITS_FP16))
    d_head = d_model // n_heads
    biases = 2 * d_model + 2 * n_kv_heads * d_head if bias else 0
    return int(round(a.get_num_params_per_layer_attn())) + biases


def attention_flops(batch, heads, n, m, head_dim, causal):
    a = LLMAnalysis(ModelConfig(hidden_dim=heads * head_dim, n_head=heads, num_key_value_heads=heads),
                    DtypeConfig(activation_bits=BITS_FP16))
    pairs = _causal_pairs(n, m) if causal else n * m
    return int(round(a.get_num_flops_attn_compute(batch, pairs)))
