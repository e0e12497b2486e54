"""Jarvis cli."""
