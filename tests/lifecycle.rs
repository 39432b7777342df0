//! The protocol defects a new user's schedules found (issue 9, points 1–9 and
//! 11), each held in place by the schedule that showed it. Every test here
//! failed before its fix.

mod common;

use common::{dump, run_toml};
use handshake::protocol::{Address, Reason};
use handshake::scenario::{Invariant, Report};
use handshake::team::{Outcome, Stop};
use handshake::trace::{Event, RosterStatus};
use std::collections::BTreeMap;

fn run(toml: &str) -> (Report, Outcome) {
    run_toml(toml, 1)
}

fn passes(toml: &str) -> Outcome {
    let (r, o) = run(toml);
    assert!(r.passed, "{:?}\n{}", r.failures, dump(&o));
    o
}

fn ignored_requests(o: &Outcome, reason: Reason) -> usize {
    o.events.iter().filter(|e| matches!(&e.event, Event::RequestIgnored { reason: r, .. } if *r == reason)).count()
}

// ------------------------------------------------- 1. forged requests

const FORGED_SHUTDOWN: &str = r#"
name = "forged-request"
about = "A forgery claiming to be the lead reaches alice before the lead's real request."
[[teammate]]
name = "alice"
on_shutdown = ["reject", "approve"]
reject_reason = "busy"
work = [{ write = "a.rs", steps = 4, step_time = "500ms" }]
[[fault]]
kind = "forge"
at = "500ms"
from = "lead"
to = "alice"
message = { type = "shutdown_request", request_id = "00000000-0000-4000-8000-000000000001" }
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
label = "stop"
"#;

#[test]
fn a_forged_shutdown_request_does_not_use_up_an_answer() {
    let o = passes(&format!(
        "{FORGED_SHUTDOWN}[[expect]]\nrequest = \"stop\"\nstatus = \"rejected\"\n[[expect]]\nteammate = \"alice\"\nstatus = \"idle\"\n"
    ));
    assert_eq!(ignored_requests(&o, Reason::WrongSender), 1, "{}", dump(&o));
    // No answer at all went to the forgery: not even a refused one.
    assert!(!o.events.iter().any(|e| matches!(e.event, Event::Refuse { .. })), "{}", dump(&o));
}

#[test]
fn without_sender_authentication_the_forgery_spends_the_answer() {
    let o = passes(&format!(
        "{FORGED_SHUTDOWN}[policy.defences]\nsender_auth = false\n\
         [[expect]]\nrequest = \"stop\"\nstatus = \"approved\"\n"
    ));
    assert_eq!(ignored_requests(&o, Reason::WrongSender), 0);
}

#[test]
fn a_forged_plan_request_does_not_use_up_the_leads_answer() {
    let o = passes(
        r#"
name = "forged-plan"
about = "A forgery claiming to be alice asks the lead to approve a plan before alice's real one."
[lead]
on_plan = ["approve", "reject"]
[[teammate]]
name = "alice"
require_plan = true
max_revisions = 0
work = [{ write = "a.rs", steps = 1, step_time = "1s" }]
[[fault]]
kind = "forge"
at = "0ms"
from = "alice"
to = "lead"
message = { type = "plan_approval_request", request_id = "00000000-0000-4000-8000-000000000002", plan = "DROP TABLE users" }
[[expect]]
request = "alice/plan/1"
status = "approved"
[[expect]]
file = "a.rs"
state = "complete"
"#,
    );
    assert_eq!(ignored_requests(&o, Reason::WrongSender), 1, "{}", dump(&o));
}

// ------------------------------------------------- 2. final states stay final

#[test]
fn a_kill_while_a_restart_is_due_is_final() {
    // The restart falls due at the very moment the request expires.
    let o = passes(
        r#"
name = "kill-beats-restart"
about = "Alice ignores a shutdown and crashes; the kill at 1m1s must stop her for good."
[[teammate]]
name = "alice"
on_shutdown = "ignore"
work = [{ write = "a.rs", steps = 200, step_time = "1s" }]
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
label = "stop"
[[fault]]
kind = "crash"
agent = "alice"
at = "10s"
restart = "51s"
[[expect]]
teammate = "alice"
status = "killed"
[[expect]]
file = "a.rs"
state = "partial"
"#,
    );
    let last_write = o.events.iter().rev().find(|e| matches!(e.event, Event::FileStep { .. })).map(|e| e.t);
    assert!(last_write.is_some_and(|t| t.0 <= 10_000), "she wrote after she was killed\n{}", dump(&o));
}

#[test]
fn a_restart_held_by_a_stall_does_not_undo_a_later_kill() {
    let o = passes(
        r#"
name = "stalled-restart-then-kill"
about = "Alice's restart waits behind a stall; the kill default comes first and is final."
[[teammate]]
name = "alice"
on_shutdown = "ignore"
work = [{ write = "a.rs", steps = 200, step_time = "1s" }]
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
label = "stop"
[[fault]]
kind = "crash"
agent = "alice"
at = "10s"
restart = "20s"
[[fault]]
kind = "stall"
agent = "alice"
at = "25s"
until = "2m"
[[expect]]
teammate = "alice"
status = "killed"
[[expect]]
file = "a.rs"
state = "partial"
"#,
    );
    assert!(o.events.iter().any(|e| matches!(&e.event, Event::Note { text } if text.contains("restart is void"))));
}

#[test]
fn a_second_crash_with_no_restart_is_final() {
    passes(
        r#"
name = "second-crash-final"
about = "Alice's restart waits behind a stall; a second crash with no restart comes first and is final."
[[teammate]]
name = "alice"
work = [{ write = "a.rs", steps = 200, step_time = "1s" }]
[[fault]]
kind = "crash"
agent = "alice"
at = "10s"
restart = "20s"
[[fault]]
kind = "stall"
agent = "alice"
at = "25s"
until = "2m"
[[fault]]
kind = "crash"
agent = "alice"
at = "40s"
[[expect]]
teammate = "alice"
status = "crashed"
[[expect]]
file = "a.rs"
state = "partial"
"#,
    );
}

#[test]
fn the_kill_default_leaves_a_final_crash_as_it_is() {
    let o = passes(
        r#"
name = "kill-finds-crashed"
about = "Alice crashes for good before her shutdown expires: the kill finds her gone and says so."
[[teammate]]
name = "alice"
on_shutdown = "ignore"
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
label = "stop"
[[fault]]
kind = "crash"
agent = "alice"
at = "10s"
[[expect]]
teammate = "alice"
status = "crashed"
[[expect]]
request = "stop"
status = "expired"
"#,
    );
    assert!(o.events.iter().any(|e| matches!(&e.event, Event::Note { text } if text.contains("nothing to kill"))));
}

// ------------------------------------------------- 3. graceful after a crash

#[test]
fn a_graceful_shutdown_after_a_crash_finishes_the_interrupted_write() {
    let o = passes(
        r#"
name = "graceful-after-crash"
about = "Alice crashes mid-write while her plan is pending; the shutdown she approves later redoes the write first."
[policy]
shutdown_timeout = "200s"
[lead]
on_plan = "ignore"
[[teammate]]
name = "alice"
work = [{ write = "a.rs", steps = 4, step_time = "1s" }]
[[step]]
at = "500ms"
do = "submit_plan"
from = "alice"
to = "lead"
plan = "tidy up"
[[fault]]
kind = "crash"
agent = "alice"
at = "1500ms"
restart = "1s"
[[step]]
at = "3s"
do = "shutdown"
to = "alice"
label = "stop"
[[expect]]
request = "stop"
status = "approved"
[[expect]]
teammate = "alice"
status = "shutdown"
[[expect]]
file = "a.rs"
state = "complete"
"#,
    );
    assert_eq!(o.files["a.rs"].done, 4);
}

// ------------------------------------------------- 4. a crash at 0 ms

#[test]
fn a_crash_before_the_start_makes_the_restart_the_start() {
    passes(
        r#"
name = "crash-at-zero"
about = "Alice crashes at 0 ms, before her start; restarted, she submits her plan and does her work."
[[teammate]]
name = "alice"
require_plan = true
work = [{ write = "a.rs", steps = 2, step_time = "1s" }]
[[fault]]
kind = "crash"
agent = "alice"
at = "0ms"
restart = "1s"
[[expect]]
request = "alice/plan/1"
status = "approved"
[[expect]]
file = "a.rs"
state = "complete"
"#,
    );
}

// ------------------------------------------------- 5. expired requests

const LATE_SHUTDOWN: &str = r#"
name = "late-shutdown-request"
about = "The lead's shutdown request is held on the wire past its deadline; under keep, the lead stops waiting."
[policy]
on_shutdown_timeout = "keep"
[[teammate]]
name = "alice"
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
label = "stop"
[[fault]]
kind = "delay"
type = "shutdown_request"
delay = "70s"
[[expect]]
request = "stop"
status = "expired"
"#;

#[test]
fn a_request_that_arrives_expired_is_not_obeyed() {
    let o = passes(&format!("{LATE_SHUTDOWN}[[expect]]\nteammate = \"alice\"\nstatus = \"idle\"\n"));
    assert_eq!(ignored_requests(&o, Reason::Expired), 1, "{}", dump(&o));
}

#[test]
fn without_the_deadline_check_the_two_sides_disagree_and_the_oracle_says_so() {
    let o = passes(&format!(
        "{LATE_SHUTDOWN}[policy.defences]\ndeadline_check = false\n\
         [[expect]]\nteammate = \"alice\"\nstatus = \"shutdown\"\n\
         [[expect]]\nviolation = \"expiry-policy\"\n"
    ));
    assert_eq!(ignored_requests(&o, Reason::Expired), 0);
}

// ------------------------------------------------- 6. a stalled requester

#[test]
fn a_plan_pending_behind_a_stall_at_the_end_is_not_a_violation() {
    passes(
        r#"
name = "stalled-requester"
about = "Alice's plan is pending when she stalls past the end of the run; her timers are frozen with her."
end = "5m"
[lead]
on_plan = "ignore"
[[teammate]]
name = "alice"
require_plan = true
work = [{ write = "a.rs", steps = 1, step_time = "1s" }]
[[fault]]
kind = "stall"
agent = "alice"
at = "1s"
until = "10m"
[[expect]]
request = "alice/plan/1"
status = "pending"
"#,
    );
}

// ------------------------------------------------- 8. the gate follows the current plan

const SECOND_PLAN: &str = r#"
name = "second-plan"
about = "Alice's first plan is approved; her second plan must close the gate until it is approved."
[[teammate]]
name = "alice"
require_plan = true
max_revisions = 0
work = [{ write = "a.rs", steps = 1, step_time = "1s" }, { write = "users.sql", steps = 1, step_time = "1s" }]
[[step]]
at = "500ms"
do = "submit_plan"
from = "alice"
to = "lead"
plan = "DROP TABLE users"
label = "drop-users"
[[expect]]
file = "users.sql"
state = "absent"
[[expect]]
teammate = "alice"
gate = "rejected"
"#;

#[test]
fn a_rejected_later_plan_keeps_the_gate_closed() {
    passes(&format!(
        "{SECOND_PLAN}[lead]\non_plan = [\"approve\", \"reject\"]\n\
         [[expect]]\nrequest = \"drop-users\"\nstatus = \"rejected\"\n"
    ));
}

#[test]
fn an_expired_later_plan_keeps_the_gate_closed() {
    passes(&format!(
        "{SECOND_PLAN}[lead]\non_plan = [\"approve\", \"ignore\"]\n\
         [[expect]]\nrequest = \"drop-users\"\nstatus = \"expired\"\n"
    ));
}

// ------------------------------------------------- 9. sends name their real sender

#[test]
fn every_send_names_the_sender_its_delivery_names() {
    let (_, o) = run(r#"
name = "replayed-forgery"
about = "A forged approval claiming to be alice is replayed after alice was killed."
[[teammate]]
name = "alice"
on_shutdown = "ignore"
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
label = "stop"
[[fault]]
kind = "forge"
at = "2s"
from = "alice"
to = "lead"
message = { type = "shutdown_response", request_id = "@stop", approve = true }
[[fault]]
kind = "replay"
at = "2m"
request = "stop"
"#);
    let mut senders: BTreeMap<u64, handshake::protocol::AgentId> = BTreeMap::new();
    let mut pairs = 0;
    for e in &o.events {
        match &e.event {
            Event::Send { seq, from, to: Address::Agent(_), .. } => {
                senders.insert(*seq, *from);
            }
            Event::Deliver { seq, sender, .. } => {
                assert_eq!(senders.get(seq), Some(sender), "send #{seq} names another sender\n{}", dump(&o));
                pairs += 1;
            }
            _ => {}
        }
    }
    assert!(pairs >= 3, "the forgery, its replay and the request were all delivered\n{}", dump(&o));
    assert!(
        o.events.iter().any(|e| matches!(&e.event, Event::Fault { fault: handshake::world::FaultKind::Replay, .. })),
        "the replay happened\n{}",
        dump(&o)
    );
}

// ------------------------------------------------- 11. a finished run has settled

#[test]
fn a_run_whose_only_timers_are_dead_deadlines_has_settled() {
    let (r, o) = run(r#"
name = "settled-early"
about = "Alice's plan is approved at 102 ms; its deadline timer must not keep the run alive to the cap."
cap = "10s"
[[teammate]]
name = "alice"
require_plan = true
work = [{ write = "a.rs", steps = 1, step_time = "100ms" }]
"#);
    assert!(r.passed, "{:?}", r.failures);
    assert_eq!(o.stop, Stop::Settled, "{}", dump(&o));
    assert_eq!(o.ended_at.0, 102, "the write ends at 102 ms");
}

#[test]
fn a_shutdown_timeout_past_the_cap_does_not_hold_a_finished_run() {
    let (_, o) = run(r#"
name = "long-timeout"
about = "The shutdown is approved at once; its deadline timer (the default 60s, past the 10s cap) is dead."
cap = "10s"
[[teammate]]
name = "alice"
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
"#);
    assert_eq!(o.stop, Stop::Settled, "{}", dump(&o));
    assert_eq!(o.ended_at.0, 1_002);
}

#[test]
fn a_pending_request_past_the_cap_still_stops_the_run_at_the_cap() {
    let (_, o) = run(r#"
name = "really-capped"
about = "Alice never answers; her request's deadline is after the cap, so the cap stops the run."
cap = "10s"
[[teammate]]
name = "alice"
on_shutdown = "ignore"
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
"#);
    assert_eq!(o.stop, Stop::Cap, "{}", dump(&o));
}

// ------------------------------------------------- the oracle sees a kill undone

#[test]
fn the_oracle_names_final_roster_in_its_invariants() {
    assert_eq!(Invariant::parse("final-roster"), Some(Invariant::FinalRoster));
}

#[test]
fn a_crash_with_no_restart_leaves_the_agent_crashed_in_the_roster() {
    let (_, o) = run(r#"
name = "crash-final"
about = "A crash with no restart is final."
[[teammate]]
name = "alice"
work = [{ write = "a.rs", steps = 4, step_time = "1s" }]
[[fault]]
kind = "crash"
agent = "alice"
at = "1s"
"#);
    assert_eq!(o.status_of("alice"), Some(RosterStatus::Crashed));
}

// ------------------------------------------------- the lead asks again (issue 21)

/// A teammate that always rejects, and a lead that asks again `times` times.
fn always_rejects(times: Option<u32>) -> String {
    let lead = times.map_or(String::new(), |n| format!("[lead]\nask_again_on_reject = {n}\n"));
    format!(
        r#"
name = "ask-again"
about = "The lead answers a rejection by asking again, as often as it is told to."
{lead}[[teammate]]
name = "alice"
on_shutdown = "reject"
reject_reason = "not yet"
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
"#
    )
}

fn shutdown_statuses(o: &Outcome) -> Vec<handshake::protocol::Status> {
    o.requests.iter().filter(|r| r.kind == handshake::protocol::Kind::Shutdown).map(|r| r.status).collect()
}

#[test]
fn a_rejected_shutdown_is_asked_again_as_often_as_the_lead_is_told_and_no_more() {
    use handshake::protocol::Status::Rejected;
    let o = passes(&always_rejects(None));
    assert_eq!(shutdown_statuses(&o), [Rejected], "by default a rejection stands: {}", dump(&o));
    let o = passes(&always_rejects(Some(1)));
    assert_eq!(shutdown_statuses(&o), [Rejected, Rejected], "asked once more, at once: {}", dump(&o));
    // At once: the rejection arrives at 1.002 s (1 ms each way), and so goes the new request.
    assert_eq!((o.requests[0].sent_at.0, o.requests[1].sent_at.0), (1000, 1002), "{}", dump(&o));
    let o = passes(&always_rejects(Some(3)));
    assert_eq!(shutdown_statuses(&o), [Rejected; 4], "{}", dump(&o));
    assert_ne!(o.status_of("alice"), Some(RosterStatus::Shutdown), "{}", dump(&o));
}

#[test]
fn a_teammate_that_rejects_once_is_stopped_by_the_second_request() {
    let o =
        passes(&always_rejects(Some(1)).replace("on_shutdown = \"reject\"", "on_shutdown = [\"reject\", \"approve\"]"));
    use handshake::protocol::Status::{Approved, Rejected};
    assert_eq!(shutdown_statuses(&o), [Rejected, Approved], "{}", dump(&o));
    assert_eq!(o.status_of("alice"), Some(RosterStatus::Shutdown), "{}", dump(&o));
}

#[test]
fn a_rejection_applied_twice_asks_again_only_once() {
    // With the pending check off, a duplicated rejection is applied a second
    // time: it must not buy a second request past `ask_again_on_reject`.
    let toml = always_rejects(Some(1)).replace(
        "[[teammate]]",
        "[policy.defences]\npending_check = false\n[[fault]]\nkind = \"duplicate\"\ntype = \"shutdown_response\"\ncount = 1\n[[teammate]]",
    );
    let (_, o) = run(&toml);
    assert_eq!(shutdown_statuses(&o).len(), 2, "the first request and one more: {}", dump(&o));
}

#[test]
fn a_late_rejection_does_not_ask_a_teammate_that_has_stopped() {
    // The first request's rejection is held back until after the second
    // request was approved and alice stopped: asking her again would only
    // be refused.
    let (r, o) = run(r#"
name = "late-rejection"
about = "A rejection overtaken by the approval of a later request."
[lead]
ask_again_on_reject = 1
[[teammate]]
name = "alice"
on_shutdown = ["reject", "approve"]
reject_reason = "busy"
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
[[fault]]
kind = "delay"
type = "shutdown_response"
count = 1
delay = "2s"
"#);
    assert!(r.passed, "{:?}\n{}", r.failures, dump(&o));
    assert_eq!(o.status_of("alice"), Some(RosterStatus::Shutdown), "{}", dump(&o));
    assert!(
        !o.events.iter().any(|e| matches!(e.event, Event::Refuse { .. })),
        "no request to a stopped teammate: {}",
        dump(&o)
    );
    assert_eq!(shutdown_statuses(&o).len(), 2, "{}", dump(&o));
}

/// Issue 23, point 5: an approval may carry feedback, as the reference's
/// `plan_approval {approve, feedback}` does (`[lead] feedback` goes with a
/// rejection only); none unless the scenario gives it.
#[test]
fn an_approval_carries_the_leads_feedback_when_given() {
    let file = |lead: &str| {
        format!(
            "name = \"a\"\nabout = \"an approval with feedback\"\n[lead]\n{lead}\n[[teammate]]\nname = \"alice\"\nrequire_plan = true\nplan = \"add a column\"\nwork = [{{ write = \"m.sql\", steps = 1 }}]\n"
        )
    };
    let approval_words = |toml: &str| {
        let (_, o) = common::run_toml(toml, 1);
        o.events
            .iter()
            .find_map(|e| match &e.event {
                handshake::trace::Event::Send {
                    message_type: handshake::protocol::MessageType::Response(handshake::protocol::Kind::Plan),
                    approve,
                    words,
                    ..
                } => Some((*approve, words.as_ref().map(|w| w.to_string()))),
                _ => None,
            })
            .expect("the plan is answered")
    };
    assert_eq!(
        approval_words(&file("approval_feedback = \"go ahead, but back up the table first\"")),
        (Some(true), Some("go ahead, but back up the table first".to_string()))
    );
    assert_eq!(approval_words(&file("feedback = \"only with a rejection\"")), (Some(true), None));
}
