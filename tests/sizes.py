#!/usr/bin/env python3
"""Function lengths and struct sizes of src/ and ui/, so they cannot grow
back silently (`make check` runs it).

Reports every function over LIMIT lines and the structs with the most
fields, then fails (exit 1) when
  - a function is over LIMIT lines, is not listed in tests/sizes.allow, and
    the comment right above it does not say why it is long (a line of that
    comment starting "Long:"), or
  - a function listed in tests/sizes.allow is longer than the length listed
    there (the list only shrinks: mend a function, lower or drop its line), or
  - a struct has more fields than MAX_FIELDS, unless listed in
    tests/sizes.allow with at least its count.

The parser reads the code's own layout (every function and struct body opens
with `{` and closes with `}` in column 0, as the whole tree is written); it
counts a function's lines from its name's line to its closing brace.

    python3 tests/sizes.py [--list]
"""
import os
import re
import sys

LIMIT = 100
MAX_FIELDS = 30
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALLOW = os.path.join(ROOT, "tests", "sizes.allow")

NAME_RE = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\s*\(")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof"}


def functions(path, lines):
    """(name, first line, length, why) of every function definition."""
    out = []
    i = 0
    n = len(lines)
    while i < n:
        if lines[i].startswith("{"):
            # the signature: back to the line that starts it in column 0
            j = i - 1
            while j >= 0 and lines[j][:1] in (" ", "\t") and lines[j].strip():
                j -= 1
            head = " ".join(l.strip() for l in lines[j:i])
            k = i + 1
            while k < n and not lines[k].startswith("}"):
                k += 1
            m = None
            for m in NAME_RE.finditer(head.split("(")[0] + "("):
                pass
            if m and "(" in head and m.group(1) not in KEYWORDS and "=" not in head.split("(")[0]:
                # the comment block right above the signature
                c = j - 1
                comment = []
                while c >= 0 and (lines[c].lstrip().startswith(("/*", "*", "//")) or lines[c].rstrip().endswith("*/")):
                    comment.append(lines[c])
                    c -= 1
                why = any(re.match(r"\s*(/\*+|\*|//)?\s*Long:", l) for l in comment)
                out.append((m.group(1), j + 1, k - j + 1, why))
            i = k + 1
            continue
        i += 1
    return out


STRUCT_RE = re.compile(r"^(?:typedef\s+)?struct\s+([A-Za-z_0-9]+)\s*\{\s*$")


def structs(lines):
    """(name, fields) of every struct defined with its brace on its line."""
    out = []
    for i, line in enumerate(lines):
        m = STRUCT_RE.match(line)
        if not m:
            continue
        depth = 1
        fields = 0
        for l in lines[i + 1:]:
            code = re.sub(r"/\*.*?\*/|//.*", "", l)
            if depth == 1 and code.strip().endswith(";") and not code.strip().startswith("}"):
                # int a, b; counts two fields
                decl = code.strip()
                fields += decl.count(",") + 1 if "(" not in decl else 1
            depth += code.count("{") - code.count("}")
            if depth <= 0:
                if "}" in code and code.strip() != "};" and code.strip().startswith("}") and depth == 0:
                    pass
                break
            if code.strip().startswith("}") and depth == 1:
                fields += 1  # a nested struct/union member
        out.append((m.group(1), fields))
    return out


def load_allow():
    allow = {}
    if not os.path.exists(ALLOW):
        return allow
    for ln, line in enumerate(open(ALLOW), 1):
        line = line.split("#")[0].strip()
        if not line or line.startswith("cycle:"):  # tests/deps.py's
            continue
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            sys.exit(f"{ALLOW}:{ln}: expected 'file:function LINES' or 'struct NAME FIELDS'")
        allow[parts[0]] = int(parts[1])
    return allow


def self_test():
    """The parser on made-up code: a long function found with its length,
    a 'Long:' line exempting one, a struct's fields counted."""
    body = ["    x++;"] * 99
    src = (["static int short_one(void)", "{", "    return 1;", "}", "",
            "int long_one(int a,", "             int b)", "{"] + body + ["}", "",
            "/* Does a lot.", " * Long: one switch over every key. */", "void why(void)", "{"] + body + ["}", "",
            "struct s {", "    int a, b;", "    char *c;", "    struct { int x; } inner;", "};"])
    fns = {name: (first, length, why) for name, first, length, why in functions("t.c", src)}
    assert fns["short_one"] == (1, 4, False), fns["short_one"]
    assert fns["long_one"] == (6, 103, False), fns["long_one"]
    assert fns["why"][2] is True and fns["why"][1] == 102, fns["why"]
    assert structs(src) == [("s", 4)], structs(src)


def main():
    self_test()
    allow = load_allow()
    long_fns = []
    all_structs = []
    for d in ("src", "ui"):
        for f in sorted(os.listdir(os.path.join(ROOT, d))):
            if not f.endswith((".c", ".h")):
                continue
            rel = f"{d}/{f}"
            lines = open(os.path.join(ROOT, rel), encoding="utf-8").read().split("\n")
            for name, first, length, why in functions(rel, lines):
                if length > LIMIT:
                    long_fns.append((rel, name, first, length, why))
            for name, fields in structs(lines):
                all_structs.append((rel, name, fields))

    errors = []
    seen = set()
    long_fns.sort(key=lambda x: -x[3])
    print(f"sizes: {len(long_fns)} functions over {LIMIT} lines")
    for rel, name, first, length, why in long_fns:
        key = f"{rel}:{name}"
        seen.add(key)
        note = "says why" if why else (f"allowed up to {allow[key]}" if key in allow else "NOT ALLOWED")
        print(f"  {length:4d}  {rel}:{first} {name}  ({note})")
        if why:
            continue
        if key not in allow:
            errors.append(f"{rel}:{first}: {name} is {length} lines (over {LIMIT}): split it, or say why "
                          f"in a 'Long:' line of the comment above it")
        elif length > allow[key]:
            errors.append(f"{rel}:{first}: {name} grew to {length} lines (tests/sizes.allow: {allow[key]})")
    for key, n in allow.items():
        if not key.startswith("struct:") and key not in seen:
            print(f"  note: {key} is now within {LIMIT} lines: drop its line from tests/sizes.allow")

    all_structs.sort(key=lambda x: -x[2])
    print(f"sizes: the largest structs (over {MAX_FIELDS} fields need a line in tests/sizes.allow)")
    for rel, name, fields in all_structs[:5]:
        print(f"  {fields:4d}  struct {name} ({rel})")
    big = {f"struct:{name}" for rel, name, fields in all_structs if fields > MAX_FIELDS}
    for key in allow:
        if key.startswith("struct:") and key not in big:
            print(f"  note: {key} is now within {MAX_FIELDS} fields: drop its line from tests/sizes.allow")
    for rel, name, fields in all_structs:
        if fields > MAX_FIELDS:
            key = f"struct:{name}"
            if key not in allow:
                errors.append(f"{rel}: struct {name} has {fields} fields (over {MAX_FIELDS}): group them")
            elif fields > allow[key]:
                errors.append(f"{rel}: struct {name} grew to {fields} fields (tests/sizes.allow: {allow[key]})")
    for e in errors:
        print("sizes: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
