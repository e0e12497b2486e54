"""Text templates in tool files: `${VAR}` from the environment at load time, `{param}` at call time.

Rules (one pass, left to right, so a substituted value is never read again):
- `${NAME}` becomes the environment variable NAME; an unset variable is an error.
- `$${NAME}` is the literal text `${NAME}` (the escape).
- In exec templates only: `{name}` is a placeholder for a parameter, `{{` and `}}` are
  literal braces, and any other brace is an error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "Placeholder",
    "TemplateError",
    "UnsetVariableError",
    "expand_env",
    "parse_template",
]

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_ENV_TOKENS = re.compile(r"\$\$\{(?P<escaped>[^}]*)\}|\$\{(?P<var>[^}]*)\}|\$\{")
_TEMPLATE_TOKENS = re.compile(
    r"\$\$\{(?P<escaped>[^}]*)\}|\$\{(?P<var>[^}]*)\}|\$\{"
    r"|\{\{|\}\}|\{(?P<param>" + _NAME + r")\}|[{}]"
)


class TemplateError(ValueError):
    """A malformed template."""


class UnsetVariableError(TemplateError):
    """`${NAME}` names a variable that is not set."""

    def __init__(self, name: str) -> None:
        super().__init__(f"environment variable '{name}' is not set")
        self.name = name


@dataclass(frozen=True)
class Placeholder:
    """`{name}` inside an exec template."""

    name: str


def _env_value(var: str, environ: Mapping[str, str]) -> str:
    if not re.fullmatch(_NAME, var):
        raise TemplateError(f"'${{{var}}}' is not a valid variable reference")
    if var not in environ:
        raise UnsetVariableError(var)
    return environ[var]


def expand_env(text: str, environ: Mapping[str, str]) -> str:
    """Substitute `${NAME}` in `text`; `$${NAME}` stays the literal `${NAME}`."""

    def replace(match: re.Match[str]) -> str:
        if match["escaped"] is not None:
            return "${" + match["escaped"] + "}"
        if match["var"] is None:
            raise TemplateError("'${' without a closing '}'")
        return _env_value(match["var"], environ)

    return _ENV_TOKENS.sub(replace, text)


def parse_template(text: str, environ: Mapping[str, str]) -> list[str | Placeholder]:
    """Split an exec template into literal text and placeholders (adjacent text merged)."""
    pieces: list[str | Placeholder] = []

    def add_text(chunk: str) -> None:
        if not chunk:
            return
        if pieces and isinstance(pieces[-1], str):
            pieces[-1] += chunk
        else:
            pieces.append(chunk)

    position = 0
    for match in _TEMPLATE_TOKENS.finditer(text):
        add_text(text[position : match.start()])
        position = match.end()
        token = match.group(0)
        if match["escaped"] is not None:
            add_text("${" + match["escaped"] + "}")
        elif match["var"] is not None:
            add_text(_env_value(match["var"], environ))
        elif token == "${":
            raise TemplateError("'${' without a closing '}'")
        elif token in ("{{", "}}"):
            add_text(token[0])
        elif match["param"] is not None:
            pieces.append(Placeholder(match["param"]))
        else:
            raise TemplateError(
                f"stray '{token}' in {text!r}: write {{name}} for a parameter, "
                "{{ or }} for a literal brace"
            )
    add_text(text[position:])
    return pieces
