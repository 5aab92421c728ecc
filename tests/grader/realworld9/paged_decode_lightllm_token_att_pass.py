# quizprep: exercise=paged-decode
# source: ModelTC/lightllm lightllm/models/llama/triton_kernel/token_attention_nopad_att1.py (torch_att1, the test reference of the token-attention kernel's first stage: logics = sum(xq * xk, -1) over a request's tokens, transposed to (num_head, seqlen), / sqrt(head_dim); the find_string tool showed no commit)
# style: logits as an elementwise product summed over the head dimension (no matmul), one request at a time through a per-token location row (LightLLM's Req_to_tokens / b_loc)
# adapter: the block table turned into each request's token-location row over the flattened pool; KV heads repeated with repeat_interleave (torch_att1 is written for MHA); the second stage (softmax, then the values weighted) written as torch.softmax and an einsum, in float32
# expect: pass
from __future__ import annotations

import math

import torch


def torch_att1(xq, xk, seqlen, num_head, head_dim):
    xq = xq.view(1, num_head, head_dim)
    xk = xk.view(seqlen, num_head, head_dim)
    logics = torch.sum(xq * xk, dim=-1, keepdim=False)

    logics = logics.transpose(0, 1) / math.sqrt(head_dim)
    return logics


def paged_decode(q, k_pool, v_pool, block_table, seq_lens):
    num_pages, page_size, kv_heads, head_dim = k_pool.shape
    batch, num_head = q.shape[0], q.shape[1]
    k_flat, v_flat = k_pool.reshape(-1, kv_heads, head_dim), v_pool.reshape(-1, kv_heads, head_dim)
    outs = []
    for b in range(batch):
        seqlen = int(seq_lens[b])
        t = torch.arange(seqlen, device=q.device)
        b_loc = block_table[b].long()[t // page_size] * page_size + t % page_size  # this request's Req_to_tokens row
        xk = k_flat[b_loc].float().repeat_interleave(num_head // kv_heads, dim=1)
        xv = v_flat[b_loc].float().repeat_interleave(num_head // kv_heads, dim=1)
        logics = torch_att1(q[b].float(), xk, seqlen, num_head, head_dim)  # (num_head, seqlen)
        prob = torch.softmax(logics, dim=-1)
        outs.append(torch.einsum("hn,nhd->hd", prob, xv))
    return torch.stack(outs).to(q.dtype)
