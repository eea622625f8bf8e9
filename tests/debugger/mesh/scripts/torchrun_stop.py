"""Started by torchrun with PYTHONBREAKPOINT=meshdbg.worker.remote_breakpointhook: stops once, then exits."""
breakpoint()
print("continued")
