"""The examples in docs/examples/*.yaml load and run as docs/yaml-tools.md describes them."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from yaml_tool_helpers import call

from jarvis.sdk.yaml_tools import ToolFileError, load_tool_file, load_tool_paths

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
SECRET = "restic-example-password"


@pytest.fixture
def tools(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "monday.md").write_text("Call the dentist about the appointment.")
    (notes / "groceries.txt").write_text("milk, eggs")
    (notes / "friday.txt").write_text("Dentist at 10.")
    environ = {
        **os.environ,
        "JARVIS_NOTES_DIR": str(notes),
        "RESTIC_REPOSITORY": str(tmp_path / "repo"),
        "RESTIC_PASSWORD": SECRET,
        "HOME": str(tmp_path),
    }
    files = sorted(EXAMPLES.glob("*.yaml"))
    assert files, "the documentation has example tool files"
    commands, errors = load_tool_paths(files, environ=environ)
    assert errors == []
    return {c.command_name: c for c in commands}


def test_every_documented_tool_loads(tools):
    assert set(tools) == {
        "disk_usage", "count_words", "find_files", "search_notes", "backup_snapshots",
    }


def test_disk_usage(tools, tmp_path):
    (tmp_path / "data.bin").write_bytes(b"x" * 50_000)
    response = call(tools["disk_usage"], path=str(tmp_path))
    assert response.success
    size, folder = response.message.split("\t")
    assert folder == str(tmp_path) and size.endswith("K")
    # After the literal "--" a dashed value is a file name to du, not an option.
    smuggled = call(tools["disk_usage"], path="--apparent-size")
    assert not smuggled.success and not smuggled.is_validation_error
    assert "cannot access '--apparent-size'" in smuggled.message


def test_count_words_gets_its_text_as_data(tools, tmp_path):
    marker = tmp_path / "pwned"
    response = call(tools["count_words"], text="the quick brown fox")
    assert response.success and response.message == "4"
    text = f"a'; touch {marker}; echo '"
    injected = call(tools["count_words"], text=text)
    assert injected.success and injected.message == str(len(text.split()))
    assert not marker.exists()


def test_the_documented_refused_form_is_refused(tmp_path):
    doc = (EXAMPLES.parent / "yaml-tools.md").read_text()
    refused = re.search(r"# Refused: .*\n\s*(exec: .*)\n", doc)
    assert refused is not None
    path = tmp_path / "words.yaml"
    path.write_text(
        "tools:\n  - name: count_words\n    description: d\n"
        f"    {refused.group(1)}\n    params: [{{name: text}}]\n"
    )
    with pytest.raises(ToolFileError) as info:
        load_tool_file(path)
    documented = re.search(r"words\.yaml:4 \(tool 'count_words'\): (.*?)\n\s*```", doc, re.S)
    assert documented is not None
    assert info.value.message == " ".join(documented.group(1).split())


def test_find_files(tools, tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "report.pdf").write_text("1")
    (tmp_path / "a" / "b" / "deep.pdf").write_text("2")
    (tmp_path / "a" / "folder.pdf").mkdir()
    shallow = call(tools["find_files"], folder=str(tmp_path), pattern="*.pdf", depth=2)
    assert sorted(shallow.message.splitlines()) == [
        str(tmp_path / "a" / "folder.pdf"), str(tmp_path / "a" / "report.pdf"),
    ]
    files = call(tools["find_files"], folder=str(tmp_path), pattern="*.pdf", only_files=True)
    assert sorted(files.message.splitlines()) == [
        str(tmp_path / "a" / "b" / "deep.pdf"), str(tmp_path / "a" / "report.pdf"),
    ]


def test_search_notes(tools):
    tool = tools["search_notes"]
    schema = tool.to_openai_tool_schema()["function"]
    assert schema["description"] == "Search my notes for a word or phrase."
    assert set(schema["parameters"]["properties"]) == {"query", "limit"}
    response = call(tool, query="Dentist", limit="1")
    assert response.message == "2 note(s) mention Dentist: friday."
    assert response.context_data["matches"] == ["friday", "monday"]


def test_backup_snapshots_hides_its_password(tools):
    tool = tools["backup_snapshots"]
    schema = tool.to_openai_tool_schema()
    assert list(schema["function"]["parameters"]["properties"]) == ["count"]
    assert SECRET not in str(schema) and SECRET not in str(tool.get_command_schema())
