"""The "hey jarvis" wake word from `pymicro-wakeword` (microWakeWord, TFLite, ~60 KB model).

`sensitivity` (0..1) moves the model's probability cutoff around its published value:
0.5 keeps it (0.97 for "hey jarvis"), higher detects more readily, with more false
accepts; lower asks for a clearer "hey jarvis".
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MicroWakeWordDetector", "WakeWordSettings"]

_SPREAD = 0.06  # sensitivity 0..1 -> cutoff published+0.03 .. published-0.03


@dataclass(frozen=True)
class WakeWordSettings:
    model: str = "hey_jarvis"  # a model shipped in pymicro-wakeword
    sensitivity: float = 0.5

    def __post_init__(self) -> None:
        if not 0.0 <= self.sensitivity <= 1.0:
            raise ValueError(
                f"wake word sensitivity must be between 0 and 1, not {self.sensitivity}"
            )


class MicroWakeWordDetector:
    """A `WakeWord` engine: microWakeWord features and model, fed 10 ms frames."""

    def __init__(self, settings: WakeWordSettings | None = None) -> None:
        from pymicro_wakeword import MicroWakeWord, MicroWakeWordFeatures, Model

        self.settings = settings or WakeWordSettings()
        try:
            model = Model(self.settings.model)
        except ValueError:
            known = ", ".join(m.value for m in Model)
            raise ValueError(f"unknown wake word model {self.settings.model!r} ({known})") from None
        self._model = MicroWakeWord.from_builtin(model)
        self._features = MicroWakeWordFeatures()
        self.phrase = self._model.wake_word
        published = self._model.probability_cutoff
        self.cutoff = min(0.999, published + (0.5 - self.settings.sensitivity) * _SPREAD)

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
