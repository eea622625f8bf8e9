"""pdb's documentation, the `display` example (its print sent to stderr)."""
import sys

lst = []
breakpoint()
pass
lst.append(1)
print(lst, file=sys.stderr)
