"""The attention core: scores, masks, softmax, the weighted sum, heads, tiles,
   gradients.

Everything here is numpy and imports nothing else from attnlib: this is the part of the
package a reader learns from. The contract's checks live in
:mod:`attnlib.core._validation`, beside the code they protect. The names are re-exported
by :mod:`attnlib`.
"""
