"""Local stand-ins for services the tests and the demo talk to (a Slack incoming-webhook sink)."""
