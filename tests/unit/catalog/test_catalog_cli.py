"""``chipwise catalog show``: the table of types, prices and sources."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from chipwise.cli import main
from chipwise.cli.catalog import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def _wide_console(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The shared stdout console reads COLUMNS at each print: widen it for the tables."""
    monkeypatch.setenv("COLUMNS", "200")
    yield


def test_show_a_family() -> None:
    result = runner.invoke(app, ["show", "inf2"])
    assert result.exit_code == 0, result.output
    assert "inf2.48xlarge" in result.output and "12.98127" in result.output
    assert "0.7582" in result.output and "verified" in result.output  # each price's confidence is shown
    assert "AWS-PRICE-LIST (2026-07-20, verified)" in result.output  # the sources used are cited, with a link
    assert "https://github.com/aws/karpenter-provider-aws/blob/" in result.output


def test_show_sagemaker_types_in_a_region() -> None:
    result = runner.invoke(app, ["show", "trn2", "--sagemaker", "--region", "eu-west-1"])
    assert result.exit_code == 0, result.output
    assert "ml.trn2.48xlarge" in result.output and "n/a" in result.output
    assert "128 (64 logical)" in result.output


def test_show_everything() -> None:
    result = runner.invoke(app, ["show"])
    assert result.exit_code == 0, result.output
    for name in ("inf1.xlarge", "trn1n.32xlarge", "p5.4xlarge", "g6e.48xlarge", "m5.xlarge"):
        assert name in result.output


def test_unknown_family_is_one_line_and_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "show", "nope"]) == 1
    assert "no instance family 'nope'" in capsys.readouterr().err
