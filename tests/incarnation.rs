//! Incarnations (issue 13, point 1): a restarted teammate must not answer a
//! request sent to the process its crash ended. The router stamps every
//! message with its receiver's incarnation; the receiver ignores a request
//! stamped for an earlier one (`stale_incarnation`), and the oracle reports
//! an answer to one (`current-incarnation`) when the check is switched off.

mod common;

use common::{bundled, dump, reports, run_toml};
use handshake::protocol::Reason;
use handshake::scenario::load_file;
use handshake::team::Outcome;
use handshake::trace::{Event, RosterStatus};

fn ignored_requests(o: &Outcome, reason: Reason) -> usize {
    o.events.iter().filter(|e| matches!(&e.event, Event::RequestIgnored { reason: r, .. } if *r == reason)).count()
}

/// Alice crashes at 2 s and is back at 5 s; the lead asks her to shut down
/// at `at`, and the request spends `delay` on the wire.
fn respawn(at: &str, delay: &str, defences: &str) -> String {
    format!(
        r#"
name = "respawn"
about = "A shutdown request and a crash and restart of its receiver."
{defences}
[[teammate]]
name = "alice"
[[step]]
at = "{at}"
do = "shutdown"
to = "alice"
label = "stop"
[[fault]]
kind = "delay"
type = "shutdown_request"
delay = "{delay}"
[[fault]]
kind = "crash"
agent = "alice"
at = "2s"
restart = "3s"
"#
    )
}

const CHECK_OFF: &str = "[policy.defences]\nincarnation_check = false";

#[test]
fn scenario_30_shows_the_respawn_bug_and_the_oracle_reports_it() {
    let (r, o) = bundled("30-respawn-answers-old-request");
    assert!(r.passed, "{:?}\n{}", r.failures, dump(&o));
    assert!(reports(&r, "current-incarnation"), "{:?}", r.violations);
    assert_eq!(ignored_requests(&o, Reason::StaleIncarnation), 0, "{}", dump(&o));
    assert_eq!(o.roster[1], RosterStatus::Shutdown);
}

#[test]
fn scenario_31_ignores_the_stale_request_and_the_deadline_settles_it() {
    let (r, o) = bundled("31-stale-incarnation-ignored");
    assert!(r.passed, "{:?}\n{}", r.failures, dump(&o));
    assert!(r.violations.is_empty(), "{:?}", r.violations);
    assert_eq!(ignored_requests(&o, Reason::StaleIncarnation), 1, "{}", dump(&o));
    // No answer of any kind left alice: the lead heard nothing and applied its policy.
    let answered = o.events.iter().any(|e| {
        matches!(
            &e.event,
            Event::Send {
                message_type: handshake::protocol::MessageType::Response(handshake::protocol::Kind::Shutdown),
                ..
            }
        )
    });
    assert!(!answered, "{}", dump(&o));
    assert_eq!(o.roster[1], RosterStatus::Killed);
}

#[test]
fn the_two_scenarios_differ_only_in_the_switch() {
    let read = |stem: &str| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{stem}.toml"));
        load_file(&path).expect("bundled")
    };
    let (bug, fixed) = (read("30-respawn-answers-old-request"), read("31-stale-incarnation-ignored"));
    assert!(!bug.policy().defences.incarnation_check);
    let mut switched = bug.policy().clone();
    switched.defences.incarnation_check = true;
    assert_eq!(&switched, fixed.policy());
}

#[test]
fn a_request_sent_after_the_restart_is_answered() {
    let (r, o) = run_toml(&respawn("6s", "5s", ""), 1);
    assert!(r.passed && r.violations.is_empty(), "{:?} {:?}\n{}", r.failures, r.violations, dump(&o));
    assert_eq!(ignored_requests(&o, Reason::StaleIncarnation), 0, "{}", dump(&o));
    assert_eq!(o.roster[1], RosterStatus::Shutdown);
}

#[test]
fn a_stale_request_that_arrives_before_the_restart_is_lost_with_the_crash() {
    // Delivered at 3 s, while alice is down: lost, with the crash as its cause;
    // the incarnation check never sees it.
    let (r, o) = run_toml(&respawn("1s", "2s", ""), 1);
    assert!(r.passed && r.violations.is_empty(), "{:?} {:?}\n{}", r.failures, r.violations, dump(&o));
    assert_eq!(ignored_requests(&o, Reason::StaleIncarnation), 0, "{}", dump(&o));
    let lost = o.events.iter().any(|e| {
        matches!(
            &e.event,
            Event::Dropped {
                message_type: handshake::protocol::MessageType::Request(handshake::protocol::Kind::Shutdown),
                ..
            }
        )
    });
    assert!(lost, "{}", dump(&o));
    assert_eq!(o.roster[1], RosterStatus::Killed);
}

/// Alice rejects the lead's request before her crash; after her restart the
/// network replays it. A replay is a copy of the old message, stamp included.
const REPLAYED: &str = r#"
name = "replayed-across-a-restart"
about = "A request answered by the old incarnation is replayed to the new one."
[[teammate]]
name = "alice"
on_shutdown = "reject"
reject_reason = "busy"
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
label = "stop"
[[fault]]
kind = "crash"
agent = "alice"
at = "2s"
restart = "3s"
[[fault]]
kind = "replay"
at = "10s"
request = "stop"
type = "shutdown_request"
"#;

#[test]
fn a_request_replayed_across_a_restart_is_stale() {
    let (r, o) = run_toml(REPLAYED, 1);
    assert!(r.violations.is_empty(), "{:?}\n{}", r.violations, dump(&o));
    assert_eq!(ignored_requests(&o, Reason::StaleIncarnation), 1, "{}", dump(&o));
}

#[test]
fn without_the_check_a_replayed_request_is_answered_and_the_oracle_says_so() {
    let (r, o) = run_toml(&format!("{REPLAYED}{CHECK_OFF}\n"), 1);
    assert!(reports(&r, "current-incarnation"), "{:?}\n{}", r.violations, dump(&o));
    assert_eq!(ignored_requests(&o, Reason::StaleIncarnation), 0, "{}", dump(&o));
}

#[test]
fn with_the_check_off_the_delayed_request_is_answered_by_the_new_incarnation() {
    let (r, o) = run_toml(&respawn("1s", "10s", CHECK_OFF), 1);
    assert!(reports(&r, "current-incarnation"), "{:?}\n{}", r.violations, dump(&o));
    assert_eq!(r.violations.len(), 1, "only the one invariant: {:?}", r.violations);
    assert_eq!(o.roster[1], RosterStatus::Shutdown);
}

#[test]
fn the_same_file_and_seed_give_the_same_trace() {
    for stem in ["30-respawn-answers-old-request", "31-stale-incarnation-ignored"] {
        let (_, a) = bundled(stem);
        let (_, b) = bundled(stem);
        assert_eq!(dump(&a), dump(&b), "{stem}");
    }
}

// ------------------------------------------------- the explorer

use handshake::explore::{explore, Bounds, Broke, Budgets};
use handshake::scenario::{load_str, Invariant};

#[test]
fn the_explorer_finds_the_respawn_bug_in_scenario_30_and_nothing_in_31() {
    let load = |stem: &str| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{stem}.toml"));
        load_file(&path).expect("bundled")
    };
    let off = explore(&load("30-respawn-answers-old-request"), Budgets::default(), Bounds::default());
    // The file expects it: found as expected, and nothing else is.
    assert!(off.counterexample.is_none(), "{:?}", off.counterexample.map(|c| c.detail));
    let c = off.expected.first().expect("the respawn bug is reachable with the check off");
    assert!(matches!(c.broke, Broke::Invariant(Invariant::CurrentIncarnation)), "{}", c.narrate().join("\n"));
    let on = explore(&load("31-stale-incarnation-ignored"), Budgets::default(), Bounds::default());
    assert!(on.counterexample.is_none(), "{:?}", on.counterexample.map(|c| c.narrate()));
    assert_eq!(on.stopped_by, None, "the whole space fits the bounds");
}

#[test]
fn with_a_crash_budget_alone_the_explorer_finds_the_bug_only_with_the_check_off() {
    // No crash and no delay in the file: the explorer's own crash (with a
    // restart) and its choice of when to deliver are enough.
    let file = |defences: &str| {
        let toml = format!(
            "name = \"ask\"\nabout = \"The lead asks alice to stop.\"\n{defences}\n[[teammate]]\nname = \"alice\"\n\
             [[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"alice\"\n"
        );
        load_str("ask.toml", &toml).expect("a valid scenario")
    };
    let budgets = Budgets { crash: 1, ..Budgets::default() };
    let off = explore(&file(CHECK_OFF), budgets, Bounds::default());
    let c = off.counterexample.expect("a crash between the send and the delivery");
    assert!(matches!(c.broke, Broke::Invariant(Invariant::CurrentIncarnation)), "{}", c.narrate().join("\n"));
    let on = explore(&file(""), budgets, Bounds::default());
    assert!(on.counterexample.is_none(), "{:?}", on.counterexample.map(|c| c.narrate()));
    assert_eq!(on.stopped_by, None, "the whole space fits the bounds");
}
