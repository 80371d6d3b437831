"""The public intake: the HTTP API (form, plan pages, JSON), its views and the submission service."""
