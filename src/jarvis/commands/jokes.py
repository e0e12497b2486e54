"""`tell_joke`: a clean joke from an offline list, optionally about a topic."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from jarvis.sdk import (
    CommandAntipattern,
    CommandExample,
    CommandResponse,
    IJarvisCommand,
    JarvisParameter,
    PreRouteResult,
    RequestInformation,
)

__all__ = ["JOKES", "Joke", "TellJokeCommand", "jokes_about"]


@dataclass(frozen=True)
class Joke:
    setup: str
    punchline: str
    topics: tuple[str, ...]

    @property
    def text(self) -> str:
        return f"{self.setup} {self.punchline}"


JOKES: tuple[Joke, ...] = (
    Joke("Why did the computer go to the doctor?", "Because it had a virus.",
         ("computers", "technology", "health")),
    Joke("Why do programmers prefer dark mode?", "Because light attracts bugs.",
         ("programming", "computers", "technology", "bugs")),
    Joke("How many programmers does it take to change a light bulb?",
         "None. That's a hardware problem.", ("programming", "computers", "technology")),
    Joke("Why was the robot so tired after the road trip?",
         "It had a hard drive.", ("robots", "computers", "technology", "cars")),
    Joke("What do you call a computer that sings?", "A Dell.",
         ("computers", "music", "technology")),
    Joke("Why did the smartphone need glasses?", "It lost all its contacts.",
         ("phones", "technology")),
    Joke("What did the ocean say to the beach?", "Nothing, it just waved.",
         ("ocean", "beach", "nature", "water")),
    Joke("Why don't scientists trust atoms?", "Because they make up everything.",
         ("science", "chemistry")),
    Joke("What do you call a fish with no eyes?", "A fsh.", ("animals", "fish", "ocean")),
    Joke("Why don't skeletons fight each other?", "They don't have the guts.",
         ("halloween", "skeletons", "spooky")),
    Joke("What do you call a bear with no teeth?", "A gummy bear.", ("animals", "bears", "food")),
    Joke("Why did the scarecrow win an award?", "Because he was outstanding in his field.",
         ("farm", "work")),
    Joke("What do you call cheese that isn't yours?", "Nacho cheese.", ("food", "cheese")),
    Joke("Why did the cookie go to the hospital?", "Because it felt crummy.",
         ("food", "health", "cookies")),
    Joke("What do you call a fake noodle?", "An impasta.", ("food", "pasta", "italian")),
    Joke("Why did the tomato blush?", "Because it saw the salad dressing.",
         ("food", "vegetables")),
    Joke("How does a penguin build its house?", "Igloos it together.",
         ("animals", "penguins", "winter")),
    Joke("What do you call a sleeping dinosaur?", "A dino-snore.", ("animals", "dinosaurs")),
    Joke("Why are cats bad storytellers?", "Because they only have one tale.",
         ("animals", "cats", "pets")),
    Joke("What do you call a dog magician?", "A labracadabrador.",
         ("animals", "dogs", "pets", "magic")),
    Joke("Why do cows wear bells?", "Because their horns don't work.",
         ("animals", "cows", "farm")),
    Joke("What did one wall say to the other?", "I'll meet you at the corner.",
         ("home", "puns")),
    Joke("Why did the bicycle fall over?", "Because it was two tired.",
         ("sports", "cycling", "bikes")),
    Joke("Why did the golfer bring two pairs of pants?", "In case he got a hole in one.",
         ("sports", "golf")),
    Joke("Why are basketball players messy eaters?", "They're always dribbling.",
         ("sports", "basketball", "food")),
    Joke("What's a soccer player's favorite snack?", "Goal-den crackers.",
         ("sports", "soccer", "football", "food")),
    Joke("Why did the math book look so sad?", "Because it had too many problems.",
         ("math", "school", "books")),
    Joke("What did zero say to eight?", "Nice belt.", ("math", "numbers")),
    Joke("Why was six afraid of seven?", "Because seven eight nine.", ("math", "numbers")),
    Joke("Why did the student eat his homework?", "Because the teacher said it was a piece "
         "of cake.", ("school", "food")),
    Joke("What do you call a snowman with a six-pack?", "An abdominal snowman.",
         ("winter", "snow", "christmas", "fitness")),
    Joke("What did the big flower say to the little flower?", "Hi, bud!",
         ("nature", "flowers", "plants")),
    Joke("Why did the sun go to school?", "To get a little brighter.",
         ("weather", "space", "school", "sun")),
    Joke("What does a cloud wear under its raincoat?", "Thunderwear.",
         ("weather", "rain", "clothes")),
    Joke("How do you organize a space party?", "You planet.", ("space", "planets", "party")),
    Joke("Why did the astronaut break up with the moon?", "It needed space.",
         ("space", "moon", "love")),
    Joke("What kind of music do mummies listen to?", "Wrap music.",
         ("music", "halloween", "spooky")),
    Joke("Why did the musician get locked out?", "He couldn't find the right key.",
         ("music", "home")),
    Joke("What do you call a belt made of watches?", "A waist of time.",
         ("time", "clothes", "puns")),
    Joke("Why did the coffee file a police report?", "It got mugged.",
         ("coffee", "food", "drinks", "police")),
    Joke("What do you call a train carrying bubblegum?", "A chew-chew train.",
         ("trains", "travel", "food")),
    Joke("Why can't you give Elsa a balloon?", "Because she will let it go.",
         ("movies", "music", "winter")),
)


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def jokes_about(topic: str | None) -> list[Joke]:
    """Jokes whose topics or words mention `topic` ("dogs", "dog", "pasta"); all without one."""
    if not topic or not topic.strip():
        return list(JOKES)
    wanted = _singular(topic.strip().lower().removesuffix(" jokes").removesuffix(" joke"))
    found = []
    for joke in JOKES:
        words = {_singular(t) for t in joke.topics}
        words |= {_singular(w.strip(".,?!'")) for w in joke.text.lower().split()}
        if wanted in words:
            found.append(joke)
    return found


class TellJokeCommand(IJarvisCommand):
    """Tells a joke; never answers with a made-up one."""

    _rng = random.Random()

    @property
    def command_name(self) -> str:
        return "tell_joke"

    @property
    def description(self) -> str:
        return "Tell a short, clean joke, optionally about a topic (animals, food, space...)."

    @property
    def parameters(self) -> list[JarvisParameter]:
        return [
            JarvisParameter("topic", "string", description="Optional subject of the joke",
                            example="animals"),
        ]

    @property
    def examples(self) -> list[CommandExample]:
        return [
            CommandExample("tell me a joke", {}, is_primary=True),
            CommandExample("tell me a joke about dogs", {"topic": "dogs"}),
            CommandExample("do you know any space jokes", {"topic": "space"}),
        ]

    @property
    def antipatterns(self) -> list[CommandAntipattern]:
        return [CommandAntipattern("music", "'Play something funny' is music, not a joke.")]

    @property
    def keywords(self) -> list[str]:
        return ["joke", "funny", "laugh", "pun", "humor"]

    def pre_route(self, voice_command: str) -> PreRouteResult | None:
        text = voice_command.lower().strip().rstrip("?.!").strip()
        if text in ("tell me a joke", "tell a joke", "tell us a joke", "say something funny",
                    "make me laugh", "joke", "another joke", "tell me another joke"):
            return PreRouteResult(arguments={})
        return None

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        topic = kwargs.get("topic")
        pool = jokes_about(topic)
        prefix = ""
        if not pool:
            pool = list(JOKES)
            prefix = f"I don't know a joke about {topic}, but here's one. "
        recent = list(self.context.storage.get("jokes", "recent") or [])
        fresh = [j for j in pool if j.setup not in recent] or pool
        joke = self._rng.choice(fresh)
        self.context.storage.set("jokes", "recent", ([*recent, joke.setup])[-10:])
        return CommandResponse.success_response(
            {"setup": joke.setup, "punchline": joke.punchline, "topic": topic,
             "topic_found": not prefix},
            message=prefix + joke.text,
        )
