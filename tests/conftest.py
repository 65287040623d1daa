"""Test configuration: draw figures without a display."""
import os

os.environ.setdefault("MPLBACKEND", "Agg")
