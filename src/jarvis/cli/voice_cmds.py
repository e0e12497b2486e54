"""jarvis listen / say: the node's voice on a microphone and speaker, or on WAV files."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from jarvis.cli.node_cmds import CenterOption, console, err_console, fail, running_node
from jarvis.model_files import ModelStoreError
from jarvis.node.scheduler import Scheduler
from jarvis.node.voice.wake_word import DEFAULT_SENSITIVITY

if TYPE_CHECKING:
    from jarvis.node.voice import Audio, RecorderSettings, VoiceEngines
    from jarvis.node.voice.devices import Microphone, Speaker

# The voice libraries (numpy, faster-whisper, piper, PortAudio) load only when a voice
# command runs, so `jarvis chat` works without the `voice` extra.

SttUriOption = Annotated[
    str | None,
    typer.Option("--stt-uri", envvar="JARVIS_WYOMING_STT",
                 help="A Wyoming speech-to-text server (tcp://host:10300) instead of Whisper."),
]
TtsUriOption = Annotated[
    str | None,
    typer.Option("--tts-uri", envvar="JARVIS_WYOMING_TTS",
                 help="A Wyoming text-to-speech server (tcp://host:10200) instead of Piper."),
]
WakeUriOption = Annotated[
    str | None,
    typer.Option("--wake-uri", envvar="JARVIS_WYOMING_WAKE",
                 help="A Wyoming wake word server (tcp://host:10400) instead of openWakeWord."),
]
DeviceOption = Annotated[
    str | None, typer.Option(help="Device number or part of its name (see --devices).")
]


def _engines(
    sensitivity: float, stt_uri: str | None, tts_uri: str | None, wake_uri: str | None,
    beam: int | None = None,
) -> VoiceEngines:
    from jarvis.node.voice import load_engines
    from jarvis.node.voice.engines import EngineSettings
    from jarvis.node.voice.stt import WhisperSettings
    from jarvis.node.voice.wake_word import WakeWordSettings
    from jarvis.node.voice.wyoming import WyomingError

    try:
        settings = EngineSettings.from_env(
            wake_word=WakeWordSettings(sensitivity=sensitivity),
            whisper=WhisperSettings(beam_size=beam) if beam is not None else None,
            stt_uri=stt_uri, tts_uri=tts_uri, wake_uri=wake_uri,
        )
        return load_engines(settings=settings)
    except (ModelStoreError, ValueError, WyomingError) as exc:
        fail(str(exc))


def _show(kind: str, detail: str) -> None:
    """What the loop hears and says, one line each."""
    lines = {
        "wake": "[dim](listening)[/dim]",
        "heard": f"[bold]you>[/bold] {escape(detail)}",
        "reply": f"[bold cyan]jarvis>[/bold cyan] {escape(detail)}",
        "question": f"[bold cyan]jarvis>[/bold cyan] {escape(detail)}",
        "announce": f"[bold cyan]jarvis>[/bold cyan] {escape(detail)}",
        "silence": "[dim](nothing heard)[/dim]",
        "barge_in": "[dim](interrupted)[/dim]",
        "truncated": f"[yellow]request cut at {escape(detail)}[/yellow]",
    }
    if kind in lines:
        console.print(lines[kind])


def listen(
    wav: Annotated[
        Path | None, typer.Option("--wav", help="Answer the request in this WAV file instead.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="With --wav: write the spoken answer here.")
    ] = None,
    input_device: DeviceOption = None,
    output_device: DeviceOption = None,
    devices: Annotated[
        bool, typer.Option("--devices", help="List the audio devices and exit.")
    ] = False,
    sensitivity: Annotated[
        float, typer.Option(help="Wake word sensitivity, 0..1 (higher hears it more readily).")
    ] = DEFAULT_SENSITIVITY,
    max_seconds: Annotated[float, typer.Option(help="Longest request, in seconds.")] = 15.0,
    beam: Annotated[
        int | None,
        typer.Option(help="Whisper's beam size (default 3; 1 is greedy, faster on a slow CPU)."),
    ] = None,
    stt_uri: SttUriOption = None,
    tts_uri: TtsUriOption = None,
    wake_uri: WakeUriOption = None,
    center: CenterOption = None,
) -> None:
    """Say "hey jarvis", then your request: Jarvis answers aloud (Ctrl-C stops).

    With --wav, one request is read from a file (the wake word in it is optional) and the
    answer is written to --out.
    """
    if devices:
        _print_devices()
        return
    from jarvis.node.voice import RecorderSettings

    if out is not None and wav is None:
        fail("--out goes with --wav (the answer to a file request)")
    recorder = RecorderSettings(max_seconds=max_seconds)
    if wav is not None:
        audio = _read_request(wav)  # a bad file is refused before the models load
        engines = _engines(sensitivity, stt_uri, tts_uri, wake_uri, beam)
        _listen_file(wav, audio, out, engines, recorder, center)
        return
    # Devices first: a missing microphone is reported before seconds of model loading.
    source, sink = _open_devices(input_device, output_device)
    try:
        engines = _engines(sensitivity, stt_uri, tts_uri, wake_uri, beam)
    except typer.Exit:
        source.close()
        sink.close()
        raise
    _listen_microphone(source, sink, engines, recorder, center)


def _open_devices(
    input_device: str | None, output_device: str | None
) -> tuple[Microphone, Speaker]:
    """The microphone and the speaker; a clear error (and exit) when one cannot open."""
    from jarvis.node.voice.devices import AudioDeviceError, Microphone, Speaker

    try:
        source = Microphone(input_device)
    except AudioDeviceError as exc:
        fail(str(exc))
    try:
        sink = Speaker(output_device)
    except AudioDeviceError as exc:
        source.close()
        fail(str(exc))
    return source, sink


def _listen_microphone(
    source: Microphone, sink: Speaker, engines: VoiceEngines,
    recorder: RecorderSettings, center: str | None,
) -> None:
    """Answer requests spoken after the wake word until Ctrl-C; closes the devices."""
    from jarvis.node.voice import LoopSettings, VoiceLoop, recognition_hint, service_responder
    from jarvis.node.voice.wyoming import WyomingError

    with running_node(center) as node:
        loop = VoiceLoop(
            engines, source, sink, service_responder(node.service),
            settings=LoopSettings(recorder=recorder),
            hint=recognition_hint(node.registry), on_event=_show,
        )
        err_console.print('[dim]Say "hey jarvis" and your request; Ctrl-C stops.[/dim]')
        try:
            with Scheduler(node.store.storage, loop.announce):
                loop.run()
        except KeyboardInterrupt:
            pass
        except WyomingError as exc:
            fail(str(exc))
        finally:
            source.close()
            sink.close()


def _read_request(wav: Path) -> Audio:
    from jarvis.node.voice import AudioFormatError, read_wav

    try:
        return read_wav(wav)
    except AudioFormatError as exc:
        fail(str(exc))


def _listen_file(
    wav: Path, audio: Audio, out: Path | None, engines: VoiceEngines,
    recorder: RecorderSettings, center: str | None,
) -> None:
    from jarvis.node.voice import (
        ArraySource,
        CollectingSink,
        LoopSettings,
        VoiceLoop,
        recognition_hint,
        service_responder,
        write_wav,
    )
    from jarvis.node.voice.wyoming import WyomingError
    sink = CollectingSink()
    with running_node(center) as node:
        loop = VoiceLoop(
            engines, ArraySource(audio), sink, service_responder(node.service),
            settings=LoopSettings(recorder=recorder, wake_word="optional", earcon=False),
            hint=recognition_hint(node.registry), on_event=_show,
        )
        try:
            exchanges = loop.run(max_exchanges=1)
        except WyomingError as exc:
            fail(str(exc))
    if not exchanges:
        fail(f"no speech found in {wav}")
    if out is not None:
        write_wav(out, sink.audio())
        err_console.print(f"[dim]answer written to {escape(str(out))}[/dim]")


def say(
    text: Annotated[str, typer.Argument(help="What Jarvis should say.")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Write a WAV file instead of playing it.")
    ] = None,
    output_device: DeviceOption = None,
    tts_uri: TtsUriOption = None,
) -> None:
    """Speak text with Jarvis's voice, on the speaker or into a WAV file."""
    from jarvis.node.voice import CollectingSink, TextToSpeech, write_wav
    from jarvis.node.voice.devices import AudioDeviceError, Speaker
    from jarvis.node.voice.tts import PiperTextToSpeech
    from jarvis.node.voice.wyoming import WyomingError, WyomingTextToSpeech

    if not text.strip():
        fail("nothing to say")
    tts: TextToSpeech
    try:
        tts = WyomingTextToSpeech(tts_uri) if tts_uri else PiperTextToSpeech()
        pieces = list(tts.synthesize(text))
    except (ModelStoreError, WyomingError) as exc:
        fail(str(exc))
    sink = CollectingSink()
    for piece in pieces:
        sink.play(piece)
    if out is not None:
        write_wav(out, sink.audio())
        console.print(f"Wrote {escape(str(out))} ({sink.audio().duration:.1f} s)")
        return
    try:
        speaker = Speaker(output_device, rate=pieces[0].rate if pieces else 22_050)
    except AudioDeviceError as exc:
        fail(str(exc))
    speaker.play(sink.audio())
    try:
        while speaker.playing():
            time.sleep(0.05)
        time.sleep(0.2)  # PortAudio's own buffer
    finally:
        speaker.close()


def _print_devices() -> None:
    from jarvis.node.voice.devices import AudioDeviceError, list_devices

    try:
        found = list_devices()
    except AudioDeviceError as exc:
        fail(str(exc))
    if not found:
        console.print("No audio devices found.")
        return
    for device in found:
        marks = [m for m, on in (("default input", device["default_input"]),
                                 ("default output", device["default_output"])) if on]
        extra = f"  [green]{', '.join(marks)}[/green]" if marks else ""
        console.print(f"{device['index']:3}  {escape(device['name'])}  "
                      f"[dim]in {device['inputs']} / out {device['outputs']}[/dim]{extra}")


def register(app: typer.Typer) -> None:
    """Add `jarvis listen` and `jarvis say`."""
    app.command("listen")(listen)
    app.command("say")(say)
