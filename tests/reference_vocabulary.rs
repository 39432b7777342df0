//! The reference's vocabulary in scenarios (issue 23, point 5): the lead
//! asking for a plan mid-run (s13's `request_plan`), respawning a teammate
//! under its old name (the production agent's leftover-shutdown bug), and
//! expectations on who received what and on an inbox file's lines.

mod common;

use common::{bundled, dump, reports, run_toml};
use handshake::protocol::Reason;
use handshake::scenario::load_str;
use handshake::trace::{Event, RosterStatus};

/// The leftover shutdown of scenario 45, with `[policy.defences]` as given.
fn leftover(defences: &str) -> String {
    format!(
        r#"
name = "leftover"
about = "A shutdown request left in a file is read by a respawned teammate."
[policy]
mailbox = "file"
drain = "offset"
shutdown_timeout = "10s"
{defences}
[[teammate]]
name = "alice"
work = [{{ shell = "cargo test", steps = 4, step_time = "1s" }}]
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
label = "stop"
[[step]]
at = "3999ms"
do = "shutdown"
to = "alice"
label = "stop-again"
[[step]]
at = "8s"
do = "respawn"
to = "alice"
"#
    )
}

#[test]
fn a_respawned_teammate_ignores_the_shutdown_its_predecessor_left_in_its_file() {
    let (r, o) = run_toml(&leftover(""), 1);
    assert!(r.violations.is_empty(), "{:?}\n{}", r.violations, dump(&o));
    assert_eq!(o.status_of("alice"), Some(RosterStatus::Idle), "{}", dump(&o));
    let stale =
        o.events.iter().filter(|e| matches!(&e.event, Event::RequestIgnored { reason: Reason::StaleIncarnation, .. }));
    assert_eq!(stale.count(), 1, "{}", dump(&o));
    assert!(o.events.iter().any(|e| matches!(e.event, Event::Respawn { .. })), "{}", dump(&o));
    // Expired with default kill, and the new alice was never asked: not killed.
    assert!(!o.events.iter().any(|e| matches!(e.event, Event::Status { status: RosterStatus::Killed, .. })));
}

#[test]
fn without_the_incarnation_check_the_new_process_obeys_the_leftover_and_the_oracle_says_so() {
    let (r, o) = run_toml(&leftover("[policy.defences]\nincarnation_check = false"), 1);
    assert!(reports(&r, "current-incarnation"), "{:?}\n{}", r.violations, dump(&o));
    assert_eq!(o.status_of("alice"), Some(RosterStatus::Shutdown), "the bug: the new alice stops at once");
    let stop_again = o.request("stop-again").expect("made");
    assert_eq!(stop_again.status, handshake::protocol::Status::Approved, "the lead believes it was obeyed");
}

#[test]
fn respawning_a_running_teammate_changes_nothing() {
    let toml = r#"
name = "respawn-running"
about = "A respawn of a teammate that is running."
[[teammate]]
name = "alice"
work = [{ shell = "make", steps = 2, step_time = "1s" }]
[[step]]
at = "500ms"
do = "respawn"
to = "alice"
"#;
    let (r, o) = run_toml(toml, 1);
    assert!(r.violations.is_empty(), "{:?}", r.violations);
    assert!(!o.events.iter().any(|e| matches!(e.event, Event::Respawn { .. })), "{}", dump(&o));
    assert!(dump(&o).contains("nothing to respawn"), "{}", dump(&o));
    assert_eq!(o.status_of("alice"), Some(RosterStatus::Idle));
}

#[test]
fn a_killed_teammate_respawned_starts_its_work_again_from_the_first_item() {
    let toml = r#"
name = "respawn-killed"
about = "A teammate killed by the kill default, then respawned."
[policy]
shutdown_timeout = "1s"
[[teammate]]
name = "alice"
on_shutdown = "ignore"
work = [{ write = "a.rs", steps = 4, step_time = "1s" }]
[[step]]
at = "0s"
do = "shutdown"
to = "alice"
[[step]]
at = "2s"
do = "respawn"
to = "alice"
"#;
    let (r, o) = run_toml(toml, 1);
    assert!(r.violations.is_empty(), "{:?}\n{}", r.violations, dump(&o));
    let statuses: Vec<RosterStatus> = o
        .events
        .iter()
        .filter_map(|e| match e.event {
            Event::Status { status, .. } => Some(status),
            _ => None,
        })
        .collect();
    assert!(statuses.contains(&RosterStatus::Killed), "{}", dump(&o));
    assert_eq!(o.status_of("alice"), Some(RosterStatus::Idle), "{}", dump(&o));
    assert!(o.files["a.rs"].is_complete(), "the new process writes a.rs from its first step");
}

#[test]
fn only_the_lead_asks_for_a_plan_and_only_the_lead_respawns() {
    let toml = r#"
name = "teammate-asks"
about = "A teammate tries the lead's request_plan."
[[teammate]]
name = "alice"
[[teammate]]
name = "bob"
[[step]]
at = "1s"
do = "request_plan"
from = "alice"
to = "bob"
[[expect]]
refused = 1
rule = "plan-request-from-lead"
[[expect]]
teammate = "bob"
gate = "not_required"
"#;
    let (r, o) = run_toml(toml, 1);
    assert!(r.passed, "{:?}\n{}", r.failures, dump(&o));
    let respawn = toml.replace("do = \"request_plan\"", "do = \"respawn\"");
    let err = load_str("x.toml", &respawn).expect_err("refused by the file check");
    assert!(format!("{err:?}").contains("the lead respawns a teammate"), "{err:?}");
}

#[test]
fn a_plan_asked_for_mid_run_holds_back_the_next_mutating_item() {
    let (r, o) = bundled("43-plan-asked-mid-run");
    assert!(r.passed, "{:?}\n{}", r.failures, dump(&o));
    let blocked = o.events.iter().find(|e| matches!(&e.event, Event::Act { blocked: Some(_), .. })).expect("blocked");
    let approved = o
        .events
        .iter()
        .find(|e| matches!(&e.event, Event::Gate { state: handshake::protocol::GateState::Approved, .. }));
    assert!(blocked.t < approved.expect("approved").t, "{}", dump(&o));
}

#[test]
fn received_and_inbox_expectations_fail_with_what_was_found() {
    let base = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/45-leftover-shutdown-after-respawn.toml"
    ))
    .unwrap();
    let wrong_count = base.replace("by = \"alice\"\ncount = 2", "by = \"alice\"\ncount = 3");
    assert_ne!(wrong_count, base);
    let (r, _) = run_toml(&wrong_count, 1);
    let messages: Vec<&str> = r.failures.iter().map(|f| f.message.as_str()).collect();
    assert_eq!(messages, ["alice received 2 shutdown_request, expected 3"], "{messages:?}");
    let wrong_lines = base.replace("lines = 2", "lines = 1");
    let (r, _) = run_toml(&wrong_lines, 1);
    let messages: Vec<&str> = r.failures.iter().map(|f| f.message.as_str()).collect();
    assert_eq!(messages, ["alice.jsonl holds 2 line(s) of type shutdown_request at the end, expected 1"]);
    let from_bob = base.replace("by = \"alice\"\ncount = 2", "by = \"alice\"\nfrom = \"lead\"\ncount = 2");
    assert!(run_toml(&from_bob, 1).0.passed);
}

#[test]
fn bad_received_and_inbox_expectations_are_refused_with_the_reason() {
    let cases = [
        ("[[expect]]\nreceived = \"shutdown_request\"\n", "needs `by`"),
        ("[[expect]]\nreceived = \"shutdown_reqest\"\nby = \"alice\"\n", "unknown message type"),
        ("[[expect]]\nreceived = \"message\"\nby = \"carol\"\n", "carol"),
        ("[[expect]]\ninbox = \"alice\"\nlines = 1\n", "needs mailbox ="),
        ("[[expect]]\nreceived = \"message\"\nby = \"alice\"\nlines = 2\n", "`lines` does not go with `received`"),
    ];
    for (expect, why) in cases {
        let toml = format!("name = \"x\"\nabout = \"x\"\n[[teammate]]\nname = \"alice\"\n{expect}");
        let err = load_str("x.toml", &toml).expect_err(expect);
        assert!(format!("{err:?}").contains(why), "{expect}: {err:?}");
    }
}

#[test]
fn bad_answer_steps_are_refused_with_the_reason() {
    let head = "name = \"x\"\nabout = \"x\"\n[[teammate]]\nname = \"alice\"\n[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"alice\"\nlabel = \"stop\"\n[[step]]\nat = \"2s\"\ndo = \"answer\"\nfrom = \"alice\"\n";
    let cases = [
        ("type = \"shutdown_response\"\nrequest = \"stop\"\n", "needs `approve"),
        ("request = \"stop\"\napprove = true\n", "needs `type`"),
        (
            "type = \"shutdown_request\"\nrequest = \"stop\"\napprove = true\n",
            "use one of shutdown_response, plan_approval_response, task_response",
        ),
        (
            "type = \"shutdown_response\"\nrequest = \"stpo\"\napprove = true\n",
            "no step before this one labels a request",
        ),
        ("type = \"shutdown_response\"\napprove = true\n", "quotes one request"),
        (
            "type = \"shutdown_response\"\nrequest = \"stop\"\nrequest_id = \"x\"\napprove = true\n",
            "quotes one request",
        ),
        ("type = \"plan_approval_response\"\nrequest_id = \"x\"\napprove = true\n", "needs `to`"),
        (
            "type = \"shutdown_response\"\nrequest = \"stop\"\napprove = true\nplan = \"p\"\n",
            "`plan` does not apply to answer",
        ),
    ];
    for (tail, why) in cases {
        let toml = format!("{head}{tail}");
        let err = load_str("x.toml", &toml).expect_err(tail);
        assert!(format!("{err:?}").contains(why), "{tail}: {err:?}");
    }
    // Alice leaves the lead's request unanswered, so she is still running to
    // send the scripted approval.
    let head = head.replace("name = \"alice\"\n", "name = \"alice\"\non_shutdown = \"ignore\"\n");
    let ok = format!("{head}type = \"shutdown_response\"\nrequest_id = \"unspecified\"\napprove = true\n");
    let (r, o) = run_toml(&ok, 1);
    assert!(r.passed, "{:?}", r.failures);
    let unknown = o.events.iter().filter(|e| {
        matches!(&e.event, Event::Verdict { verdict: handshake::protocol::Verdict::Ignored(Reason::UnknownId), .. })
    });
    assert_eq!(unknown.count(), 1, "an id nobody issued is ignored as such\n{}", dump(&o));
}

#[test]
fn a_wrong_teammates_genuine_answer_is_turned_away_unless_the_sender_check_is_off() {
    let (r, o) = bundled("46-wrong-teammate-answers");
    assert!(r.passed, "{:?}\n{}", r.failures, dump(&o));
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/46-wrong-teammate-answers.toml"))
            .unwrap()
            .replace("[policy]\n", "[policy.defences]\nsender_check = false\n[policy]\n");
    let (r, _) = run_toml(&text, 1);
    assert!(reports(&r, "matching-response"), "{:?}", r.violations);
}

/// What fuzz found once `request_plan` and `respawn` were steps it could
/// add, each shrunk to its smallest file: every one is clean now.
#[test]
fn the_finds_of_fuzz_with_the_new_steps_hold_every_invariant() {
    let plan_approved = "name = \"x\"\nabout = \"x\"\n[[teammate]]\nname = \"alice\"\nrequire_plan = true\n";
    let cases = [
        // A plan asked of the old process must not close the new one's gate.
        (
            "[policy]\nmailbox = \"file\"\ndrain = \"offset\"\n[[teammate]]\nname = \"alice\"\nwork = [{ shell = \"t\", steps = 1, step_time = \"200ms\" }]\n[[step]]\nat = \"0ms\"\ndo = \"shutdown\"\nto = \"alice\"\n[[step]]\nat = \"0ms\"\ndo = \"request_plan\"\nto = \"alice\"\n[[step]]\nat = \"500ms\"\ndo = \"respawn\"\nto = \"alice\"\n".to_string(),
            "gated-action after a respawn",
        ),
        // A plan asked of a teammate already stopping closes nothing: it
        // promised to redo its item after a crash.
        (
            format!("{plan_approved}work = [{{ write = \"a.rs\", steps = 2, step_time = \"500ms\" }}]\n[[step]]\nat = \"2ms\"\ndo = \"shutdown\"\nto = \"alice\"\n[[step]]\nat = \"2ms\"\ndo = \"request_plan\"\nto = \"alice\"\n[[fault]]\nkind = \"crash\"\nagent = \"alice\"\nat = \"1s\"\nrestart = \"1ms\"\n"),
            "graceful-complete when asked for a plan while stopping",
        ),
        // The old process's plan, pending when it was respawned: abandoned
        // if the new one stops first, and its reject default does not hold
        // the new one's gate.
        (
            format!("{plan_approved}[[step]]\nat = \"119998ms\"\ndo = \"respawn\"\nto = \"alice\"\n[[fault]]\nkind = \"crash\"\nagent = \"alice\"\nat = \"1ms\"\n"),
            "expiry-policy of an abandoned plan",
        ),
        // A respawn a crash overtakes before it runs: the restart starts the
        // new process, not the old one.
        (
            format!("{plan_approved}work = [{{ write = \"a.rs\", steps = 1, step_time = \"5ms\" }}]\n[[step]]\nat = \"5ms\"\ndo = \"respawn\"\nto = \"alice\"\n[[fault]]\nkind = \"crash\"\nagent = \"alice\"\nat = \"5ms\"\nrestart = \"1ms\"\n[[fault]]\nkind = \"crash\"\nagent = \"alice\"\nat = \"10ms\"\nrestart = \"1ms\"\n[[fault]]\nkind = \"stall\"\nagent = \"alice\"\nat = \"5ms\"\nuntil = \"10ms\"\n"),
            "gated-action when a crash overtakes a respawn",
        ),
        // What a crash left half-written is not the new process's to finish.
        (
            "name = \"x\"\nabout = \"x\"\n[lead]\non_plan = [\"approve\", \"reject\"]\nfeedback = \"no\"\n[[teammate]]\nname = \"alice\"\nrequire_plan = true\nmax_revisions = 0\nwork = [{ write = \"m.sql\", steps = 2, step_time = \"500ms\" }]\n[[step]]\nat = \"1s\"\ndo = \"respawn\"\nto = \"alice\"\n[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"alice\"\n[[fault]]\nkind = \"crash\"\nagent = \"alice\"\nat = \"1s\"\nrestart = \"1ms\"\n".to_string(),
            "graceful-complete of a file the old process left",
        ),
    ];
    for (toml, what) in cases {
        let toml = if toml.starts_with("name") { toml } else { format!("name = \"x\"\nabout = \"x\"\n{toml}") };
        let (r, o) = run_toml(&toml, 1);
        assert!(r.violations.is_empty(), "{what}: {:?}\n{}", r.violations, dump(&o));
    }
}
