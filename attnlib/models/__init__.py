"""Models and experiments built from the core and the layers.

Recurrent encoders and the bottleneck experiment, the trained translators of the
bottleneck chapter, the context classifier of the learned-and-computed chapter and its
adversarial search, and a real pretrained encoder (all-MiniLM-L6-v2) in numpy. Import a
module from here: ``from attnlib.models import minilm``.
"""
