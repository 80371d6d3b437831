"""The HTML scan report: one static file per scan with inline SVG charts (no scripts, nothing fetched)."""
