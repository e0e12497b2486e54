"""The node <-> center wire protocol (pydantic models); imports only the SDK."""

from jarvis.protocol.models import *  # noqa: F403
from jarvis.protocol.models import __all__ as _models_all

__all__ = list(_models_all)
