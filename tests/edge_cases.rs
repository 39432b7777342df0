//! Edge cases a review found, each now held in place: idempotent answers,
//! crashes around shutdowns, overlapping stalls, reorder timing, and kills
//! of crashed teammates.

mod common;

use common::{dump, run_toml};
use handshake::scenario::Report;
use handshake::team::Outcome;
use handshake::trace::{Event, RosterStatus};

fn run(toml: &str) -> (Report, Outcome) {
    run_toml(toml, 1)
}

fn sent(o: &Outcome, message_type: &str) -> usize {
    o.events
        .iter()
        .filter(|e| matches!(&e.event, Event::Send { message_type: t, .. } if t.name() == message_type))
        .count()
}

#[test]
fn a_duplicated_request_gets_the_same_answer_not_the_next_one() {
    let (r, o) = run(r#"
name = "dup-request"
about = "The lead's request reaches alice twice; she must not reject it and then approve the copy."
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
[[expect]]
request = "stop"
status = "rejected"
[[expect]]
teammate = "alice"
status = "idle"
"#);
    assert!(r.passed, "{:?}\n{}", r.failures, dump(&o));
    assert_eq!(sent(&o, "shutdown_response"), 2, "she answers both copies, the same way");
}

#[test]
fn a_shutting_down_teammate_does_not_open_requests_it_would_abandon() {
    let (r, o) = run(r#"
name = "no-plan-while-stopping"
about = "Alice approved her shutdown and is finishing a write when a step asks her to submit a plan."
[lead]
on_plan = "ignore"
[[teammate]]
name = "alice"
work = [{ write = "a.rs", steps = 4, step_time = "500ms" }]
[[step]]
at = "600ms"
do = "shutdown"
to = "alice"
[[step]]
at = "700ms"
do = "submit_plan"
from = "alice"
"#);
    assert!(r.passed, "no request may be left pending without its timer: {:?}\n{}", r.failures, dump(&o));
    assert!(o.request("alice/plan/1").is_none());
    assert_eq!(o.status_of("alice"), Some(RosterStatus::Shutdown));
}

#[test]
fn the_kill_default_also_stops_a_crashed_teammate_from_coming_back() {
    let (r, o) = run(r#"
name = "kill-crashed"
about = "The request is lost, alice crashes, the deadline passes while she is down: she must stay down."
[[teammate]]
name = "alice"
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
label = "stop"
[[fault]]
kind = "drop"
type = "shutdown_request"
[[fault]]
kind = "crash"
agent = "alice"
at = "2s"
restart = "70s"
[[expect]]
request = "stop"
status = "expired"
[[expect]]
teammate = "alice"
status = "killed"
"#);
    assert!(r.passed, "{:?}\n{}", r.failures, dump(&o));
    assert!(!o.events.iter().any(|e| matches!(e.event, Event::Restart { .. })), "{}", dump(&o));
}

#[test]
fn a_crash_after_approving_a_shutdown_redoes_the_write_before_stopping() {
    let (r, o) = run(r#"
name = "crash-while-stopping"
about = "Alice approves, crashes halfway through finishing her file, restarts: she must finish it before stopping."
[[teammate]]
name = "alice"
work = [{ write = "a.rs", steps = 4, step_time = "500ms" }]
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
[[fault]]
kind = "crash"
agent = "alice"
at = "1200ms"
restart = "1s"
[[expect]]
file = "a.rs"
state = "complete"
[[expect]]
teammate = "alice"
status = "shutdown"
"#);
    assert!(r.passed, "{:?}\n{}", r.failures, dump(&o));
}

#[test]
fn requests_set_aside_before_a_crash_die_with_it() {
    let (r, o) = run(r#"
name = "deferred-lost"
about = "Alice waits on her plan and sets the shutdown request aside; a crash takes that queue with it."
[policy]
on_shutdown_timeout = "keep"
[lead]
on_plan = "ignore"
[[teammate]]
name = "alice"
require_plan = true
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
[[fault]]
kind = "crash"
agent = "alice"
at = "2s"
restart = "200s"
"#);
    assert!(r.passed, "{:?}\n{}", r.failures, dump(&o));
    assert!(o.events.iter().any(|e| matches!(e.event, Event::Deferred { .. })), "{}", dump(&o));
    assert_eq!(sent(&o, "shutdown_response"), 0, "the set-aside request is never answered\n{}", dump(&o));
}

#[test]
fn overlapping_stalls_merge_and_lose_nothing() {
    let (r, o) = run(r#"
name = "two-stalls"
about = "A short stall inside a long one must neither end the long one nor drop what it holds."
[[teammate]]
name = "alice"
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
label = "stop"
[[fault]]
kind = "stall"
agent = "alice"
at = "0s"
until = "10s"
[[fault]]
kind = "stall"
agent = "alice"
at = "2s"
until = "3s"
[[expect]]
request = "stop"
status = "approved"
"#);
    assert!(r.passed, "{:?}\n{}", r.failures, dump(&o));
    let approved_at = o
        .events
        .iter()
        .find(|e| {
            matches!(
                e.event,
                Event::Send {
                    message_type: handshake::protocol::MessageType::Response(handshake::protocol::Kind::Shutdown),
                    ..
                }
            )
        })
        .map(|e| e.t.0);
    assert_eq!(approved_at, Some(10_000), "alice reads her inbox when the long stall ends\n{}", dump(&o));
}

#[test]
fn a_second_reordered_message_waits_its_own_full_patience() {
    let (r, o) = run(r#"
name = "reorder-twice"
about = "Two holds on one link: the first hold's timer must not release the second."
[[teammate]]
name = "alice"
[[step]]
at = "1s"
do = "message"
to = "alice"
text = "m1"
[[step]]
at = "2s"
do = "message"
to = "alice"
text = "m2"
[[step]]
at = "10s"
do = "message"
to = "alice"
text = "m3"
[[fault]]
kind = "reorder"
type = "message"
count = 3
"#);
    assert!(r.passed, "{:?}", r.failures);
    let delivered: Vec<u64> = o
        .events
        .iter()
        .filter(|e| matches!(e.event, Event::Deliver { message_type: handshake::protocol::MessageType::Message, .. }))
        .map(|e| e.t.0)
        .collect();
    // m1 is held until m2 passes (both at 2.001 s); m2 itself is not held (a
    // hold is already waiting on the link); m3 is held and nothing follows it,
    // so it goes after the full 10 s, not at 11 s when m1's old timer fires.
    assert_eq!(delivered, vec![2001, 2001, 20_000], "{}", dump(&o));
}
