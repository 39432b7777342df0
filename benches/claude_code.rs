//! Auditing a Claude Code team (issue 40): how many entries a second
//! `handshake audit` reads and judges, from a team folder and from a lead's
//! session transcript, each read from disk, made a history and judged by
//! the oracle, as the command does.
//!
//! The inputs are written to a temporary folder first, as
//! tests/fixtures/claude-code/make.py's `--large` mode writes them (the same
//! rounds: an idle notice, a task, a plan approved where the mode asks for
//! one, a word from the lead and from a peer, a report, a shutdown asked
//! and agreed to or refused, the odd repeat), so the bench needs no Python:
//! the folder is the same bytes, the transcript the same lines but for the
//! spacing of the JSON in its tool results.
//! They are smaller than the command's measured ones (docs/performance.md)
//! to keep each case to a few seconds.
//!
//! The binary allocates with mimalloc; so does this bench, to measure what
//! the command does.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use handshake::history::claude::{self, folder};
use handshake::oracle::{check_log, Log};
use serde_json::{json, Value};
use std::path::Path;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const ENTRIES: usize = 20_000;
const TRANSCRIPT_BYTES: usize = 5_000_000;

const LEAD: &str = "team-lead";
const ROLES: [&str; 8] =
    ["researcher", "implementer", "tester", "reviewer", "docs-writer", "analyst", "developer", "architect"];
const COLORS: [&str; 6] = ["blue", "green", "yellow", "purple", "orange", "pink"];
const ROUND_MS: i64 = 60_000;
/// make.py's first time, 2026-04-09T17:27:03.068Z.
const T0: i64 = 1_775_755_623_068;

fn iso(ms: i64) -> String {
    let t = jiff::Timestamp::from_millisecond(T0 + ms).expect("a time");
    t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

fn epoch_ms(ms: i64) -> i64 {
    T0 + ms
}

/// Forty-eight teammates; implementers and architects plan first.
fn members() -> Vec<(String, bool)> {
    (1..=6)
        .flat_map(|i| ROLES.iter().map(move |r| (format!("{r}-{i}"), matches!(*r, "implementer" | "architect"))))
        .collect()
}

fn idle(who: &str, ms: i64) -> Value {
    json!({"type": "idle_notification", "from": who, "timestamp": iso(ms), "idleReason": "available"})
}

fn approved(rid: &str, who: &str, ms: i64) -> Value {
    json!({"type": "shutdown_approved", "requestId": rid, "from": who, "timestamp": iso(ms),
           "paneId": "in-process", "backendType": "in-process"})
}

fn terminated(who: &str) -> Value {
    json!({"type": "teammate_terminated", "message": format!("{who} has shut down.")})
}

/// One entry: (time, from, to, text, summary).
type Sent = (i64, String, String, Value, Option<&'static str>);

/// Teammate `w`'s round `r`, as make.py's `large_round` writes it.
fn round(r: i64, w: usize, members: &[(String, bool)]) -> Vec<Sent> {
    let (me, plan) = (&members[w].0, members[w].1);
    let peer = &members[(w + 1) % members.len()].0;
    let t = r * ROUND_MS + w as i64 * 50;
    let rid = format!("shutdown-{}@{me}", epoch_ms(t + 40000));
    let s = |ms: i64, from: &str, to: &str, text: Value, summary| (ms, from.to_string(), to.to_string(), text, summary);
    let mut out = vec![
        s(t, me, LEAD, idle(me, t), None),
        s(
            t + 100,
            LEAD,
            me,
            json!({"type": "task_assignment", "taskId": (r * members.len() as i64 + w as i64 + 1).to_string(),
                   "subject": format!("Round {}: {me}'s part", r + 1), "description": "See the plan",
                   "assignedBy": LEAD, "timestamp": iso(t + 100)}),
            None,
        ),
    ];
    if plan {
        let pid = format!("plan_approval-{}@{me}", epoch_ms(t + 2000));
        let request = json!({"type": "plan_approval_request", "requestId": pid, "from": me,
            "timestamp": iso(t + 2000), "planFilePath": format!("/home/dev/.claude/plans/{me}.md"),
            "planContent": format!("1. read round {}'s files\n2. change them\n3. test", r + 1)});
        out.push(s(t + 2000, me, LEAD, request, None));
        let response = json!({"type": "plan_approval_response", "requestId": pid, "approved": true,
            "timestamp": iso(t + 2600), "permissionMode": "default"});
        out.push(s(t + 2600, LEAD, me, response, None));
    }
    let word = format!("Round {}: keep the old behaviour behind a flag.", r + 1);
    out.push(s(t + 3000, LEAD, me, Value::String(word), Some("Keep the flag")));
    let note = format!("{peer}: I changed the reader's entry type in round {}.", r + 1);
    out.push(s(t + 20000, me, peer, Value::String(note), Some("Entry type changed")));
    let report = format!("Round {} done: {} files changed, tests pass.", r + 1, r % 17 + 3);
    let repeats = if r % 50 == (w % 50) as i64 { 3 } else { 1 };
    for _ in 0..repeats {
        out.push(s(t + 30000, me, LEAD, Value::String(report.clone()), Some("Done")));
    }
    out.push(s(t + 30100, me, LEAD, idle(me, t + 30100), None));
    let ask = json!({"type": "shutdown_request", "requestId": rid, "from": LEAD, "reason": "round done",
                     "timestamp": iso(t + 40000)});
    out.push(s(t + 40000, LEAD, me, ask, None));
    if (r + w as i64) % 7 == 3 {
        let no = json!({"type": "shutdown_rejected", "requestId": rid, "from": me,
                        "reason": "still running the tests", "timestamp": iso(t + 40400)});
        out.push(s(t + 40400, me, LEAD, no, None));
        return out;
    }
    let twice = (r * members.len() as i64 + w as i64) % 1000 == 999;
    for _ in 0..if twice { 2 } else { 1 } {
        out.push(s(t + 40400, me, LEAD, approved(&rid, me, t + 40400), None));
    }
    out.push(s(t + 40450, "system", LEAD, terminated(me), None));
    out
}

fn config(members: &[(String, bool)]) -> Value {
    let mut all = vec![json!({"agentId": format!("{LEAD}@big"), "name": LEAD, "agentType": LEAD,
        "model": "claude-opus-4-6", "joinedAt": epoch_ms(0), "tmuxPaneId": "", "cwd": "/home/dev/project",
        "subscriptions": []})];
    for (i, (m, plan)) in members.iter().enumerate() {
        all.push(json!({"agentId": format!("{m}@big"), "name": m, "agentType": "general-purpose",
            "model": "sonnet", "color": COLORS[i % 6], "planModeRequired": plan,
            "joinedAt": epoch_ms(1000 + i as i64 * 1500), "tmuxPaneId": "in-process",
            "cwd": "/home/dev/project", "subscriptions": [], "backendType": "in-process", "isActive": true}));
    }
    json!({"name": "big", "description": "fixture: big", "createdAt": epoch_ms(0), "leadAgentId": format!("{LEAD}@big"),
           "leadSessionId": "5f0c1d2e-0000-4000-8000-000000000001", "members": all})
}

/// A team folder of `entries` entries in `dir`, as make.py's `large_folder`.
fn write_folder(dir: &Path, entries: usize) {
    let members = members();
    let mut inboxes: std::collections::BTreeMap<String, Vec<Value>> = std::collections::BTreeMap::new();
    inboxes.insert(LEAD.to_string(), Vec::new());
    for (m, _) in &members {
        inboxes.insert(m.clone(), Vec::new());
    }
    let (mut n, mut r) = (0, 0);
    while n < entries {
        let mut batch: Vec<Sent> = (0..members.len()).flat_map(|w| round(r, w, &members)).collect();
        batch.sort_by_key(|e| e.0);
        for (ms, from, to, text, summary) in batch.into_iter().take(entries - n) {
            let text = match text {
                Value::String(s) => s,
                v => v.to_string(),
            };
            let mut e = json!({"from": from, "text": text, "timestamp": iso(ms), "read": entries - n > 3});
            if let Some(i) = members.iter().position(|(m, _)| *m == from) {
                e["color"] = json!(COLORS[i % 6]);
            }
            if let Some(s) = summary {
                e["summary"] = json!(s);
            }
            inboxes.entry(to).or_default().push(e);
            n += 1;
        }
        r += 1;
    }
    std::fs::create_dir_all(dir.join("inboxes")).expect("a temporary folder");
    let pretty = |v: &Value| serde_json::to_string_pretty(v).expect("JSON") + "\n";
    std::fs::write(dir.join("config.json"), pretty(&config(&members))).expect("written");
    for (who, list) in inboxes {
        std::fs::write(dir.join("inboxes").join(format!("{who}.json")), pretty(&Value::Array(list))).expect("written");
    }
}

/// The lead's transcript, as make.py's `Transcript` writes one line.
struct Transcript {
    text: String,
    n: usize,
}

impl Transcript {
    fn line(&mut self, ms: i64, kind: &str, content: Value) {
        self.n += 1;
        let line = json!({"parentUuid": null, "isSidechain": false, "teamName": "clean", "userType": "external",
            "cwd": "/home/dev/project", "sessionId": "5f0c1d2e-0000-4000-8000-000000000001", "version": "2.1.220",
            "type": kind, "uuid": format!("00000000-0000-4000-8000-{:012}", self.n), "timestamp": iso(ms),
            "message": {"role": kind, "content": content}});
        self.text.push_str(&line.to_string());
        self.text.push('\n');
    }

    fn send(&mut self, ms: i64, to: &str, message: Value, result: Value) {
        let tid = format!("toolu_{:04}", self.n + 1);
        let input = json!({"to": to, "message": message});
        self.line(ms, "assistant", json!([{"type": "tool_use", "id": tid, "name": "SendMessage", "input": input}]));
        let content = json!([{"type": "tool_result", "tool_use_id": tid, "content": result.to_string()}]);
        self.line(ms + 5, "user", content);
    }

    /// Messages from `from` reaching the lead in one user turn; `head`, the
    /// runtime's other attributes of each.
    fn arrive(&mut self, ms: i64, from: &str, head: &str, bodies: &[String]) {
        let blocks: Vec<String> = bodies
            .iter()
            .map(|b| format!("<teammate-message teammate_id=\"{from}\"{head}>\n{b}\n</teammate-message>"))
            .collect();
        self.line(ms, "user", Value::String(blocks.join("\n\n")));
    }
}

/// About `bytes` of a lead's transcript, as make.py's `large_transcript`.
fn transcript(bytes: usize) -> String {
    let members = members();
    let filler = "    fn read(&mut self, line: &str) -> Result<Entry, String> {\n        let v: Value = \
                  serde_json::from_str(line).map_err(|e| e.to_string())?;\n        self.entries.push(entry(&v)?);\n  \
                        Ok(self.entries.last().unwrap().clone())\n    }\n"
        .repeat(12);
    let mut t = Transcript { text: String::new(), n: 0 };
    let mut r = 0;
    while t.text.len() < bytes {
        for (w, (me, plan)) in members.iter().enumerate() {
            let at = r * ROUND_MS + w as i64 * 50;
            t.arrive(at, me, "", &[idle(me, at).to_string()]);
            let word = format!("Round {}: keep the old behaviour behind a flag.", r + 1);
            t.send(
                at + 100,
                me,
                json!(word),
                json!({"success": true, "message": format!("Message sent to {me}'s inbox")}),
            );
            if *plan {
                let pid = format!("plan_approval-{}@{me}", epoch_ms(at + 2000));
                let request = json!({"type": "plan_approval_request", "requestId": pid, "from": me,
                    "timestamp": iso(at + 2000), "planContent": "1. read\n2. change\n3. test"});
                t.arrive(at + 2000, me, "", &[request.to_string()]);
                let answer = json!({"type": "plan_approval_response", "request_id": pid, "approve": true});
                t.send(at + 2600, me, answer, json!({"success": true, "message": format!("Plan approved for {me}")}));
            }
            let tid = format!("toolu_read_{}", t.n + 1);
            let read = json!({"file_path": format!("/home/dev/project/src/{me}.rs")});
            t.line(at + 3000, "assistant", json!([{"type": "tool_use", "id": tid, "name": "Read", "input": read}]));
            t.line(at + 3100, "user", json!([{"type": "tool_result", "tool_use_id": tid, "content": filler}]));
            let report = format!("Round {} done: {} files changed, tests pass.", r + 1, r % 17 + 3);
            t.arrive(at + 30000, me, " color=\"blue\" summary=\"Done\"", &[report, idle(me, at + 30100).to_string()]);
            let rid = format!("shutdown-{}@{me}", epoch_ms(at + 40000));
            let result = json!({"success": true, "message": format!("Shutdown request sent to {me}"),
                                "request_id": rid, "target": me});
            t.send(at + 40000, me, json!({"type": "shutdown_request", "reason": "round done"}), result);
            t.arrive(at + 40400, me, "", &[approved(&rid, me, at + 40400).to_string()]);
            t.arrive(at + 40450, "system", "", &[terminated(me).to_string()]);
        }
        r += 1;
    }
    t.text
}

/// What `handshake audit` does with a history: the oracle's verdict.
fn judged(h: &handshake::history::History) -> usize {
    let log = Log { names: &h.names, events: &h.events, ended_at: h.ended_at, stop: h.stop };
    check_log(&log, &h.policy, &h.require_plan).len()
}

fn bench(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("handshake-bench-claude-code-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let team = dir.join("folder");
    write_folder(&team, ENTRIES);
    let lead = dir.join("transcript.jsonl");
    std::fs::write(&lead, transcript(TRANSCRIPT_BYTES)).expect("written");
    let bound = handshake::history::inbox::MAX_FOLDER_BYTES;
    let sends = folder::read(&team, bound).entries.len();
    let text = std::fs::read_to_string(&lead).expect("read");
    let said = claude::transcript::read(&text, "team-lead").entries.len();

    let mut g = c.benchmark_group("audit_claude_code");
    g.sample_size(10);
    g.warm_up_time(std::time::Duration::from_secs(1));
    g.measurement_time(std::time::Duration::from_secs(4));
    g.throughput(Throughput::Elements(sends as u64));
    g.bench_function(format!("folder_{sends}_entries"), |b| b.iter(|| judged(&claude::history(&team, bound))));
    g.throughput(Throughput::Elements(said as u64));
    g.bench_function(format!("transcript_{}_mb_{said}_entries", TRANSCRIPT_BYTES / 1_000_000), |b| {
        b.iter(|| {
            let text = std::fs::read_to_string(&lead).expect("read");
            judged(&claude::transcript_history(&text))
        })
    });
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
