"""The Transformer's parts, built from the attention core.

Positional encodings, layer normalisation, the feed-forward network, and one encoder and
one decoder layer (Vaswani et al. 2017, sections 3.1-3.5). Imports only from
:mod:`attnlib.core`; the names are re-exported by :mod:`attnlib`.
"""
