//! Claude Code's team folders (issue 40, in progress): the fixtures that
//! tests/fixtures/claude-code/make.py writes from the runtime's shapes are
//! read whole, every entry placed, nothing left unjudged that is known.

use handshake::history::claude::folder;
use handshake::history::claude::message::{Notice, Said};
use handshake::protocol::Kind;
use std::path::Path;

fn fixture(case: &str) -> folder::Reading {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code").join(case);
    assert!(folder::is_team_folder(&dir), "{case} is a team folder");
    folder::read(&dir, 64 << 20)
}

#[test]
fn the_clean_team_is_read_entry_by_entry_with_nothing_unjudged() {
    let r = fixture("clean-team");
    assert!(r.unjudged.is_empty(), "{:?}", r.unjudged);
    assert_eq!(r.team.lead.as_deref(), Some("team-lead"));
    assert_eq!(r.team.members.iter().filter(|(_, plan)| *plan).count(), 1, "bob plans first");
    let count = |f: &dyn Fn(&Said) -> bool| r.entries.iter().filter(|e| f(&e.said)).count();
    assert_eq!(count(&|s| matches!(s, Said::Request { kind: Kind::Shutdown, .. })), 2);
    assert_eq!(count(&|s| matches!(s, Said::Answer { kind: Kind::Shutdown, yes: true, .. })), 2);
    assert_eq!(count(&|s| matches!(s, Said::Request { kind: Kind::Plan, .. })), 1);
    assert_eq!(count(&|s| matches!(s, Said::Answer { kind: Kind::Plan, yes: true, .. })), 1);
    assert_eq!(count(&|s| matches!(s, Said::Notice(Notice::Terminated { .. }))), 2);
    assert_eq!(count(&|s| *s == Said::Plain), 1);
    // Each entry's recipient is its file's owner.
    assert!(r.entries.iter().all(|e| e.origin.starts_with(&format!("inboxes/{}.json[", e.to))));
}

#[test]
fn the_leftover_request_of_45874_is_answered_twice_under_one_id() {
    let r = fixture("45874-leftover-shutdown-kills-respawn");
    let ids: Vec<&str> = r
        .entries
        .iter()
        .filter_map(|e| match &e.said {
            Said::Answer { kind: Kind::Shutdown, id: Some(id), .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids.len(), 2);
    assert_eq!(ids[0], ids[1]);
}

/// `handshake audit FOLDER` on a fixture: its exit status and output.
fn audit(case: &str, extra: &[&str]) -> (i32, String) {
    let dir = format!("{}/tests/fixtures/claude-code/{case}", env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["audit", &dir, "--color", "never"])
        .args(extra)
        .output()
        .expect("handshake runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn audit_judges_the_clean_team_a_pass_and_45874_a_failure_with_the_entry_that_shows_it() {
    let (code, out) = audit("clean-team", &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("PASS") && out.contains("every invariant held"), "{out}");
    assert!(out.contains("read as a Claude Code 2.1 team folder"), "{out}");
    let (code, out) = audit("45874-leftover-shutdown-kills-respawn", &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("the request was already approved"), "{out}");
    // And the cause the report names: the respawn obeyed its predecessor's
    // request, left in its inbox.
    assert!(out.contains("which was sent to an earlier incarnation"), "{out}");
    assert!(out.contains("inboxes/team-lead.json:4:"), "the entry that shows it: {out}");
}

#[test]
fn an_entry_it_cannot_interpret_is_counted_on_the_verdict_line_and_strict_refuses_it() {
    let dir = std::env::temp_dir().join(format!("handshake-cc-unjudged-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("inboxes")).unwrap();
    let entries = r#"[{"from":"bob","text":"{\"type\":\"join_request\",\"requestId\":\"j-1\"}","timestamp":"2026-04-09T17:27:03.068Z","read":true},
        {"from":"bob","text":"hello","timestamp":"2026-04-09T17:27:04.068Z","read":true}]"#;
    std::fs::write(
        dir.join("config.json"),
        r#"{"name":"t","leadAgentId":"team-lead@t","members":[{"name":"team-lead"},{"name":"bob"}]}"#,
    )
    .unwrap();
    std::fs::write(dir.join("inboxes/team-lead.json"), entries).unwrap();
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args(["audit", &dir.display().to_string(), "--color", "never"])
            .args(extra)
            .output()
            .expect("handshake runs");
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let (code, out) = run(&[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1 entry not judged"), "the verdict line says so: {out}");
    assert!(out.contains("? inboxes/team-lead.json[1]: type \"join_request\" is not one this reader knows"), "{out}");
    assert!(!out.contains("\n      every invariant held\n"), "no bare pass: {out}");
    let (code, _) = run(&["--strict"]);
    assert_eq!(code, 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Each bug report's fixture and the verdict it must get: its exit status
/// and what the report must say (issue 40, point 4).
#[test]
fn each_bug_reports_fixture_gets_its_verdict() {
    let cases: &[(&str, i32, &[&str])] = &[
        (
            "clean-team",
            0,
            &[
                "every invariant held in what the folder shows",
                "unknown: no-silent-loss — an entry a whole-file rewrite lost",
                "generation: the messages are the camelCase shapes",
            ],
        ),
        (
            "45874-leftover-shutdown-kills-respawn",
            1,
            &[
                "matching-response",
                "the request was already approved",
                "witness: inboxes/committer.json:1, inboxes/team-lead.json:1, inboxes/team-lead.json:4",
                "current-incarnation",
                "committer (incarnation 1) answered [shutdown-1775755623068@committer], which was sent to an earlier \
                 incarnation",
                "witness: inboxes/committer.json:1, inboxes/team-lead.json:2, inboxes/team-lead.json:4",
            ],
        ),
        (
            "81464-teammate-shutdown-kills-the-lead",
            1,
            &[
                "alice sent a shutdown_request, which only the lead sends",
                "not by the requester alice",
                "witness: inboxes/team-lead.json:1, inboxes/team-lead.json:2",
            ],
        ),
        (
            "92244-delivered-up-to-four-times",
            1,
            &["inboxes/team-lead.json[3] repeats inboxes/team-lead.json[1]", "terminal-final"],
        ),
        (
            "53896-lost-to-a-concurrent-rewrite",
            0,
            &[
                "[shutdown-1775755624068@bob], asked of bob by team-lead, was never answered: open 8s",
                "unknown: single-terminal — 1 request still open when the files end",
            ],
        ),
        ("63684-lead-inbox-of-1065-entries", 0, &["inboxes/team-lead.json holds 1065 entries"]),
        (
            "84494-send-to-a-nonexistent-recipient",
            1,
            &[
                "alcie is not in the team",
                "no-silent-loss — message #1 to alcie",
                "witness: inboxes/alcie.json:1 alone",
            ],
        ),
        ("27265-plan-approved-then-contradicted", 1, &["terminal-final", "was approved and became rejected"]),
        (
            "32276-message-to-a-terminated-teammate",
            1,
            &[
                "no-silent-loss — message #4 to analyst was never delivered",
                "witness: inboxes/team-lead.json:2, inboxes/analyst.json:2",
            ],
        ),
    ];
    for (case, code, says) in cases {
        let (got, out) = audit(case, &[]);
        assert_eq!(got, *code, "{case}\n{out}");
        for s in *says {
            assert!(out.contains(s), "{case} must say {s:?}\n{out}");
        }
    }
}

#[test]
fn a_leads_transcript_is_judged_its_refused_sends_said() {
    let (code, out) = audit("transcripts/clean-lead.jsonl", &[]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("read as a Claude Code lead's session transcript") && out.contains("every invariant held"),
        "{out}"
    );
    assert!(out.contains("generation: the lead's calls are SendMessage {to, message}, as Claude Code 2.1.75"), "{out}");
    assert!(out.contains("unknown: no-silent-loss — a lead's transcript shows the lead's side only"), "{out}");
    let (code, out) = audit("transcripts/81464-lead.jsonl", &[]);
    assert_eq!(code, 1, "{out}");
    for says in [
        "line 1: alice sent a shutdown_request, which only the lead sends",
        "the runtime refused team-lead's shutdown_response to alice: shutdown_response must be sent to \"team-lead\"",
        "not by the requester alice",
        "line 4:",
    ] {
        assert!(out.contains(says), "{says:?}\n{out}");
    }
}

#[test]
fn only_regular_files_inside_the_folder_are_read_within_the_bound_and_nothing_is_written_there() {
    let dir = std::env::temp_dir().join(format!("handshake-cc-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("inboxes")).unwrap();
    let entry = r#"[{"from":"bob","text":"hello","timestamp":"2026-04-09T17:27:03.068Z","read":true}]"#;
    std::fs::write(dir.join("inboxes/team-lead.json"), entry).unwrap();
    std::fs::write(dir.join("inboxes/zed.json"), "[7]").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", dir.join("inboxes/passwd.json")).unwrap();
    let before: Vec<(String, Vec<u8>, std::time::SystemTime)> = std::fs::read_dir(dir.join("inboxes"))
        .unwrap()
        .flatten()
        .filter(|e| !e.file_type().unwrap().is_symlink())
        .map(|e| {
            let p = e.path();
            (p.display().to_string(), std::fs::read(&p).unwrap(), p.metadata().unwrap().modified().unwrap())
        })
        .collect();
    let r = folder::read(&dir, 1 << 20);
    let said: Vec<String> = r.unjudged.iter().map(|(w, why)| format!("{w}: {why}")).collect();
    assert!(said.iter().any(|s| s.starts_with("inboxes/passwd.json: a symbolic link")), "{said:?}");
    assert!(said.iter().any(|s| s.starts_with("inboxes/zed.json[1]: an entry that is not a JSON object")), "{said:?}");
    assert_eq!(r.entries.len(), 1, "the rest still judged");
    // Past the bound in all, a file is not read, and that is said.
    let small = folder::read(&dir, 40);
    assert!(
        small.unjudged.iter().any(|(w, why)| w == "inboxes/team-lead.json" && why.contains("at most")),
        "{:?}",
        small.unjudged
    );
    let (code, out) = {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args(["audit", &dir.display().to_string(), "--color", "never"])
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("root:"), "nothing of the link's target is read: {out}");
    for (path, bytes, mtime) in before {
        let p = std::path::Path::new(&path);
        assert_eq!(std::fs::read(p).unwrap(), bytes, "{path} unchanged");
        assert_eq!(p.metadata().unwrap().modified().unwrap(), mtime, "{path} untouched");
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "nothing written into the team folder");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `handshake watch` on a folder the test writes as the runtime does:
/// each inbox rewritten whole, `read` flipped, the folder deleted at the
/// end. The violation is printed while the watch goes on, the deleted
/// folder loses nothing, and the kept history is judged the same by audit.
#[test]
fn watch_follows_a_live_folder_and_says_each_violation_before_the_next_entry() {
    use std::io::BufRead;
    let root = std::env::temp_dir().join(format!("handshake-cc-watch-{}", std::process::id()));
    let dir = root.join("team");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(dir.join("inboxes")).unwrap();
    let config = r#"{"name":"w","leadAgentId":"team-lead@w","members":[{"name":"team-lead"},{"name":"bob"}]}"#;
    std::fs::write(dir.join("config.json"), config).unwrap();
    std::fs::write(dir.join("inboxes/team-lead.json"), "[]").unwrap();
    let trace = root.join("kept.jsonl");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["watch", &dir.display().to_string(), "--interval", "100ms", "--for", "8s", "--color", "never"])
        .args(["--trace", &trace.display().to_string()])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("watch starts");
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let wait_for = |what: &str, secs: u64| {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(secs);
        while let Ok(line) = rx.recv_timeout(until.saturating_duration_since(std::time::Instant::now())) {
            if line.contains(what) {
                return line;
            }
        }
        panic!("watch never said {what:?}");
    };
    wait_for("watching", 5);
    let request = r#"{"from":"team-lead","text":"{\"type\":\"shutdown_request\",\"requestId\":\"shutdown-1@bob\",\"from\":\"team-lead\"}","timestamp":"2026-04-09T17:27:03.068Z","read":READ}"#;
    let approve = r#"{"from":"bob","text":"{\"type\":\"shutdown_approved\",\"requestId\":\"shutdown-1@bob\",\"from\":\"bob\"}","timestamp":"TIME","read":true}"#;
    let write = |name: &str, entries: &[String]| {
        // Whole, as the runtime rewrites a file: written beside it, renamed.
        let tmp = dir.join(format!("inboxes/.{name}.tmp"));
        std::fs::write(&tmp, format!("[{}]", entries.join(","))).unwrap();
        std::fs::rename(tmp, dir.join(format!("inboxes/{name}"))).unwrap();
    };
    write("bob.json", &[request.replace("READ", "false")]);
    write("bob.json", &[request.replace("READ", "true")]);
    write("team-lead.json", &[approve.replace("TIME", "2026-04-09T17:27:04.068Z")]);
    // The same approval again, a second later: answered twice.
    let twice =
        [approve.replace("TIME", "2026-04-09T17:27:04.068Z"), approve.replace("TIME", "2026-04-09T17:27:05.068Z")];
    write("team-lead.json", &twice);
    let said = wait_for("✗ invariant", 5);
    assert!(said.contains("already approved") || said.contains("approved and became approved"), "{said}");
    // The session ends and the runtime deletes the folder: nothing is lost.
    std::fs::remove_dir_all(&dir).unwrap();
    // It ends by itself (--for 8s) with the summary of all it kept.
    let end = wait_for("kept", 15);
    assert!(end.starts_with("FAIL") && end.contains("3 entries kept"), "{end}");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1));
    let audit = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["audit", &trace.display().to_string()])
        .output()
        .unwrap();
    assert_eq!(audit.status.code(), Some(1), "the kept history is judged the same later");
    let _ = std::fs::remove_dir_all(&root);
}

/// Whole-second stamps tie often. An answer in the same millisecond as its
/// request is judged after it, whichever file sorts first: `zed`'s request
/// after `team-lead`'s (or `lead`'s) inbox by name was judged an answer to
/// an id never issued.
#[test]
fn an_answer_stamped_with_its_requests_millisecond_is_judged_after_it_in_both_formats() {
    let root = std::env::temp_dir().join(format!("handshake-cc-tie-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let team = root.join("team");
    std::fs::create_dir_all(team.join("inboxes")).unwrap();
    let entry = |from: &str, json: &str| {
        let text = serde_json::Value::String(json.to_string());
        format!(r#"[{{"from":"{from}","text":{text},"timestamp":"2026-04-09T17:00:00.000Z","read":true}}]"#)
    };
    let ask = r#"{"type":"shutdown_request","requestId":"shutdown-1@zed","from":"team-lead"}"#;
    let yes = r#"{"type":"shutdown_approved","requestId":"shutdown-1@zed","from":"zed"}"#;
    std::fs::write(team.join("inboxes/zed.json"), entry("team-lead", ask)).unwrap();
    std::fs::write(team.join("inboxes/team-lead.json"), entry("zed", yes)).unwrap();
    let reference = root.join("reference");
    std::fs::create_dir_all(&reference).unwrap();
    let line = |j: &str| format!("{j}\n");
    let ask = r#"{"type": "shutdown_request", "from": "lead", "content": "", "timestamp": 1796177150.0, "request_id": "14c6f946"}"#;
    let yes = r#"{"type": "shutdown_response", "from": "zed", "content": "", "timestamp": 1796177150.0, "request_id": "14c6f946", "approve": true}"#;
    std::fs::write(reference.join("zed.jsonl"), line(ask)).unwrap();
    std::fs::write(reference.join("lead.jsonl"), line(yes)).unwrap();
    for dir in [&team, &reference] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args(["audit", &dir.display().to_string(), "--color", "never"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.starts_with("PASS"), "{}: {text}", dir.display());
        assert_eq!(out.status.code(), Some(0), "{text}");
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// `handshake watch` with `--trace FILE` it cannot write refuses at once,
/// not when the watch ends; a reference folder of which nothing can be
/// judged ends with exit 2 and says no trace was written.
#[test]
fn watch_says_a_trace_it_cannot_write_before_watching_and_exits_2_on_what_it_cannot_judge() {
    let root = std::env::temp_dir().join(format!("handshake-cc-watch-exit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let clean = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code/clean-team");
    let nowhere = root.join("no-such-folder/kept.jsonl");
    let started = std::time::Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["watch", &clean.display().to_string(), "--for", "30s", "--trace", &nowhere.display().to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "refused before watching");
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing was watched"));
    // The trace beside the folder watched, not in it: one inside it would
    // be read as one of its inbox files (refused since a hostile review).
    let watched = root.join("inboxes");
    std::fs::create_dir_all(&watched).unwrap();
    std::fs::write(watched.join("a.jsonl"), "garbage\n").unwrap();
    let trace = root.join("kept.jsonl");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["watch", &watched.display().to_string(), "--for", "1s", "--color", "never"])
        .args(["--trace", &trace.display().to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("no trace written") && !trace.exists(), "{text}");
    let _ = std::fs::remove_dir_all(&root);
}

/// An inbox caught half written, and left so for a moment, is not judged
/// as it stands: the lead's answer without bob's request would be said to
/// answer an id never issued. What was kept is judged once it parses.
#[test]
fn watch_waits_for_an_inbox_left_half_written_before_judging() {
    use std::io::Read;
    let root = std::env::temp_dir().join(format!("handshake-cc-watch-half-{}", std::process::id()));
    let dir = root.join("team");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(dir.join("inboxes")).unwrap();
    let entry = |from: &str, json: &str, at: &str| {
        let text = serde_json::Value::String(json.to_string());
        format!(r#"[{{"from":"{from}","text":{text},"timestamp":"{at}","read":true}}]"#)
    };
    let ask = entry("team-lead", r#"{"type":"shutdown_request","requestId":"shutdown-1@bob"}"#, "2026-04-09T17:00:00Z");
    let yes = entry("bob", r#"{"type":"shutdown_approved","requestId":"shutdown-1@bob"}"#, "2026-04-09T17:00:05Z");
    std::fs::write(dir.join("inboxes/team-lead.json"), yes).unwrap();
    std::fs::write(dir.join("inboxes/bob.json"), &ask[..40]).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["watch", &dir.display().to_string(), "--for", "3s", "--interval", "100ms", "--color", "never"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    let tmp = dir.join("inboxes/.bob.tmp");
    std::fs::write(&tmp, &ask).unwrap();
    std::fs::rename(tmp, dir.join("inboxes/bob.json")).unwrap();
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let status = child.wait().unwrap();
    assert!(!out.contains('✗'), "nothing the files showed is broken: {out}");
    assert!(out.contains("PASS") && out.contains("2 entries kept"), "{out}");
    assert_eq!(status.code(), Some(0), "{out}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A name, an id or a file name in a team folder is the files' own text:
/// a terminal escape or a newline in it is printed escaped by audit and by
/// watch, so it can neither drive the terminal nor forge a report's line.
#[test]
fn audit_and_watch_print_the_files_control_characters_escaped() {
    let dir = std::env::temp_dir().join(format!("handshake-cc-controls-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("inboxes")).unwrap();
    let from = "eve\u{1b}]0;pwned\u{7}\nPASS everything";
    let text = serde_json::Value::String(r#"{"type":"shutdown_request","requestId":"s-2@bob"}"#.into());
    let entry =
        serde_json::json!([{"from": from, "text": text, "timestamp": "2026-04-09T17:00:01.000Z", "read": true}]);
    std::fs::write(dir.join("inboxes/bob.json"), entry.to_string()).unwrap();
    std::fs::write(dir.join("inboxes/x\u{1b}[2Jy.json"), "nope").unwrap();
    for args in [vec!["audit"], vec!["watch", "--for", "3s", "--interval", "100ms"]] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args(&args)
            .arg(&dir)
            .args(["--color", "never"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'), "{args:?}: {text:?}");
        assert!(!text.lines().any(|l| l.starts_with("PASS everything")), "{args:?}: {text}");
        assert!(text.contains(r"eve\u{1b}]0;pwned\u{7}\nPASS everything"), "{args:?}: {text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// What `watch --trace` keeps of a team folder is audited later as the
/// folder was: the invariants the files cannot decide stay unknown, an
/// entry that could not be read stays said (no bare pass), and
/// `--to-scenario` replays it in Claude Code's mailbox world.
#[test]
fn a_watchs_trace_is_audited_as_the_folder_was() {
    let root = std::env::temp_dir().join(format!("handshake-cc-trace-context-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join("team");
    std::fs::create_dir_all(dir.join("inboxes")).unwrap();
    let entries = r#"[{"from":"bob","text":"{\"type\":\"join_request\",\"requestId\":\"j-1\"}","timestamp":"2026-04-09T17:27:03.068Z","read":true},
        {"from":"bob","text":"hello","timestamp":"2026-04-09T17:27:04.068Z","read":true}]"#;
    std::fs::write(
        dir.join("config.json"),
        r#"{"name":"t","leadAgentId":"team-lead@t","members":[{"name":"team-lead"},{"name":"bob"}]}"#,
    )
    .unwrap();
    std::fs::write(dir.join("inboxes/team-lead.json"), entries).unwrap();
    let handshake = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake")).args(args).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let (dir_s, trace) = (dir.display().to_string(), root.join("kept.jsonl").display().to_string());
    let (code, out) = handshake(&["watch", &dir_s, "--for", "1s", "--trace", &trace, "--color", "never"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("invariants unknown") && out.contains("1 entry not judged"), "{out}");
    let standing = |out: &str| out.lines().find(|l| l.trim_start().starts_with("invariants:")).map(str::to_string);
    let (_, of_folder) = handshake(&["audit", &dir_s, "--color", "never"]);
    let (code, of_trace) = handshake(&["audit", &trace, "--color", "never"]);
    assert_eq!(code, Some(0), "{of_trace}");
    assert_eq!(standing(&of_trace), standing(&of_folder), "{of_trace}\n{of_folder}");
    assert!(standing(&of_trace).is_some_and(|s| s.contains("unknown")), "{of_trace}");
    assert!(of_trace.contains("1 entry not judged") && of_trace.contains("join_request"), "{of_trace}");
    let scenario = root.join("replay.toml").display().to_string();
    let (code, out) = handshake(&["audit", &trace, "--to-scenario", &scenario]);
    assert!(code == Some(0) || code == Some(1), "{out}");
    let toml = std::fs::read_to_string(&scenario).unwrap();
    assert!(toml.contains("mailbox = \"claude-code\""), "{toml}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A folder whose entries span more than a scenario may run (a stray entry
/// stamped 1970) gets no replay, said as the files' doing, not a bug.
#[test]
fn a_history_longer_than_a_run_gets_no_scenario_and_says_why() {
    let dir = std::env::temp_dir().join(format!("handshake-cc-span-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("inboxes")).unwrap();
    let entries = r#"[{"from":"team-lead","text":"hi","timestamp":0,"read":true},
        {"from":"team-lead","text":"hi again","timestamp":1775755624068,"read":true}]"#;
    std::fs::write(dir.join("inboxes/bob.json"), entries).unwrap();
    let scenario = dir.with_extension("toml");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["audit", &dir.display().to_string(), "--to-scenario", &scenario.display().to_string()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("longer than a scenario may run") && !err.contains("a bug"), "{err}");
    assert!(!scenario.exists(), "nothing written");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Only the team folder's own files are read: an `inboxes` that links to a
/// folder elsewhere, or a `config.json` that links to a file elsewhere, is
/// said and skipped, with what it is.
#[cfg(unix)]
#[test]
fn a_linked_inboxes_folder_or_config_is_said_and_not_read() {
    let root = std::env::temp_dir().join(format!("handshake-cc-linked-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (elsewhere, team) = (root.join("elsewhere"), root.join("team"));
    std::fs::create_dir_all(elsewhere.join("inboxes")).unwrap();
    std::fs::create_dir_all(&team).unwrap();
    let clean = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code/clean-team");
    for f in std::fs::read_dir(clean.join("inboxes")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, elsewhere.join("inboxes").join(f.file_name().unwrap())).unwrap();
    }
    std::fs::copy(clean.join("config.json"), elsewhere.join("config.json")).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("inboxes"), team.join("inboxes")).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("config.json"), team.join("config.json")).unwrap();
    let r = folder::read(&team, 64 << 20);
    assert!(r.entries.is_empty(), "nothing read through the link");
    let said: Vec<&str> =
        r.unjudged.iter().map(|(place, why)| if why.contains("symbolic link") { place.as_str() } else { "" }).collect();
    assert_eq!(said, ["config.json", "inboxes"], "{:?}", r.unjudged);
    let _ = std::fs::remove_dir_all(&root);
}

/// A scratch team folder under the system's temp folder, removed on drop.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("handshake-cc-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("inboxes")).unwrap();
        Scratch(dir)
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.0.join(name), text).unwrap();
    }

    fn audit(&self) -> (i32, String, String) {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args(["audit", &self.0.display().to_string(), "--color", "never"])
            .output()
            .expect("handshake runs");
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const CONFIG: &str = r#"{"name":"t","leadAgentId":"team-lead@t","members":[{"name":"team-lead"},{"name":"alice"}]}"#;

/// A folder in which no message could be read (every inbox junk, every
/// inbox empty, no inboxes at all) was a PASS with every invariant
/// "held", exit 0: nothing judged is no pass. It is refused, as an empty
/// reference inbox folder is, with the reasons it could not be read.
#[test]
fn a_team_folder_with_nothing_to_judge_is_refused_not_passed() {
    let junk = Scratch::new("junk");
    junk.write("inboxes/team-lead.json", "garbage\n");
    junk.write("inboxes/alice.json", "{\"a\":1}\n");
    let (code, out, err) = junk.audit();
    assert_eq!(code, 2, "{out}{err}");
    assert!(!out.contains("PASS"), "{out}");
    assert!(err.contains("there is nothing to judge") && err.contains("inboxes/alice.json: not a JSON array"), "{err}");

    let empty = Scratch::new("empty");
    empty.write("config.json", CONFIG);
    empty.write("inboxes/alice.json", "[]");
    let (code, out, err) = empty.audit();
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("no message in any inbox file and no task"), "{err}");

    // One message is something to judge.
    empty.write(
        "inboxes/alice.json",
        r#"[{"from":"team-lead","text":"hello","timestamp":"2026-04-09T17:27:14.068Z","read":true}]"#,
    );
    let (code, out, _) = empty.audit();
    assert_eq!(code, 0, "{out}");
}

/// Only `inboxes/<agent>.json` were read, and any other file there was
/// passed over unsaid: an inbox saved as `alice.JSON` or `team-lead.jsonl`
/// held an answer to an id nobody issued, and the folder passed. Such a
/// file is now named as not read; the runtime's locks are not.
#[test]
fn a_file_in_inboxes_that_is_not_an_inbox_is_named_not_passed_over() {
    let team = Scratch::new("names");
    team.write("config.json", CONFIG);
    let answer = r#"[{"from":"alice","text":"{\"type\":\"shutdown_approved\",\"requestId\":\"nope\"}","timestamp":"2026-04-09T17:27:14.068Z","read":true}]"#;
    team.write("inboxes/team-lead.jsonl", answer);
    team.write("inboxes/alice.JSON", answer);
    team.write(
        "inboxes/alice.json",
        r#"[{"from":"team-lead","text":"hello","timestamp":"2026-04-09T17:27:14.068Z","read":true}]"#,
    );
    team.write("inboxes/alice.json.lock", "");
    std::fs::create_dir_all(team.0.join("inboxes/team-lead.json.lock")).unwrap();
    let r = folder::read(&team.0, 64 << 20);
    let places: Vec<&str> = r.unjudged.iter().map(|(place, _)| place.as_str()).collect();
    assert_eq!(places, ["inboxes/alice.JSON", "inboxes/team-lead.jsonl"], "{:?}", r.unjudged);
    let (code, out, _) = team.audit();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("? inboxes/alice.JSON: not an inbox file") && out.contains("no clean bill"), "{out}");
}

/// An entry "from": "system" other than the runtime's teammate_terminated
/// notice (a request, an answer to an id nobody issued) became a note
/// never shown: the folder passed with no word of it. Each is listed as
/// not judged, and the verdict is no clean bill.
#[test]
fn an_entry_from_system_that_is_not_a_known_notice_is_said_not_judged() {
    let team = Scratch::new("system");
    team.write("config.json", CONFIG);
    let stamp = "2026-04-09T17:27:14.068Z";
    let request = r#"{\"type\":\"shutdown_request\",\"requestId\":\"shutdown-1@alice\",\"reason\":\"done\"}"#;
    let answer = r#"{\"type\":\"shutdown_approved\",\"requestId\":\"shutdown-999@bob\"}"#;
    team.write(
        "inboxes/alice.json",
        &format!(
            r#"[{{"from":"system","text":"{request}","timestamp":"{stamp}","read":true}},
                {{"from":"team-lead","text":"hello","timestamp":"{stamp}","read":true}}]"#
        ),
    );
    team.write(
        "inboxes/team-lead.json",
        &format!(r#"[{{"from":"system","text":"{answer}","timestamp":"{stamp}","read":true}}]"#),
    );
    let (code, out, err) = team.audit();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(r#"? inboxes/alice.json[1]: a shutdown request from "system""#), "{out}");
    assert!(out.contains(r#"? inboxes/team-lead.json[1]: a shutdown answer from "system""#), "{out}");
    assert!(out.contains("2 entries not judged") && out.contains("no clean bill"), "{out}");
}

/// Each inbox entry counts as at least 128 bytes of the folder's bound,
/// as a reference inbox's line does: a 20 MB file of ten million `0,`
/// entries was ten million entries kept (7.9 GB with --format json).
/// Past the bound, entries are counted and said, not kept.
#[test]
fn tiny_entries_count_against_the_folder_bound_and_those_past_it_are_counted_not_kept() {
    let team = Scratch::new("tiny");
    team.write("config.json", CONFIG);
    team.write("inboxes/alice.json", &format!("[{}]", vec!["0"; 25].join(",")));
    let r = folder::read(&team.0, 10 * 128);
    assert_eq!(r.unjudged.len(), 11, "ten read (each not an object), the rest counted: {:?}", r.unjudged);
    let (place, why) = r.unjudged.last().expect("the count");
    assert_eq!(place, "inboxes/alice.json");
    assert!(why.starts_with("15 entries past the bound"), "{why}");
    assert!(r.bounded, "the read says it stopped at its bound");
    assert!(!folder::read(&team.0, 25 * 128).bounded, "within the bound, nothing is past it");
}

/// A hostile review: a folder whose read stopped at its 64 MiB bound
/// exited 0 when nothing broke in what was read. Exit 3, as every command
/// that stops at a bound, and the JSON says so.
#[test]
fn a_folder_read_up_to_its_bound_with_nothing_broken_exits_3_not_0() {
    let team = Scratch::new("bound");
    let stamp = "2026-02-01T10:00:00.000Z";
    team.write(
        "inboxes/team-lead.json",
        &format!(r#"[{{"from":"alice","text":"hello","timestamp":"{stamp}","read":true}}]"#),
    );
    // 600,000 entries of at least 128 bytes each: past the 64 MiB bound.
    team.write("inboxes/zed.json", &format!("[{}]", vec!["0"; 600_000].join(",")));
    let (code, out, err) = team.audit();
    assert_eq!(code, 3, "{out}{err}");
    // Its header too: a bounded read never reads PASS (a later review).
    assert!(out.starts_with("STOPPED  "), "{out}");
    assert!(out.contains("stopped at the inbox files' bound (64 MiB read at most)"), "{out}");
    assert!(out.contains("no clean bill"), "{out}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["audit", &team.0.display().to_string(), "--format", "json"])
        .output()
        .expect("handshake runs");
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("stopped at the inbox files' bound"));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["stopped_at_bound"], true, "{doc}");
    // As the text: STOPPED, not PASS (a Claude Code user's review); that
    // nothing broke in what was read is the empty list of violations.
    assert_eq!(doc["passed"], false, "{doc}");
    assert_eq!(doc["violations"], serde_json::json!([]), "nothing broke in what was read");
}

/// A hostile review: a request still flagged unread in alice's inbox (a
/// mark the runtime failed to make, #92244, or one it had not made yet)
/// was left out whole, so alice's answer to it, read by the lead, was
/// judged an answer to "an id it never issued": a FAIL the files do not
/// show. The request is opened (its asker made it); its delivery stays
/// unjudged, and the verdict says so.
#[test]
fn an_answer_to_a_request_still_flagged_unread_answers_an_id_that_was_issued() {
    let team = Scratch::new("unread");
    team.write("config.json", CONFIG);
    let ask = r#"{\"type\":\"shutdown_request\",\"requestId\":\"shutdown-1775755633068@alice\",\"from\":\"team-lead\",\"reason\":\"done\"}"#;
    let yes = r#"{\"type\":\"shutdown_approved\",\"requestId\":\"shutdown-1775755633068@alice\",\"from\":\"alice\"}"#;
    team.write(
        "inboxes/alice.json",
        &format!(r#"[{{"from":"team-lead","text":"{ask}","timestamp":"2026-04-09T17:27:13.068Z","read":false}}]"#),
    );
    team.write(
        "inboxes/team-lead.json",
        &format!(r#"[{{"from":"alice","text":"{yes}","timestamp":"2026-04-09T17:27:14.068Z","read":true}}]"#),
    );
    let (code, out, err) = team.audit();
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("never issued"), "{out}");
    assert!(
        out.contains("? inboxes/alice.json[1]: not yet read by its owner") && out.contains("no clean bill"),
        "{out}"
    );
    // Answered by bob instead, the answer is still judged, and fails.
    team.write(
        "inboxes/team-lead.json",
        &format!(r#"[{{"from":"bob","text":"{yes}","timestamp":"2026-04-09T17:27:14.068Z","read":true}}]"#),
    );
    let (code, out, _) = team.audit();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("✗ invariant matching-response"), "{out}");
}

/// A session resumed many times opens with many `summary` lines before its
/// conversation: with 70 of them the transcript was taken for a history of
/// ours and refused ("needs \"t\""). It is read as the transcript it is.
#[test]
fn a_transcript_that_opens_with_many_summaries_is_still_a_transcript() {
    use handshake::history::claude::transcript::{looks_like, LOOKED_AT};
    let lead = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code/transcripts/clean-lead.jsonl"),
    )
    .unwrap();
    let summaries: String = (0..LOOKED_AT + 6)
        .map(|i| format!("{{\"type\":\"summary\",\"summary\":\"s\",\"leafUuid\":\"u{i}\"}}\n"))
        .collect();
    assert!(looks_like(&format!("{summaries}{lead}")));
    // Lines that are all typed, none of them the runtime's, are not one.
    let other: String = (0..LOOKED_AT + 6).map(|_| "{\"type\":\"x\"}\n").collect();
    assert!(!looks_like(&other));
}

/// A `read` flag that is not true or false ("false", 0) was taken as
/// delivered, and a `text` written as an object was said to be missing
/// ("no \"text\""). Each is now said for what it is, and not judged.
#[test]
fn an_entry_whose_fields_are_of_another_kind_is_said_so_and_not_judged() {
    let team = Scratch::new("kinds");
    team.write("config.json", CONFIG);
    let stamp = "2026-04-09T17:27:14.068Z";
    team.write(
        "inboxes/alice.json",
        &format!(
            r#"[{{"from":"team-lead","text":"hello","timestamp":"{stamp}","read":"false"}},
                {{"from":"team-lead","text":{{"type":"shutdown_request"}},"timestamp":"{stamp}","read":true}},
                {{"from":7,"text":"hi","timestamp":"{stamp}","read":true}},
                {{"from":"team-lead","text":"fine","timestamp":"{stamp}","read":true}}]"#
        ),
    );
    let r = folder::read(&team.0, 64 << 20);
    let why: Vec<(&str, &str)> = r.unjudged.iter().map(|(p, w)| (p.as_str(), w.as_str())).collect();
    assert_eq!(
        why,
        [
            ("inboxes/alice.json[1]", "its \"read\" is not true or false: whether it was delivered is unknown"),
            ("inboxes/alice.json[2]", "its \"text\" is not a string"),
            ("inboxes/alice.json[3]", "its \"from\" is not a string"),
        ]
    );
    assert_eq!(r.entries.len(), 1, "the one well-formed entry is read");
}

/// A hostile review: a folder of session transcripts (as
/// `~/.claude/projects/<project>/` holds them) was read as the reference
/// course's inbox files and refused for a missing "from". It is refused
/// as what it is, naming a transcript to audit.
#[test]
fn a_folder_of_transcripts_is_refused_as_transcripts_not_read_as_inboxes() {
    let dir = format!("{}/tests/fixtures/claude-code/transcripts", env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["audit", &dir, "--color", "never"])
        .output()
        .expect("handshake runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("holds Claude Code session transcripts (81464-lead.jsonl, clean-lead.jsonl)"), "{err}");
    assert!(err.contains(&format!("audit {dir}/81464-lead.jsonl")), "{err}");
    assert!(!err.contains("\"from\""), "not read as inboxes: {err}");
    // Mixed with a reference inbox, the inbox is not called a transcript.
    let mixed = Scratch::new("mixed");
    let transcript = std::fs::read_to_string(format!("{dir}/clean-lead.jsonl")).expect("the fixture");
    mixed.write("zz-lead.jsonl", &transcript);
    mixed.write("alice.jsonl", r#"{"from":"lead","to":"alice","type":"message","content":"hi","timestamp":1.0}"#);
    let (code, _, err) = mixed.audit();
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("transcripts (zz-lead.jsonl) beside other *.jsonl files (alice.jsonl)"), "{err}");
}

/// An inbox entry as Claude Code writes one: `text` is `said` as JSON text.
fn entry(from: &str, said: &serde_json::Value, at: &str, read: bool) -> serde_json::Value {
    serde_json::json!({"from": from, "text": said.to_string(), "timestamp": at, "read": read})
}

fn shutdown_request(id: &str) -> serde_json::Value {
    serde_json::json!({"type": "shutdown_request", "requestId": id, "from": "team-lead", "reason": "done"})
}

fn shutdown_approved(id: &str) -> serde_json::Value {
    serde_json::json!({"type": "shutdown_approved", "requestId": id, "from": "alice"})
}

fn inbox(entries: &[serde_json::Value]) -> String {
    serde_json::Value::Array(entries.to_vec()).to_string()
}

/// A hostile review: an answer whose request lay in an inbox that could
/// not be read (cut short mid-write, past the bound, unreadable) was judged
/// "an id never issued", a FAIL the files cannot show; past the bound it
/// exited 1 where the docs promise 3. It is now not judged, said why.
#[test]
fn an_answer_whose_request_is_in_an_inbox_not_read_is_not_judged() {
    let f = Scratch::new("unread-request");
    f.write("config.json", CONFIG);
    let approved = entry("alice", &shutdown_approved("shutdown-1@alice"), "2026-04-09T17:27:14.068Z", true);
    f.write("inboxes/team-lead.json", &inbox(&[approved]));
    // Alice's inbox, where the request is, cut short as a write in hand leaves it.
    let request = inbox(&[entry("team-lead", &shutdown_request("shutdown-1@alice"), "2026-04-09T17:27:13.068Z", true)]);
    f.write("inboxes/alice.json", &request[..request.len() / 2]);
    let (code, out, err) = f.audit();
    assert!(!out.contains("never issued"), "{out}{err}");
    assert!(
        err.contains("could not be read; not judged") || out.contains("could not be read; not judged"),
        "{out}{err}"
    );
    assert_ne!(code, 1, "{out}{err}");
}

/// A hostile review: Claude Code deletes an entry once delivered (by
/// 2.1.220), so a folder audited mid-session holds answers whose requests
/// are gone, and each was judged "an id never issued". An answer is judged
/// so only when its answerer's inbox, read whole, holds what the asker sent
/// it and the entries carry no `msg_id`.
#[test]
fn an_answer_whose_request_a_drained_inbox_deleted_is_not_judged_a_forgery_still_is() {
    let hello = |to_lead: bool| {
        let who = if to_lead { "alice" } else { "team-lead" };
        entry(who, &serde_json::json!("hello"), "2026-04-09T17:27:10.068Z", true)
    };
    let approved = entry("alice", &shutdown_approved("shutdown-1@alice"), "2026-04-09T17:27:14.068Z", true);
    // Drained: alice's inbox holds nothing from the lead.
    let drained = Scratch::new("drained");
    drained.write("config.json", CONFIG);
    drained.write("inboxes/team-lead.json", &inbox(&[hello(true), approved.clone()]));
    drained.write("inboxes/alice.json", "[]");
    let (code, out, err) = drained.audit();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("holds nothing from team-lead") && out.contains("not judged"), "{out}");
    assert!(!out.contains("never issued"), "{out}");

    // The draining generation, told by msg_id: alice's inbox holds a later
    // message from the lead, not the request it deleted.
    let with_msg_id = |mut e: serde_json::Value, id: &str| {
        e["msg_id"] = serde_json::json!(id);
        e
    };
    let gen = Scratch::new("msg-id");
    gen.write("config.json", CONFIG);
    gen.write("inboxes/team-lead.json", &inbox(&[with_msg_id(approved.clone(), "m2")]));
    gen.write("inboxes/alice.json", &inbox(&[with_msg_id(hello(false), "m1")]));
    let (code, out, err) = gen.audit();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("carry msg_id") && out.contains("not judged"), "{out}");
    assert!(!out.contains("fields this reader does not use"), "msg_id is read: {out}");

    // Kept entries, the request there under another id: a forgery, judged.
    let forged = Scratch::new("forged");
    forged.write("config.json", CONFIG);
    forged.write("inboxes/team-lead.json", &inbox(&[approved]));
    let request = entry("team-lead", &shutdown_request("shutdown-9@alice"), "2026-04-09T17:27:13.068Z", true);
    forged.write("inboxes/alice.json", &inbox(&[request]));
    let (code, out, err) = forged.audit();
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("never issued"), "{out}");
}

/// A hostile review: the lead drops a teammate from config.json once it
/// has shut down, and every message it had read was then said to reach
/// nobody. One it read reached it; one left unread to a name not in the
/// team still did not.
#[test]
fn a_teammate_dropped_from_the_config_after_reading_was_reached() {
    let f = Scratch::new("dropped");
    f.write("config.json", r#"{"name":"t","leadAgentId":"team-lead@t","members":[{"name":"team-lead"}]}"#);
    let request = entry("team-lead", &shutdown_request("shutdown-1@alice"), "2026-04-09T17:27:13.068Z", true);
    let approved = entry("alice", &shutdown_approved("shutdown-1@alice"), "2026-04-09T17:27:14.068Z", true);
    f.write("inboxes/alice.json", &inbox(std::slice::from_ref(&request)));
    f.write("inboxes/team-lead.json", &inbox(&[approved]));
    let (code, out, err) = f.audit();
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("reaches nobody"), "{out}");
    let mut unread = request;
    unread["read"] = serde_json::json!(false);
    f.write("inboxes/alice.json", &inbox(&[unread]));
    let (_, out, _) = f.audit();
    assert!(out.contains("alice is not in the team (config.json): a message to it reaches nobody"), "{out}");
}

/// A hostile review: fields the reader does not use were counted and never
/// shown, and an entry with no `read` flag (an `isRead` instead) was taken
/// as delivered: a bare PASS of a shape half-known. The fields are listed,
/// in text and JSON, and such an entry is said not judged.
#[test]
fn fields_not_read_are_listed_and_an_entry_with_no_read_flag_is_no_clean_pass() {
    let f = Scratch::new("fields");
    f.write("config.json", CONFIG);
    let mut hello = entry("team-lead", &serde_json::json!("hello"), "2026-04-09T17:27:10.068Z", true);
    hello.as_object_mut().unwrap().remove("read");
    hello["isRead"] = serde_json::json!(false);
    f.write("inboxes/alice.json", &inbox(&[hello]));
    let (code, out, err) = f.audit();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 entry not judged") && out.contains("no \"read\" flag"), "{out}");
    assert!(out.contains("fields this reader does not use, not judged: entry.isRead (1)"), "{out}");
    let json = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["audit", &f.0.display().to_string(), "--format", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["fields_not_read"]["entry.isRead"], 1, "{doc}");
}

/// A hostile review: a team folder with no config.json passed bare, though
/// without it the roster (who is a member, who needs a plan approved) is
/// unknown. Claude Code writes one for every team: its absence is said.
#[test]
fn a_team_folder_without_its_config_is_no_clean_pass() {
    let f = Scratch::new("no-config");
    f.write(
        "inboxes/alice.json",
        &inbox(&[entry("team-lead", &serde_json::json!("hello"), "2026-04-09T17:27:10.068Z", true)]),
    );
    let (code, out, err) = f.audit();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 entry not judged") && out.contains("? config.json: no config.json"), "{out}");
    f.write("config.json", CONFIG);
    let (_, out, _) = f.audit();
    assert!(!out.contains("not judged"), "{out}");
}

/// A hostile review: `audit <team>/inboxes` said "no inbox files here" of
/// a folder of three inbox files. It now names the team folder to audit.
#[test]
fn a_teams_inboxes_folder_named_alone_points_at_the_team_folder() {
    let f = Scratch::new("inboxes-alone");
    f.write("config.json", CONFIG);
    f.write(
        "inboxes/alice.json",
        &inbox(&[entry("team-lead", &serde_json::json!("hello"), "2026-04-09T17:27:10.068Z", true)]),
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["audit", &f.0.join("inboxes").display().to_string()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("a Claude Code team folder's inboxes/: audit the team folder"), "{err}");
}

/// A Claude Code user's review: a transcript whose last line a lead cut
/// off in the middle of a character was refused whole ("line 11 is not
/// UTF-8 text (the whole file must be)", exit 2) by audit and watch, though
/// a cut at any other byte costs that line only.
#[test]
fn a_transcript_cut_mid_character_loses_that_line_only() {
    let root = std::env::temp_dir().join(format!("handshake-cut-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let lead = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code/transcripts/clean-lead.jsonl");
    let mut bytes = std::fs::read(lead).unwrap();
    let lines = bytes.iter().filter(|&&b| b == b'\n').count();
    bytes.extend_from_slice(
        b"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"\xd0\x93\xd0",
    );
    let cut = root.join("cut.jsonl");
    std::fs::write(&cut, &bytes).unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake")).args(args).output().expect("runs");
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        (out.status.code(), text)
    };
    let path = cut.display().to_string();
    let (code, out) = run(&["audit", &path, "--color", "never"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains(&format!("? line {}: not UTF-8", lines + 1)) && out.contains("no clean bill"), "{out}");
    let (code, out) = run(&["watch", &path, "--for", "300ms", "--color", "never"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("its last line has no newline"), "{out}");
    // A file with no line that is UTF-8 is still refused, and says why.
    std::fs::write(&cut, b"{\"type\":\"\xff\"}\n").unwrap();
    let (code, out) = run(&["audit", &path]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("line 1 is not UTF-8"), "{out}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A Claude Code user's review: with the lead's inbox cut short, or one of
/// its entries unreadable, the shutdowns it asked were "never answered",
/// though their answers would be in that inbox: not seen is not never.
#[test]
fn a_request_whose_answer_could_not_be_read_is_not_said_never_answered() {
    let root = std::env::temp_dir().join(format!("handshake-unseen-answer-{}", std::process::id()));
    let clean = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code/clean-team");
    let lead = std::fs::read_to_string(clean.join("inboxes/team-lead.json")).unwrap();
    let copy = |tag: &str, lead: &str| {
        let dir = root.join(tag);
        std::fs::create_dir_all(dir.join("inboxes")).unwrap();
        std::fs::copy(clean.join("config.json"), dir.join("config.json")).unwrap();
        for f in ["alice.json", "bob.json"] {
            std::fs::copy(clean.join("inboxes").join(f), dir.join("inboxes").join(f)).unwrap();
        }
        std::fs::write(dir.join("inboxes/team-lead.json"), lead).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args(["audit", &dir.display().to_string(), "--color", "never"])
            .output()
            .expect("audit runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let cut = copy("cut", &lead[..600]);
    assert!(!cut.contains("was never answered"), "{cut}");
    assert!(
        cut.contains("was not seen answered: inboxes/team-lead.json, where its answer would be, could not be read"),
        "{cut}"
    );
    // Every entry of the lead's inbox read but one, whose read flag is no flag.
    let mut entries: serde_json::Value = serde_json::from_str(&lead).unwrap();
    let answers = entries.as_array_mut().unwrap();
    let approval = answers.iter_mut().find(|e| e["text"].as_str().is_some_and(|t| t.contains("shutdown_approved")));
    approval.expect("the clean team's lead hears an approval")["read"] = serde_json::json!("yes");
    let one = copy("one", &entries.to_string());
    assert!(one.contains("holds entries that could not be read"), "{one}");
    assert!(!one.contains("was never answered"), "{one}");
    // All read: the clean team's requests were all answered, and nothing is said.
    let whole = copy("whole", &lead);
    assert!(!whole.contains("answered"), "{whole}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A Claude Code user's review: an answer whose timestamp came before its
/// request's (written by hand, another zone, a 0) was judged "an id it
/// never issued", naming the request itself as the witness. It is judged
/// after its request, and the clocks' disagreement is said.
#[test]
fn an_answer_timed_before_its_request_is_said_so_not_judged_a_forgery() {
    let root = std::env::temp_dir().join(format!("handshake-early-answer-{}", std::process::id()));
    let clean = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code/clean-team");
    for stamp in [serde_json::json!("2026-04-09T17:27:00.000Z"), serde_json::json!(0)] {
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("inboxes")).unwrap();
        std::fs::copy(clean.join("config.json"), root.join("config.json")).unwrap();
        for f in ["alice.json", "bob.json", "team-lead.json"] {
            std::fs::copy(clean.join("inboxes").join(f), root.join("inboxes").join(f)).unwrap();
        }
        let lead = root.join("inboxes/team-lead.json");
        let mut entries: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&lead).unwrap()).unwrap();
        let approval = entries
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|e| e["from"] == "alice" && e["text"].as_str().is_some_and(|t| t.contains("shutdown_approved")));
        approval.expect("alice approves her shutdown")["timestamp"] = stamp.clone();
        std::fs::write(&lead, entries.to_string()).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args(["audit", &root.display().to_string(), "--color", "never"])
            .output()
            .expect("audit runs");
        let said = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{stamp}: {said}");
        assert!(!said.contains("never issued"), "{stamp}: {said}");
        assert!(
            said.contains("before its request (inboxes/alice.json[1]): the files' clocks disagree"),
            "{stamp}: {said}"
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// A Claude Code user's review: an answer in a transcript whose request's
/// line could not be read was "not judged" because "inboxes/bob.json holds
/// nothing from team-lead", an inbox a transcript does not have. It names
/// the line that could not be read.
#[test]
fn a_transcripts_answer_whose_request_line_is_unreadable_names_that_line() {
    let root = std::env::temp_dir().join(format!("handshake-transcript-unseen-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let lead = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code/transcripts/clean-lead.jsonl");
    let mut lines: Vec<String> = std::fs::read_to_string(lead).unwrap().lines().map(String::from).collect();
    let asked = lines.iter().position(|l| l.contains("shutdown_request") && l.contains("bob")).expect("bob asked");
    lines[asked].truncate(200);
    let cut = root.join("cut.jsonl");
    std::fs::write(&cut, lines.join("\n") + "\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["audit", &cut.display().to_string(), "--color", "never"])
        .output()
        .expect("audit runs");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(!said.contains("inboxes/"), "{said}");
    let line = format!("line {} of the transcript could not be read, and the request may be there", asked + 1);
    assert!(said.contains(&line), "{said}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A Claude Code user's review: `audit --strict` said nothing of the
/// entries it could not judge when something also broke (exit 1), and its
/// help promised exit 2 whatever else. The violation's 1 comes first, as
/// the help now says, and --strict still names what it could not judge.
#[test]
fn strict_with_a_violation_exits_1_and_still_says_what_it_could_not_judge() {
    let dir = std::env::temp_dir().join(format!("handshake-cc-strict-broken-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let case =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code/81464-teammate-shutdown-kills-the-lead");
    std::fs::create_dir_all(dir.join("inboxes")).unwrap();
    std::fs::copy(case.join("config.json"), dir.join("config.json")).unwrap();
    for f in std::fs::read_dir(case.join("inboxes")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, dir.join("inboxes").join(f.file_name().unwrap())).unwrap();
    }
    std::fs::write(dir.join("inboxes/zed.json"), "[{\"from\":").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["audit", &dir.display().to_string(), "--color", "never", "--strict"])
        .output()
        .expect("handshake runs");
    let (said, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{said}{err}");
    assert!(said.starts_with("FAIL"), "{said}");
    assert!(err.contains("--strict: 1 entry could not be judged"), "{err}");
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_handshake")).args(["audit", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("a violation's exit 1 comes first"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A Claude Code user's review: `audit ~/.claude/teams` (or `~/.claude`)
/// said only "no inbox files here", though the team folders are right
/// there, named for their sessions (`session-<hex>`), which no user
/// guesses. The refusal lists them.
#[test]
fn a_folder_of_team_folders_is_refused_naming_them() {
    let root = std::env::temp_dir().join(format!("handshake-teams-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let clean = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code/clean-team");
    for team in ["session-5f0c1d2e", "session-0a1b2c3d"] {
        let dir = root.join("teams").join(team);
        std::fs::create_dir_all(dir.join("inboxes")).unwrap();
        std::fs::copy(clean.join("config.json"), dir.join("config.json")).unwrap();
        std::fs::copy(clean.join("inboxes/alice.json"), dir.join("inboxes/alice.json")).unwrap();
    }
    for place in [root.join("teams"), root.clone()] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args(["audit", &place.display().to_string()])
            .output()
            .expect("audit runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(
                "this folder holds Claude Code team folders, not a team's files: audit one of them \
                          (session-0a1b2c3d, session-5f0c1d2e, in "
            ),
            "{err}"
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// A read-through of the early-answer fix: the history's end was taken
/// from the last entry's own stamp, so when that entry was an answer moved
/// after its request, a request still open ended "before" it was made (a
/// subtraction past zero: a panic in a debug build, a wrapped age in a
/// release one). The end is the last entry as judged.
#[test]
fn an_early_answer_last_in_the_files_leaves_the_open_requests_ages_sane() {
    let root = std::env::temp_dir().join(format!("handshake-early-last-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let clean = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code/clean-team");
    std::fs::create_dir_all(root.join("inboxes")).unwrap();
    std::fs::copy(clean.join("config.json"), root.join("config.json")).unwrap();
    for f in ["alice.json", "bob.json"] {
        std::fs::copy(clean.join("inboxes").join(f), root.join("inboxes").join(f)).unwrap();
    }
    let lead: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(clean.join("inboxes/team-lead.json")).unwrap()).unwrap();
    // Alice's approval lost; bob's, the lead's only news now, stamped before any request.
    let approves = |e: &serde_json::Value, who: &str| {
        e["from"] == who && e["text"].as_str().is_some_and(|t| t.contains("shutdown_approved"))
    };
    let kept: Vec<serde_json::Value> = lead
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| approves(e, "bob"))
        .map(|e| {
            let mut e = e.clone();
            e["timestamp"] = serde_json::json!("2026-04-09T17:27:00.000Z");
            e
        })
        .collect();
    assert_eq!(kept.len(), 1, "the clean team's lead hears bob approve");
    std::fs::write(root.join("inboxes/team-lead.json"), serde_json::Value::Array(kept).to_string()).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["audit", &root.display().to_string(), "--color", "never"])
        .output()
        .expect("audit runs");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{said}{}", String::from_utf8_lossy(&out.stderr));
    let alert = said
        .lines()
        .find(|l| l.contains("asked of alice") && l.contains("answered"))
        .unwrap_or_else(|| panic!("{said}"));
    // Alice was asked 100 ms before bob, whose answer, moved after his request, ends the history.
    assert!(alert.contains("was never answered: open 100ms when the folder ends"), "{alert}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A Claude Code user's review: alice approved her shutdown and then kept
/// writing to the lead (prose, then a plan the lead approved), and the
/// audit passed without a word. The runtime ends a teammate that approves,
/// and writes teammate_terminated only in memory, so the files cannot tell
/// a teammate that kept running from a new one under its name: an alert,
/// once, at the first thing it sends after. A terminated notice between
/// makes it a respawn, as before; an idle notice is no act.
#[test]
fn a_teammate_that_speaks_after_approving_its_own_shutdown_is_news() {
    let f = Scratch::new("after-approval");
    f.write("config.json", CONFIG);
    let id = "shutdown-1775755624068@alice";
    let request = entry("team-lead", &shutdown_request(id), "2026-04-09T17:27:04.068Z", true);
    f.write("inboxes/alice.json", &inbox(&[request]));
    let approved = entry("alice", &shutdown_approved(id), "2026-04-09T17:27:05.068Z", true);
    let idle = entry(
        "alice",
        &serde_json::json!({"type": "idle_notification", "from": "alice"}),
        "2026-04-09T17:27:06.068Z",
        true,
    );
    let prose = serde_json::json!({"from": "alice", "text": "Still refactoring the parser",
        "timestamp": "2026-04-09T17:27:08.068Z", "read": true});
    let more = serde_json::json!({"from": "alice", "text": "Pushed it",
        "timestamp": "2026-04-09T17:27:09.068Z", "read": true});
    f.write("inboxes/team-lead.json", &inbox(&[approved.clone(), idle.clone(), prose.clone(), more.clone()]));
    let (code, out, err) = f.audit();
    assert_eq!(code, 0, "news, not a broken invariant: {out}{err}");
    let said =
        "⚠ inboxes/team-lead.json[3]: alice sent this after approving its own shutdown (inboxes/team-lead.json[1])";
    assert!(out.contains(said), "{out}");
    assert_eq!(out.matches("after approving its own shutdown").count(), 1, "once: {out}");
    // The runtime said she ended: what she sends then is a new process.
    let ended = entry(
        "system",
        &serde_json::json!({"type": "teammate_terminated", "message": "alice has shut down."}),
        "2026-04-09T17:27:07.068Z",
        true,
    );
    f.write("inboxes/team-lead.json", &inbox(&[approved, idle, ended, prose, more]));
    let (_, out, _) = f.audit();
    assert!(!out.contains("after approving its own shutdown"), "{out}");
}

/// A Claude Code user's review: an inbox caught while the runtime rewrote
/// it read "not JSON: EOF while parsing a value at line 1 column 0", which
/// looks like corruption. Empty or cut short, it says what that most
/// likely is.
#[test]
fn an_inbox_caught_mid_rewrite_says_so() {
    let f = Scratch::new("mid-rewrite");
    f.write("config.json", CONFIG);
    let hello =
        serde_json::json!({"from": "alice", "text": "hello", "timestamp": "2026-04-09T17:27:05.068Z", "read": true});
    f.write("inboxes/team-lead.json", &inbox(&[hello]));
    for (text, why) in [
        ("", "empty, as a file read while the runtime rewrites it does"),
        ("[{\"from\": \"te", "it ends mid-value, as a file read while the runtime rewrites it does"),
    ] {
        f.write("inboxes/alice.json", text);
        let (_, out, err) = f.audit();
        assert!(out.contains("? inboxes/alice.json: ") && out.contains(why), "{why}: {out}{err}");
    }
}

/// A Claude Code user's review: 383,401 answers to ids no file shows
/// printed 766,815 lines. The text report shows the first twenty broken
/// invariants and counts the rest; JSON lists every one.
#[test]
fn the_text_report_lists_twenty_broken_invariants_and_counts_the_rest() {
    let f = Scratch::new("many-broken");
    f.write("config.json", CONFIG);
    let hello = serde_json::json!({"from": "team-lead", "text": "hello", "timestamp": "2026-04-09T17:27:01.000Z", "read": true});
    f.write("inboxes/alice.json", &inbox(&[hello]));
    let answers: Vec<serde_json::Value> = (0..30)
        .map(|n| {
            entry(
                "alice",
                &shutdown_approved(&format!("shutdown-{n}@alice")),
                &format!("2026-04-09T17:27:{:02}.000Z", 10 + n),
                true,
            )
        })
        .collect();
    f.write("inboxes/team-lead.json", &inbox(&answers));
    let (code, out, err) = f.audit();
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(out.matches("✗ invariant ").count(), 20, "{out}");
    assert!(out.contains("✗ … and 10 more broken (--format json lists every one)"), "{out}");
    let json = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["audit", &f.0.display().to_string(), "--format", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(doc["violations"].as_array().map(Vec::len), Some(30), "{doc}");
}

/// A Claude Code user's review: an inbox text holding alice's approval with
/// " ok bye" after it was read as the approval, without a word: a shape
/// half-known that got a clean pass. It is still judged as the JSON, and
/// listed as read in part.
#[test]
fn an_inbox_text_with_prose_after_its_json_is_judged_as_the_json_and_said() {
    let f = Scratch::new("json-then-prose");
    f.write("config.json", CONFIG);
    let id = "shutdown-1775755624068@alice";
    let request = entry("team-lead", &shutdown_request(id), "2026-04-09T17:27:04.068Z", true);
    f.write("inboxes/alice.json", &inbox(&[request]));
    let approved = serde_json::json!({"from": "alice", "text": format!("{} ok bye", shutdown_approved(id)),
        "timestamp": "2026-04-09T17:27:05.068Z", "read": true});
    f.write("inboxes/team-lead.json", &inbox(&[approved]));
    let (_, out, err) = f.audit();
    assert!(out.contains("1 entry not judged"), "{out}{err}");
    assert!(
        out.contains("? inboxes/team-lead.json[1]: a JSON message followed by other text (\"ok bye\")"),
        "{out}{err}"
    );
    assert!(out.contains("held: single-terminal"), "the approval is judged: {out}");
}

/// A review from real reports: a shutdown request whose entry was written
/// with a time in another format (or whose type a newer version renamed)
/// was listed as not read, and its answer then judged "an id it never
/// issued": a FAIL (exit 1, even with --strict's 2 due) made of what the
/// reader could not read. The answer is not judged, and says why.
#[test]
fn an_answer_whose_request_may_be_an_entry_not_read_is_not_judged() {
    let id = "shutdown-1775755630000@alice";
    let team = Scratch::new("request-not-read");
    team.write("config.json", CONFIG);
    let request = entry("team-lead", &shutdown_request(id), "Thu, 09 Apr 2026 17:27:10 GMT", true);
    let hello = serde_json::json!({"from": "team-lead", "text": "write the parser", "timestamp": "2026-04-09T17:27:00.000Z", "read": true});
    team.write("inboxes/alice.json", &inbox(&[hello, request]));
    team.write(
        "inboxes/team-lead.json",
        &inbox(&[entry("alice", &shutdown_approved(id), "2026-04-09T17:27:11.000Z", true)]),
    );
    let (code, out, err) = team.audit();
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("never issued"), "{out}");
    assert!(out.contains("holds entries that could not be read, and the request may be one; not judged"), "{out}");
}

/// A review from real reports: the runtime approves every plan request at
/// once (docs/claude-code-runtime.md), and the lead, shown the request,
/// approves it too (claude-code#29064): every healthy plan-mode team whose
/// lead approved was a FAIL ("approved and became approved"). A plan's
/// answer that says again what it already was changes nothing; one that
/// contradicts it (#27265's fixture) still fails, and one delivered again
/// whole is the runtime applying it twice (#92244's).
#[test]
fn a_plan_approved_by_the_runtime_then_by_the_lead_is_no_failure() {
    let id = "plan_approval-1775755624068@alice";
    let team = Scratch::new("plan-approved-twice");
    team.write(
        "config.json",
        r#"{"name":"t","leadAgentId":"team-lead@t","members":[{"name":"team-lead"},{"name":"alice","planModeRequired":true}]}"#,
    );
    let request = serde_json::json!({"type": "plan_approval_request", "requestId": id, "from": "alice", "planContent": "1. parser"});
    let by_runtime = serde_json::json!({"type": "plan_approval_response", "requestId": id, "approved": true, "permissionMode": "default"});
    let by_lead = serde_json::json!({"type": "plan_approval_response", "requestId": id, "approved": true, "feedback": "Looks good"});
    team.write("inboxes/team-lead.json", &inbox(&[entry("alice", &request, "2026-04-09T17:27:04.068Z", true)]));
    let answers = [
        entry("team-lead", &by_runtime, "2026-04-09T17:27:04.268Z", true),
        entry("team-lead", &by_lead, "2026-04-09T17:27:10.000Z", true),
    ];
    team.write("inboxes/alice.json", &inbox(&answers));
    let (code, out, err) = team.audit();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("PASS") && !out.contains('✗'), "{out}");
    // The lead's answer contradicting the runtime's fails, as before.
    let no =
        serde_json::json!({"type": "plan_approval_response", "requestId": id, "approved": false, "feedback": "No"});
    let answers = [answers[0].clone(), entry("team-lead", &no, "2026-04-09T17:27:10.000Z", true)];
    team.write("inboxes/alice.json", &inbox(&answers));
    let (code, out, _) = team.audit();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("approved → rejected"), "{out}");
}

/// A review from real reports: a config.json whose roster is under another
/// key than `members` was read as a team with no roster said, so a message
/// to a misspelt name (#84494's `alcie`) passed as "in flight". The missing
/// list is said, and the verdict is no clean bill.
#[test]
fn a_config_without_its_members_list_says_the_roster_is_unknown() {
    let team = Scratch::new("no-members");
    team.write("config.json", r#"{"name":"t","leadAgentId":"team-lead@t","teammates":[{"name":"alice"}]}"#);
    let hello =
        serde_json::json!({"from": "team-lead", "text": "hi", "timestamp": "2026-04-09T17:27:00.000Z", "read": true});
    team.write("inboxes/alice.json", &inbox(&[hello]));
    let (code, out, _) = team.audit();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("? config.json members: no \"members\" list: the team's roster is unknown"), "{out}");
    assert!(out.contains("no clean bill"), "{out}");
}

/// A review from real reports: a lead's transcript of the generation before
/// SendMessage (its `Teammate` tool with an `operation`, 2.0.60 – 2.1.16)
/// had its calls passed over without a word, and the teammate's answer to
/// the shutdown they asked for was then judged "an id it never issued": a
/// FAIL. Each call is listed as not read, and the answer is not judged.
#[test]
fn a_transcript_of_the_teammate_tool_lists_its_calls_and_judges_no_answer_to_them() {
    let team = Scratch::new("teammate-tool");
    let lines = [
        r#"{"type":"assistant","sessionId":"s","uuid":"2","timestamp":"2026-01-28T10:05:00.000Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Teammate","input":{"operation":"requestShutdown","target_agent_id":"bob"}}]}}"#,
        r#"{"type":"user","sessionId":"s","uuid":"4","timestamp":"2026-01-28T10:05:00.100Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"{\"success\":true,\"request_id\":\"shutdown-1769594700000@bob\"}"}]}}"#,
        r#"{"type":"user","sessionId":"s","uuid":"5","timestamp":"2026-01-28T10:05:02.000Z","message":{"role":"user","content":"<teammate-message teammate_id=\"bob\">\n{\"type\":\"shutdown_approved\",\"requestId\":\"shutdown-1769594700000@bob\",\"from\":\"bob\"}\n</teammate-message>"}}"#,
        r#"{"type":"user","sessionId":"s","uuid":"6","timestamp":"2026-01-28T10:05:03.000Z","message":{"role":"user","content":"<teammate-message teammate_id=\"bob\">\nall done\n</teammate-message>"}}"#,
    ];
    team.write("lead.jsonl", &(lines.join("\n") + "\n"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["audit", &team.0.join("lead.jsonl").display().to_string(), "--color", "never"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("? line 1: a Teammate call (operation \"requestShutdown\")"), "{said}");
    assert!(!said.contains("never issued"), "{said}");
    assert!(
        said.contains("line 1 of the transcript could not be read, and the request may be there; not judged"),
        "{said}"
    );
}

/// A review from real reports: #92244 seen in a lead's transcript, one idle
/// notice handed to the lead three times, each a turn of its own with its
/// own time, passed with no word: the repeat was looked for by the time the
/// line was written. A protocol message's own words carry its time.
#[test]
fn a_message_delivered_again_in_a_transcript_is_said_whatever_the_line_time() {
    let team = Scratch::new("transcript-repeats");
    let idle = |at: &str| {
        format!(
            r#"{{"type":"user","sessionId":"s","uuid":"{at}","timestamp":"2026-09-05T10:00:{at}.000Z","message":{{"role":"user","content":"<teammate-message teammate_id=\"bob\">\n{{\"type\":\"idle_notification\",\"from\":\"bob\",\"timestamp\":\"2026-09-05T10:00:02.000Z\",\"idleReason\":\"available\"}}\n</teammate-message>"}}}}"#
        )
    };
    let report = r#"{"type":"user","sessionId":"s","uuid":"1","timestamp":"2026-09-05T10:00:01.000Z","message":{"role":"user","content":"<teammate-message teammate_id=\"bob\">\nParser done.\n</teammate-message>"}}"#;
    team.write("lead.jsonl", &format!("{report}\n{}\n{}\n{}\n", idle("15"), idle("21"), idle("27")));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["audit", &team.0.join("lead.jsonl").display().to_string(), "--color", "never"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("⚠ line 3 repeats line 2") && said.contains("⚠ line 4 repeats line 2"), "{said}");
}

/// A review from real reports: a teammate that approved its own shutdown
/// and never ended, idling on (#60199: "idle notifications continue to
/// arrive from the teammate indefinitely"), was a bare PASS: idle notices
/// were passed over, as one comes when a teammate's last turn ends. The
/// second is said.
#[test]
fn a_teammate_still_idling_after_approving_its_shutdown_is_said() {
    let id = "shutdown-1775755630000@alice";
    let idle = |at: &str| {
        let said = serde_json::json!({"type": "idle_notification", "from": "alice", "idleReason": "available"});
        entry("alice", &said, at, true)
    };
    let team = Scratch::new("idling-after-approval");
    team.write("config.json", CONFIG);
    team.write(
        "inboxes/alice.json",
        &inbox(&[entry("team-lead", &shutdown_request(id), "2026-04-09T17:27:10.000Z", true)]),
    );
    let approved = entry("alice", &shutdown_approved(id), "2026-04-09T17:27:11.000Z", true);
    let one = [approved.clone(), idle("2026-04-09T17:27:11.500Z")];
    team.write("inboxes/team-lead.json", &inbox(&one));
    let (_, out, _) = team.audit();
    assert!(!out.contains("still idling"), "one idle as it stops is how it stops: {out}");
    let on = [approved, idle("2026-04-09T17:27:11.500Z"), idle("2026-04-09T17:35:11.000Z")];
    team.write("inboxes/team-lead.json", &inbox(&on));
    let (_, out, _) = team.audit();
    assert!(
        out.contains("⚠ inboxes/team-lead.json[3]: alice is still idling after approving its own shutdown"),
        "{out}"
    );
}

/// A review from real reports: messages left unread for most of an hour by
/// a teammate that no longer reads (#47396's zombie) were listed as "still
/// running: in flight", which reassures. How long each has waited is said.
#[test]
fn an_entry_in_flight_says_how_long_it_has_waited_unread() {
    let team = Scratch::new("in-flight-age");
    team.write("config.json", CONFIG);
    let unread = serde_json::json!({"from": "team-lead", "text": "status?", "timestamp": "2026-04-09T17:00:00.000Z", "read": false});
    team.write("inboxes/alice.json", &inbox(&[unread]));
    let later =
        serde_json::json!({"from": "alice", "text": "working", "timestamp": "2026-04-09T17:50:00.000Z", "read": true});
    team.write("inboxes/team-lead.json", &inbox(&[later]));
    let (_, out, _) = team.audit();
    assert!(
        out.contains("? inboxes/alice.json[1]: not yet read by its owner, still running: in flight, unread for 50m"),
        "{out}"
    );
}

/// A review of real shapes: a teammate's approval and the runtime's notice
/// that it ended, stamped in one millisecond (the runtime writes the notice
/// as the approving turn ends), were put notice first, so the approval read
/// as a new process answering a request sent to the old one: a healthy
/// shutdown failed current-incarnation. The notice comes after the answer.
#[test]
fn an_approval_and_its_end_notice_in_one_millisecond_are_a_healthy_shutdown() {
    let f = Scratch::new("same-ms-end");
    f.write("config.json", CONFIG);
    let id = "shutdown-1775755624068@alice";
    let request = entry("team-lead", &shutdown_request(id), "2026-04-09T17:27:04.068Z", true);
    f.write("inboxes/alice.json", &inbox(&[request]));
    let approved = entry("alice", &shutdown_approved(id), "2026-04-09T17:27:05.068Z", true);
    let ended = entry(
        "system",
        &serde_json::json!({"type": "teammate_terminated", "message": "alice has shut down."}),
        "2026-04-09T17:27:05.068Z",
        true,
    );
    for order in [[approved.clone(), ended.clone()], [ended, approved]] {
        f.write("inboxes/team-lead.json", &inbox(&order));
        let (code, out, err) = f.audit();
        assert_eq!(code, 0, "{out}{err}");
        assert!(out.starts_with("PASS") && !out.contains("current-incarnation —"), "{out}");
    }
}

/// A review of real shapes: the runtime ended alice after she approved;
/// the lead then asked her name again, and the new process under it read
/// and approved. That request was sent after the old process ended, so it
/// was meant for the new one, and judging it "sent to an earlier
/// incarnation" failed a healthy team. One left from before the end still
/// fails (the #45874 fixture).
#[test]
fn a_respawn_answering_a_request_sent_after_the_end_is_its_own() {
    let f = Scratch::new("respawn-new-request");
    f.write("config.json", CONFIG);
    let (first, second) = ("shutdown-1775755624068@alice", "shutdown-1775755654068@alice");
    let asked = |id: &str, at: &str| entry("team-lead", &shutdown_request(id), at, true);
    let alice = [asked(first, "2026-04-09T17:27:04.068Z"), asked(second, "2026-04-09T17:27:34.068Z")];
    f.write("inboxes/alice.json", &inbox(&alice));
    let ended = |at: &str| {
        let notice = serde_json::json!({"type": "teammate_terminated", "message": "alice has shut down."});
        entry("system", &notice, at, true)
    };
    let lead = [
        entry("alice", &shutdown_approved(first), "2026-04-09T17:27:05.068Z", true),
        ended("2026-04-09T17:27:05.100Z"),
        entry("alice", &shutdown_approved(second), "2026-04-09T17:27:35.068Z", true),
        ended("2026-04-09T17:27:35.100Z"),
    ];
    f.write("inboxes/team-lead.json", &inbox(&lead));
    let (code, out, err) = f.audit();
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("current-incarnation —"), "{out}");
}

/// One line of a lead's transcript (2.1.220's shape): `content` is the
/// message's content, a string or a list of blocks.
fn transcript_line(n: u32, kind: &str, ms: u64, content: serde_json::Value) -> String {
    let stamp = jiff::Timestamp::from_millisecond(ms as i64).unwrap().to_string();
    let line = serde_json::json!({"parentUuid": null, "isSidechain": false, "teamName": "t", "userType": "external",
        "cwd": "/p", "sessionId": "s1", "version": "2.1.220", "type": kind, "uuid": format!("u{n}"),
        "timestamp": stamp, "message": {"role": kind, "content": content}});
    format!("{line}\n")
}

/// A review of real shapes: in a lead's transcript, bob's approval handed
/// to the lead again after the runtime's notice that bob ended was taken
/// for bob speaking again: a new process (failing current-incarnation) and
/// a shut-down agent sending (final-roster). It is the runtime handing one
/// message over twice (#92244), judged so and nothing more; and a repeated
/// approval does not restart the count of idle notices after it (#60199).
#[test]
fn an_answer_handed_over_again_is_not_its_sender_speaking() {
    let base = 1_775_755_623_068u64;
    let id = format!("shutdown-{}@bob", base + 1000);
    let heard = |n, ms, body: &serde_json::Value| {
        let who = body["from"].as_str().unwrap();
        let text = format!("<teammate-message teammate_id=\"{who}\">\n{body}\n</teammate-message>");
        transcript_line(n, "user", ms, serde_json::Value::String(text))
    };
    let ask = serde_json::json!([{"type": "tool_use", "id": "toolu_1", "name": "SendMessage",
        "input": {"to": "bob", "message": {"type": "shutdown_request", "reason": "done"}}}]);
    let sent = serde_json::json!({"success": true, "message": "sent", "request_id": id, "target": "bob"});
    let result = serde_json::json!([{"type": "tool_result", "tool_use_id": "toolu_1", "content": sent.to_string()}]);
    let ok = serde_json::json!({"type": "shutdown_approved", "requestId": id, "from": "bob"});
    // Each idle notice carries its own time, as the runtime writes them.
    let idle = |ms: u64| {
        let at = jiff::Timestamp::from_millisecond(ms as i64).unwrap().to_string();
        serde_json::json!({"type": "idle_notification", "from": "bob", "timestamp": at, "idleReason": "available"})
    };
    let ended = serde_json::json!({"type": "teammate_terminated", "message": "bob has shut down.", "from": "system"});
    let start = transcript_line(1, "assistant", base + 1000, ask) + &transcript_line(2, "user", base + 1005, result);
    let dir = std::env::temp_dir().join(format!("handshake-cc-handed-again-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let audit = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args(["audit", &path.display().to_string(), "--color", "never"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let after_the_end =
        start.clone() + &heard(3, base + 2000, &ok) + &heard(4, base + 2050, &ended) + &heard(5, base + 5000, &ok);
    let out = audit("after-the-end.jsonl", after_the_end);
    assert!(out.contains("line 5 repeats line 3: the same sender and message, delivered again"), "{out}");
    assert!(out.contains("✗ invariant terminal-final"), "applied twice: {out}");
    assert!(!out.contains("current-incarnation —") && !out.contains("final-roster —"), "{out}");
    let idles = start
        + &heard(3, base + 2000, &ok)
        + &heard(4, base + 3000, &idle(base + 3000))
        + &heard(5, base + 4000, &ok)
        + &heard(6, base + 5000, &idle(base + 5000));
    let out = audit("idles.jsonl", idles);
    assert!(out.contains("line 6: bob is still idling after approving its own shutdown (line 3)"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A review of real shapes: a shutdown request handed to alice twice
/// (#92244) was refused twice, and the second "no" failed matching-response
/// and terminal-final ("rejected and became rejected"), where a plan refused
/// twice passed. A rejection again leaves the request as it was: noted,
/// not judged a change. A "yes" after a "no" still fails.
#[test]
fn a_shutdown_refused_twice_changes_nothing_and_a_change_of_mind_still_fails() {
    let f = Scratch::new("refused-twice");
    f.write("config.json", CONFIG);
    let id = "shutdown-1775755624068@alice";
    let request = entry("team-lead", &shutdown_request(id), "2026-04-09T17:27:04.068Z", true);
    f.write("inboxes/alice.json", &inbox(&[request.clone(), request]));
    let no = serde_json::json!({"type": "shutdown_rejected", "requestId": id, "from": "alice",
        "reason": "still compiling"});
    let refusals =
        [entry("alice", &no, "2026-04-09T17:27:05.068Z", true), entry("alice", &no, "2026-04-09T17:27:06.068Z", true)];
    f.write("inboxes/team-lead.json", &inbox(&refusals));
    let (code, out, err) = f.audit();
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("terminal-final —") && !out.contains("matching-response —"), "{out}");
    let yes = entry("alice", &shutdown_approved(id), "2026-04-09T17:27:07.068Z", true);
    f.write("inboxes/team-lead.json", &inbox(&[refusals[0].clone(), yes]));
    let (code, out, _) = f.audit();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("was rejected and became approved"), "{out}");
}

/// A review: a folder whose one request had a type this reader does not
/// know (its answer then not judged either) passed, "0 messages", exit 0.
/// Nothing judged is no pass, whatever notes the reading made.
#[test]
fn a_folder_whose_every_message_is_unjudged_is_refused_not_passed() {
    let f = Scratch::new("all-unjudged");
    f.write("config.json", CONFIG);
    let id = "shutdown-1775755624068@alice";
    let renamed = serde_json::json!({"type": "shutdown_req_v2", "requestId": id, "from": "team-lead"});
    f.write("inboxes/alice.json", &inbox(&[entry("team-lead", &renamed, "2026-04-09T17:27:04.068Z", true)]));
    let approved = entry("alice", &shutdown_approved(id), "2026-04-09T17:27:05.068Z", true);
    f.write("inboxes/team-lead.json", &inbox(&[approved]));
    let (code, out, err) = f.audit();
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("there is nothing to judge, and that is not a pass"), "{err}");
    assert!(err.contains("shutdown_req_v2"), "the reason: {err}");
}

/// A review: an answer queued unread in its asker's inbox (the asker
/// still running) left its request "never answered", with the hint of an
/// answer lost to a rewrite, while the answer was right there. It is in
/// flight, and said so, once.
#[test]
fn a_request_whose_answer_is_queued_unread_is_not_called_never_answered() {
    let f = Scratch::new("answer-queued");
    f.write("config.json", CONFIG);
    let id = "shutdown-1775755624068@alice";
    f.write(
        "inboxes/alice.json",
        &inbox(&[entry("team-lead", &shutdown_request(id), "2026-04-09T17:27:04.068Z", true)]),
    );
    let queued = entry("alice", &shutdown_approved(id), "2026-04-09T17:27:05.068Z", false);
    f.write("inboxes/team-lead.json", &inbox(&[queued]));
    let (code, out, err) = f.audit();
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("never answered"), "{out}");
    assert!(out.contains("? inboxes/team-lead.json[1]: not yet read by its owner"), "{out}");
}
