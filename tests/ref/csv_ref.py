#!/usr/bin/env python3
"""RFC 4180 tables written and read by Python's csv module, for tests/csv.bats.

  csv_ref.py gen N SEED DELIM QUOTING CRLF OUT
      writes a header and N rows (name, x, y, note) with Python's csv.writer: names and
      notes hold the delimiter, doubled quotes, line breaks and non-ASCII text; QUOTING
      is minimal, nonnumeric or all (numbers quoted too); CRLF 1 ends records in "\\r\\n"
  csv_ref.py skyline DELIM FILE
      reads FILE with csv.reader and prints what `skyline -t DELIM --header -f 2,3`
      must: the header record, then each row that no other row dominates (least x and
      y) in input order, each record's text as written (the lines csv.reader took)
  csv_ref.py column COL DELIM FILE
      prints column COL (1-based) of every data row, one a line, as Python reads it,
      its line breaks written as \\n
"""
import csv
import io
import random
import sys

QUOTING = {"minimal": csv.QUOTE_MINIMAL, "nonnumeric": csv.QUOTE_NONNUMERIC,
           "all": csv.QUOTE_ALL}


def delim(arg):
    return "\t" if arg in ("\\t", "tab") else arg


def text(rng, d):
    parts = ["Hotel", "Zum Löwen", d, '"', '""', "\n", "\r\n", "Mitte", " ", "#", "5\" screen",
             "naïve", "x" * rng.randint(1, 40)]
    return "".join(rng.choice(parts) for _ in range(rng.randint(0, 6)))


def record(row, d, quoting, crlf):
    buf = io.StringIO()
    csv.writer(buf, delimiter=d, quoting=quoting, lineterminator="\r\n" if crlf else "\n").writerow(row)
    return buf.getvalue()


def gen(n, seed, d, quoting, crlf, out):
    rng = random.Random(seed)
    q = QUOTING[quoting]
    with open(out, "w", newline="", encoding="utf-8") as f:
        f.write(record(["name", "x", "y", "note"], d, q, crlf))
        for i in range(n):
            # a name never starts with '#': a line whose first byte is '#' is a comment
            name = "n" + text(rng, d)
            x = rng.randint(0, 1000) / 8
            y = rng.randint(0, 1000) / 8
            f.write(record([name, x, y, text(rng, d)], d, q, crlf))


def records(path, d):
    """Each record's values, as csv.reader reads them, and its text as written (the
    physical lines the reader consumed for it)."""
    with open(path, newline="", encoding="utf-8") as f:
        lines = f.readlines()
    reader = csv.reader(iter(lines), delimiter=d)
    out, prev = [], 0
    for row in reader:
        out.append((row, "".join(lines[prev:reader.line_num])))
        prev = reader.line_num
    return out


def rows_of(path, d):
    recs = records(path, d)
    return recs[0][0], [r for r, _ in recs[1:]]


def skyline(d, path):
    recs = records(path, d)
    pts = [(float(r[1]), float(r[2])) for r, _ in recs[1:]]
    keep = [recs[0]] + [recs[i + 1] for i, (x, y) in enumerate(pts)
                        if not any(a <= x and b <= y and (a < x or b < y) for a, b in pts)]
    # skyline prints each record as written, its "\r\n" or "\n" made "\n"
    for _, raw in keep:
        sys.stdout.write(raw[:-2] + "\n" if raw.endswith("\r\n") else raw)


def column(col, d, path):
    _, rows = rows_of(path, d)
    for r in rows:
        print(r[col - 1].replace("\r\n", "\\r\\n").replace("\n", "\\n"))


def main():
    a = sys.argv[1:]
    if a[0] == "gen":
        gen(int(a[1]), int(a[2]), delim(a[3]), a[4], a[5] == "1", a[6])
    elif a[0] == "skyline":
        skyline(delim(a[1]), a[2])
    elif a[0] == "column":
        column(int(a[1]), delim(a[2]), a[3])
    else:
        sys.exit("csv_ref.py: gen, skyline or column")


if __name__ == "__main__":
    main()
