"""The one Jinja2 environment: templates/ at the repository root (or packaged), StrictUndefined, autoescape.

HTML templates (``.html``, ``.html.j2``) are autoescaped; text, Markdown and Slack JSON templates are not,
so their callers escape with the filters registered here (``slack`` for mrkdwn, ``md`` for Markdown,
``tojson`` for JSON).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chipwise.economics import usd

if TYPE_CHECKING:
    from jinja2 import BytecodeCache, Environment

_SLACK_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_SLACK_FORMATTING = re.compile(r"([*_~`])")
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def templates_dir() -> Path:
    """templates/ beside the package in a checkout; the packaged copy in an installed wheel or Lambda."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent.parent / "templates", here / "templates"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("Chipwise templates/ directory not found")


money = usd  # the Jinja filter and the Python helper are one function


def slack_escape(value: object) -> str:
    """Text safe inside Slack mrkdwn: no links, mentions (<!channel>) or formatting from user data."""
    text = "".join(_SLACK_ESCAPES.get(ch, ch) for ch in str(value))
    return _SLACK_FORMATTING.sub(lambda m: "\u200b" + m.group(1), text)


def markdown_escape(value: object) -> str:
    """Text safe inside Markdown: one line, HTML escaped, emphasis/link/table characters backslash-escaped."""
    text = " ".join(str(value).split()).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


_INERT = str.maketrans({".": "\u2024", ":": "\u2236", "@": "\uff20"})


def inert(value: object) -> str:
    """Text no mail client turns into a link: "evil.example" and "https://…" keep their look (a one-dot leader
    for ".", a ratio sign for ":", a full-width "@") but are no longer web or mail addresses. For text a
    stranger typed (a public form), in emails only."""
    return str(value).translate(_INERT)


_AUTOESCAPED = ("html", "htm", "html.j2")
# What the compiled code of a template depends on beyond its source: part of each cached entry's name.
_TRIM_BLOCKS = _LSTRIP_BLOCKS = _KEEP_TRAILING_NEWLINE = True


def bytecode_cache() -> BytecodeCache | None:
    """The templates compiled once, not at every start of the CLI: Jinja's bytecode on disk, in the user's cache
    directory (``$XDG_CACHE_HOME/chipwise/jinja``, else ``~/.cache/chipwise/jinja``) or, where that cannot be made
    (a read-only home, as in Lambda), Jinja's own per-user directory under the temporary directory; none when
    neither can be used. Jinja uses an entry only while its template's source is unchanged (it checks the source's
    checksum); the entry's name also holds Jinja's version and the options the code was compiled with (autoescape
    among them), so a change to either compiles afresh."""
    import jinja2

    key = f"{jinja2.__version__}|{_AUTOESCAPED}|{(_TRIM_BLOCKS, _LSTRIP_BLOCKS, _KEEP_TRAILING_NEWLINE)}"
    pattern = f"chipwise-{hashlib.sha256(key.encode()).hexdigest()[:16]}-%s.cache"
    try:
        base = os.environ.get("XDG_CACHE_HOME") or Path("~/.cache").expanduser()  # RuntimeError: no home
        directory = Path(base) / "chipwise" / "jinja"
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        if os.access(directory, os.W_OK):
            return jinja2.FileSystemBytecodeCache(str(directory), pattern)
        return jinja2.FileSystemBytecodeCache(None, pattern)
    except (OSError, RuntimeError):  # no usable cache directory: Jinja's own; neither: compile at each start
        try:
            return jinja2.FileSystemBytecodeCache(None, pattern)
        except (OSError, RuntimeError):
            return None


@lru_cache(maxsize=1)
def environment() -> Environment:
    """Built on first use: importing this module (for :func:`money` and the escapes) loads no Jinja."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    env = Environment(
        loader=FileSystemLoader(str(templates_dir())),
        bytecode_cache=bytecode_cache(),
        undefined=StrictUndefined,
        autoescape=select_autoescape(enabled_extensions=_AUTOESCAPED, default_for_string=False),
        trim_blocks=_TRIM_BLOCKS,
        lstrip_blocks=_LSTRIP_BLOCKS,
        keep_trailing_newline=_KEEP_TRAILING_NEWLINE,
    )
    env.filters["money"] = money
    env.filters["slack"] = slack_escape
    env.filters["md"] = markdown_escape
    env.filters["json"] = lambda v: json.dumps(v, default=str)
    env.filters["inert"] = inert
    return env


def render(template: str, **context: Any) -> str:
    """Render ``template`` (a path under templates/); a missing variable raises, never renders empty."""
    return environment().get_template(template).render(**context)
