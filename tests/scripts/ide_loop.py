"""A program for the IDE breakpoint tests: one loop whose lines take conditions, hit counts and logpoints."""


def run():
    total = 0
    for i in range(40):
        square = i * i
        total += square
    return total


if __name__ == "__main__":
    breakpoint()
    print(f"total={run()}", flush=True)
