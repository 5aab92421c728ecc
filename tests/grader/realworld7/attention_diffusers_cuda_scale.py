# quizprep: exercise=attention
# source: huggingface/diffusers AttnProcessor (get_attention_scores: torch.baddbmm on an empty baddbmm_input with beta=0, alpha=scale), in notebooks that pin the device with .cuda()
# style: heads already folded, baddbmm with beta=0, softmax then .to(dtype), the empty input allocated with .cuda()
# expect: fail diagnosis=device-hard-coded-cuda
# bug: the empty baddbmm input is created with torch.empty(...).cuda(): on a machine without CUDA it raises, and on a GPU it pins the tensor to cuda:0 whatever device the inputs are on; torch.empty(..., device=q.device) follows the inputs
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    lead = q.shape[:-2]
    n, d = q.shape[-2], q.shape[-1]
    m = k.shape[-2]
    q3 = q.reshape(-1, n, d)
    k3 = k.reshape(-1, m, d)
    baddbmm_input = torch.empty(q3.shape[0], n, m, dtype=q.dtype).cuda()
    scores = torch.baddbmm(baddbmm_input, q3, k3.transpose(-1, -2), beta=0, alpha=d ** -0.5)
    scores = scores.reshape(*lead, n, m)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    probs = scores.float().softmax(dim=-1).to(q.dtype)
    return probs @ v, probs
