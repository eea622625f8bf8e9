"""Stops with a value whose text an ASCII or Latin-1 terminal cannot hold, then reports that it continued."""

word = "héllo ✓ 日本"
breakpoint()
print("continued", flush=True)
