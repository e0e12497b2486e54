"""The Python side of the `search_notes` example tool (docs/examples/yaml-tools.yaml)."""

from __future__ import annotations

from pathlib import Path


def search_notes(query: str, notes_dir: str, limit: int = 3) -> dict:
    """Search my notes for a word or phrase.

    Args:
        query: Word or phrase to look for (case does not matter).
        notes_dir: Folder holding the notes (set by the tool file, hidden from the LLM).
        limit: How many matching notes to name at most.
    """
    folder = Path(notes_dir)
    hits = [
        path.stem
        for path in sorted(folder.glob("*"))
        if path.suffix in (".txt", ".md") and query.lower() in path.read_text().lower()
    ]
    if not hits:
        return {"message": f"No note mentions {query}.", "matches": []}
    shown = ", ".join(hits[:limit])
    return {"message": f"{len(hits)} note(s) mention {query}: {shown}.", "matches": hits}
