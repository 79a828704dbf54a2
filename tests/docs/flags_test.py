#!/usr/bin/env python3
"""docs/configuration.md lists every flag of outbox-publisher exactly once.

The flags come from the built binary's --help; the documented ones from the first
column of the flag table in docs/configuration.md. A deprecated alias (its help
says "deprecated") need only be mentioned somewhere on the page.

Usage: flags_test.py REPOSITORY BUILD_DIR
"""

import collections
import os
import re
import subprocess
import sys


def main():
    repository, build = sys.argv[1], sys.argv[2]
    usage = subprocess.run([os.path.join(build, "outbox-publisher"), "--help"],
                           capture_output=True, text=True, check=True).stdout
    flags, aliases = set(), set()
    # "  --name VALUE    help", or "  --name    help" for a boolean; a long usage
    # puts its help on the next line.
    for name, help_text in re.findall(r"(?m)^\s+--([a-z-]+)(?: [^ \n]+)?\s+(.*)$", usage):
        (aliases if help_text.startswith("deprecated") else flags).add(name)
    if not flags:
        print("FAIL: no flags in --help", file=sys.stderr)
        return 1

    page = open(os.path.join(repository, "docs", "configuration.md")).read()
    documented = collections.Counter()
    for row in re.findall(r"(?m)^\| (.*?) \|", page):
        for name in re.findall(r"`--([a-z-]+)", row):
            documented[name] += 1

    failures = []
    for name in sorted(flags):
        if documented[name] == 0:
            failures.append("--%s is in --help but not in the flag table" % name)
        elif documented[name] > 1:
            failures.append("--%s has %d rows in the flag table" % (name, documented[name]))
    for name in sorted(set(documented) - flags - aliases):
        failures.append("the flag table documents --%s, which --help does not list" % name)
    for name in sorted(aliases):
        if "--" + name not in page:
            failures.append("the deprecated alias --%s is not mentioned" % name)
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    if failures:
        return 1
    print("flags_test: %d flags, each documented once" % len(flags))
    return 0


if __name__ == "__main__":
    sys.exit(main())
