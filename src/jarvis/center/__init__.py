"""Jarvis center."""
