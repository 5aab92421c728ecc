# quizprep: exercise=softmax-numpy
# source: numenta/nupic-legacy src/nupic/algorithms/sdr_classifier.py (SDRClassifier.inferSingleStep, "# softmax normalization": expOutputActivation = numpy.exp(outputActivation); predictDist = expOutputActivation / numpy.sum(expOutputActivation)), the form before numenta/nupic-legacy PR #3819 "Fix softmax overflow" (merged 2018-03-13), which subtracts numpy.max(outputActivation) first
# style: the textbook exp / sum with no shift, in the input's dtype, NumPy spelled numpy
# adapter: the source normalises one 1-D activation vector; the sum takes axis=dim, keepdims=True to normalise along dim of an n-D array
# expect: fail diagnosis=no-max-shift
# bug: as published: no max shift, so exp overflows to inf above about 88.7 in float32 and 11.1 in float16 and those rows come out NaN (inf / inf); fixed by PR #3819
from __future__ import annotations

import numpy


def stable_softmax(x: numpy.ndarray, dim: int = -1) -> numpy.ndarray:
    outputActivation = x

    # softmax normalization
    expOutputActivation = numpy.exp(outputActivation)
    predictDist = expOutputActivation / numpy.sum(expOutputActivation, axis=dim, keepdims=True)
    return predictDist
