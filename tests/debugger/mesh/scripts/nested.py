"""Each rank stops two calls deep; then the main module ends (stepping off it must not wander)."""


def inner(depth):
    marker = depth
    breakpoint()
    return marker


def outer():
    return inner(2)


outer()
