//! File inboxes in runs (issue 13, points 2 and 3): with `mailbox = "file"`
//! each arrival is appended to the receiver's JSON Lines file and its owner
//! reads the file on its own schedule. The bundled scenarios 32 to 38 each
//! reproduce one way a file mailbox fails (a leftover request after a
//! respawn, the reference's drain losing a line, a torn write, a file that
//! grows until a reply is late) or the defence against it; these tests hold
//! each to its story, and check determinism, `--inbox-dir` and memory mode.

mod common;

use common::binary::{handshake, TempDir};
use common::{bundled, dump, reports, run_bundled, run_toml};
use handshake::protocol::Reason;
use handshake::scenario::{load_file, load_str, run_scenario, RunOptions};
use handshake::team::Outcome;
use handshake::trace::{Cause, Event, RosterStatus};
use std::path::Path;

fn drops(o: &Outcome, cause: Cause) -> usize {
    o.events.iter().filter(|e| matches!(&e.event, Event::Dropped { cause: c, .. } if *c == cause)).count()
}

fn delivered(o: &Outcome, message_type: &str, to: &str) -> usize {
    o.events
        .iter()
        .filter(|e| {
            matches!(&e.event, Event::Deliver { message_type: m, to: t, .. }
                if m.name() == message_type && o.names.agents[t.index()] == to)
        })
        .count()
}

fn notes_with(o: &Outcome, words: &str) -> usize {
    o.events.iter().filter(|e| matches!(&e.event, Event::Note { text } if text.contains(words))).count()
}

const FILE_SCENARIOS: &[&str] = &[
    "32-leftover-shutdown-kills-respawn",
    "33-leftover-shutdown-ignored",
    "34-drain-truncate-loses-request",
    "35-drain-offset-loses-none",
    "36-torn-write-skipped",
    "37-inbox-growth-misses-deadline",
    "38-inbox-pruned-meets-deadline",
    "42-junk-line-skipped",
];

#[test]
fn every_file_scenario_passes_and_names_a_real_world_failure() {
    for stem in FILE_SCENARIOS {
        let (r, o) = bundled(stem);
        assert!(r.passed, "{stem} fails: {:?}\n{}", r.failures, dump(&o));
        let s = load_file(&Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{stem}.toml"))).unwrap();
        assert!(s.team.mailbox.file().is_some(), "{stem} must run in file mode");
        assert!(s.about.len() > 200, "{stem}'s about must tell the story");
    }
}

#[test]
fn a_leftover_shutdown_line_kills_the_respawned_teammate_without_the_check() {
    let (r, o) = bundled("32-leftover-shutdown-kills-respawn");
    assert_eq!(o.status_of("alice"), Some(RosterStatus::Shutdown), "{}", dump(&o));
    // The request was never in flight during the crash: it waited in the file.
    assert_eq!(drops(&o, Cause::Crash), 0, "{}", dump(&o));
    assert_eq!(delivered(&o, "shutdown_request", "alice"), 1, "{}", dump(&o));
    assert!(reports(&r, "current-incarnation"), "{:?}", r.violations);
}

#[test]
fn the_incarnation_check_ignores_the_leftover_line() {
    let (r, o) = bundled("33-leftover-shutdown-ignored");
    let ignored = o
        .events
        .iter()
        .filter(|e| matches!(&e.event, Event::RequestIgnored { reason: Reason::StaleIncarnation, .. }))
        .count();
    assert_eq!(ignored, 1, "{}", dump(&o));
    assert_eq!(o.status_of("alice"), Some(RosterStatus::Idle), "{}", dump(&o));
    assert!(r.violations.is_empty(), "{:?}", r.violations);
}

#[test]
fn in_memory_the_old_incarnation_answers_before_its_crash() {
    // The same script without files: the request is in alice's mailbox at
    // once and the alice it was meant for answers it; in scenario 32 it
    // waited in the file for her next poll, which her crash cut off.
    let toml = r#"
name = "leftover-in-memory"
about = "Scenario 32 with memory mailboxes."
[policy.defences]
incarnation_check = false
[[teammate]]
name = "alice"
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
label = "stop-alice"
[[fault]]
kind = "crash"
agent = "alice"
at = "1050ms"
restart = "2s"
"#;
    let (r, o) = run_toml(toml, 1);
    assert_eq!(o.status_of("alice"), Some(RosterStatus::Shutdown), "{}", dump(&o));
    assert!(!reports(&r, "current-incarnation"), "{:?}", r.violations);
    assert!(!o.events.iter().any(|e| matches!(e.event, Event::Crash { .. })), "{}", dump(&o));
    assert!(o.inbox_files.is_empty());
}

#[test]
fn read_then_truncate_loses_the_line_appended_mid_read_and_the_oracle_counts_it() {
    let (r, o) = bundled("34-drain-truncate-loses-request");
    assert_eq!(drops(&o, Cause::DrainLoss), 1, "{}", dump(&o));
    assert_eq!(delivered(&o, "shutdown_request", "alice"), 0, "{}", dump(&o));
    assert_eq!(o.status_of("alice"), Some(RosterStatus::Killed));
    assert!(reports(&r, "no-silent-loss"), "{:?}", r.violations);
}

#[test]
fn a_committed_offset_loses_nothing() {
    let (r, o) = bundled("35-drain-offset-loses-none");
    assert_eq!(drops(&o, Cause::DrainLoss), 0, "{}", dump(&o));
    let sent = o.events.iter().filter(|e| matches!(e.event, Event::Send { .. })).count();
    let got = o.events.iter().filter(|e| matches!(e.event, Event::Deliver { .. })).count();
    assert_eq!(sent, got, "every message sent is read\n{}", dump(&o));
    assert!(r.violations.is_empty(), "{:?}", r.violations);
    assert!(o.inbox_files.contains_key("alice.jsonl.offset"), "{:?}", o.inbox_files.keys());
}

#[test]
fn a_torn_line_is_skipped_and_nothing_after_it_is_lost() {
    let (r, o) = bundled("36-torn-write-skipped");
    assert_eq!(drops(&o, Cause::TornWrite), 1, "{}", dump(&o));
    assert_eq!(notes_with(&o, "skips a torn line"), 1, "{}", dump(&o));
    assert_eq!(delivered(&o, "shutdown_request", "bob"), 1, "{}", dump(&o));
    assert_eq!(o.status_of("bob"), Some(RosterStatus::Shutdown));
    // The writer died in the middle of the append.
    assert!(o.events.iter().any(|e| matches!(&e.event, Event::Crash { agent, .. } if agent.index() == 1)));
    assert!(r.violations.is_empty(), "{:?}", r.violations);
    // The fragment is still in the file, ended by a newline, before the whole line.
    let bob = String::from_utf8(o.inbox_files["bob.jsonl"].clone()).unwrap();
    let lines: Vec<&str> = bob.lines().collect();
    assert_eq!(lines.len(), 2, "{bob}");
    assert!(serde_json::from_str::<serde_json::Value>(lines[0]).is_err(), "{bob}");
    assert!(serde_json::from_str::<serde_json::Value>(lines[1]).is_ok(), "{bob}");
}

/// The bytes each of `agent`'s reads went through, from the trace's reads.
fn read_sizes(o: &Outcome, agent: &str) -> Vec<u64> {
    o.events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Read { agent: a, bytes, path, .. } if o.names.agent(*a) == agent => {
                assert_eq!(path, &format!("{agent}.jsonl"));
                Some(*bytes)
            }
            _ => None,
        })
        .collect()
}

#[test]
fn an_unpruned_inbox_makes_the_reply_late_and_pruning_fixes_it() {
    let (_, grown) = bundled("37-inbox-growth-misses-deadline");
    assert_eq!(grown.status_of("alice"), Some(RosterStatus::Killed), "{}", dump(&grown));
    let sizes = read_sizes(&grown, "alice");
    assert!(sizes.len() >= 2 && sizes.windows(2).all(|w| w[0] <= w[1]), "{sizes:?}");

    let (_, pruned) = bundled("38-inbox-pruned-meets-deadline");
    assert_eq!(pruned.status_of("alice"), Some(RosterStatus::Shutdown), "{}", dump(&pruned));
    let after = read_sizes(&pruned, "alice");
    assert_eq!(after.len(), sizes.len(), "{after:?} {sizes:?}");
    // The request's read goes through the request alone.
    assert!(after.last() < sizes.last(), "{after:?} {sizes:?}");
    assert!(*after.last().unwrap() < 1024, "{after:?}");
}

#[test]
fn file_mode_is_deterministic() {
    for stem in FILE_SCENARIOS {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{stem}.toml"));
        let s = load_file(&path).unwrap();
        for seed in [1, 7, 42] {
            let run = || {
                let mut r = run_scenario(&s, seed, RunOptions { keep_outcome: true, ..RunOptions::default() });
                let o = r.outcome.take().unwrap();
                (handshake::sweep::trace_hash(&o), o.inbox_files)
            };
            assert_eq!(run(), run(), "{stem} seed {seed}");
        }
    }
}

#[test]
fn inbox_dir_files_equal_the_simulated_ones_and_parse_as_the_reference_format() {
    for stem in FILE_SCENARIOS {
        let dir = TempDir::new("inbox-dir");
        let (_, o) = run_bundled(stem, Some(dir.0.as_path()));
        assert!(o.mirror_error.is_none(), "{:?}", o.mirror_error);
        assert!(!o.inbox_files.is_empty(), "{stem}");
        for (name, bytes) in &o.inbox_files {
            let on_disk = std::fs::read(dir.0.as_path().join(name)).unwrap_or_else(|e| panic!("{stem}: {name}: {e}"));
            assert_eq!(&on_disk, bytes, "{stem}: {name}");
            if !name.ends_with(".jsonl") {
                continue;
            }
            let text = String::from_utf8(on_disk).unwrap();
            for line in text.lines() {
                let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                    // Only a fault writes a line that is not JSON: 36's torn append, 42's junk line.
                    assert!(
                        ["36-torn-write-skipped", "42-junk-line-skipped"].contains(stem),
                        "{stem}: {name}: not JSON: {line}"
                    );
                    continue;
                };
                let obj = v.as_object().unwrap_or_else(|| panic!("{stem}: {name}: not an object: {line}"));
                let keys: Vec<&str> = obj.keys().map(String::as_str).take(4).collect();
                assert_eq!(keys, ["type", "from", "content", "timestamp"], "{stem}: {name}: {line}");
                assert!(obj["timestamp"].is_number() && obj["content"].is_string(), "{line}");
            }
        }
    }
}

#[test]
fn the_binary_writes_the_inbox_dir_and_refuses_it_where_it_means_nothing() {
    let dir = TempDir::new("inbox-cli");
    let out = dir.0.as_path().join("inbox");
    let out_s = out.to_str().unwrap();
    // Twice: the second run starts the team's files afresh, not after the first's.
    for _ in 0..2 {
        handshake(&["run", "scenarios/35-drain-offset-loses-none.toml", "--inbox-dir", out_s]).expect_code(0);
    }
    let alice = std::fs::read_to_string(out.join("alice.jsonl")).expect("alice's inbox written");
    assert_eq!(alice.lines().count(), 2, "{alice}");
    let offset = std::fs::read_to_string(out.join("alice.jsonl.offset")).expect("alice's offset written");
    assert_eq!(offset.trim().parse::<usize>().ok(), Some(alice.len()), "{offset} {alice}");
    let a_file = dir.0.join("a-file");
    std::fs::write(&a_file, "not a folder").unwrap();
    handshake(&["run", "scenarios/35-drain-offset-loses-none.toml", "--inbox-dir", a_file.to_str().unwrap()])
        .expect_code(2)
        .ran_nothing();
    handshake(&["run", "scenarios/01-happy-shutdown.toml", "--inbox-dir", out_s])
        .expect_code(2)
        .stderr_has("mailbox = \"file\"")
        .ran_nothing();
    handshake(&["run", "scenarios/35-drain-offset-loses-none.toml", "--seeds", "1..3", "--inbox-dir", out_s])
        .expect_code(2)
        .ran_nothing();
}

/// Issue 20 point 3: file inboxes are the world's, so the explorer searches
/// them (their files, polls and reads in progress are in its states): it
/// finds the line the truncate drain destroys between a read and its
/// truncate (what scenario 34 shows, and expects), and no loss with the
/// offset drain (35).
#[test]
fn the_explorer_searches_file_inboxes_and_finds_the_truncate_drains_loss() {
    handshake(&["explore", "scenarios/34-drain-truncate-loses-request.toml"])
        .expect_code(0)
        .stdout_has("✓ invariant no-silent-loss")
        .stdout_has("appended between the read and the truncate")
        .stdout_has("found, as the file expects");
    let offset = handshake(&["explore", "scenarios/35-drain-offset-loses-none.toml"]);
    offset.expect_code(0).stdout_has("no invariant violated within the bounds");
    assert!(!offset.stdout.contains("no-silent-loss"), "{}", offset.explain());
    handshake(&["explore", "scenarios/35-drain-offset-loses-none.toml", "--without-file-faults"]).expect_code(0);
}

#[test]
fn memory_mode_keeps_no_files() {
    let (r, o) = bundled("01-happy-shutdown");
    assert!(r.passed);
    assert!(o.inbox_files.is_empty());
    assert_eq!(notes_with(&o, ".jsonl"), 0, "{}", dump(&o));
}

fn first_error(toml: &str) -> String {
    match load_str("bad.toml", &format!("name = \"x\"\n{toml}")) {
        Ok(_) => panic!("must be refused:\n{toml}"),
        Err(e) => e[0].to_string(),
    }
}

#[test]
fn file_mode_keys_are_checked_with_their_place() {
    let team = "[[teammate]]\nname = \"alice\"\n";
    let e = first_error(&format!("[policy]\ndrain = \"offset\"\n{team}"));
    assert!(e.starts_with("bad.toml:3:9") && e.contains("mailbox = \"file\""), "{e}");
    let e = first_error(&format!("[policy]\nmailbox = \"disk\"\n{team}"));
    assert!(e.starts_with("bad.toml:3:") && e.contains("\"memory\", \"file\" or \"claude-code\""), "{e}");
    let e = first_error(&format!("[policy]\nmailbox = \"file\"\ndrain = \"rename\"\n{team}"));
    assert!(e.starts_with("bad.toml:4:") && e.contains("\"truncate\" or \"offset\""), "{e}");
    let e = first_error(&format!("[policy]\nmailbox = \"file\"\ninbox_poll = \"0ms\"\n{team}"));
    assert!(e.starts_with("bad.toml:4:"), "{e}");
    let e = first_error(&format!("{team}[[fault]]\nkind = \"torn_write\"\nagent = \"alice\"\nat = \"1s\"\n"));
    assert!(e.starts_with("bad.toml:5:") && e.contains("mailbox = \"file\""), "{e}");
    let e = first_error(&format!(
        "[policy]\nmailbox = \"file\"\n{team}[[fault]]\nkind = \"torn_write\"\nagent = \"alice\"\n"
    ));
    assert!(e.contains("missing `at`"), "{e}");
    // Expecting a violation is allowed with the reference's drain, which can lose.
    let ok = format!("name = \"x\"\n[policy]\nmailbox = \"file\"\n{team}[[expect]]\nviolation = \"no-silent-loss\"\n");
    assert!(load_str("ok.toml", &ok).is_ok());
    let safe = format!("name = \"x\"\n[policy]\nmailbox = \"file\"\ndrain = \"offset\"\n{team}[[expect]]\nviolation = \"no-silent-loss\"\n");
    assert!(load_str("safe.toml", &safe).is_err());
}

#[test]
fn the_bench_measures_file_inboxes_as_a_row_of_their_own() {
    // A tiny load in a debug build: this checks every handshake completes
    // through the files and the report says which mailbox, not the speed.
    let args = ["bench", "--mailbox", "file", "--teammates", "3", "--in-flight", "2", "--handshakes", "600"];
    let r = handshake(&[&args[..], &["--latency-sample", "50", "--repeat", "1", "--format", "json"]].concat());
    r.expect_code(0);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}\n{}", r.explain()));
    assert_eq!(v["mailbox"], "file", "{}", r.explain());
    assert_eq!(v["handshakes"], 600, "every handshake completes through the files\n{}", r.explain());
    let memory =
        handshake(&["bench", "--handshakes", "200", "--latency-sample", "20", "--repeat", "1", "--format", "json"]);
    let m: serde_json::Value = serde_json::from_str(&memory.stdout).expect("JSON");
    assert_eq!(m["mailbox"], "memory", "{}", memory.explain());
}

#[test]
fn the_bench_measures_the_plan_handshake_as_a_row_of_its_own() {
    // Seven teammates share 200 plans (29 each, the first four one more):
    // every plan is decided, and the report says which handshake it timed.
    for mailbox in ["memory", "file"] {
        let args = ["bench", "--protocol", "plan", "--teammates", "7", "--handshakes", "200", "--mailbox", mailbox];
        let r = handshake(&[&args[..], &["--latency-sample", "50", "--repeat", "1", "--format", "json"]].concat());
        r.expect_code(0);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}\n{}", r.explain()));
        assert_eq!((v["handshake"].as_str(), v["handshakes"].as_u64()), (Some("plan"), Some(200)), "{}", r.explain());
    }
    // A teammate waits for its plan's answer: more in flight is refused, not ignored.
    handshake(&["bench", "--protocol", "plan", "--in-flight", "2"]).expect_code(2).stderr_has("one plan in flight");
    let shutdown =
        handshake(&["bench", "--handshakes", "100", "--latency-sample", "10", "--repeat", "1", "--format", "json"]);
    let s: serde_json::Value = serde_json::from_str(&shutdown.stdout).expect("JSON");
    assert_eq!(s["handshake"], "shutdown", "{}", shutdown.explain());
}

#[test]
fn a_duplicated_message_is_two_lines_and_both_are_read() {
    // As in memory mode (scenario 16): both copies reach alice, the second
    // answer is ignored, and the run settles rather than polling on.
    let toml = r#"
name = "duplicate-in-files"
about = "A duplicated shutdown request through file inboxes."
[policy]
mailbox = "file"
drain = "offset"
[[teammate]]
name = "alice"
on_shutdown = ["reject", "approve"]
reject_reason = "busy"
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
label = "stop"
[[fault]]
kind = "duplicate"
type = "shutdown_request"
count = 1
"#;
    let (r, o) = run_toml(toml, 1);
    assert_eq!(delivered(&o, "shutdown_request", "alice"), 2, "{}", dump(&o));
    assert_eq!(o.stop, handshake::team::Stop::Settled, "{}", dump(&o));
    assert!(o.ended_at < handshake::protocol::Millis::from_secs(10), "{}", dump(&o));
    assert!(r.violations.is_empty(), "{:?}", r.violations);
}

#[test]
fn a_shrunk_drain_loss_keeps_file_mode_and_may_expect_its_violation() {
    let dir = TempDir::new("inbox-shrink");
    let out = dir.0.join("shrunk.toml");
    let out_s = out.to_str().unwrap();
    let args = ["shrink", "scenarios/34-drain-truncate-loses-request.toml", "--invariant", "no-silent-loss"];
    handshake(&[&args[..], &["--out", out_s]].concat()).expect_code(0);
    let text = std::fs::read_to_string(&out).expect("written");
    assert!(text.contains("mailbox = \"file\"") && text.contains("violation = \"no-silent-loss\""), "{text}");
    handshake(&["run", out_s]).expect_code(0);
}

/// Alice approves a shutdown and stops at 1.101 s; her answer takes 50 ms to
/// reach the lead's file. `{at}` is when a torn write is armed for her.
fn approval_then_tear(at: &str) -> String {
    format!(
        r#"
name = "tear-after-stop"
about = "A torn write armed for a writer that has stopped, or stops before its next append."
[policy]
mailbox = "file"
latency = "50ms"
[[teammate]]
name = "alice"
on_shutdown = "approve"
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
label = "stop-alice"
[[fault]]
kind = "torn_write"
agent = "alice"
at = "{at}"
[[expect]]
request = "stop-alice"
status = "approved"
[[expect]]
teammate = "alice"
status = "shutdown"
"#
    )
}

#[test]
fn a_torn_write_armed_for_a_stopped_writer_tears_nothing() {
    // Armed at 1.12 s, after alice stopped: nothing to arm, and her approval,
    // already on its way, reaches the lead whole.
    let (r, o) = run_toml(&approval_then_tear("1120ms"), 1);
    assert!(r.passed, "{:?}\n{}", r.failures, dump(&o));
    assert_eq!(drops(&o, Cause::TornWrite), 0, "{}", dump(&o));
    assert_eq!(notes_with(&o, "alice is not running (shutdown): no append to tear"), 1, "{}", dump(&o));
    assert_eq!(delivered(&o, "shutdown_response", "lead"), 1, "{}", dump(&o));
    assert!(!o.events.iter().any(|e| matches!(e.event, Event::Crash { .. })), "{}", dump(&o));
}

#[test]
fn an_append_after_the_writer_stopped_is_not_torn() {
    // Armed at 1.05 s while alice runs; she stops at 1.101 s and her answer
    // lands at 1.151 s: a torn append is a crashing writer's last act, and
    // this writer stopped gracefully with its answer sent.
    let (r, o) = run_toml(&approval_then_tear("1050ms"), 1);
    assert!(r.passed, "{:?}\n{}", r.failures, dump(&o));
    assert_eq!(drops(&o, Cause::TornWrite), 0, "{}", dump(&o));
    assert_eq!(notes_with(&o, "alice stopped (shutdown) before its next append"), 1, "{}", dump(&o));
    assert_eq!(delivered(&o, "shutdown_response", "lead"), 1, "{}", dump(&o));
    let lead = String::from_utf8(o.inbox_files["lead.jsonl"].clone()).unwrap();
    assert!(lead.lines().all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()), "{lead}");
}

#[test]
fn a_writer_that_dies_mid_broadcast_appends_none_of_the_rest() {
    // w-1 broadcasts to the six others at 1 s; the copies land between 1.004
    // and 1.029 s (seed 1). The tear is armed at 1.01 s: two copies have
    // landed, the next is torn, and the three after it are never written.
    let toml = r#"
name = "torn-broadcast"
about = "A writer crashes in the middle of a broadcast."
[policy]
mailbox = "file"
drain = "offset"
latency = "1ms..40ms"
[[teammate]]
name = "w"
count = 6
[[step]]
at = "1s"
do = "broadcast"
from = "w-1"
text = "all hands"
[[fault]]
kind = "torn_write"
agent = "w-1"
at = "1010ms"
"#;
    let (r, o) = run_toml(toml, 1);
    assert!(r.violations.is_empty(), "{:?}\n{}", r.violations, dump(&o));
    let inboxes: Vec<(&String, &Vec<u8>)> = o.inbox_files.iter().filter(|(p, _)| p.ends_with(".jsonl")).collect();
    let landed: Vec<&String> = inboxes.iter().filter(|(_, b)| b.ends_with(b"\n")).map(|(p, _)| *p).collect();
    let torn: Vec<&String> = inboxes.iter().filter(|(_, b)| !b.ends_with(b"\n")).map(|(p, _)| *p).collect();
    assert_eq!(landed.len(), 2, "{landed:?}\n{}", dump(&o));
    assert_eq!(torn.len(), 1, "{torn:?}\n{}", dump(&o));
    // The torn copy and the three after it: lost to the fault, never appended.
    assert_eq!(drops(&o, Cause::TornWrite), 4, "{}", dump(&o));
    assert_eq!(notes_with(&o, "died in the middle of the broadcast"), 3, "{}", dump(&o));
    assert_eq!(inboxes.len(), 3, "no file for the copies never written: {:?}", o.inbox_files.keys());
    let crash = o.events.iter().position(|e| matches!(e.event, Event::Crash { .. })).expect("w-1 crashes");
    let appended_after = o.events[crash..]
        .iter()
        .filter(
            |e| matches!(&e.event, Event::Note { text } if text.contains(" appended to ") && text.ends_with(" bytes)")),
        )
        .count();
    assert_eq!(appended_after, 0, "{}", dump(&o));
}

/// A file without its name: `copies` broadcasts of `text_kib` KiB from the lead, all at 1 s, to a
/// team of `team` file inboxes that keep what they read (offset drain).
fn broadcasts(team: usize, text_kib: usize, copies: usize) -> String {
    let text = "x".repeat(text_kib * 1024);
    let mut toml = format!(
        "about = \"Big broadcasts to many file inboxes.\"\n[policy]\nmailbox = \"file\"\ndrain = \"offset\"\n[[teammate]]\nname = \"w\"\ncount = {team}\n"
    );
    for _ in 0..copies {
        toml.push_str(&format!("[[step]]\nat = \"1s\"\ndo = \"broadcast\"\ntext = \"{text}\"\n"));
    }
    toml
}

#[test]
fn a_broadcast_too_big_for_the_inbox_files_is_refused_where_the_file_asks_for_it() {
    // 10 KiB to 100,000 inboxes is 1 GB of lines: main ran it to 2.5 GB.
    let e = first_error(&broadcasts(100_000, 10, 1));
    assert!(e.starts_with("bad.toml:11:6: step #1: a broadcast of 10240 bytes"), "{e}");
    assert!(e.contains("256 MiB"), "{e}");
    // Within the bound, it loads.
    let fits = format!("name = \"x\"\n{}", broadcasts(100_000, 2, 1));
    assert!(load_str("ok.toml", &fits).is_ok());
    // The binary refuses it before running anything.
    let dir = TempDir::new("inbox-bomb");
    let path = dir.write("bomb.toml", &format!("name = \"x\"\n{}", broadcasts(100_000, 10, 1)));
    handshake(&["run", &path]).expect_code(2).stderr_has("bomb.toml:11:6").ran_nothing();
}

#[test]
fn a_run_that_would_pass_the_inbox_bound_stops_there_with_the_reason() {
    // Two broadcasts of 70 KiB to 2,000 inboxes: each fits the bound alone
    // (140 MB), together they do not. The run stops at the append that
    // would pass it, says why, and fails; it neither aborts nor grows.
    let s = load_str("two.toml", &format!("name = \"x\"\n{}", broadcasts(2_000, 70, 2)))
        .expect("each broadcast fits on its own");
    let mut r = run_scenario(&s, 1, RunOptions { keep_outcome: true, ..RunOptions::default() });
    let o = r.outcome.take().unwrap();
    assert_eq!(r.stopped_by, "inbox bound", "{:?}", r.failures);
    assert!(!r.passed);
    assert!(r.failures.iter().any(|f| f.check == "inbox bound" && f.message.contains("256 MiB")), "{:?}", r.failures);
    assert_eq!(notes_with(&o, "would take the inbox files past their bound"), 1);
    let held: usize = o.inbox_files.values().map(Vec::len).sum();
    assert!(held as u64 <= handshake::inbox::MAX_HELD_BYTES, "{held}");
    assert!(held as u64 > handshake::inbox::MAX_HELD_BYTES - (1 << 20), "stopped at the bound, not before: {held}");
}

#[test]
fn a_torn_append_in_the_writers_own_turn_is_its_last_act() {
    // With no latency alice's approval is appended while she is still taking
    // up the request. The tear kills her there: the rest of that turn (the
    // graceful stop the approval began) dies with her.
    let toml = approval_then_tear("500ms").replace("latency = \"50ms\"", "latency = \"0ms\"");
    let (r, o) = run_toml(&toml, 1);
    assert_eq!(drops(&o, Cause::TornWrite), 1, "{}", dump(&o));
    assert!(o.events.iter().any(|e| matches!(e.event, Event::Crash { .. })), "the writer crashes: {}", dump(&o));
    let stopped = o.events.iter().any(|e| matches!(e.event, Event::Status { status: RosterStatus::Shutdown, .. }));
    assert!(!stopped, "a writer that died mid-append does not also shut down gracefully: {}", dump(&o));
    assert!(r.violations.is_empty(), "{:?}\n{}", r.violations, dump(&o));
}

/// Issue 23, point 5: a fault that writes a whole line that is not JSON
/// into an inbox (42). The reader skips it, names it for what it is (not a
/// torn append), and reads the request behind it; the line stays in the
/// file, which the offset drain never cuts.
#[test]
fn a_junk_line_is_skipped_and_the_request_behind_it_is_read() {
    let (r, o) = bundled("42-junk-line-skipped");
    assert!(r.passed, "{}", dump(&o));
    assert_eq!(notes_with(&o, "skips a line that is not JSON at byte 0 of alice.jsonl"), 1, "{}", dump(&o));
    assert_eq!(notes_with(&o, "skips a torn line"), 0, "a whole junk line is not a torn append");
    let alice = String::from_utf8(o.inbox_files["alice.jsonl"].clone()).unwrap();
    assert!(alice.starts_with("2026-12-02 01:00:00 INFO build finished in 3m12s\n"), "{alice}");
    assert_eq!(o.status_of("alice"), Some(handshake::trace::RosterStatus::Shutdown));
}

#[test]
fn a_junk_line_needs_file_inboxes_and_a_teammate() {
    let base = "name = \"j\"\nabout = \"x\"\n[[teammate]]\nname = \"alice\"\n";
    let memory = format!("{base}[[fault]]\nkind = \"junk_line\"\nagent = \"alice\"\nat = \"1s\"\n");
    let e = handshake::scenario::load_str("j.toml", &memory).expect_err("memory inboxes have no file");
    assert!(e.iter().any(|e| e.to_string().contains("set mailbox = \"file\"")), "{e:?}");
    let file = format!("{base}[policy]\nmailbox = \"file\"\n[[fault]]\nkind = \"junk_line\"\nat = \"1s\"\n");
    let e = handshake::scenario::load_str("j.toml", &file).expect_err("whose inbox?");
    assert!(e.iter().any(|e| e.to_string().contains("missing `agent`")), "{e:?}");
}

#[test]
fn a_file_mode_run_leaves_its_inboxes_in_the_outcome_only_for_what_reads_them() {
    // A sweep reads no inbox file unless an expectation counts its lines:
    // the run then leaves none in its outcome; a kept outcome has them all.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/35-drain-offset-loses-none.toml");
    let s = load_file(&path).expect("a bundled scenario loads");
    let run = |folder: bool| {
        let mut spec = s.team_spec(s.default_seed(), None);
        spec.folder = folder;
        handshake::team::run_plain(spec)
    };
    let (read, unread) = (run(true), run(false));
    assert!(read.inbox_files.keys().any(|p| p.ends_with(".jsonl")), "{:?}", read.inbox_files.keys());
    assert!(unread.inbox_files.is_empty(), "{:?}", unread.inbox_files.keys());
    assert_eq!(read.events, unread.events, "what is left in the outcome changes nothing in the run");
    let kept = run_scenario(&s, s.default_seed(), RunOptions { keep_outcome: true, ..RunOptions::default() });
    assert_eq!(kept.outcome.expect("kept").inbox_files, read.inbox_files);
}

/// A run refused for another option leaves `--inbox-dir` as it was: the
/// folder is not made, and the team's old files in it are not removed.
#[test]
fn a_refused_run_leaves_its_inbox_dir_untouched() {
    let root = std::env::temp_dir().join(format!("handshake-inbox-refused-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let old = root.join("old");
    std::fs::create_dir_all(&old).unwrap();
    std::fs::write(old.join("bob.jsonl"), "previous run\n").unwrap();
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/36-torn-write-skipped.toml");
    let new = root.join("new");
    let missing = root.join("no-such-schedule.json");
    let runs = [
        (old.display().to_string(), vec!["--trace".to_string(), root.join("no/trace.jsonl").display().to_string()]),
        (new.display().to_string(), vec!["--schedule".to_string(), missing.display().to_string()]),
    ];
    for (dir, extra) in runs {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args(["run", scenario, "--inbox-dir", &dir])
            .args(&extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert_eq!(std::fs::read_to_string(old.join("bob.jsonl")).unwrap(), "previous run\n");
    assert!(!new.exists(), "no folder made for a run refused");
    let _ = std::fs::remove_dir_all(&root);
}

/// With `--compare`, `--inbox-dir` holds the file's own run's inboxes, as
/// without it: the what-if run writes none there.
#[test]
fn inbox_dir_with_compare_holds_the_files_own_run() {
    let root = std::env::temp_dir().join(format!("handshake-inbox-compare-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/36-torn-write-skipped.toml");
    let (alone, compared) = (root.join("alone"), root.join("compared"));
    let html = root.join("c.html").display().to_string();
    let run = |dir: &Path, extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args(["run", scenario, "--inbox-dir", &dir.display().to_string()])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.code().is_some_and(|c| c < 2), "{}", String::from_utf8_lossy(&out.stderr));
    };
    run(&alone, &[]);
    run(&compared, &["--html", &html, "--compare", "drain=truncate"]);
    let files = |dir: &Path| -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(files(&compared), files(&alone));
    let _ = std::fs::remove_dir_all(&root);
}

/// A hostile review: `--inbox-dir` removed only this team's file inboxes,
/// so a previous team's Claude Code inbox (bob's, from scenario 53) stayed
/// beside this run's and `audit` judged it as this run's; and `--trace`
/// could name one of the inbox files the run then wrote over. A folder a
/// run wrote is emptied of every inbox file; one holding inbox files no run
/// wrote is refused, untouched; an output that is one of them is refused.
#[test]
fn an_inbox_dir_holds_only_this_runs_inboxes() {
    let dir = TempDir::new("inbox-stale");
    let team = dir.0.join("team");
    let team_s = team.to_str().unwrap();
    handshake(&["run", "53", "--inbox-dir", team_s]).expect_code(0);
    assert!(team.join("inboxes/bob.json").exists(), "53's team has bob");
    handshake(&["run", "56", "--inbox-dir", team_s]).expect_code(0);
    let mut inboxes: Vec<String> = std::fs::read_dir(team.join("inboxes"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    inboxes.sort();
    assert_eq!(inboxes, ["alice.json", "lead.json"], "56's team only");
    // A folder with an inbox file of the user's own: refused, untouched.
    let theirs = dir.0.join("theirs");
    std::fs::create_dir_all(&theirs).unwrap();
    std::fs::write(theirs.join("notes.jsonl"), "{}\n").unwrap();
    handshake(&["run", "35", "--inbox-dir", theirs.to_str().unwrap()])
        .expect_code(2)
        .stderr_has("already holds inbox files no run wrote (notes.jsonl)")
        .ran_nothing();
    let listed: Vec<_> = std::fs::read_dir(&theirs).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(listed, ["notes.jsonl"], "nothing written, nothing removed");
    // An output that is one of the run's inbox files: refused.
    let trace = team.join("lead.jsonl");
    handshake(&["run", "35", "--inbox-dir", team_s, "--trace", trace.to_str().unwrap()])
        .expect_code(2)
        .stderr_has("is one of the inbox files in")
        .ran_nothing();
    assert!(team.join("inboxes/alice.json").exists(), "the folder as the last run left it");
}

/// A scenario author's review: a file put in a folder a run had written
/// (`notes.jsonl`, or `bob.jsonl` though the run wrote no bob) was removed
/// by the next run, as if that run had written it. Only the files the last
/// run listed in its note are replaced; a folder with others is refused.
#[test]
fn a_file_put_beside_a_runs_inboxes_is_refused_not_removed() {
    let dir = TempDir::new("inbox-theirs-after");
    let out = dir.0.join("out");
    let out_s = out.to_str().unwrap();
    handshake(&["run", "34", "--inbox-dir", out_s]).expect_code(0);
    handshake(&["run", "34", "--inbox-dir", out_s]).expect_code(0);
    let ours = std::fs::read(out.join("alice.jsonl")).unwrap();
    for theirs in ["notes.jsonl", "bob.jsonl"] {
        std::fs::write(out.join(theirs), "precious\n").unwrap();
        handshake(&["run", "34", "--inbox-dir", out_s])
            .expect_code(2)
            .stderr_has(&format!("already holds inbox files no run wrote ({theirs})"))
            .ran_nothing();
        assert_eq!(std::fs::read_to_string(out.join(theirs)).unwrap(), "precious\n", "{theirs} kept");
        assert_eq!(std::fs::read(out.join("alice.jsonl")).unwrap(), ours, "the run's own left as it was");
        std::fs::remove_file(out.join(theirs)).unwrap();
    }
    handshake(&["run", "34", "--inbox-dir", out_s]).expect_code(0);
}

/// A hostile review: `--inbox-dir d` whose `inboxes` was a link to another
/// folder wrote the team's inboxes there, and the next run removed a file of
/// the user's in it; a folder holding `inbox/` (which audit reads before the
/// run's own files) was taken. Both are refused, untouched.
#[cfg(unix)]
#[test]
fn an_inbox_dir_with_a_linked_inboxes_or_another_inbox_folder_is_refused() {
    let dir = TempDir::new("inbox-linked");
    let precious = dir.0.join("precious");
    std::fs::create_dir_all(&precious).unwrap();
    std::fs::write(precious.join("keep.json"), "[]").unwrap();
    let d = dir.0.join("d");
    std::fs::create_dir_all(&d).unwrap();
    std::os::unix::fs::symlink(&precious, d.join("inboxes")).unwrap();
    handshake(&["run", "53", "--inbox-dir", d.to_str().unwrap()])
        .expect_code(2)
        .stderr_has("is a symbolic link or a file, not a folder")
        .ran_nothing();
    let listed: Vec<_> = std::fs::read_dir(&precious).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(listed, ["keep.json"], "nothing written there, nothing removed");
    let e = dir.0.join("e");
    std::fs::create_dir_all(e.join("inbox")).unwrap();
    std::fs::write(e.join("inbox/zed.jsonl"), "{}\n").unwrap();
    handshake(&["run", "32", "--inbox-dir", e.to_str().unwrap()]).expect_code(2).stderr_has("audit").ran_nothing();
    assert!(!e.join("alice.jsonl").exists(), "nothing written");
}
