"""Jinja's bytecode cache: templates compiled once, then loaded with the same escaping and strictness."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import jinja2
import pytest

from chipwise import render as rendering

PAGE = "intake/message.html.j2"
HOSTILE = "<script>alert(1)</script>"


def page() -> str:
    return rendering.render(PAGE, title=HOSTILE, message="m", home="/", nonce="")


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """An empty user cache directory, and the environment built again on first use (and after the test)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    rendering.environment.cache_clear()
    yield tmp_path / "chipwise" / "jinja"
    rendering.environment.cache_clear()


def test_a_compiled_template_is_loaded_from_the_cache_still_escaped(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = page()
    written = sorted(fresh.glob("chipwise-*.cache"))
    assert len(written) >= 2  # the page and the layout it extends
    rendering.environment.cache_clear()

    def no_compile(*args: object, **kwargs: object) -> object:
        raise AssertionError("compiled again: the cache was not used")

    monkeypatch.setattr(jinja2.Environment, "compile", no_compile)
    again = page()
    assert again == first
    assert HOSTILE not in again
    assert "&lt;script&gt;" in again
    with pytest.raises(jinja2.UndefinedError):  # StrictUndefined holds for cached code too
        rendering.render(PAGE, title="t", home="/", nonce="")


def test_a_changed_template_is_compiled_again(fresh: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "one.html.j2").write_text("<p>{{ value }}</p>")
    monkeypatch.setattr(rendering, "templates_dir", lambda: templates)
    rendering.environment.cache_clear()
    assert rendering.render("one.html.j2", value="<b>") == "<p>&lt;b&gt;</p>"
    (templates / "one.html.j2").write_text("<div>{{ value }}</div>")
    rendering.environment.cache_clear()
    assert rendering.render("one.html.j2", value="<b>") == "<div>&lt;b&gt;</div>"


def test_an_unusable_cache_directory_falls_back_and_renders(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    cache = rendering.bytecode_cache()
    assert cache is None or isinstance(cache, jinja2.FileSystemBytecodeCache)
    if isinstance(cache, jinja2.FileSystemBytecodeCache):
        assert not cache.directory.startswith(str(blocked))
    rendering.environment.cache_clear()
    try:
        assert "&lt;script&gt;" in page()
    finally:
        rendering.environment.cache_clear()
