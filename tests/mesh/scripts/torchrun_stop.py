"""Started by torchrun with PYTHONBREAKPOINT=worker.remote_breakpointhook: stops once, then exits."""
breakpoint()
print("continued")
