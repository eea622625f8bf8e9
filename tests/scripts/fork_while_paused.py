"""While the main thread is paused at breakpoint(), another thread forks once the file argv[1]
exists; the child raises SIGUSR1 in itself, prints whether the program's handler ran and what
its signal wakeup fd is, and exits. The parent prints once continued."""

import os
import signal
import sys
import threading
import time

handled = []


def report(signum, frame):
    handled.append(signum)


def fork_when(path):
    while not os.path.exists(path):
        time.sleep(0.02)
    pid = os.fork()
    if pid == 0:
        signal.raise_signal(signal.SIGUSR1)
        print(f"child: handled {len(handled)}, wakeup fd {signal.set_wakeup_fd(-1)}", flush=True)
        os._exit(0)
    os.waitpid(pid, 0)


signal.signal(signal.SIGUSR1, report)
threading.Thread(target=fork_when, args=(sys.argv[1],), daemon=True).start()
rank = int(os.environ["MESHDBG_RANK"])
word = "x"
breakpoint()
print(f"rank {rank} continued", flush=True)
