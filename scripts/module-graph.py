#!/usr/bin/env python3
"""The top-level module graph of src/: an arrow X -> Y for every file of
module X that names `crate::Y` (in a `use` or inline), and any cycle among
them. Usage: scripts/module-graph.py [SRC]  (exit 1 if there is a cycle)."""
import re
import sys
from pathlib import Path

src = Path(sys.argv[1] if len(sys.argv) > 1 else "src")
modules = sorted({p.stem if p.is_file() else p.name for p in src.iterdir()
                  if (p.suffix == ".rs" or p.is_dir()) and p.stem not in ("lib", "main")})
edges = {m: set() for m in modules}
for f in src.rglob("*.rs"):
    top = f.relative_to(src).parts[0].removesuffix(".rs")
    if top not in edges:
        continue
    text = f.read_text()
    # Drop line comments (doc links name modules without depending on them).
    text = "\n".join(re.sub(r"//.*", "", line) for line in text.splitlines())
    named = set(re.findall(r"\bcrate::(\w+)", text))
    for group in re.findall(r"\bcrate::\{([^}]*)\}", text):
        named |= set(re.findall(r"^\s*(\w+)", g)[0] for g in group.split(",") if g.strip())
    edges[top] |= {m for m in named if m in edges and m != top}

for m in modules:
    print(f"{m:>9} -> {', '.join(sorted(edges[m])) or '(nothing)'}")

# Cycles: strongly connected components with more than one module.
index, low, stack, on, sccs, n = {}, {}, [], set(), [], [0]
def visit(v):
    index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
    for w in sorted(edges[v]):
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            sccs.append(sorted(comp))
for m in modules:
    if m not in index:
        visit(m)
if sccs:
    for c in sccs:
        print("cycle among:", ", ".join(c))
    sys.exit(1)
# Layers, bottom first: each module above everything it imports.
layer = {}
def depth(m):
    if m not in layer:
        layer[m] = 1 + max((depth(d) for d in edges[m]), default=-1)
    return layer[m]
for m in modules:
    depth(m)
print("no cycle; layers, bottom first:")
for d in range(max(layer.values()) + 1):
    print(f"  {d}: {', '.join(m for m in modules if layer[m] == d)}")
