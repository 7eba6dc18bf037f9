"""profile.test: loads tdsl-run --profile-json's trace and checks its events against the
table tdsl-run printed: one event per call of the function, one per region per call, each
region inside its call, and the median of each region as the table's row."""
import json
import re
import statistics
import sys

trace_path, table_path, calls, regions = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
regions = regions.split(",")
trace = json.load(open(trace_path))
events = trace["traceEvents"]
assert trace["displayTimeUnit"] == "ms", trace["displayTimeUnit"]
assert all(e["ph"] == "X" and e["dur"] >= 0 for e in events)
top = [e for e in events if e["cat"] in ("graph", "func")]
inner = [e for e in events if e["cat"] not in ("graph", "func")]
assert len(top) == calls, "%d calls in the trace, expected %d" % (len(top), calls)
assert len(inner) == calls * len(regions), "%d region events" % len(inner)
for k, call in enumerate(top):
    mine = [e for e in inner if e["args"]["call"] == k]
    assert [e["name"] for e in mine] == regions, [e["name"] for e in mine]
    assert [e["args"]["region"] for e in mine] == list(range(len(regions)))
    for e in mine:
        assert call["ts"] <= e["ts"] and e["ts"] + e["dur"] <= call["ts"] + call["dur"] + 1e-3, e
    for a, b in zip(mine, mine[1:]):
        assert a["ts"] + a["dur"] <= b["ts"] + 1e-3, "regions overlap"
# The table's rows are the medians of the events, in ms (printed to 4 decimals).
rows = {}
for line in open(table_path):
    m = re.match(r"\s+(\d+)\s+(\S+).*?\s([0-9.]+)\s+([0-9.]+)%", line)
    if m:
        rows[int(m.group(1))] = (m.group(2), float(m.group(3)))
assert sorted(rows) == list(range(len(regions))), rows
for r, name in enumerate(regions):
    durations = [e["dur"] for e in inner if e["args"]["region"] == r]
    assert rows[r][0] == name, (rows[r], name)
    assert abs(statistics.median(durations) * 1e-3 - rows[r][1]) <= 1e-4 + 1e-3 * rows[r][1], (
        r, statistics.median(durations), rows[r])
total = statistics.median(e["dur"] for e in top) * 1e-3
assert abs(trace["otherData"]["median_ms"] - total) <= 1e-6 + 1e-6 * total
print("trace OK: %d calls, %d regions" % (calls, len(regions)))
