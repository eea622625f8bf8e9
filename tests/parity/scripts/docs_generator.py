"""The Python tutorial's generator (9.9. Generators), stepped through (prints sent to stderr)."""
import sys


def reverse(data):
    for index in range(len(data)-1, -1, -1):
        yield data[index]


breakpoint()
for char in reverse('golf'):
    print(char, file=sys.stderr)
