"""Jarvis commands."""
