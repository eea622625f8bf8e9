"""pdb parity: until loop."""
total = 0
breakpoint()
for i in range(5):
    total += i
final = total
