"""queue's documentation: a worker thread fed by a queue (three tasks, not thirty; prints sent
to stderr); pdb stops in the worker thread at each item."""
import sys
import threading
import queue

q = queue.Queue()

def worker():
    while True:
        item = q.get()
        breakpoint()
        print(f'Working on {item}', file=sys.stderr)
        print(f'Finished {item}', file=sys.stderr)
        q.task_done()

# Turn-on the worker thread.
threading.Thread(target=worker, daemon=True).start()

# Send three task requests to the worker.
for item in range(3):
    q.put(item)

# Block until all tasks are done.
q.join()
print('All work completed', file=sys.stderr)
