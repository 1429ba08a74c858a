"""Business rules, one module per domain. Services raise domain errors and know nothing of HTTP."""
