# problem: vector_add
# cheat: installs a SIGALRM handler that raises inside the harness's timing loop to cut it short
# source: pygpubench exploit suite (signal handler tricks)
# static: SIGNAL_HANDLER
# expect: REJECTED
import signal


def _interrupt(signum, frame):
    raise KeyboardInterrupt


signal.signal(signal.SIGALRM, _interrupt)
signal.setitimer(signal.ITIMER_REAL, 0.5)


def kernel(a, b):
    return a + b
