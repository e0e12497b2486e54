"""Engines on Wyoming servers (Home Assistant's voice protocol), for a bigger machine.

`WyomingSpeechToText("tcp://host:10300")` sends the recorded request to a speech-to-text
server such as `wyoming-faster-whisper`; `WyomingTextToSpeech("tcp://host:10200")` asks a
text-to-speech server such as `wyoming-piper` for the answer, one sentence at a time so
playback starts early. Each call opens one connection; a server that cannot be reached
or does not answer in time raises `WyomingError` with its URI.

`WyomingWakeWord("tcp://host:10400")` streams every frame to a wake word server such as
`wyoming-openwakeword` over one long connection, kept by a background thread; a
`Detection` from the server makes the next `process` call return True.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterator
from typing import Any

from jarvis.node.voice.audio import SAMPLE_RATE, Audio

__all__ = ["WyomingError", "WyomingSpeechToText", "WyomingTextToSpeech", "WyomingWakeWord"]

_CHUNK_SAMPLES = 1024
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


class WyomingError(RuntimeError):
    """A Wyoming server was unreachable, too slow, or answered out of protocol."""


def _run(uri: str, timeout: float, talk: Any) -> Any:
    """Run `talk(client)` on a fresh connection to `uri`, within `timeout` seconds."""
    from wyoming.client import AsyncClient

    async def session() -> Any:
        async with AsyncClient.from_uri(uri) as client:
            return await talk(client)

    try:
        return asyncio.run(asyncio.wait_for(session(), timeout))
    except TimeoutError:
        raise WyomingError(f"the Wyoming server at {uri} did not answer in {timeout:g} s") from None
    except OSError as exc:
        raise WyomingError(f"cannot reach the Wyoming server at {uri}: {exc}") from None


class WyomingSpeechToText:
    """A `SpeechToText` engine on a Wyoming speech-to-text server."""

    def __init__(self, uri: str, *, language: str = "en", timeout: float = 30.0) -> None:
        self.uri, self.language, self.timeout = uri, language, timeout

    def transcribe(self, audio: Audio, hint: str | None = None) -> str:
        from wyoming.asr import Transcribe, Transcript
        from wyoming.audio import AudioChunk, AudioStart, AudioStop

        data = audio.resampled(SAMPLE_RATE).to_bytes()
        step = _CHUNK_SAMPLES * 2

        async def talk(client: Any) -> str:
            await client.write_event(Transcribe(language=self.language).event())
            await client.write_event(AudioStart(rate=SAMPLE_RATE, width=2, channels=1).event())
            for start in range(0, len(data), step):
                chunk = AudioChunk(rate=SAMPLE_RATE, width=2, channels=1,
                                   audio=data[start : start + step])
                await client.write_event(chunk.event())
            await client.write_event(AudioStop().event())
            while (event := await client.read_event()) is not None:
                if Transcript.is_type(event.type):
                    return Transcript.from_event(event).text.strip()
            raise WyomingError(f"the Wyoming server at {self.uri} closed without a transcript")

        return _run(self.uri, self.timeout, talk)


class WyomingTextToSpeech:
    """A `TextToSpeech` engine on a Wyoming text-to-speech server (`voice`: its name)."""

    def __init__(self, uri: str, *, voice: str | None = None, timeout: float = 30.0) -> None:
        self.uri, self.voice, self.timeout = uri, voice, timeout

    def synthesize(self, text: str) -> Iterator[Audio]:
        for sentence in _SENTENCE_END.split(text.strip()):
            if sentence:
                yield self._sentence(sentence)

    def _sentence(self, text: str) -> Audio:
        from wyoming.audio import AudioChunk, AudioStart, AudioStop
        from wyoming.tts import Synthesize, SynthesizeVoice

        async def talk(client: Any) -> Audio:
            voice = SynthesizeVoice(name=self.voice) if self.voice else None
            await client.write_event(Synthesize(text=text, voice=voice).event())
            pieces: list[bytes] = []
            rate = width = channels = 0
            while (event := await client.read_event()) is not None:
                if AudioStart.is_type(event.type):
                    start = AudioStart.from_event(event)
                    rate, width, channels = start.rate, start.width, start.channels
                elif AudioChunk.is_type(event.type):
                    chunk = AudioChunk.from_event(event)
                    rate, width, channels = chunk.rate, chunk.width, chunk.channels
                    pieces.append(chunk.audio)
                elif AudioStop.is_type(event.type):
                    return _to_audio(b"".join(pieces), rate, width, channels, self.uri)
            raise WyomingError(f"the Wyoming server at {self.uri} closed before the audio ended")

        return _run(self.uri, self.timeout, talk)


def _to_audio(data: bytes, rate: int, width: int, channels: int, uri: str) -> Audio:
    if width != 2 or rate <= 0:
        raise WyomingError(f"{uri} sent {8 * width}-bit audio at {rate} Hz; 16-bit expected")
    import numpy as np

    samples = np.frombuffer(data, dtype="<i2")
    if channels > 1:
        samples = samples[: len(samples) // channels * channels].reshape(-1, channels)
        samples = samples.mean(axis=1).astype(np.int16)
    return Audio(samples.astype(np.int16), rate)


class WyomingWakeWord:
    """A `WakeWord` engine on a Wyoming wake word server (`model`: the name it detects)."""

    def __init__(self, uri: str, *, model: str = "hey_jarvis", timeout: float = 10.0) -> None:
        from wyoming.client import AsyncClient

        self.uri, self.model, self.phrase = uri, model, model.replace("_", " ")
        self._client = AsyncClient.from_uri(uri)
        self._loop = asyncio.new_event_loop()
        self._frames: asyncio.Queue[bytes | None] | None = None
        self._detected = threading.Event()
        self._failure: str | None = None
        ready = threading.Event()
        self._thread = threading.Thread(
            target=self._serve, args=(ready,), name="wyoming-wake-word", daemon=True
        )
        self._thread.start()
        if not ready.wait(timeout) or self._failure:
            self.close()
            raise WyomingError(self._failure or f"the Wyoming server at {uri} did not answer")

    def process(self, frame: bytes) -> bool:
        if self._failure:
            raise WyomingError(self._failure)
        assert self._frames is not None
        self._loop.call_soon_threadsafe(self._frames.put_nowait, frame)
        if self._detected.is_set():
            self._detected.clear()
            return True
        return False

    def reset(self) -> None:
        self._detected.clear()

    def close(self) -> None:
        if self._frames is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._frames.put_nowait, None)
        self._thread.join(timeout=5)

    def _serve(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._stream(ready))
        except OSError as exc:
            self._failure = f"cannot reach the Wyoming server at {self.uri}: {exc}"
        except Exception as exc:  # reported to the caller by the next process()
            self._failure = f"the Wyoming server at {self.uri} failed: {exc}"
        finally:
            ready.set()
            self._loop.close()

    async def _stream(self, ready: threading.Event) -> None:
        from wyoming.audio import AudioChunk, AudioStart, AudioStop
        from wyoming.wake import Detect, Detection

        self._frames = asyncio.Queue()
        async with self._client as client:
            await client.write_event(Detect(names=[self.model]).event())
            await client.write_event(AudioStart(rate=SAMPLE_RATE, width=2, channels=1).event())
            ready.set()

            async def listen() -> None:
                while (event := await client.read_event()) is not None:
                    if Detection.is_type(event.type):
                        self._detected.set()
                raise ConnectionError("the server closed the connection")

            listener = asyncio.create_task(listen())
            try:
                while (frame := await self._frames.get()) is not None:
                    if listener.done():
                        listener.result()
                    chunk = AudioChunk(rate=SAMPLE_RATE, width=2, channels=1, audio=frame)
                    await client.write_event(chunk.event())
                await client.write_event(AudioStop().event())
            finally:
                listener.cancel()
