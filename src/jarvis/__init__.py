"""Jarvis: a private, self-hostable voice assistant."""

__version__ = "0.1.0"
