"""Repositories: each takes a Session; the caller owns the transaction."""
