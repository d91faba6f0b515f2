#!/usr/bin/env python3
"""The include graph of src/ and ui/, so the circles and the reads of
engine internals cannot grow back silently (`make check` runs it).

A module is a .c file with its .h (plan.c and plan.h are module plan); a
private header P_internal.h joins the files it is private to (cost.c,
cost_tx.c, ... and cost_internal.h are module cost; onnx_import.c,
onnx_ops.c, ... module onnx). Module A depends on module B when a file of A
includes a header of B. Fails (exit 1) when

  - the modules depend on each other in a circle (one who opens a prompt
    hands it a callback; a screen's functions are declared in its own
    header, not in one every file includes), unless the circle's modules
    are all on one `cycle:A,B,...` line of tests/sizes.allow (the list only
    shrinks), or
  - a front end (a file under ui/, or src/cli.c) reads the cost model
    through a plan (`->cm`): screens and commands ask plan.h's read API for
    what they show (plan_model for engine calls that take a model), and
    none includes plan_internal.h (struct plan is opaque to them).

    python3 tests/deps.py
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALLOW = os.path.join(ROOT, "tests", "sizes.allow")
DIRS = ("src", "ui")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
CM_READ_RE = re.compile(r"->cm\b")


def modules(files):
    """{path: module} for paths like 'src/cost_tx.c'."""
    private = {}
    for path in files:
        d, f = path.split("/", 1)
        if f.endswith("_internal.h"):
            private.setdefault(d, []).append(f[: -len("_internal.h")])
    out = {}
    for path in files:
        d, f = path.split("/", 1)
        stem = f.rsplit(".", 1)[0]
        mod = stem
        for p in private.get(d, []):
            if stem == p or stem.startswith(p + "_"):
                mod = p
        out[path] = f"{d}/{mod}"
    return out


def graph(files, read):
    """{module: {module: 'file includes header'}} from the files' includes."""
    mod = modules(files)
    where = {f.split("/", 1)[1]: f for f in files if f.endswith(".h")}
    edges = {m: {} for m in mod.values()}
    for path in files:
        for line in read(path):
            m = INCLUDE_RE.match(line)
            if not m or m.group(1) not in where:
                continue
            target = mod[where[m.group(1)]]
            if target != mod[path]:
                edges[mod[path]].setdefault(target, f"{path} includes {m.group(1)}")
    return edges


def circles(edges):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def one_circle(edges, comp):
    """A shortest circle through comp's first module, as its include lines."""
    start = comp[0]
    inside = set(comp)
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges[v]):
            if w not in inside:
                continue
            if w == start:
                path = [(v, w)]
                while prev[v] is not None:
                    path.append((prev[v], v))
                    v = prev[v]
                return [edges[a][b] for a, b in reversed(path)]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return []


def load_allow():
    allowed = []
    if os.path.exists(ALLOW):
        for line in open(ALLOW):
            line = line.split("#")[0].strip()
            if line.startswith("cycle:"):
                allowed.append(set(line.split()[0][len("cycle:"):].split(",")))
    return allowed


def self_test():
    """The graph of made-up files: a circle found through its includes, a
    private header's files one module, a line-up of modules no circle."""
    src = {
        "src/a.c": ['#include "a.h"', '#include "b.h"'],
        "src/a.h": [],
        "src/b.c": ['#include "b.h"'],
        "src/b.h": ['#include "a.h"'],
        "src/c.c": ['#include "c_internal.h"'],
        "src/c_x.c": ['#include "c_internal.h"', '#include "c.h"'],
        "src/c.h": ['#include "a.h"'],
        "src/c_internal.h": ['#include "c.h"'],
    }
    e = graph(sorted(src), lambda p: src[p])
    assert circles(e) == [["src/a", "src/b"]], circles(e)
    assert one_circle(e, ["src/a", "src/b"]) == ["src/a.c includes b.h", "src/b.h includes a.h"]
    src["src/b.h"] = []
    assert circles(graph(sorted(src), lambda p: src[p])) == []


def main():
    self_test()
    files = sorted(f"{d}/{f}" for d in DIRS for f in os.listdir(os.path.join(ROOT, d)) if f.endswith((".c", ".h")))

    def read(path):
        return open(os.path.join(ROOT, path), encoding="utf-8").read().split("\n")

    edges = graph(files, read)
    n_inc = sum(len(v) for v in edges.values())
    errors = []
    found = circles(edges)
    allowed = load_allow()
    print(f"deps: {len(edges)} modules of src/ and ui/, {n_inc} dependencies, {len(found)} circle(s)")
    for comp in found:
        ok = any(set(comp) <= a for a in allowed)
        print(f"  circle: {', '.join(comp)} ({'allowed in tests/sizes.allow' if ok else 'NOT ALLOWED'})")
        for step in one_circle(edges, comp):
            print(f"    {step}")
        if not ok:
            errors.append(f"the modules {', '.join(comp)} depend on each other in a circle: break it "
                          f"(a callback, a header of its own)")
    for a in allowed:
        if not any(set(c) & a for c in found):
            print(f"  note: cycle:{','.join(sorted(a))} is gone: drop its line from tests/sizes.allow")
    reads = []
    for path in files:
        if path.startswith("ui/") or path == "src/cli.c":
            for ln, line in enumerate(read(path), 1):
                if CM_READ_RE.search(line):
                    reads.append(f"{path}:{ln}: {line.strip()}")
    for path in files:
        if path.startswith("ui/") or path == "src/cli.c":
            for ln, line in enumerate(read(path), 1):
                m = INCLUDE_RE.match(line)
                if m and m.group(1) == "plan_internal.h":
                    reads.append(f"{path}:{ln}: {line.strip()} (struct plan is opaque to the front ends)")
    print(f"deps: {len(reads)} read(s) of the cost model in ui/ and src/cli.c (->cm)")
    for r in reads:
        print(f"  {r}")
    if reads:
        errors.append("a front end (ui/, src/cli.c) reads the plan's cost model (->cm) or includes plan_internal.h: "
                      "add what it needs to "
                      "plan.h's read API")
    for e in errors:
        print("deps: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
