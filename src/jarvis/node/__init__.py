"""Jarvis node."""
