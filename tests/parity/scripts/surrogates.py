"""pdb parity: text that is not valid UTF-8 (a documented difference: meshdbg escapes it)."""
bad = "\udcff"
breakpoint()
done = True
