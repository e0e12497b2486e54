"""Jarvis center/llm."""
