//! Issue 39, points 9 to 14 and the audit part of 18: `audit` and the
//! files it reads and writes, attacked as a hostile user would. Each test
//! failed on the code before the fix.

mod common;

use common::binary::{handshake, TempDir};
use std::path::Path;

/// How many lines of a trace are events of `kind` (`request`, `expiry`).
fn count(trace: &str, kind: &str) -> usize {
    let text = std::fs::read_to_string(trace).unwrap_or_else(|e| panic!("{trace}: {e}"));
    let needle = format!("\"event\":\"{kind}\"");
    text.lines().filter(|l| l.contains(&needle)).count()
}

/// Runs `scenario` with a trace, writes the trace back as a scenario, runs
/// that with a trace too; returns both traces, the written file's text and
/// the replay's stdout.
fn replay(dir: &TempDir, scenario: &str) -> (String, String, String, String) {
    let (t, s, r) = (dir.path("t.jsonl"), dir.path("s.toml"), dir.path("r.jsonl"));
    let ran = handshake(&["run", scenario, "--trace", &t]);
    assert!(ran.code == 0 || ran.code == 1, "{}", ran.explain());
    let audited = handshake(&["audit", &t, "--to-scenario", &s]);
    assert!(audited.code == 0 || audited.code == 1, "{}", audited.explain());
    let replayed = handshake(&["run", &s, "--trace", &r]);
    assert!(replayed.code == 0 || replayed.code == 1, "{}", replayed.explain());
    (t, r, std::fs::read_to_string(&s).unwrap(), replayed.stdout)
}

/// Point 9: the written scenario makes the history's requests, no more: on
/// 47's trace its lead no longer reassigns on top of a scripted offer.
#[test]
fn p9_a_task_history_is_replayed_with_its_own_requests_and_expiries() {
    let dir = TempDir::new("p9-47");
    let (t, r, text, _) = replay(&dir, "scenarios/47-task-reassigned-after-timeout.toml");
    assert_eq!(count(&t, "request"), 2, "the history has two offers");
    assert_eq!(count(&r, "request"), count(&t, "request"), "the replay's requests\n{text}");
    assert_eq!(count(&r, "expiry"), count(&t, "expiry"), "the replay's expiries\n{text}");
}

/// Point 9: on 51's trace, the replay keeps `single-holder` (the lead passes
/// the offer on itself, so the witness sees one task across both offers).
#[test]
fn p9_a_replay_of_two_holders_still_sees_two_holders() {
    let dir = TempDir::new("p9-51");
    let (t, r, text, stdout) = replay(&dir, "scenarios/51-late-acceptance-defences-off.toml");
    assert_eq!(count(&r, "request"), count(&t, "request"), "{text}");
    assert!(stdout.contains("invariant single-holder"), "single-holder is lost:\n{stdout}\n{text}");
}

/// Point 9: where this lead would pass an offer on to another teammate than
/// the history's lead did (bob was busy there; nobody works in a replay),
/// the offer is a step, the lead's own reassignment is off, and the header
/// says exactly what the file then cannot show.
#[test]
fn p9_where_the_lead_would_pick_another_teammate_the_header_says_what_is_lost() {
    let dir = TempDir::new("p9-busy");
    let busy = dir.write(
        "busy.toml",
        r#"name = "busy-bob"
about = "alice stalls; bob is busy; the offer goes on to carol."
[policy]
task_timeout = "5s"
[[teammate]]
name = "alice"
[[teammate]]
name = "bob"
work = [{ write = "src/b.rs", steps = 40, step_time = "500ms" }]
[[teammate]]
name = "carol"
[[fault]]
kind = "stall"
agent = "alice"
at = "900ms"
until = "10s"
[[step]]
at = "1s"
do = "assign_task"
to = "alice"
task = "docs/intro.md"
label = "intro"
"#,
    );
    let (t, r, text, _) = replay(&dir, &busy);
    assert_eq!(count(&t, "request"), 2);
    assert_eq!(count(&r, "request"), 2, "{text}");
    assert!(text.contains("on_task_timeout = \"drop\""), "{text}");
    assert!(text.contains("# The lead's own reassignment is off"), "{text}");
    assert!(text.contains("single-holder takes each offer for a task of its own"), "{text}");
    // Carol's offer is made by a step, to carol, as in the history.
    assert!(text.contains("do = \"assign_task\"\nto = \"carol\""), "{text}");
}

/// Point 10: a verdict at 10 ms on a request opened at 5 s is refused,
/// naming the line and why, with exit 2.
#[test]
fn p10_a_history_whose_time_runs_backwards_is_refused() {
    let dir = TempDir::new("p10");
    let id = "6f1c7a52-34b5-4c7e-9d11-0a2b3c4d5e6f";
    let history = dir.write(
        "back.jsonl",
        &format!(
            "{{\"history\":\"handshake\",\"format\":1,\"team\":[{{\"name\":\"lead\"}},{{\"name\":\"alice\"}}]}}\n\
             {{\"t\":5000,\"event\":\"request\",\"request_id\":\"{id}\",\"kind\":\"shutdown\",\"from\":\"lead\",\"to\":\"alice\",\"deadline\":65000}}\n\
             {{\"t\":10,\"event\":\"verdict\",\"at\":\"lead\",\"request_id\":\"{id}\",\"kind\":\"shutdown\",\"from\":\"alice\",\"verdict\":\"applied:approved\",\"approve\":true}}\n"
        ),
    );
    let out = dir.path("s.toml");
    handshake(&["audit", &history, "--to-scenario", &out])
        .expect_code(2)
        .stderr_has("back.jsonl:3: time runs backwards")
        .stderr_has("after line 2 at 5000 ms")
        .stderr_has("nothing was judged");
    assert!(!Path::new(&out).exists(), "nothing is written");
    let json = handshake(&["audit", &history, "--format", "json"]);
    json.expect_code(2);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(doc["error"]["errors"][0]["line"], 3, "{}", json.stdout);
}

/// Point 11: a folder where no line could be read is refused (exit 2) as a
/// single unreadable file is, not passed with two warnings.
#[test]
fn p11_a_folder_where_nothing_could_be_read_is_refused() {
    let dir = TempDir::new("p11-junk");
    dir.write("inbox/alice.jsonl", "this is not JSON\n");
    dir.write("inbox/bob.jsonl", "[1, 2, 3]\n");
    let folder = dir.path("inbox");
    handshake(&["audit", &folder])
        .expect_code(2)
        .stderr_has("no line of its inbox files is a message")
        .stderr_has("2 lines that are not a JSON object")
        .stderr_has("nothing was judged")
        .ran_nothing();
    let empty = TempDir::new("p11-empty");
    empty.write("inbox/alice.jsonl", "");
    handshake(&["audit", &empty.path("inbox")]).expect_code(2).stderr_has("every one empty");
}

/// Point 11: a link in an inbox folder is not followed: `/etc/passwd` is
/// neither read nor reported on, and a folder of links alone is refused.
#[cfg(unix)]
#[test]
fn p11_a_link_in_an_inbox_folder_is_not_followed() {
    let dir = TempDir::new("p11-link");
    dir.write("inbox/lead.jsonl", "{\"type\":\"message\",\"from\":\"alice\",\"content\":\"hi\",\"timestamp\":1}\n");
    std::os::unix::fs::symlink("/etc/passwd", dir.0.join("inbox/passwd.jsonl")).unwrap();
    let ran = handshake(&["audit", &dir.path("inbox")]);
    ran.expect_code(0).stdout_has("passwd.jsonl is a symbolic link: only regular files inside the folder are read");
    assert!(!ran.stdout.contains("line 1 of passwd.jsonl"), "the link was read:\n{}", ran.explain());
    assert!(ran.stdout.contains("(1 message among 2 agents; 4 invariants unknown)"), "{}", ran.explain());
    let only = TempDir::new("p11-only-link");
    std::fs::create_dir_all(only.0.join("inbox")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", only.0.join("inbox/passwd.jsonl")).unwrap();
    handshake(&["audit", &only.path("inbox")]).expect_code(2).stderr_has("1 symbolic link skipped");
}

/// Point 12: `--to-scenario` refuses a link, as every other writer does,
/// and leaves the file it points to alone.
#[cfg(unix)]
#[test]
fn p12_to_scenario_does_not_write_through_a_link() {
    let dir = TempDir::new("p12");
    let precious = dir.write("precious.txt", "keep me");
    let link = dir.path("incident.toml");
    std::os::unix::fs::symlink(&precious, &link).unwrap();
    // Refused before the audit, as every command's outputs are tried
    // before the work (it said "nothing was written" after the verdict).
    handshake(&["audit", "tests/fixtures/reference/wrong-teammate", "--to-scenario", &link])
        .expect_code(2)
        .ran_nothing()
        .stderr_has("is a symbolic link")
        .stderr_has("nothing was judged");
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me");
}

/// Point 13: Ctrl-C during `run F --trace old.jsonl --svg old.svg` exits
/// 130 and leaves the previous outputs as they were, with no temporary file
/// behind; a run that completes replaces them whole.
#[cfg(unix)]
#[test]
fn p13_ctrl_c_leaves_the_previous_outputs_untouched() {
    use std::io::BufRead;
    let dir = TempDir::new("p13");
    // A team big enough that the run is still going when the signal comes.
    let long = dir.write(
        "long.toml",
        "name = \"long\"\nabout = \"a big team\"\n[[teammate]]\nname = \"worker\"\ncount = 30000\n\
         work = [{ write = \"out.txt\", steps = 20, step_time = \"500ms\" }]\n",
    );
    let (trace, svg) = (dir.write("old.jsonl", "old trace\n"), dir.write("old.svg", "old picture"));
    let mut child = std::process::Command::new(common::binary::bin())
        .args(["run", &long, "--trace", &trace, "--svg", &svg, "-v"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the binary starts");
    let stdout = child.stdout.take().expect("piped");
    let mut lines = std::io::BufReader::new(stdout).lines();
    // Signalled once the run has started printing its events.
    for line in lines.by_ref() {
        if line.expect("a line").contains("worker-1") {
            break;
        }
    }
    // SAFETY: sending SIGINT to a child process this test started.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    for _ in lines {}
    let status = child.wait().expect("it ends");
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert_eq!(std::fs::read_to_string(&trace).unwrap(), "old trace\n");
    assert_eq!(std::fs::read_to_string(&svg).unwrap(), "old picture");
    let left: Vec<String> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left behind: {left:?}");
    // Run to the end, the outputs are replaced whole.
    handshake(&["run", "scenarios/01-happy-shutdown.toml", "--trace", &trace]).expect_code(0);
    assert!(std::fs::read_to_string(&trace).unwrap().starts_with("{\"history\":\"handshake\""));
}

/// Point 14: a folder's total input is bounded: three links to one file,
/// each under the bound, together past it, are refused naming the bound
/// and the file (exit 2), not read until memory runs out.
#[cfg(unix)]
#[test]
fn p14_a_folder_past_its_total_bound_is_refused() {
    let dir = TempDir::new("p14-total");
    let line = format!(
        "{{\"type\":\"message\",\"from\":\"alice\",\"content\":\"{}\",\"timestamp\":1}}\n",
        "x".repeat(100_000)
    );
    let text = line.repeat(240); // 24 MB: three of them pass 64 MiB.
    dir.write("inbox/a.jsonl", &text);
    for name in ["b.jsonl", "c.jsonl"] {
        std::fs::hard_link(dir.0.join("inbox/a.jsonl"), dir.0.join("inbox").join(name)).unwrap();
    }
    handshake(&["audit", &dir.path("inbox")])
        .expect_code(2)
        .stderr_has("c.jsonl")
        .stderr_has("at most 64 MiB of a folder's inbox files are read in all")
        .stderr_has("nothing was judged");
}

/// Point 14: memory per input byte is bounded, as docs/audit.md says: the
/// peak a folder of answers costs, against the bytes it counts.
#[cfg(target_os = "linux")]
#[test]
fn p14_memory_per_input_byte_stays_within_the_stated_bound() {
    let dir = TempDir::new("p14-memory");
    let mut text = String::new();
    let mut counted = 0u64;
    let mut n = 0u64;
    while counted < 8 << 20 {
        n += 1;
        let line = format!(
            "{{\"type\":\"shutdown_response\",\"from\":\"alice\",\"request_id\":\"{n:08x}\",\"approve\":true,\"timestamp\":{n}}}\n"
        );
        counted += (line.len() as u64).max(handshake::history::inbox::LINE_FLOOR);
        text.push_str(&line);
    }
    dir.write("inbox/lead.jsonl", &text);
    let mut child = std::process::Command::new(common::binary::bin())
        .args(["audit", &dir.path("inbox")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the binary starts");
    // The child's own high-water mark, read while it runs: its rusage would
    // also count the test process it was spawned from (Linux keeps the
    // larger across the exec).
    let status = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0u64;
    let code = loop {
        if let Ok(text) = std::fs::read_to_string(&status) {
            let hwm = text.lines().find_map(|l| l.strip_prefix("VmHWM:"));
            if let Some(kb) = hwm.and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok()) {
                peak_kb = peak_kb.max(kb);
            }
        }
        if let Some(done) = child.try_wait().expect("waits") {
            break done.code();
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    assert_eq!(code, Some(1), "every answer is to an id never issued");
    assert!(peak_kb > 0, "no high-water mark read from {status}");
    let peak = peak_kb * 1024;
    let bound = handshake::history::inbox::MEMORY_PER_BYTE * counted + (32 << 20);
    assert!(peak <= bound, "peak {} MB for {} MB counted: past {} MB", peak >> 20, counted >> 20, bound >> 20);
}

/// Point 18 (its audit part): two requests sharing an id are two requests,
/// and the reuse is reported as such; bob's answer to his own request is not
/// "from bob, not from alice".
#[test]
fn p18_a_reused_request_id_is_reported_as_reused() {
    let dir = TempDir::new("p18");
    dir.write(
        "inbox/alice.jsonl",
        "{\"type\":\"shutdown_request\",\"from\":\"lead\",\"request_id\":\"abcd1234\",\"timestamp\":1}\n",
    );
    dir.write(
        "inbox/bob.jsonl",
        "{\"type\":\"shutdown_request\",\"from\":\"lead\",\"request_id\":\"abcd1234\",\"timestamp\":2}\n",
    );
    dir.write(
        "inbox/lead.jsonl",
        "{\"type\":\"shutdown_response\",\"from\":\"bob\",\"request_id\":\"abcd1234\",\"approve\":true,\"timestamp\":3}\n",
    );
    let ran = handshake(&["audit", &dir.path("inbox")]);
    ran.stdout_has("request id abcd1234 is used again, at bob.jsonl:1")
        .stdout_has("alice.jsonl:1 made it for a shutdown request from lead to alice");
    assert!(!ran.stdout.contains("it came from bob, not from alice"), "{}", ran.explain());
    let json = handshake(&["audit", &dir.path("inbox"), "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let alerts = doc["alerts"].as_array().expect("alerts");
    assert!(alerts.iter().any(|a| a.as_str().is_some_and(|a| a.contains("is used again"))), "{}", json.stdout);
}
