#!/usr/bin/env python3
"""metrics_check.py URL NAME=VALUE|NAME>VALUE ... -- scrape and check.

Fetches URL, checks the Prometheus text format as `promtool check metrics`
would for what we use (every sample's family has HELP and TYPE before it,
counters and only counters end in _total, no series twice, values are
numbers), then each expectation on an unlabelled sample: NAME=V exactly,
NAME>V more than V. Prints one line per problem; exit 1 if any.
"""
import re
import sys
import urllib.request

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$')


def main():
    body = urllib.request.urlopen(sys.argv[1], timeout=10).read().decode()
    problems, types, helps, seen, values = [], {}, set(), set(), {}
    for line in body.splitlines():
        if line.startswith("# HELP "):
            helps.add(line.split()[2])
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            types[name] = kind
            if (kind == "counter") != name.endswith("_total"):
                problems.append("%s: a %s%s" % (name, kind,
                                " not ending in _total" if kind == "counter"
                                else " ending in _total"))
        elif line and not line.startswith("#"):
            m = SAMPLE.match(line)
            if not m:
                problems.append("not a sample: %r" % line)
                continue
            name, labels, value = m.group(1), m.group(2) or "", m.group(3)
            if name not in types or name not in helps:
                problems.append("%s: sample before its HELP/TYPE" % name)
            if (name, labels) in seen:
                problems.append("%s%s twice" % (name, labels))
            seen.add((name, labels))
            try:
                values[name + labels] = float(value)
            except ValueError:
                problems.append("%s: value %r" % (name, value))
    for exp in sys.argv[2:]:
        name, op, want = re.match(r'([^=>]+)([=>])(.*)', exp).groups()
        got = values.get(name)
        ok = got is not None and (got == float(want) if op == "=" else
                                  got > float(want))
        if not ok:
            problems.append("%s: got %s, want %s%s" % (name, got, op, want))
    for p in problems:
        print(p)
    print("%d samples, %d families, %d problems" % (len(seen), len(types),
                                                   len(problems)))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
