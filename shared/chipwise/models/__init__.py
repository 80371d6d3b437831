"""Pydantic models at the boundaries (documents, events, messages). No I/O here."""
