#!/usr/bin/env python3
"""Writes every bundled scenario that names no mailbox world twice, once in
each inbox world, for a side-by-side sweep (docs/performance.md, "Claude
Code's inboxes against file inboxes"):

    python3 scripts/mailbox-worlds.py /tmp/worlds
    handshake run /tmp/worlds/file --seeds 1..500 --jobs 1
    handshake run /tmp/worlds/claude-code --seeds 1..500 --jobs 1

The two folders hold the same scenarios; only `mailbox` differs. Some of
their expectations fail in the other world (their polls and reads take
time): a sweep's exit status is 1, and its speed is what is compared.
"""
import pathlib
import re
import sys

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "worlds")
root = pathlib.Path(__file__).resolve().parent.parent / "scenarios"
count = 0
for path in sorted(root.glob("*.toml")):
    text = path.read_text()
    if re.search(r"^mailbox\s*=", text, re.M):
        continue
    for world in ("file", "claude-code"):
        if re.search(r"^\[policy\]\s*$", text, re.M):
            written = re.sub(r"^\[policy\]\s*\n", f'[policy]\nmailbox = "{world}"\n', text, count=1, flags=re.M)
        else:
            at = text.index("\n[") + 1
            written = text[:at] + f'[policy]\nmailbox = "{world}"\n\n' + text[at:]
        (out / world).mkdir(parents=True, exist_ok=True)
        (out / world / path.name).write_text(written)
    count += 1
print(f"{count} scenarios in {out}/file and {out}/claude-code")
