"""The warm evaluation daemon: a local process that outlives one `farm eval` and serves the next.

A cold `farm eval` pays the trusted side's interpreter and torch import, the sandboxed worker's
own start-up and the first use of the reference before its measurement begins. The daemon pays
them once: it imports torch and the harness when it starts, keeps a worker pool per device
(farm.harness.pool: a candidate worker started ahead, baseline workers that only ever run the
reference), and evaluates each request through the harness's `evaluate()`.

Trust (docs/security.md): the daemon is trusted-side code, as the cold command's own process is.
It never imports or runs a submission; every submission runs in a sandboxed worker of its own,
thrown away afterwards; a worker is started ahead only for the next evaluation, before it has
seen any submission. Between evaluations the daemon keeps nothing derived from one (the source is
written to a private temporary directory that is removed when its evaluation ends). It listens
only on FARM_HOME/run/eval.sock (0600, in a 0700 directory) and answers only its own user.

    client.py  what `farm eval` and `farm pool` call (imports no torch)
    server.py  the daemon (`python -m farm.eval_daemon.server`)
    wire.py    the messages, one JSON line each way
"""
