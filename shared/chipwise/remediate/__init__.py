"""Acting on findings: a mechanical next step applied after its guards, stored, and reversible."""
