"""Security tests: authorization matrix, CSRF, XSS, SSRF, traversal, rebinding, limits."""
