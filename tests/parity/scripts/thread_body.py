"""pdb parity: thread body."""
import threading

def body():
    local_value = 7
    breakpoint()
    doubled = local_value * 2

t = threading.Thread(target=body, name="worker-thread")
t.start()
t.join()
