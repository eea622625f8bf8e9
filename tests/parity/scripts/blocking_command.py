"""Stops at breakpoint(); the lines typed there run calls that block in C until interrupted."""

value = 7
breakpoint()
print("value", value)
