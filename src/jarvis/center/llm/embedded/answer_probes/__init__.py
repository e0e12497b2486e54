"""Trained answer probes, one JSON file per model, named by the model file's SHA-256."""
