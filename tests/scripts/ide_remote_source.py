"""Stops in code whose file exists only in this process (as a file only on a rank's host would):
linecache holds its source under a path no other machine has."""

import linecache

SOURCE = "def generated():\n    answer = 42\n    breakpoint()\n    return answer\n"
FILENAME = "/meshdbg-remote-only/generated.py"
linecache.cache[FILENAME] = (len(SOURCE), None, SOURCE.splitlines(True), FILENAME)
namespace: dict = {}
exec(compile(SOURCE, FILENAME, "exec"), namespace)
namespace["generated"]()
