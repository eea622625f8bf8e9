"""pdb parity: exception step."""
def fails():
    raise ValueError("boom")

def guard():
    try:
        fails()
    except ValueError as exc:
        caught = str(exc)
        return caught

breakpoint()
guard()
