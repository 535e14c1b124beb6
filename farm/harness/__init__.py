"""The harness: a trusted supervisor and an untrusted worker process (see docs/architecture.md)."""
