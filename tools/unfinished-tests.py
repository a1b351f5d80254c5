#!/usr/bin/env python3
"""Names the tests a `swift test` log shows started and never ended: what a run that had to be stopped was waiting on.

    tools/unfinished-tests.py LOG

Reads both runners' lines: Swift Testing's `◇ Test name() started.` / `✔ Test name() [with N test cases] passed …` /
`✘ … failed …` (a parameterised test's cases are not followed one by one) and XCTest's `Test Case 'Suite.name' started …` / `… passed (…)` / `… failed (…)`. Prints one name per line; exits 1
when some test never ended, 0 when every started test ended.
"""
import re
import sys

STARTED = re.compile(r"^◇ Test (?!case )(.+) started\.$")
ENDED = re.compile(r"^[✔✘↷] Test (?!case )(.+?)(?: with \d+ test cases?)? (?:passed|failed|skipped)\b")
XCTEST = re.compile(r"^Test Case '(.+?)' (started|passed|failed|skipped)")


def unfinished(lines):
    """The tests whose start is in `lines` and whose end is not, in the order they started."""
    open_tests = {}
    for number, line in enumerate(lines):
        if match := STARTED.match(line):
            if match.group(1) != "run":  # `◇ Test run started.` is the whole run's
                open_tests[match.group(1)] = number
        elif match := ENDED.match(line):
            open_tests.pop(match.group(1), None)
        elif match := XCTEST.match(line):
            name, event = match.groups()
            if event == "started":
                open_tests[name] = number
            else:
                open_tests.pop(name, None)
    return sorted(open_tests, key=open_tests.get)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8", errors="replace") as log:
        names = unfinished(log.read().splitlines())
    for name in names:
        print(name)
    return 1 if names else 0


if __name__ == "__main__":
    sys.exit(main())
