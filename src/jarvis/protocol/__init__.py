"""The node <-> center wire protocol (pydantic models); imports only the SDK."""

from jarvis.protocol.events import *  # noqa: F403
from jarvis.protocol.events import __all__ as _events_all
from jarvis.protocol.models import *  # noqa: F403
from jarvis.protocol.models import __all__ as _models_all

__all__ = [*_models_all, *_events_all]
