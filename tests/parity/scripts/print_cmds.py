"""pdb parity: print cmds."""
data = {"name": "mesh", "ranks": list(range(12)), "nested": {"a": [1, 2, 3] * 5}}
text = "hello"
breakpoint()
done = True
