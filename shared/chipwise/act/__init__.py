"""Actions: benchmark jobs, notifications and drafts (the side effects, each idempotent)."""
