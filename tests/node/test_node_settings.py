"""The node's timezone: JARVIS_TIMEZONE, TZ, /etc/localtime, /etc/timezone, then UTC."""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis.node.settings import NodeSettings, node_timezone


def _zoneinfo_link(tmp_path: Path, zone: str) -> Path:
    target = tmp_path / "usr/share/zoneinfo" / zone
    target.parent.mkdir(parents=True)
    target.write_bytes(b"TZif")
    link = tmp_path / "localtime"
    link.symlink_to(target)
    return link


def test_order_of_sources(tmp_path: Path) -> None:
    link = _zoneinfo_link(tmp_path, "Asia/Tokyo")
    tzfile = tmp_path / "timezone"
    tzfile.write_text("America/Chicago\n")
    nowhere = tmp_path / "missing"

    def zone(env: dict[str, str], localtime: Path = link, timezone_file: Path = tzfile) -> str:
        return node_timezone(env, localtime, timezone_file)

    assert zone({"JARVIS_TIMEZONE": "Europe/Paris", "TZ": "Asia/Kolkata"}) == "Europe/Paris"
    assert zone({"TZ": ":Asia/Kolkata"}) == "Asia/Kolkata"
    assert zone({"TZ": "Not/AZone"}) == "Asia/Tokyo"
    assert zone({}, localtime=nowhere) == "America/Chicago"
    assert zone({}, localtime=nowhere, timezone_file=nowhere) == "UTC"


def test_invalid_configured_zone_is_an_error(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JARVIS_TIMEZONE", "Mars/Olympus_Mons")
    with pytest.raises(ValueError, match="not a known IANA timezone"):
        NodeSettings.from_env()
    monkeypatch.setenv("JARVIS_TIMEZONE", "Australia/Perth")
    monkeypatch.setenv("JARVIS_ROOM", "attic")
    settings = NodeSettings.from_env()
    assert (settings.timezone, settings.room, settings.data_dir) == (
        "Australia/Perth", "attic", data_dir
    )
