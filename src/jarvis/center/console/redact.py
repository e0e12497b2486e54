"""The last guard before anything leaves the console or the read API: the center's own
secrets (admin token, LLM API key, database password) are masked wherever they appear."""

from __future__ import annotations

from sqlalchemy.engine import make_url

from jarvis.center.settings import CenterSettings

__all__ = ["HIDDEN", "Redactor"]

HIDDEN = "[hidden]"


def _database_password(settings: CenterSettings) -> str | None:
    try:
        return make_url(settings.resolved_database_url()).password
    except Exception:  # an unparsable URL has no password to hide here
        return None


class Redactor:
    """Replaces every known secret value in a text."""

    def __init__(self, settings: CenterSettings) -> None:
        found = [
            settings.admin_token.get_secret_value() if settings.admin_token else None,
            settings.llm_api_key.get_secret_value() if settings.llm_api_key else None,
            _database_password(settings),
        ]
        # Longest first, so a secret containing another is masked whole.
        self._secrets = sorted({s for s in found if s}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, HIDDEN)
        return text
