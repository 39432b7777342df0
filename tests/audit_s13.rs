//! Issue 23, point 4, s13's half: what the reference course's s13 runtime
//! wrote (tests/fixtures/reference/s13/, made by make13.py there with
//! ../shared/reference's s13_agent_teams/code.py, no model), audited twice:
//! - `journal/`, every line s13's send wrote (what an append-only record
//!   keeps): each case with exactly the violations it shows, and s13's own
//!   `match_response` checks applied as s13 applied them;
//! - `.mailboxes/`, as s13 left it: its reads unlink what they read, so
//!   mostly nothing is left, and audit says so instead of judging nothing.

use handshake::history::{inbox, History};
use handshake::oracle::{check_log, Invariant, Log};
use handshake::protocol::{Reason, Verdict};
use handshake::trace::Event;
use std::path::{Path, PathBuf};

fn case(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference/s13").join(name)
}

const CASES: [&str; 9] = [
    "clean-shutdown",
    "clean-plan",
    "wrong-teammate",
    "approval-flipped",
    "plan-reviewed-twice",
    "unprompted-unknown-id",
    "leftover-after-respawn",
    "lost-between-read-and-truncate",
    "plan-requested-mid-run",
];

fn read(dir: &Path) -> History {
    inbox::read(dir).unwrap_or_else(|e| panic!("{}: {e:?}", dir.display()))
}

fn violations(h: &History) -> Vec<(Invariant, String)> {
    let log = Log { names: &h.names, events: &h.events, ended_at: h.ended_at, stop: h.stop };
    check_log(&log, &h.policy, &h.require_plan).into_iter().map(|v| (v.invariant, v.detail)).collect()
}

/// Each answer as the receiver's tracker took it: who answered which id,
/// and whether it was applied or why it was refused.
fn answers(h: &History) -> Vec<String> {
    h.events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Verdict { request_id, sender, verdict, approve, .. } => {
                let id = h.names.labels.get(request_id).cloned().unwrap_or_default();
                let took = match verdict {
                    Verdict::Applied { to, .. } => format!("applied → {to:?}"),
                    Verdict::Ignored(why) => format!("refused: {why:?}"),
                };
                Some(format!("{} {id} approve={approve} {took}", h.names.agent(*sender)))
            }
            _ => None,
        })
        .collect()
}

fn journal(name: &str) -> History {
    let h = read(&case(name).join("journal"));
    assert!(!h.events.is_empty(), "{name}: the journal holds s13's lines");
    h
}

#[test]
fn every_journal_passes_because_s13_refuses_what_s10_accepted() {
    for name in CASES {
        assert_eq!(violations(&journal(name)), vec![], "{name}");
    }
}

#[test]
fn the_clean_handshakes_are_applied_once() {
    assert_eq!(answers(&journal("clean-shutdown")), ["alice req_271590 approve=true applied → Approved"]);
    assert_eq!(answers(&journal("clean-plan")), ["lead req_271590 approve=true applied → Approved"]);
}

/// s13's match_response checks the responder: bob's answer to alice's
/// request is refused and the request stays pending until alice answers.
#[test]
fn a_wrong_teammate_is_refused_and_the_right_one_applied() {
    assert_eq!(
        answers(&journal("wrong-teammate")),
        ["bob req_271590 approve=false refused: WrongSender", "alice req_271590 approve=true applied → Approved"]
    );
}

#[test]
fn a_flipped_approval_is_refused_as_already_decided() {
    assert_eq!(
        answers(&journal("approval-flipped")),
        ["alice req_271590 approve=true applied → Approved", "alice req_271590 approve=false refused: NotPending"]
    );
}

/// run_review_plan refuses a second review of a decided plan and writes no
/// line: the journal holds one answer.
#[test]
fn a_plan_reviewed_twice_leaves_one_answer() {
    assert_eq!(answers(&journal("plan-reviewed-twice")), ["lead req_271590 approve=true applied → Approved"]);
}

#[test]
fn an_unprompted_approval_with_an_unknown_id_is_refused() {
    let h = journal("unprompted-unknown-id");
    assert_eq!(answers(&h), ["alice unspecified approve=true refused: UnknownId"]);
    assert!(matches!(
        h.events.iter().find_map(|e| match &e.event {
            Event::Verdict { verdict, .. } => Some(*verdict),
            _ => None,
        }),
        Some(Verdict::Ignored(Reason::UnknownId))
    ));
}

/// The real s13 bug: the lead's second shutdown request landed while alice
/// handled the first; she stopped, a new alice was spawned under the same
/// name and approved the leftover at once. Even the journal reads as two
/// clean handshakes: no line marks the stop or the respawn, so nothing
/// tells the first alice from the second.
#[test]
fn a_leftover_read_after_a_respawn_reads_as_two_clean_handshakes() {
    let h = journal("leftover-after-respawn");
    assert_eq!(
        answers(&h),
        ["alice req_271590 approve=true applied → Approved", "alice req_304881 approve=true applied → Approved"]
    );
    assert_eq!(violations(&h), vec![]);
}

/// s13 reads and unlinks under the lock its send takes: a send from another
/// thread during alice's read waited, then made a new file. The line
/// survived, in the journal and as the unread tail of alice's mailbox.
#[test]
fn a_send_during_a_read_survives_in_s13() {
    let dir = case("lost-between-read-and-truncate");
    let tail = std::fs::read_to_string(dir.join(".mailboxes/alice.jsonl")).unwrap();
    let whole = std::fs::read_to_string(dir.join("journal/alice.jsonl")).unwrap();
    assert!(tail.contains("nightly") && whole.ends_with(&tail), "the tail is the journal's last line:\n{tail}");
    assert_eq!(
        answers(&journal("lost-between-read-and-truncate")),
        ["alice req_271590 approve=true applied → Approved"]
    );
}

/// The lead's plan_request carries no request id: it is read as the lead's
/// ask for a plan (the scenarios' `request_plan`, which closes alice's gate),
/// and the plan alice submits after it is a request like any other.
#[test]
fn a_plan_requested_mid_run_is_submitted_and_approved() {
    let h = journal("plan-requested-mid-run");
    let sent: Vec<&str> = h
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Send { message_type, .. } => Some(message_type.name()),
            _ => None,
        })
        .collect();
    assert_eq!(
        sent,
        ["message", "message", "plan_request", "plan_approval_request", "plan_approval_response", "message", "message"],
        "result, idle_notification, plan_request, the plan, its review, result, idle_notification"
    );
    assert_eq!(answers(&h), ["lead req_271590 approve=true applied → Approved"]);
}

/// What s13 left in `.mailboxes`: every case but one was read to the end,
/// so the folder holds only its README, and audit finds no inbox files there
/// (the CLI says so and exits 2); read directly, it is an empty history, not
/// a panic. The one tail left is the line sent during a read.
#[test]
fn the_drained_mailboxes_hold_only_the_unread_tail() {
    for name in CASES {
        let boxes = case(name).join(".mailboxes");
        if name == "lost-between-read-and-truncate" {
            assert_eq!(inbox::find(&case(name)), Some(boxes.clone()));
            let h = read(&boxes);
            assert_eq!(violations(&h), vec![]);
            let delivered = h.events.iter().filter(|e| matches!(e.event, Event::Deliver { .. })).count();
            assert_eq!(delivered, 1, "only the line alice never read");
            continue;
        }
        assert!(boxes.join("README").is_file(), "{name}");
        assert_eq!(inbox::find(&case(name)), None, "{name}: nothing left to judge");
        let h = read(&boxes);
        assert!(h.events.is_empty(), "{name}");
        assert_eq!(violations(&h), vec![], "{name}");
    }
}

#[test]
fn audit_says_so_when_a_drained_folder_holds_nothing() {
    let dir = case("leftover-after-respawn");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake")).arg("audit").arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no inbox files here") && err.contains("nothing was judged"), "{err}");
    assert!(out.stdout.is_empty());
}
