//! Issue 23, point 3: from an incident to a scenario. `audit PATH
//! --to-scenario F` writes a history back as a scenario that replays its
//! lines; run, that scenario gives a history the oracle judges the same way
//! (the same invariants broken) for every fixture folder a reference runtime
//! wrote, and for the traces of the bundled runs with a defence off.

mod common;

use common::binary::handshake;
use handshake::history::{self, inbox, scenario::to_scenario, History};
use handshake::oracle::{check_log, Invariant, Log};
use handshake::scenario::{load_str, run_scenario, RunOptions};
use std::path::{Path, PathBuf};

/// The invariants the audit of `h` reports broken, but for answers to ids
/// no request has: the files show a lead applying one, and this program's
/// lead has no such request to change, so a replay shows it ignored
/// (`unknown_id`), as the written file says.
fn judged(h: &History) -> Vec<Invariant> {
    let log = Log { names: &h.names, events: &h.events, ended_at: h.ended_at, stop: h.stop };
    let mut v: Vec<Invariant> = check_log(&log, &h.policy, &h.require_plan)
        .into_iter()
        .filter(|v| !v.detail.contains("never issued"))
        .map(|v| v.invariant)
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The invariants the written scenario's own run breaks.
fn replayed(h: &History, source: &str) -> (Vec<Invariant>, String) {
    let text = to_scenario(h, source, &[]).unwrap_or_else(|e| panic!("{source}: {e}"));
    let s =
        load_str("incident.toml", &text).unwrap_or_else(|e| panic!("{source}: written file must load: {e:?}\n{text}"));
    let r = run_scenario(&s, s.default_seed(), RunOptions::default());
    let mut v: Vec<Invariant> = r
        .violations
        .iter()
        .filter_map(|line| Invariant::all().into_iter().find(|i| line.starts_with(i.name())))
        .collect();
    v.sort();
    v.dedup();
    (v, text)
}

fn folders() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference");
    let mut out = Vec::new();
    for base in [root.clone(), root.join("s13")] {
        for e in std::fs::read_dir(&base).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() && p.file_name().is_some_and(|n| n != "s13") {
                out.push(if base == root { p } else { p.join("journal") });
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_fixture_folder_replays_as_a_scenario_judged_the_same_way() {
    let mut checked = 0;
    let mut broken_any = 0;
    for dir in folders() {
        let name = dir.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().display().to_string();
        let h = inbox::read(&inbox::find(&dir).expect("inbox files")).unwrap();
        let want = judged(&h);
        let (got, text) = replayed(&h, &name);
        if text.contains("request_id = ") {
            assert!(text.contains("ignores them (unknown_id)"), "{text}");
        }
        assert_eq!(got, want, "{name}: the replay is judged otherwise\n{text}");
        checked += 1;
        broken_any += usize::from(!want.is_empty());
    }
    assert!(checked >= 16, "{checked} folders");
    assert!(broken_any >= 3, "the fixtures break something in {broken_any} folders");
}

#[test]
fn traces_of_runs_with_a_defence_off_replay_judged_the_same_way() {
    let dir = std::env::temp_dir().join(format!("handshake-to-scenario-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut broken = 0;
    for stem in ["12-kind-check-off", "14-sender-auth-off", "24-expired-request-obeyed", "01-happy-shutdown"] {
        let trace = dir.join(format!("{stem}.jsonl"));
        let file = format!("scenarios/{stem}.toml");
        let ran = handshake(&["run", &file, "--trace", trace.to_str().unwrap()]);
        assert!(ran.code == 0 || ran.code == 1, "{}", ran.stderr);
        let h = history::read(&std::fs::read_to_string(&trace).unwrap()).unwrap();
        // A replay carries the protocol's lines, not the teammates' work and
        // lives: the invariants of the requests themselves are compared.
        let protocol =
            |v: Vec<Invariant>| -> Vec<Invariant> { v.into_iter().filter(|i| PROTOCOL.contains(i)).collect() };
        let want = protocol(judged(&h));
        let (got, text) = replayed(&h, &trace.display().to_string());
        assert_eq!(protocol(got), want, "{stem}\n{text}");
        broken += usize::from(!want.is_empty());
    }
    assert!(broken >= 2, "runs with a defence off break a protocol invariant: {broken}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The invariants about requests alone, which a replay of the lines carries.
const PROTOCOL: [Invariant; 3] = [Invariant::SingleTerminal, Invariant::TerminalFinal, Invariant::MatchingResponse];

#[test]
fn the_cli_writes_the_file_and_keeps_the_audits_exit_code() {
    let dir = std::env::temp_dir().join(format!("handshake-to-scenario-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("incident.toml");
    let ran = handshake(&["audit", "tests/fixtures/reference/wrong-teammate", "--to-scenario", out.to_str().unwrap()]);
    assert_eq!(ran.code, 1, "the audit found a violation: {}", ran.stdout);
    assert!(ran.stdout.contains("wrote ") && ran.stdout.contains("(2 steps)"), "{}", ran.stdout);
    let replay = handshake(&["run", out.to_str().unwrap()]);
    assert_eq!(replay.code, 1, "the replay fails the same way: {}", replay.stdout);
    assert!(replay.stdout.contains("it came from bob, not from alice"), "{}", replay.stdout);
    // An explorer and a shrinker can work on it.
    let explored = handshake(&["explore", out.to_str().unwrap()]);
    assert!(explored.code == 0 || explored.code == 1, "{}\n{}", explored.stdout, explored.stderr);
    // Where it cannot be written, nothing is: refused before the audit now,
    // as every command's outputs are (it said "nothing was written" after
    // the verdict; a large folder's audit was done for nothing).
    let nowhere = dir.join("no-such-dir").join("x.toml");
    let ran =
        handshake(&["audit", "tests/fixtures/reference/clean-shutdown", "--to-scenario", nowhere.to_str().unwrap()]);
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    assert!(ran.stderr.contains("cannot write") && ran.stderr.contains("nothing was judged"), "{}", ran.stderr);
    assert!(ran.stdout.is_empty() && !nowhere.exists(), "{}", ran.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A trace whose timeout passes the default cap (a file may not write one
/// past its cap) is written with a cap of its own, long enough for the
/// history's timeout and end, and replays to the same end.
#[test]
fn a_trace_with_a_timeout_past_the_default_cap_is_written_with_its_cap() {
    use common::binary::{handshake_in, TempDir};
    let dir = TempDir::new("long-timeout");
    dir.write(
        "long.toml",
        "name = \"long\"\nabout = \"x\"\ncap = \"3h\"\n[policy]\nshutdown_timeout = \"2h\"\n[[teammate]]\nname = \
         \"alice\"\non_shutdown = \"ignore\"\n[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"alice\"\n",
    );
    handshake_in(&dir.0, &["run", "long.toml", "--trace", "long.jsonl"]).expect_code(0);
    handshake_in(&dir.0, &["audit", "long.jsonl", "--to-scenario", "again.toml"]).expect_code(0);
    let written = std::fs::read_to_string(dir.0.join("again.toml")).unwrap();
    assert!(written.contains("cap = \"7201000ms\""), "{written}");
    handshake_in(&dir.0, &["run", "again.toml"]).expect_code(0).stdout_has("virtual 2h1s");
}
