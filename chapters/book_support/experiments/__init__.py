"""The experiments behind the book's stored results (trained weights, evaluations,
probes), each run by a Makefile target and read by the chapters."""
