"""Chipwise's development kit: the local AWS emulator (moto + Chipwise's patches), the demo account and its
pipeline, and local fakes (a Slack webhook sink). Installed by `make demo` / `make test`; never part of the
product package or the Lambda layer."""
