"""The node agent: detects devices, registers with the server, heartbeats, and runs the jobs
of its hardware queues (`hw.<class>`) in the sandbox, one worker slot per device.

It talks to the server only through the REST API (agents.client) and to the broker only through
Celery (agents.worker); it never imports Django.
"""

__version__ = "0.1.0"
