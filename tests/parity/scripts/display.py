"""pdb parity: display."""
counter = 0
breakpoint()
for i in range(3):
    counter += i
final = counter
