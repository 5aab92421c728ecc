# quizprep: exercise=softmax
# style: the textbook definition written directly
# expect: fail diagnosis=no-max-shift
# bug: no max subtraction: exp overflows to inf for logits above ~88.7 (fp32) / ~11.1 (fp16), giving NaN
import torch


def stable_softmax(x, dim=-1):
    e = torch.exp(x)
    return e / torch.sum(e, dim=dim, keepdim=True)
