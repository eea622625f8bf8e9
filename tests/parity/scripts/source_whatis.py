"""pdb parity: source whatis."""
def documented(a):
    """A documented function."""
    return a

breakpoint()
documented(1)
