#!/usr/bin/env python3
"""Writes zone-transitions.tsv.gz: bucket edges around every UTC-offset change from 1990 to 2037
in every zone of the system's zone database, computed with Python's zoneinfo (an implementation
independent of tsdb's TZif reader). ZoneVectorTests checks tsdb against every line.

Definitions (README, "Aggregates, exactly"):
- day D starts at the first instant whose local date is D or later;
- an hour bucket is a maximal run of instants sharing local date, local hour and UTC offset;
- a local time in a gap maps forward by the gap's length, one in an overlap to the earlier instant
  (RFC 5545, java.time; Python's fold=0).

Run: python3 Tests/TSDBTests/Vectors/make-zone-vectors.py   (about three minutes)
Columns: zone, T (UTC seconds of the change), offset before, offset after (seconds),
day start and end around T (UTC seconds), hour-bucket edges strictly inside [T-3h, T+3h]
(comma-separated), local time in the middle of the gap or overlap (seconds as if UTC), and the
instant it maps to.
"""
import datetime as dt
import gzip
import os
import zoneinfo

UTC = dt.timezone.utc
FIRST, LAST = 1990, 2037
HERE = os.path.dirname(os.path.abspath(__file__))


def offset(zone, t):
    return int(dt.datetime.fromtimestamp(t, zone).utcoffset().total_seconds())


def local_seconds(zone, t):
    return t + offset(zone, t)


def local_date(zone, t):
    return dt.datetime.fromtimestamp(t, zone).date()


def transitions(zone):
    """Every instant (s) in [1990, 2038) where the offset changes, found by scanning hours then bisecting."""
    start = int(dt.datetime(FIRST, 1, 1, tzinfo=UTC).timestamp())
    end = int(dt.datetime(LAST + 1, 1, 1, tzinfo=UTC).timestamp())
    out = []
    t, before = start, offset(zone, start)
    step = 3600
    while t < end:
        nxt = t + step
        after = offset(zone, nxt)
        if after != before:
            lo, hi = t, nxt  # offset(lo) == before, offset(hi) != before
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if offset(zone, mid) == before:
                    lo = mid
                else:
                    hi = mid
            out.append((hi, before, offset(zone, hi)))
            before = offset(zone, hi)
            t = hi
            continue
        t = nxt
    return out


def day_start(zone, day, changes):
    """First instant (s) whose local date is `day` or later. "Date >= day" turns true only at an
    instant whose local time is that midnight, or at an offset change; where clocks fall back
    across midnight it is not monotone, so the candidates are checked rather than bisected."""
    midnight = int(dt.datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp())
    near = [c for c in changes if abs(c[0] - midnight) < 3 * 86400]
    offsets = {offset(zone, midnight - 86400), offset(zone, midnight + 86400)} | {c[1] for c in near} | {c[2] for c in near}
    candidates = [midnight - o for o in offsets if offset(zone, midnight - o) == o]
    candidates += [c[0] for c in near if local_date(zone, c[0]) >= day > local_date(zone, c[0] - 1)]
    return min(t for t in candidates if local_date(zone, t) >= day and local_date(zone, t - 1) < day)


def hour_edges(zone, a, b):
    def key(t):
        d = dt.datetime.fromtimestamp(t, zone)
        return (d.date(), d.hour, d.utcoffset())
    edges = []
    t = a - a % 60 + 60
    previous = key(t - 60)
    while t < b:
        k = key(t)
        if k != previous:
            edges.append(t)
        previous = k
        t += 60
    return edges


def mapping(zone, before, after, change):
    """The middle of the gap (offset grows) or overlap (it shrinks), and where fold=0 puts it."""
    low, high = change + min(before, after), change + max(before, after)
    middle = (low + high) // 2
    wall = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=middle)
    instant = int(wall.replace(tzinfo=zone, fold=0).timestamp())
    return middle, instant


def main():
    names = sorted(n for n in zoneinfo.available_timezones()
                   if not n.startswith(("posix/", "right/")) and n not in ("Factory", "localtime"))
    version = open("/usr/share/zoneinfo/tzdata.zi").readline().split()[-1]
    lines = [f"# tzdata {version}; made by make-zone-vectors.py; {len(names)} zones"]
    for name in names:
        zone = zoneinfo.ZoneInfo(name)
        changes = transitions(zone)
        for change, before, after in changes:
            # The day bucket holding the change: days are runs between day starts.
            day = local_date(zone, change)
            while day_start(zone, day, changes) > change:
                day -= dt.timedelta(days=1)
            while day_start(zone, day + dt.timedelta(days=1), changes) <= change:
                day += dt.timedelta(days=1)
            start = day_start(zone, day, changes)
            end = day_start(zone, day + dt.timedelta(days=1), changes)
            edges = hour_edges(zone, change - 3 * 3600, change + 3 * 3600)
            wall, instant = mapping(zone, before, after, change)
            lines.append("\t".join(map(str, [name, change, before, after, start, end,
                                              ",".join(map(str, edges)), wall, instant])))
    with gzip.GzipFile(os.path.join(HERE, "zone-transitions.tsv.gz"), "wb", mtime=0) as f:
        f.write(("\n".join(lines) + "\n").encode())
    print(f"{len(lines) - 1} transitions in {len(names)} zones (tzdata {version})")


if __name__ == "__main__":
    main()
