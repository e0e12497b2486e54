"""The "hey jarvis" wake word: openWakeWord (default) or microWakeWord, both offline.

Both models ship inside their Python packages (`pyopen-wakeword`, `pymicro-wakeword`).
Measured on synthetic requests (bench/voice.py), microWakeWord hears Piper's voice but
not espeak-ng's at all, while openWakeWord hears both, so it is the default; either fits
the `WakeWord` interface.

`sensitivity` (0..1) moves the detection threshold: 0.5 keeps the model's usual one,
higher hears the phrase more readily (with more false accepts), lower asks for a clearer
"hey jarvis". The default, 0.7 (openWakeWord's threshold 0.3), was chosen on phrases the
bench does not use: a slow or distant speaker peaks at 0.3-0.5, where the model's own 0.5
misses them, while twelve minutes of other speech in noise stay below 0.06 (and
bench/voice.py's hour of it brings no false accept at 0.3).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from jarvis.node.voice.audio import FRAME_BYTES
from jarvis.node.voice.interfaces import WakeWord

__all__ = [
    "DEFAULT_SENSITIVITY",
    "MicroWakeWordDetector",
    "OpenWakeWordDetector",
    "WakeWordSettings",
    "load_wake_word",
]

_MICRO_SPREAD = 0.06  # sensitivity 0..1 -> cutoff published+0.03 .. published-0.03
_OPEN_CHUNK = 1280 * 2  # openWakeWord consumes 80 ms at a time
_REFRACTORY_FRAMES = 100  # 1 s: one "hey jarvis" fires once
DEFAULT_SENSITIVITY = 0.7


@dataclass(frozen=True)
class WakeWordSettings:
    engine: Literal["openwakeword", "microwakeword"] = "openwakeword"
    model: str = "hey_jarvis"  # a model shipped in the engine's package
    sensitivity: float = DEFAULT_SENSITIVITY

    def __post_init__(self) -> None:
        if not 0.0 <= self.sensitivity <= 1.0:
            raise ValueError(
                f"wake word sensitivity must be between 0 and 1, not {self.sensitivity}"
            )


def load_wake_word(settings: WakeWordSettings | None = None) -> WakeWord:
    """The engine `settings.engine` names."""
    settings = settings or WakeWordSettings()
    if settings.engine == "microwakeword":
        return MicroWakeWordDetector(settings)
    if settings.engine == "openwakeword":
        return OpenWakeWordDetector(settings)
    raise ValueError(f"unknown wake word engine {settings.engine!r}")


def _model(enum: type, name: str) -> object:
    try:
        return enum(name)
    except ValueError:
        known = ", ".join(m.value for m in enum)
        raise ValueError(f"unknown wake word model {name!r} ({known})") from None


class OpenWakeWordDetector:
    """A `WakeWord` engine: openWakeWord's mel, embedding and "hey jarvis" models."""

    def __init__(self, settings: WakeWordSettings | None = None) -> None:
        from pyopen_wakeword import Model, OpenWakeWord, OpenWakeWordFeatures

        self.settings = settings or WakeWordSettings()
        self._model = OpenWakeWord.from_builtin(_model(Model, self.settings.model))
        self._features = OpenWakeWordFeatures.from_builtin()
        self.phrase = self.settings.model.replace("_", " ")
        self.threshold = 1.0 - self.settings.sensitivity
        self._pending = b""
        self._quiet = 0

    def process(self, frame: bytes) -> bool:
        self._pending += frame
        if len(self._pending) < _OPEN_CHUNK:
            return False
        chunk, self._pending = self._pending[:_OPEN_CHUNK], self._pending[_OPEN_CHUNK:]
        self._quiet = max(0, self._quiet - len(chunk) // FRAME_BYTES)
        fired = False
        for embedding in self._features.process_streaming(chunk):
            for probability in self._model.process_streaming(embedding):
                fired = fired or probability > self.threshold
        if fired and not self._quiet:
            self.reset()
            self._quiet = _REFRACTORY_FRAMES
            return True
        return False

    def reset(self) -> None:
        self._model.reset()
        self._pending = b""


class MicroWakeWordDetector:
    """A `WakeWord` engine: microWakeWord features and model (~60 KB), fed 10 ms frames."""

    def __init__(self, settings: WakeWordSettings | None = None) -> None:
        from pymicro_wakeword import MicroWakeWord, MicroWakeWordFeatures, Model

        self.settings = settings or WakeWordSettings(engine="microwakeword")
        self._model = MicroWakeWord.from_builtin(_model(Model, self.settings.model))
        self._features = MicroWakeWordFeatures()
        self.phrase = self._model.wake_word
        published = self._model.probability_cutoff
        self.cutoff = min(0.999, published + (0.5 - self.settings.sensitivity) * _MICRO_SPREAD)

    def process(self, frame: bytes) -> bool:
        for features in self._features.process_streaming(frame):
            probability = self._model.process_streaming_prob(features)
            if probability is not None and probability > self.cutoff:
                self.reset()  # one utterance of the phrase fires once
                return True
        return False

    def reset(self) -> None:
        self._model.reset()
        self._features.reset()
