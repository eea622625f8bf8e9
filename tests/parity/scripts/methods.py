"""pdb parity: methods."""
class Counter:
    def __init__(self):
        self.count = 0

    def bump(self, by=1):
        self.count += by
        return self.count

c = Counter()
breakpoint()
c.bump(2)
c.bump()
