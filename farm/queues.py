"""Broker queue names, shared by the server (which sends) and the agents (which consume).

Every slot consumes its class's queue, `hw.<class>`, and its node's queue of that class,
`hw.<class>.node-<id>`: the second carries work meant for one node only (an audit run, which
must not run on the node that produced the result it checks).
"""

from __future__ import annotations


def hardware_queue(hardware: str) -> str:
    return f"hw.{hardware}"


def node_queue(hardware: str, node_id: int) -> str:
    return f"hw.{hardware}.node-{node_id}"
