#!/usr/bin/env python3
# Writes N random valid scenario files (every fault kind, random behaviours,
# steps and policies, no expectations) into a folder, for a sweep that only
# the oracle judges:
#
#   scripts/random-scenarios.py OUT_DIR N SEED
#   cargo run --release -- run OUT_DIR --seeds 1..11 --format json
#
# With every defence on, any failure is a bug. (Issue 12 asks for this as
# `handshake fuzz`; this is the stopgap that gave the figures in the notes.)
import os
import random
import sys
out = sys.argv[1]; n = int(sys.argv[2]); seed = int(sys.argv[3])
os.makedirs(out, exist_ok=True)
R = random.Random(seed)
names = ["alice", "bob", "carol"]
def dur(lo, hi): return f'"{R.randint(lo, hi)}ms"'
for k in range(n):
    t = R.randint(1, 3); team = names[:t]
    L = [f'name = "f{seed}-{k}"', 'about = "fuzz"', 'cap = "30m"']
    L.append("[policy]")
    if R.random() < 0.5: L.append(f'on_shutdown_timeout = "{R.choice(["kill","keep"])}"')
    if R.random() < 0.3: L.append(f'on_plan_timeout = "{R.choice(["reject","approve"])}"')
    hier = R.random() < 0.7
    L.append(f"strict_hierarchy = {'true' if hier else 'false'}")
    if R.random() < 0.5: L.append(f'latency = "{R.randint(0,3)}ms..{R.randint(3,30)}ms"')
    L.append(f'shutdown_timeout = "{R.choice([1,5,10,60])}s"')
    L.append(f'plan_timeout = "{R.choice([1,5,10,120])}s"')
    L.append("[lead]")
    L.append('on_plan = [' + ", ".join(f'"{R.choice(["approve","reject","ignore"])}"' for _ in range(R.randint(1,3))) + ']')
    for nm in team:
        L.append("[[teammate]]"); L.append(f'name = "{nm}"')
        L.append('on_shutdown = [' + ", ".join(f'"{R.choice(["approve","reject","ignore"])}"' for _ in range(R.randint(1,3))) + ']')
        L.append('reject_reason = "busy"')
        L.append('on_plan = [' + ", ".join(f'"{R.choice(["approve","reject","ignore"])}"' for _ in range(R.randint(1,2))) + ']')
        if R.random() < 0.5: L.append("require_plan = true")
        L.append(f"max_revisions = {R.randint(0,2)}")
        items = []
        for i in range(R.randint(0, 3)):
            act = R.choice(["write","edit","shell","read"])
            items.append(f'{{ {act} = "{nm}{i}.txt", steps = {R.randint(1,5)}, step_time = {dur(100,3000)} }}')
        L.append("work = [" + ", ".join(items) + "]")
    labels = []
    times = sorted(R.randint(0, 20000) for _ in range(R.randint(0, 4)))
    for i, tm in enumerate(times):
        at = f'"{tm}ms"'; to = R.choice(team)
        kind = R.random()
        L.append("[[step]]"); L.append(f"at = {at}")
        if kind < 0.6:
            lab = f"s{i}"; labels.append(lab)
            L += ['do = "shutdown"', f'to = "{to}"', f'label = "{lab}"']
        elif kind < 0.85:
            frm = R.choice(team); tgt = R.choice(["lead"] + team)
            L += ['do = "submit_plan"', f'from = "{frm}"', f'to = "{tgt}"', 'plan = "p"']
        else:
            L += ['do = "message"', f'from = "lead"', f'to = "{to}"', 'text = "hi"']
    for i in range(R.randint(0, 4)):
        f = R.choice(["delay","drop","duplicate","reorder","crash","stall","forge","replay","partition"])
        L.append("[[fault]]"); L.append(f'kind = "{f}"')
        if f in ("delay","drop","duplicate","reorder"):
            L.append(f"at = {dur(0,10000)}")
            if R.random() < 0.5: L.append(f'type = "{R.choice(["shutdown_request","shutdown_response","plan_approval_request","plan_approval_response"])}"')
            if f == "delay": L.append(f"delay = {dur(1,90000)}")
            if R.random() < 0.5: L.append(f"count = {R.randint(1,3)}")
        elif f == "crash":
            L.append(f'agent = "{R.choice(team)}"'); L.append(f"at = {dur(0,30000)}")
            if R.random() < 0.6: L.append(f"restart = {dur(1,70000)}")
        elif f == "stall":
            L.append(f'agent = "{R.choice(team)}"'); L.append(f"at = {dur(0,30000)}"); L.append(f"until = {dur(30000, 200000)}")
        elif f == "forge":
            L.append(f"at = {dur(0,30000)}")
            frm = R.choice(["lead"] + team); to = R.choice(["lead"] + team)
            if frm == to: to = "lead" if frm != "lead" else team[0]
            L.append(f'from = "{frm}"'); L.append(f'to = "{to}"')
            mt = R.choice(["shutdown_request","shutdown_response","plan_approval_request","plan_approval_response"])
            rid = f'"@{R.choice(labels)}"' if labels and R.random() < 0.6 else '"00000000-0000-4000-8000-00000000000%d"' % R.randint(1,9)
            extra = ""
            if mt.endswith("response"): extra = f', approve = {R.choice(["true","false"])}'
            if mt == "shutdown_response" and "false" in extra: extra += ', reason = "x"'
            if mt == "plan_approval_request": extra = ', plan = "evil"'
            L.append(f'message = {{ type = "{mt}", request_id = {rid}{extra} }}')
        elif f == "replay":
            if not labels:
                L[-2:] = []; continue
            L.append(f"at = {dur(0,100000)}"); L.append(f'request = "{R.choice(labels)}"')
        elif f == "partition":
            if len(team) < 1: continue
            a, b = "lead", R.choice(team)
            L.append(f"at = {dur(0,10000)}"); L.append(f"between = [\"{a}\", \"{b}\"]")
            if R.random() < 0.7: L.append(f"until = {dur(10000, 90000)}")
            if R.random() < 0.3: L.append('mode = "drop"')
    open(os.path.join(out, f"f{seed}-{k}.toml"), "w").write("\n".join(L) + "\n")
