//! Issue 23, points 2 and 4: inbox folders the reference course's own code
//! wrote (tests/fixtures/reference/, made by make.py there with
//! ../shared/reference's s10 bus, trackers and teammate tool handler, no
//! model) audited by the same oracle, each with exactly the violations its
//! story shows, and the clean ones clean. Two stories the files cannot show
//! are held to what the files do say.

mod common;

use handshake::history::inbox;
use handshake::oracle::{check_log, Invariant, Log};
use std::path::Path;

fn audit(case: &str) -> Vec<(Invariant, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference").join(case);
    let dir = inbox::find(&dir).unwrap_or_else(|| panic!("{case}: no inbox files"));
    let h = inbox::read(&dir).unwrap_or_else(|e| panic!("{case}: {e}"));
    let log = Log { names: &h.names, events: &h.events, ended_at: h.ended_at, stop: h.stop };
    check_log(&log, &h.policy, &h.require_plan).into_iter().map(|v| (v.invariant, v.detail)).collect()
}

fn invariants(case: &str) -> Vec<Invariant> {
    audit(case).into_iter().map(|v| v.0).collect()
}

#[test]
fn the_clean_handshakes_pass() {
    assert_eq!(audit("clean-shutdown"), vec![]);
    assert_eq!(audit("clean-plan"), vec![]);
}

#[test]
fn a_wrong_teammate_answering_is_caught_where_the_reference_accepted_it() {
    let found = audit("wrong-teammate");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, Invariant::MatchingResponse);
    assert!(found[0].1.contains("it came from bob, not from alice"), "{}", found[0].1);
}

#[test]
fn an_approval_flipped_and_a_plan_reviewed_twice_break_terminal_final() {
    for case in ["approval-flipped", "plan-reviewed-twice"] {
        let found = audit(case);
        assert_eq!(
            found.iter().map(|v| v.0).collect::<Vec<_>>(),
            vec![Invariant::MatchingResponse, Invariant::TerminalFinal],
            "{case}: {found:?}"
        );
        assert!(found[0].1.contains("already approved"), "{case}: {}", found[0].1);
        assert!(found[1].1.contains("was approved and became rejected"), "{case}: {}", found[1].1);
    }
}

#[test]
fn an_unprompted_approval_with_an_unknown_id_is_caught() {
    let found = audit("unprompted-unknown-id");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, Invariant::MatchingResponse);
    assert!(found[0].1.contains("applied a response for an id it never issued"), "{}", found[0].1);
}

/// What inbox files cannot show. A leftover shutdown answered by a respawned
/// teammate of the same name reads, in the files, as a clean handshake: the
/// respawn is in no inbox line. A line lost between a read and its truncate
/// is in no file at all, and the read took the request with it: what is left
/// is an answer to a request no file holds, which is all the files can say
/// (docs/audit.md says which record can tell more).
#[test]
fn what_the_files_cannot_show_is_judged_by_what_they_do_say() {
    assert_eq!(audit("leftover-after-respawn"), vec![]);
    assert_eq!(invariants("lost-between-read-and-truncate"), vec![Invariant::MatchingResponse]);
    let alice = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reference/lost-between-read-and-truncate/alice.jsonl");
    assert_eq!(
        std::fs::read_to_string(alice).unwrap(),
        "",
        "the truncate left alice's file empty: the appended line is gone"
    );
}

/// s13's mailboxes keep the protocol's fields under `metadata` and check
/// answers (`match_response`): a wrong responder there is refused, not applied.
#[test]
fn s13_mailboxes_are_read_with_s13s_checks() {
    let dir = std::env::temp_dir().join(format!("handshake-s13-{}", std::process::id()));
    let boxes = dir.join(".mailboxes");
    std::fs::create_dir_all(&boxes).unwrap();
    let line = |from: &str, to: &str, ty: &str, ts: f64, meta: &str| {
        format!(r#"{{"from":"{from}","to":"{to}","content":"","type":"{ty}","ts":{ts},"metadata":{meta}}}"#)
    };
    std::fs::write(
        boxes.join("alice.jsonl"),
        line("lead", "alice", "shutdown_request", 1.0, r#"{"request_id":"req_000042"}"#) + "\n",
    )
    .unwrap();
    let answers = [
        line("bob", "lead", "shutdown_response", 2.0, r#"{"request_id":"req_000042","approve":true}"#),
        line("alice", "lead", "shutdown_response", 3.0, r#"{"request_id":"req_000042","approve":true}"#),
    ];
    std::fs::write(boxes.join("lead.jsonl"), answers.join("\n") + "\n").unwrap();
    let h = inbox::read(&inbox::find(&dir).expect("finds .mailboxes")).unwrap();
    let log = Log { names: &h.names, events: &h.events, ended_at: h.ended_at, stop: h.stop };
    assert_eq!(check_log(&log, &h.policy, &h.require_plan), vec![], "bob's answer refused, alice's applied");
    assert!(h.names.labels.values().any(|l| l == "req_000042"), "reports quote the team's own id");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The production agent writes an answer's yes or no in its type
/// (`shutdown_approved`, `shutdown_rejected`): read as the shutdown
/// protocol's answers through the names its spec lists for other runtimes.
#[test]
fn the_production_agents_answer_types_are_read_as_shutdown_answers() {
    use handshake::protocol::{Kind, Status, Verdict};
    use handshake::trace::Event;
    let dir = std::env::temp_dir().join(format!("handshake-audit-production-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let line = |t: &str, from: &str, id: &str, at: f64| {
        format!(r#"{{"type":"{t}","from":"{from}","request_id":"{id}","reason":"r","timestamp":{at}}}"#)
    };
    let files = [
        ("alice.jsonl", line("shutdown_request", "team-lead", "r1", 1.0)),
        ("bob.jsonl", line("shutdown_request", "team-lead", "r2", 1.5)),
        (
            "team-lead.jsonl",
            [line("shutdown_approved", "alice", "r1", 2.0), line("shutdown_rejected", "bob", "r2", 3.0)].join("\n"),
        ),
    ];
    for (name, text) in &files {
        std::fs::write(dir.join(name), format!("{text}\n")).unwrap();
    }
    let h = inbox::read(&dir).expect("reads");
    std::fs::remove_dir_all(&dir).ok();
    let ends: Vec<(Kind, Status)> = h
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Verdict { verdict: Verdict::Applied { kind, to, .. }, .. } => Some((*kind, *to)),
            _ => None,
        })
        .collect();
    assert_eq!(ends, vec![(Kind::Shutdown, Status::Approved), (Kind::Shutdown, Status::Rejected)]);
    let log = Log { names: &h.names, events: &h.events, ended_at: h.ended_at, stop: h.stop };
    assert_eq!(check_log(&log, &h.policy, &h.require_plan), vec![]);
}

/// A hostile review: a reference inbox line whose timestamp was an ISO
/// string (or missing) was read as time 0, silently: an answer written
/// after its question was judged before it, or not at all, and the folder
/// passed. Such a line is not judged, and says so.
#[test]
fn a_reference_line_with_no_timestamp_in_seconds_is_not_judged_and_said() {
    let texts = vec![
        (
            "bob.jsonl".to_string(),
            r#"{"type":"shutdown_request","from":"lead","request_id":"abcd1234","timestamp":1.0}"#.to_string() + "\n",
        ),
        (
            "lead.jsonl".to_string(),
            r#"{"type":"shutdown_response","from":"bob","request_id":"abcd1234","approve":true,"timestamp":"2026-01-01T00:00:01Z"}"#
                .to_string()
                + "\n",
        ),
    ];
    let h = handshake::history::inbox::read_texts(&texts).expect("one line is a message");
    assert_eq!(h.unjudged.len(), 1, "{:?}", h.unjudged);
    assert_eq!(h.unjudged[0].0, "lead.jsonl:1");
    assert!(h.unjudged[0].1.contains("not a number of seconds"), "{:?}", h.unjudged);
}

/// A hostile review: a trace whose request expired and was then approved
/// (its pending and deadline checks off) was audited as "pending →
/// approved" under "was expired and became approved": a verdict line
/// writes only the status it applied, and the reader took every one as
/// moving from pending. It now follows each request's status.
#[test]
fn a_verdict_read_back_moves_from_the_status_its_request_had() {
    let dir = common::binary::TempDir::new("audit-expired-approved");
    let file = dir.write(
        "au.toml",
        "name = \"au\"\n[policy]\nshutdown_timeout = \"100ms\"\n[policy.defences]\npending_check = false\n\
         deadline_check = false\n[[teammate]]\nname = \"a\"\n[[step]]\nat = \"0ms\"\ndo = \"shutdown\"\nto = \"a\"\n\
         [[fault]]\nkind = \"delay\"\ntype = \"shutdown_response\"\ndelay = \"1s\"\n",
    );
    let trace = dir.path("au.jsonl");
    let run = common::binary::handshake(&["run", &file, "--trace", &trace, "-v", "--color", "never"]);
    assert!(run.stdout.contains("lead: [a/shutdown/1] expired → approved"), "{}", run.stdout);
    let audit = common::binary::handshake(&["audit", &trace, "--color", "never"]);
    assert_eq!(audit.code, 1, "{}", audit.stdout);
    assert!(audit.stdout.contains("lead: [a/shutdown/1] expired → approved"), "{}", audit.stdout);
    assert!(!audit.stdout.contains("pending → approved"), "{}", audit.stdout);
}
