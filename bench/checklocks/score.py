#!/usr/bin/env python3
"""Score a lock checker against gVisor checklocks' test suite markers.

usage: python3 score.py BIN SUITE_DIR [-v] [--strict]

Expected findings come from `// +checklocksfail` line comments, read the way
gVisor's checklocks reads them (tools/checklocks/annotations.go): the comment
text must start with "// +checklocksfail", and the failure is keyed by the
comment's own file:line (positionKey uses only filename and line).  Counting:

  // +checklocksfail          1 finding
  // +checklocksfail:N        N findings (older suites)
  // +checklocksfail=a|b|c    one finding per "|"-separated alternative (3)

The suite is copied to a temporary directory and every marker comment is
blanked in the copy (the line stays, so line numbers do not move); BIN then
runs as `BIN -json ./...` inside the copy.  Per file:line, matched =
min(expected, found), missed = expected - matched, extra = found - matched.

One exception, off with --strict: confinelint reports a directive problem
(e.g. a redundant +checklocksalias) on the directive comment's line and names
the declaration the comment documents as related information, while checklocks
reports it at that declaration, where the marker sits (usually the next line).
Such a finding, if it matches nothing on its own line, counts at that
declaration's line when an expectation there is still unmatched.  Related
information is never counted as a finding of its own.  -v lists each missed
and extra line with the messages found there.
"""

import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

MARKER = "// +checklocksfail"


def line_comments(src):
    """Yields (line, col, text) for each // comment in Go source src.

    A small lexer: skips interpreted strings, raw strings, runes and block
    comments so that "//" inside them is not taken for a comment.
    """
    i, n, line, bol = 0, len(src), 1, 0
    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
            bol = i
        elif src.startswith("//", i):
            j = src.find("\n", i)
            if j < 0:
                j = n
            yield line, i - bol, src[i:j]
            i = j
        elif src.startswith("/*", i) or c == "`":
            # A block comment or a raw string: may span lines.
            end = "*/" if c == "/" else "`"
            j = src.find(end, i + len(end))
            j = n if j < 0 else j + len(end)
            seg = src[i:j]
            k = seg.rfind("\n")
            if k >= 0:
                line += seg.count("\n")
                bol = i + k + 1
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            i = j + 1 if j < n and src[j] == c else j
        else:
            i += 1


def marker_count(text, where):
    """Number of expected findings of one marker comment (text starts with MARKER)."""
    rest = text[len(MARKER):]
    if rest == "" or rest.isspace():
        return 1
    if rest.startswith(":"):
        m = re.match(r":(\d+)", rest)
        if m:
            return int(m.group(1))
    if rest.startswith("="):
        return len(rest[1:].split("|"))
    print(f"warning: {where}: unparsed marker {text!r}; counted as 1", file=sys.stderr)
    return 1


def go_files(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith((".", "_")) and x != "testdata")
        for f in sorted(files):
            if f.endswith(".go"):
                yield os.path.join(d, f)


def expected_and_strip(suite, copy):
    """Returns {(relfile, line): count}, {(relfile, line): [marker texts]}; blanks markers in copy."""
    exp, texts = collections.Counter(), collections.defaultdict(list)
    for path in go_files(suite):
        rel = os.path.relpath(path, suite)
        with open(path, encoding="utf-8") as f:
            src = f.read()
        lines = src.split("\n")
        for line, col, text in line_comments(src):
            if not text.startswith(MARKER):
                continue
            exp[(rel, line)] += marker_count(text, f"{rel}:{line}")
            texts[(rel, line)].append(text)
            # Blank the comment in the copy; code before it and the line stay.
            l = lines[line - 1]
            lines[line - 1] = l[:col].rstrip()
        with open(os.path.join(copy, rel), "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
    return exp, texts


def parse_json_stream(out):
    """go vet -json output: one or more JSON objects, possibly with # comment lines."""
    dec = json.JSONDecoder()
    s = "\n".join(l for l in out.splitlines() if not l.startswith("#"))
    i, objs = 0, []
    while True:
        while i < len(s) and s[i].isspace():
            i += 1
        if i >= len(s):
            break
        obj, i = dec.raw_decode(s, i)
        objs.append(obj)
    return objs


# Related information confinelint attaches to a directive problem, which it
# reports on the directive comment's line: the declaration the comment documents.
DOCUMENTS = "which the comment documents"

POSN = re.compile(r"^(.*):(\d+)(?::(\d+))?$")


def findings(objs, copy):
    """{(relfile, line): [messages]} from the tool's -json output.

    Two shapes are read: confinelint's own {"findings": [{"analyzer",
    "posn": {"file", "line", "column"}, "message", "related"?}]} (file
    relative to the directory it ran in, or absolute), and go vet -json's
    {pkg: {analyzer: [{"posn": "file:line:col", "message"}] | {"error"}}}.
    Related information is not a finding and is ignored.
    """
    found = collections.defaultdict(list)
    decl = []  # (key, declaration key) of directive findings, see main
    errors = []
    real = os.path.realpath(copy)

    def rel(path):
        path = os.path.realpath(os.path.join(copy, path))
        return os.path.relpath(path, real) if path.startswith(real + os.sep) else path

    def add(analyzer, d, where):
        posn = d.get("posn")
        if isinstance(posn, dict) and "file" in posn and "line" in posn:
            key = (rel(posn["file"]), int(posn["line"]))
        elif isinstance(posn, str) and POSN.match(posn):
            m = POSN.match(posn)
            key = (rel(m.group(1)), int(m.group(2)))
        else:
            errors.append(f"{where}: finding without position: {d}")
            return
        found[key].append(f"{d.get('message', '')} [{analyzer or d.get('analyzer', '?')}]")
        for r in d.get("related") or []:
            p = r.get("posn")
            if isinstance(p, str) and POSN.match(p):
                m = POSN.match(p)
                p = {"file": m.group(1), "line": m.group(2)}
            if isinstance(p, dict) and "file" in p and DOCUMENTS in r.get("message", ""):
                decl.append((key, (rel(p["file"]), int(p["line"]))))
                break

    for obj in objs:
        if isinstance(obj, dict) and isinstance(obj.get("findings"), list):
            for d in obj["findings"]:
                add(d.get("analyzer"), d, "findings")
            for k, v in obj.items():
                if k != "findings":
                    errors.append(f"{k}: {v}")
            continue
        for pkg, per in (obj.items() if isinstance(obj, dict) else []):
            if not isinstance(per, dict):
                errors.append(f"{pkg}: {per}")
                continue
            for analyzer, diags in per.items():
                if isinstance(diags, dict):
                    errors.append(f"{pkg} {analyzer}: {diags.get('error', diags)}")
                    continue
                for d in diags:
                    add(analyzer, d, f"{pkg} {analyzer}")
    return found, errors, decl


def main(argv):
    verbose = "-v" in argv[1:]
    strict = "--strict" in argv[1:]
    args = [a for a in argv[1:] if a not in ("-v", "--strict")]
    if len(args) != 2:
        print("usage: python3 score.py BIN SUITE_DIR [-v] [--strict]", file=sys.stderr)
        return 2
    binary, suite = os.path.abspath(args[0]), os.path.abspath(args[1])
    tmp = tempfile.mkdtemp(prefix="clscore-")
    copy = os.path.join(tmp, os.path.basename(suite.rstrip("/")) or "suite")
    try:
        shutil.copytree(suite, copy)
        exp, texts = expected_and_strip(suite, copy)
        p = subprocess.run([binary, "-json", "./..."], cwd=copy,
                           capture_output=True, text=True)
        try:
            objs = parse_json_stream(p.stdout)
        except ValueError as e:
            print(f"cannot parse {binary} -json output ({e}); exit {p.returncode}", file=sys.stderr)
            print(p.stdout[:2000], p.stderr[:2000], file=sys.stderr)
            return 1
        found, errors, decl = findings(objs, copy)
        for e in errors:
            print(f"tool error: {e}", file=sys.stderr)
        if p.returncode not in (0, 3) or p.stderr.strip():
            print(f"note: {os.path.basename(binary)} exit {p.returncode}; stderr:", file=sys.stderr)
            for l in p.stderr.strip().splitlines()[:40]:
                print("  " + l, file=sys.stderr)

        if not strict:
            # A directive problem is reported on the directive's own line, with
            # the declaration it documents as related information; checklocks
            # reports it at that declaration, where the marker is.  A finding
            # not matched on its own line counts at that declaration's line if
            # an expectation there is still unmatched.
            over = {k: len(v) - min(exp.get(k, 0), len(v)) for k, v in found.items()}
            room = {k: e - min(e, len(found.get(k, []))) for k, e in exp.items()}
            for key, dkey in decl:
                if over.get(key, 0) > 0 and room.get(dkey, 0) > 0:
                    over[key] -= 1
                    room[dkey] -= 1
                    msg = found[key].pop()
                    found[dkey].append(f"(from {key[0]}:{key[1]}, the directive) {msg}")

        E = M = X = Y = 0
        missed, extra = [], []
        for key in sorted(set(exp) | set(found)):
            e, f = exp.get(key, 0), len(found.get(key, []))
            m = min(e, f)
            E, M, X, Y = E + e, M + m, X + e - m, Y + f - m
            if e > m:
                missed.append((key, e - m, e))
            if f > m:
                extra.append((key, f - m))
        print(f"expected {E} matched {M} missed {X} extra {Y}")
        if verbose:
            for (rel, line), k, e in missed:
                msgs = found.get((rel, line), [])
                print(f"MISSED {rel}:{line}: {k} of {e} ({'; '.join(texts[(rel, line)])})"
                      + (f" found: {' | '.join(msgs)}" if msgs else ""))
            for (rel, line), k in extra:
                msgs = found[(rel, line)]
                ctx = f" (marker: {'; '.join(texts[(rel, line)])})" if (rel, line) in texts else ""
                print(f"EXTRA  {rel}:{line}: {k}{ctx}: {' | '.join(msgs)}")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
