# quizprep: exercise=softmax
# source: d2l-ai/d2l-en chapter_linear-classification/softmax-regression-scratch (def softmax(X): X_exp = torch.exp(X); partition = X_exp.sum(1, keepdims=True); return X_exp / partition)
# style: the textbook's softmax from scratch, no max shift ("we make no provisions against numerical overflow")
# adapter: the hard-coded axis 1 is the exercise's dim
# expect: fail diagnosis=no-max-shift
# bug: exp of the raw logits: a logit above ~88 (float32) or ~11 (float16) overflows to inf and the row becomes NaN
import torch


def stable_softmax(x, dim=-1):
    X_exp = torch.exp(x)
    partition = X_exp.sum(dim, keepdims=True)
    return X_exp / partition
