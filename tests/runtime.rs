//! The protocol through the actor runtime: every test builds a team, runs it
//! on the paused clock with `handshake::team::run`, and reads what happened
//! from the trace (`Outcome.events`), the request tables, the roster and the
//! simulated files.

mod common;

use common::dump;
use handshake::agent::{Answer, Answers, Script, TeammateSpec, WorkItem};
use handshake::protocol::kinds;
use handshake::protocol::{
    Action, Address, AgentId, Defences, GateState, Kind, Message, MessageType, Millis, Reason, Request, RequestId,
    SendError, Status, TimeoutDefault, Verdict,
};
use handshake::team::{run, Filter, Latency, LeadSpec, LinkEffect, LinkFault, Outcome, Scheduled, Step, TeamSpec};
use handshake::trace::{Event, RosterStatus};
use std::collections::BTreeSet;

const LEAD: AgentId = AgentId::LEAD;
const ALICE: AgentId = AgentId(1);
const BOB: AgentId = AgentId(2);
/// The shutdown deadline of a request sent at 1 s with the default 60 s timeout.
const STOP_ALICE_DEADLINE: Millis = Millis(61_000);

// ---------------------------------------------------------------- fixtures

fn write(path: &str, steps: u32, step_time: Millis) -> WorkItem {
    WorkItem { action: Action::Write, path: Some(path.into()), steps, step_time }
}

/// Alice writes `src/auth.rs` in 4 steps of 500 ms (done at 2 s).
fn alice_writing() -> TeammateSpec {
    TeammateSpec { work: vec![write("src/auth.rs", 4, Millis(500))], ..TeammateSpec::default() }
}

/// Alice must plan first, then writes `src/db.rs` in 2 steps of 100 ms.
fn alice_planning() -> TeammateSpec {
    TeammateSpec { require_plan: true, work: vec![write("src/db.rs", 2, Millis(100))], ..TeammateSpec::default() }
}

/// Alice never answers a shutdown request and has 100 s of writing to do.
fn alice_ignoring_shutdown() -> TeammateSpec {
    TeammateSpec {
        on_shutdown: Answers::always(Answer::Ignore),
        work: vec![write("src/auth.rs", 200, Millis(500))],
        ..TeammateSpec::default()
    }
}

fn team_of(teammates: Vec<(&str, TeammateSpec)>) -> TeamSpec {
    TeamSpec::new(teammates.into_iter().map(|(n, s)| (n.to_string(), s)).collect())
}

fn alice_alone(alice: TeammateSpec) -> TeamSpec {
    team_of(vec![("alice", alice)])
}

fn alice_and_bob(alice: TeammateSpec) -> TeamSpec {
    team_of(vec![("alice", alice), ("bob", TeammateSpec::default())])
}

fn lead_answering(answers: &[Answer]) -> LeadSpec {
    LeadSpec { on_plan: Answers::new(answers.to_vec()), ..LeadSpec::default() }
}

/// The lead asks `to` to shut down at `at`, under `label`.
fn shutdown(at: Millis, to: AgentId, label: &str) -> Step {
    Step { at, agent: LEAD, script: Script::Ask { kind: Kind::Shutdown, to, words: None, label: Some(label.into()) } }
}

fn say(at: Millis, from: AgentId, to: Address, text: &str) -> Step {
    Step { at, agent: from, script: Script::Say { to, text: text.into() } }
}

/// A placeholder id, replaced by the labelled request's real id when a forge fires.
fn any_id() -> RequestId {
    RequestId::from_random_bytes([0; 16])
}

/// An adversary injects `message` to `to`, claiming to be `claimed_from`;
/// with `label`, the message quotes that request's real id.
fn forge(at: Millis, claimed_from: AgentId, to: AgentId, message: Message, label: Option<&str>) -> (Millis, Scheduled) {
    (at, Scheduled::Forge { claimed_from, to, message, id_label: label.map(str::to_string) })
}

fn shutdown_response(approve: bool) -> Message {
    let reason = (!approve).then(|| "busy".into());
    Message::Response { kind: Kind::Shutdown, request_id: any_id(), approve, words: reason }
}

fn plan_approval(approve: bool) -> Message {
    Message::Response { kind: Kind::Plan, request_id: any_id(), approve, words: None }
}

fn link_fault(effect: LinkEffect, filter: Filter) -> LinkFault {
    LinkFault { effect, filter, at: Millis::ZERO, until: None, count: None, probability: 1.0, hits: 0 }
}

fn of_type(message_type: &'static str) -> Filter {
    Filter { types: vec![MessageType::parse(message_type).expect("a message type")], ..Filter::default() }
}

fn of_request(message_type: &'static str, label: &str) -> Filter {
    let types = vec![MessageType::parse(message_type).expect("a message type")];
    Filter { types, request: Some(label.to_string()), ..Filter::default() }
}

// ---------------------------------------------------------------- reading the outcome

fn request<'a>(out: &'a Outcome, label: &str) -> &'a Request {
    out.request(label).unwrap_or_else(|| panic!("no request labelled {label}; requests: {:?}", out.requests))
}

fn status(out: &Outcome, label: &str) -> Status {
    request(out, label).status
}

/// Every verdict any agent gave on a response quoting `id`, in order.
fn verdicts_on(out: &Outcome, id: RequestId) -> Vec<Verdict> {
    out.events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Verdict { request_id, verdict, .. } if *request_id == id => Some(*verdict),
            _ => None,
        })
        .collect()
}

fn verdicts(out: &Outcome, label: &str) -> Vec<Verdict> {
    verdicts_on(out, request(out, label).id)
}

fn applied(kind: Kind, to: Status) -> Verdict {
    Verdict::Applied { kind, from: Status::Pending, to }
}

/// The states the plan gate of `agent` went through, in order.
fn gate_states(out: &Outcome, agent: AgentId) -> Vec<GateState> {
    out.events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Gate { agent: a, state } if *a == agent => Some(*state),
            _ => None,
        })
        .collect()
}

/// The write attempts of `agent`: when, and the gate state that blocked it (if any).
fn writes(out: &Outcome, agent: AgentId) -> Vec<(Millis, Option<GateState>)> {
    out.events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Act { agent: a, action: Action::Write, blocked, .. } if *a == agent => Some((e.t, *blocked)),
            _ => None,
        })
        .collect()
}

/// When the first event matching `pred` happened.
fn first_time(out: &Outcome, pred: impl Fn(&Event) -> bool) -> Option<Millis> {
    out.events.iter().find(|e| pred(&e.event)).map(|e| e.t)
}

fn count(out: &Outcome, pred: impl Fn(&Event) -> bool) -> usize {
    out.events.iter().filter(|e| pred(&e.event)).count()
}

/// The time the verdict applying an approval of `id` was recorded.
fn approval_time(out: &Outcome, id: RequestId) -> Option<Millis> {
    first_time(out, |e| {
        matches!(e, Event::Verdict { request_id, verdict: Verdict::Applied { to: Status::Approved, .. }, .. }
            if *request_id == id)
    })
}

fn is_alert_for(e: &Event, agent: AgentId) -> bool {
    matches!(e, Event::Alert { agent: a, .. } if *a == agent)
}

fn expiry_default(out: &Outcome, id: RequestId) -> Option<TimeoutDefault> {
    out.events.iter().find_map(|e| match &e.event {
        Event::Expired { id: i, default, .. } if *i == id => Some(*default),
        _ => None,
    })
}

fn file_is_partial(out: &Outcome, path: &str) -> bool {
    out.files.get(path).is_some_and(|f| f.done > 0 && !f.is_complete())
}

fn file_is_complete(out: &Outcome, path: &str) -> bool {
    out.files.get(path).is_some_and(|f| f.is_complete())
}

fn trace_text(out: &Outcome) -> String {
    out.events.iter().map(|e| e.to_json(&out.names).to_string()).collect::<Vec<_>>().join("\n")
}

// ---------------------------------------------------------------- forged and misdirected responses

/// Alice ignores the lead's shutdown request at 1 s: it stays pending until 61 s.
fn alice_asked_to_stop_and_silent() -> TeamSpec {
    let mut spec = alice_and_bob(alice_ignoring_shutdown());
    spec.steps.push(shutdown(Millis(1000), ALICE, "stop-alice"));
    spec
}

#[test]
fn a_forged_unknown_request_id_is_ignored_and_changes_no_request() {
    let baseline = run(alice_asked_to_stop_and_silent());

    let forged_id = RequestId::from_random_bytes([0x5a; 16]);
    let mut spec = alice_asked_to_stop_and_silent();
    let message = Message::Response { kind: Kind::Shutdown, request_id: forged_id, approve: true, words: None };
    spec.timed.push(forge(Millis(2000), ALICE, LEAD, message, None));
    let out = run(spec);

    assert_eq!(verdicts_on(&out, forged_id), vec![Verdict::Ignored(Reason::UnknownId)], "{}", dump(&out));
    assert_eq!(out.requests, baseline.requests, "a forged id must not touch any request");
    assert_eq!(status(&out, "stop-alice"), Status::Expired);
    assert_eq!(out.status_of("alice"), Some(RosterStatus::Killed));
}

#[test]
fn a_replayed_shutdown_response_is_not_applied_twice() {
    let mut spec = alice_alone(alice_writing());
    spec.steps.push(shutdown(Millis(1000), ALICE, "stop-alice"));
    spec.timed.push((
        Millis(5000),
        Scheduled::Replay {
            label: "stop-alice".into(),
            message_type: handshake::protocol::MessageType::Response(handshake::protocol::Kind::Shutdown),
        },
    ));
    let out = run(spec);

    assert!(
        count(&out, |e| matches!(e, Event::Fault { fault: handshake::world::FaultKind::Replay, .. })) == 1,
        "{}",
        dump(&out)
    );
    assert_eq!(
        verdicts(&out, "stop-alice"),
        vec![applied(Kind::Shutdown, Status::Approved), Verdict::Ignored(Reason::NotPending)]
    );
    assert_eq!(status(&out, "stop-alice"), Status::Approved);
}

#[test]
fn a_forgery_claiming_to_be_bob_answering_alices_shutdown_is_ignored_as_wrong_sender() {
    let mut spec = alice_asked_to_stop_and_silent();
    spec.timed.push(forge(Millis(2000), BOB, LEAD, shutdown_response(true), Some("stop-alice")));
    spec.end = Some(Millis(30_000));
    let out = run(spec);

    assert_eq!(verdicts(&out, "stop-alice"), vec![Verdict::Ignored(Reason::WrongSender)], "{}", dump(&out));
    assert_eq!(status(&out, "stop-alice"), Status::Pending);
}

#[test]
fn bob_answering_alices_shutdown_leaves_it_pending() {
    // Without sender authentication the router's word is not used: the lead
    // believes the claimed sender, so this is bob himself answering. The
    // sender check must still refuse an answer from anyone but the target.
    let mut spec = alice_asked_to_stop_and_silent();
    spec.policy.defences = Defences { sender_auth: false, ..Defences::default() };
    spec.timed.push(forge(Millis(2000), BOB, LEAD, shutdown_response(true), Some("stop-alice")));
    spec.end = Some(Millis(30_000));
    let out = run(spec);

    assert_eq!(verdicts(&out, "stop-alice"), vec![Verdict::Ignored(Reason::WrongSender)], "{}", dump(&out));
    assert_eq!(status(&out, "stop-alice"), Status::Pending);
    assert_eq!(out.status_of("alice"), Some(RosterStatus::Working));
}

#[test]
fn with_sender_check_and_authentication_off_bobs_answer_is_applied() {
    let mut spec = alice_asked_to_stop_and_silent();
    spec.policy.defences = Defences { sender_auth: false, sender_check: false, ..Defences::default() };
    spec.timed.push(forge(Millis(2000), BOB, LEAD, shutdown_response(true), Some("stop-alice")));
    spec.end = Some(Millis(30_000));
    let out = run(spec);

    assert_eq!(verdicts(&out, "stop-alice"), vec![applied(Kind::Shutdown, Status::Approved)], "{}", dump(&out));
}

// ---------------------------------------------------------------- plan gate

/// Alice must plan first; the lead answers her plans with `answers`.
fn alice_plans_for(answers: &[Answer]) -> TeamSpec {
    let mut spec = alice_alone(alice_planning());
    spec.lead = lead_answering(answers);
    spec
}

/// The lead rejects alice's first plan and never answers her revision. At 1 s,
/// after she has resubmitted, an approval of the old plan id reaches her,
/// claiming to come from the lead; sender authentication is off so that only
/// the staleness stands between it and the gate. (The lead itself answers a
/// repeated plan the same way twice, so a stale approval cannot come from it.)
fn stale_approval_of_the_first_plan() -> TeamSpec {
    let mut spec = alice_plans_for(&[Answer::Reject, Answer::Ignore]);
    spec.policy.defences = Defences { sender_auth: false, ..Defences::default() };
    spec.timed.push(forge(Millis(1000), LEAD, ALICE, plan_approval(true), Some("alice/plan/1")));
    spec
}

#[test]
fn a_stale_plan_approval_cannot_open_the_gate() {
    let out = run(stale_approval_of_the_first_plan());

    assert_eq!(
        verdicts(&out, "alice/plan/1"),
        vec![applied(Kind::Plan, Status::Rejected), Verdict::Ignored(Reason::NotPending)],
        "{}",
        dump(&out)
    );
    assert_eq!(status(&out, "alice/plan/1"), Status::Rejected);
    assert_eq!(status(&out, "alice/plan/2"), Status::Expired);
    let gates = gate_states(&out, ALICE);
    assert!(!gates.contains(&GateState::Approved), "gate went {gates:?}");
    assert!(writes(&out, ALICE).iter().all(|(_, blocked)| blocked.is_some()), "{}", dump(&out));
    assert!(!out.files.contains_key("src/db.rs"));
}

#[test]
fn even_with_the_pending_check_off_a_stale_approval_cannot_open_the_gate() {
    let mut spec = stale_approval_of_the_first_plan();
    spec.policy.defences = Defences { pending_check: false, sender_auth: false, ..Defences::default() };
    let out = run(spec);

    // The table lets the old plan change its mind (that is what the pending
    // check prevents), but the gate only listens to the current plan.
    assert_eq!(
        verdicts(&out, "alice/plan/1"),
        vec![
            applied(Kind::Plan, Status::Rejected),
            Verdict::Applied { kind: Kind::Plan, from: Status::Rejected, to: Status::Approved }
        ],
        "{}",
        dump(&out)
    );
    let gates = gate_states(&out, ALICE);
    assert!(!gates.contains(&GateState::Approved), "gate went {gates:?}");
    assert!(writes(&out, ALICE).iter().all(|(_, blocked)| blocked.is_some()), "{}", dump(&out));
    assert!(!out.files.contains_key("src/db.rs"));
}

#[test]
fn after_a_stale_approval_the_approval_of_the_new_plan_opens_the_gate() {
    let mut spec = alice_plans_for(&[Answer::Reject, Answer::Approve]);
    spec.policy.defences = Defences { sender_auth: false, ..Defences::default() };
    spec.timed.push(forge(Millis(1000), LEAD, ALICE, plan_approval(true), Some("alice/plan/1")));
    // Hold back the answer to the second plan so the stale approval clearly comes first.
    spec.link_faults.push(link_fault(
        LinkEffect::Delay(Latency::Fixed(Millis(5000))),
        of_request("plan_approval_response", "alice/plan/2"),
    ));
    let out = run(spec);

    assert_eq!(verdicts(&out, "alice/plan/1")[1], Verdict::Ignored(Reason::NotPending), "{}", dump(&out));
    let opened_at = approval_time(&out, request(&out, "alice/plan/2").id).expect("plan 2 approved");
    assert!(opened_at >= Millis(5000));
    let allowed: Vec<_> = writes(&out, ALICE).into_iter().filter(|(_, b)| b.is_none()).collect();
    assert_eq!(allowed.len(), 1, "{}", dump(&out));
    assert!(allowed[0].0 >= opened_at, "write allowed at {} before approval at {}", allowed[0].0, opened_at);
    assert_eq!(gate_states(&out, ALICE).last(), Some(&GateState::Approved));
    assert!(file_is_complete(&out, "src/db.rs"));
}

/// The lead never answers alice's plan; an adversary claiming to be the lead
/// approves it at 1 s, quoting the right id.
fn forged_plan_approval(defences: Defences) -> TeamSpec {
    let mut spec = alice_plans_for(&[Answer::Ignore]);
    spec.policy.defences = defences;
    spec.timed.push(forge(Millis(1000), LEAD, ALICE, plan_approval(true), Some("alice/plan/1")));
    spec.end = Some(Millis(60_000));
    spec
}

#[test]
fn a_forged_plan_approval_claiming_to_be_the_lead_cannot_open_the_gate() {
    let out = run(forged_plan_approval(Defences::default()));

    assert_eq!(verdicts(&out, "alice/plan/1"), vec![Verdict::Ignored(Reason::WrongSender)], "{}", dump(&out));
    assert_eq!(status(&out, "alice/plan/1"), Status::Pending);
    assert_eq!(gate_states(&out, ALICE), vec![GateState::Pending]);
    assert!(writes(&out, ALICE).iter().all(|(_, blocked)| blocked.is_some()));
    assert!(!out.files.contains_key("src/db.rs"));
}

#[test]
fn without_sender_authentication_a_forged_plan_approval_opens_the_gate() {
    let out = run(forged_plan_approval(Defences { sender_auth: false, ..Defences::default() }));

    assert_eq!(verdicts(&out, "alice/plan/1"), vec![applied(Kind::Plan, Status::Approved)], "{}", dump(&out));
    assert_eq!(gate_states(&out, ALICE), vec![GateState::Pending, GateState::Approved]);
    let opened_at = approval_time(&out, request(&out, "alice/plan/1").id).expect("forgery applied");
    assert_eq!(writes(&out, ALICE), vec![(Millis(0), Some(GateState::Pending)), (opened_at, None)], "{}", dump(&out));
    assert!(file_is_complete(&out, "src/db.rs"));
}

/// The lead approves alice's plan, but the approval takes 5 s to arrive.
fn slow_plan_approval() -> TeamSpec {
    let mut spec = alice_plans_for(&[Answer::Approve]);
    spec.link_faults
        .push(link_fault(LinkEffect::Delay(Latency::Fixed(Millis(5000))), of_type("plan_approval_response")));
    spec
}

#[test]
fn no_write_runs_before_the_plan_is_approved() {
    let out = run(slow_plan_approval());

    let approved_at = approval_time(&out, request(&out, "alice/plan/1").id).expect("plan approved");
    assert!(approved_at >= Millis(5000), "{}", dump(&out));
    let allowed: Vec<_> = writes(&out, ALICE).into_iter().filter(|(_, b)| b.is_none()).collect();
    assert_eq!(allowed.len(), 1, "{}", dump(&out));
    assert!(allowed[0].0 >= approved_at);
    let first_step = first_time(&out, |e| matches!(e, Event::FileStep { .. })).expect("the file is written");
    assert!(first_step > approved_at);
    assert!(file_is_complete(&out, "src/db.rs"));
}

#[test]
fn the_gate_blocks_a_write_while_the_plan_is_pending_and_allows_it_after_approval() {
    let out = run(slow_plan_approval());

    let ws = writes(&out, ALICE);
    assert_eq!(ws.first().map(|w| w.1), Some(Some(GateState::Pending)), "{}", dump(&out));
    let approved_at = approval_time(&out, request(&out, "alice/plan/1").id).expect("plan approved");
    assert!(ws[0].0 < approved_at);
    assert_eq!(ws.last(), Some(&(approved_at, None)), "{}", dump(&out));
}

#[test]
fn the_gate_blocks_a_write_after_rejection_and_allows_it_once_a_new_plan_is_approved() {
    // Alice gives up after one rejection (no revisions), so she tries her
    // write with the gate rejected; at 10 s she submits again and is approved.
    let alice = TeammateSpec { max_revisions: 0, ..alice_planning() };
    let mut spec = alice_alone(alice);
    spec.lead = lead_answering(&[Answer::Reject, Answer::Approve]);
    spec.steps.push(Step {
        at: Millis(10_000),
        agent: ALICE,
        script: Script::Ask {
            kind: Kind::Plan,
            to: LEAD,
            words: Some("back up first".into()),
            label: Some("second-try".into()),
        },
    });
    let out = run(spec);

    let ws = writes(&out, ALICE);
    // Blocked while the first plan pends, blocked again once it is rejected,
    // allowed only when the second plan is approved.
    assert_eq!(ws.len(), 3, "{}", dump(&out));
    assert_eq!(ws[0].1, Some(GateState::Pending));
    assert_eq!(ws[1].1, Some(GateState::Rejected));
    assert!(ws[1].0 < Millis(10_000));
    let approved_at = approval_time(&out, request(&out, "second-try").id).expect("second plan approved");
    assert_eq!(ws[2], (approved_at, None));
    assert_eq!(
        gate_states(&out, ALICE),
        vec![GateState::Pending, GateState::Rejected, GateState::Pending, GateState::Approved]
    );
    assert!(file_is_complete(&out, "src/db.rs"));
}

#[test]
fn a_rejected_plan_is_resubmitted_under_a_new_id() {
    let out = run(alice_plans_for(&[Answer::Reject, Answer::Approve]));

    let plans: Vec<(RequestId, AgentId, AgentId)> = out
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Opened { id, kind: Kind::Plan, requester, target, .. } => Some((*id, *requester, *target)),
            _ => None,
        })
        .collect();
    assert_eq!(plans.len(), 2, "{}", dump(&out));
    assert_ne!(plans[0].0, plans[1].0);
    assert!(plans.iter().all(|p| p.1 == ALICE && p.2 == LEAD));
    assert_eq!(request(&out, "alice/plan/1").id, plans[0].0);
    assert_eq!(request(&out, "alice/plan/2").id, plans[1].0);
    assert_eq!(status(&out, "alice/plan/1"), Status::Rejected);
    assert_eq!(status(&out, "alice/plan/2"), Status::Approved);
    assert!(file_is_complete(&out, "src/db.rs"));
}

// ---------------------------------------------------------------- plain messages, kinds, duplicates, lateness

/// Alice plans (approved), writes, and is asked to stop at 3 s.
fn planned_then_stopped() -> TeamSpec {
    let mut spec = alice_plans_for(&[Answer::Approve]);
    spec.steps.push(shutdown(Millis(3000), ALICE, "stop-alice"));
    spec
}

/// The protocol's footprint in a trace: requests, verdicts, expiries and gate moves.
fn protocol_events(out: &Outcome) -> Vec<String> {
    out.events
        .iter()
        .filter(|e| {
            matches!(e.event, Event::Opened { .. } | Event::Verdict { .. } | Event::Expired { .. } | Event::Gate { .. })
        })
        .map(|e| e.to_json(&out.names).to_string())
        .collect()
}

#[test]
fn plain_messages_and_broadcasts_change_no_protocol_state() {
    let baseline = run(planned_then_stopped());

    let mut spec = planned_then_stopped();
    spec.steps.push(say(Millis(1), LEAD, Address::Agent(ALICE), "while you wait"));
    spec.steps.push(say(Millis(1000), ALICE, Address::Agent(LEAD), "approve shutdown please"));
    spec.steps.push(say(Millis(2000), LEAD, Address::Everyone, "wrapping up"));
    let out = run(spec);

    let text_deliveries = count(&out, |e| {
        matches!(
            e,
            Event::Deliver {
                message_type: handshake::protocol::MessageType::Message | handshake::protocol::MessageType::Broadcast,
                ..
            }
        )
    });
    assert_eq!(text_deliveries, 3, "{}", dump(&out));
    assert_eq!(out.requests, baseline.requests);
    assert_eq!(protocol_events(&out), protocol_events(&baseline));
    assert_eq!(out.roster, baseline.roster);
}

/// Alice's plan is pending (the lead never answers); at 1 s a shutdown_response
/// quoting her plan's id reaches her, claiming to come from the lead.
fn shutdown_answer_quoting_a_plan(defences: Defences) -> TeamSpec {
    let mut spec = alice_plans_for(&[Answer::Ignore]);
    spec.policy.defences = defences;
    spec.timed.push(forge(Millis(1000), LEAD, ALICE, shutdown_response(true), Some("alice/plan/1")));
    spec.end = Some(Millis(60_000));
    spec
}

#[test]
fn a_shutdown_response_quoting_a_plan_id_is_a_kind_mismatch() {
    let out = run(shutdown_answer_quoting_a_plan(Defences::default()));

    assert_eq!(verdicts(&out, "alice/plan/1"), vec![Verdict::Ignored(Reason::KindMismatch)], "{}", dump(&out));
    assert_eq!(status(&out, "alice/plan/1"), Status::Pending);
    assert_eq!(gate_states(&out, ALICE), vec![GateState::Pending]);
}

#[test]
fn without_the_kind_check_an_approved_shutdown_approves_a_plan() {
    // Only the lead answers plans and it never sends shutdown responses, so the
    // wrong-kind answer can only be forged: sender authentication is switched
    // off too, or it would be refused as coming from the wrong sender.
    let out =
        run(shutdown_answer_quoting_a_plan(Defences { kind_check: false, sender_auth: false, ..Defences::default() }));

    assert_eq!(verdicts(&out, "alice/plan/1"), vec![applied(Kind::Plan, Status::Approved)], "{}", dump(&out));
    assert_eq!(gate_states(&out, ALICE), vec![GateState::Pending, GateState::Approved]);
    assert!(file_is_complete(&out, "src/db.rs"));
}

#[test]
fn without_the_kind_check_sender_authentication_still_refuses_the_forgery() {
    let out = run(shutdown_answer_quoting_a_plan(Defences { kind_check: false, ..Defences::default() }));

    assert_eq!(verdicts(&out, "alice/plan/1"), vec![Verdict::Ignored(Reason::WrongSender)], "{}", dump(&out));
    assert_eq!(gate_states(&out, ALICE), vec![GateState::Pending]);
}

#[test]
fn a_duplicated_shutdown_response_is_applied_once() {
    let mut spec = alice_alone(alice_writing());
    spec.steps.push(shutdown(Millis(1000), ALICE, "stop-alice"));
    spec.link_faults.push(link_fault(LinkEffect::Duplicate, of_type("shutdown_response")));
    let out = run(spec);

    let deliveries = count(&out, |e| {
        matches!(
            e,
            Event::Deliver {
                message_type: handshake::protocol::MessageType::Response(handshake::protocol::Kind::Shutdown),
                to: LEAD,
                ..
            }
        )
    });
    assert_eq!(deliveries, 2, "{}", dump(&out));
    assert_eq!(
        verdicts(&out, "stop-alice"),
        vec![applied(Kind::Shutdown, Status::Approved), Verdict::Ignored(Reason::NotPending)]
    );
    assert_eq!(status(&out, "stop-alice"), Status::Approved);
}

/// Alice approves the shutdown sent at 1 s at once (1.001 s); her answer is
/// held back by `extra` on top of the 1 ms latency. The deadline is 61 s.
fn shutdown_answer_delayed_by(extra: Millis) -> Outcome {
    let mut spec = alice_alone(TeammateSpec::default());
    spec.steps.push(shutdown(Millis(1000), ALICE, "stop-alice"));
    spec.link_faults.push(link_fault(LinkEffect::Delay(Latency::Fixed(extra)), of_type("shutdown_response")));
    run(spec)
}

fn delivery_time_of_answer(out: &Outcome) -> Millis {
    first_time(out, |e| {
        matches!(
            e,
            Event::Deliver {
                message_type: handshake::protocol::MessageType::Response(handshake::protocol::Kind::Shutdown),
                ..
            }
        )
    })
    .expect("answer delivered")
}

#[test]
fn a_reply_just_inside_the_deadline_is_applied() {
    let out = shutdown_answer_delayed_by(Millis(59_997));

    assert_eq!(delivery_time_of_answer(&out), Millis(60_999), "{}", dump(&out));
    assert_eq!(verdicts(&out, "stop-alice"), vec![applied(Kind::Shutdown, Status::Approved)]);
    assert_eq!(status(&out, "stop-alice"), Status::Approved);
    assert_eq!(expiry_default(&out, request(&out, "stop-alice").id), None);
}

#[test]
fn a_reply_exactly_at_the_deadline_is_late() {
    let out = shutdown_answer_delayed_by(Millis(59_998));

    assert_eq!(delivery_time_of_answer(&out), STOP_ALICE_DEADLINE, "{}", dump(&out));
    assert_eq!(verdicts(&out, "stop-alice"), vec![Verdict::Ignored(Reason::Late)]);
    assert_eq!(status(&out, "stop-alice"), Status::Expired);
}

#[test]
fn a_reply_after_the_deadline_is_late_and_ignored() {
    let out = shutdown_answer_delayed_by(Millis(70_000));

    assert!(delivery_time_of_answer(&out) > STOP_ALICE_DEADLINE, "{}", dump(&out));
    assert_eq!(verdicts(&out, "stop-alice"), vec![Verdict::Ignored(Reason::Late)]);
    assert_eq!(status(&out, "stop-alice"), Status::Expired);
    assert_eq!(expiry_default(&out, request(&out, "stop-alice").id), Some(kinds::shutdown::KILL));
    // Alice had already stopped gracefully: there is no one left to kill.
    assert_eq!(out.status_of("alice"), Some(RosterStatus::Shutdown));
    assert_eq!(count(&out, |e| is_alert_for(e, ALICE)), 0);
}

// ---------------------------------------------------------------- timeout policy

#[test]
fn an_ignored_shutdown_kills_the_teammate_by_default() {
    let out = run(alice_asked_to_stop_and_silent());

    let id = request(&out, "stop-alice").id;
    assert_eq!(status(&out, "stop-alice"), Status::Expired);
    assert_eq!(expiry_default(&out, id), Some(kinds::shutdown::KILL));
    assert_eq!(out.status_of("alice"), Some(RosterStatus::Killed));
    let alert_at = first_time(&out, |e| is_alert_for(e, ALICE)).expect("an alert");
    assert_eq!(alert_at, STOP_ALICE_DEADLINE);
    assert!(file_is_partial(&out, "src/auth.rs"), "{:?}", out.files);
    // No write happens after the kill.
    let last_step = out.events.iter().rev().find(|e| matches!(e.event, Event::FileStep { .. })).unwrap();
    assert!(last_step.t <= STOP_ALICE_DEADLINE);
}

#[test]
fn a_stalled_teammate_is_killed_at_the_shutdown_deadline() {
    let mut spec = alice_and_bob(alice_writing());
    // Alice stops reading her inbox at 1.2 s, after two of her four steps.
    spec.timed.push((Millis(1200), Scheduled::Stall { agent: ALICE, until: Millis(300_000) }));
    spec.steps.push(shutdown(Millis(2000), ALICE, "stop-alice"));
    let out = run(spec);

    assert_eq!(status(&out, "stop-alice"), Status::Expired, "{}", dump(&out));
    assert_eq!(expiry_default(&out, request(&out, "stop-alice").id), Some(kinds::shutdown::KILL));
    assert_eq!(out.status_of("alice"), Some(RosterStatus::Killed));
    assert_eq!(first_time(&out, |e| is_alert_for(e, ALICE)), Some(Millis(62_000)));
    assert_eq!(out.files["src/auth.rs"].done, 2);
    assert!(file_is_partial(&out, "src/auth.rs"));
    assert_eq!(out.status_of("bob"), Some(RosterStatus::Idle));
}

#[test]
fn with_keep_an_ignored_shutdown_expires_and_the_teammate_keeps_working() {
    let mut spec = alice_asked_to_stop_and_silent();
    spec.policy = spec.policy.clone().expiring(Kind::Shutdown, kinds::shutdown::KEEP);
    let out = run(spec);

    assert_eq!(status(&out, "stop-alice"), Status::Expired);
    assert_eq!(expiry_default(&out, request(&out, "stop-alice").id), Some(kinds::shutdown::KEEP));
    assert_eq!(count(&out, |e| is_alert_for(e, ALICE)), 0);
    assert!(!matches!(out.status_of("alice"), Some(RosterStatus::Killed)), "{:?}", out.roster);
    assert!(file_is_complete(&out, "src/auth.rs"), "{:?}", out.files);
    assert!(out.ended_at >= Millis(100_000));
}

#[test]
fn an_unanswered_plan_is_rejected_by_default_and_the_gate_stays_closed() {
    let out = run(alice_plans_for(&[Answer::Ignore]));

    let id = request(&out, "alice/plan/1").id;
    assert_eq!(status(&out, "alice/plan/1"), Status::Expired);
    assert_eq!(expiry_default(&out, id), Some(kinds::plan::REJECT));
    assert_eq!(gate_states(&out, ALICE), vec![GateState::Pending, GateState::Rejected]);
    assert_eq!(
        writes(&out, ALICE),
        vec![(Millis(0), Some(GateState::Pending)), (Millis(120_000), Some(GateState::Rejected))],
        "{}",
        dump(&out)
    );
    assert!(!out.files.contains_key("src/db.rs"));
    // Rejection by timeout is final: no automatic resubmission.
    assert!(out.request("alice/plan/2").is_none());
}

#[test]
fn with_approve_an_unanswered_plan_opens_the_gate() {
    let mut spec = alice_plans_for(&[Answer::Ignore]);
    spec.policy = spec.policy.clone().expiring(Kind::Plan, kinds::plan::APPROVE);
    let out = run(spec);

    assert_eq!(status(&out, "alice/plan/1"), Status::Expired);
    assert_eq!(expiry_default(&out, request(&out, "alice/plan/1").id), Some(kinds::plan::APPROVE));
    assert_eq!(gate_states(&out, ALICE), vec![GateState::Pending, GateState::Approved]);
    assert_eq!(
        writes(&out, ALICE),
        vec![(Millis(0), Some(GateState::Pending)), (Millis(120_000), None)],
        "{}",
        dump(&out)
    );
    assert!(file_is_complete(&out, "src/db.rs"));
}

#[test]
fn a_graceful_shutdown_finishes_the_file_while_a_kill_leaves_it_partial() {
    let mut graceful = alice_alone(alice_writing());
    graceful.steps.push(shutdown(Millis(1000), ALICE, "stop-alice"));
    let graceful = run(graceful);

    assert_eq!(status(&graceful, "stop-alice"), Status::Approved);
    assert_eq!(graceful.status_of("alice"), Some(RosterStatus::Shutdown));
    assert!(file_is_complete(&graceful, "src/auth.rs"), "{:?}", graceful.files);
    // She approved at once but stopped only when the step in progress was done.
    let stopped_at =
        first_time(&graceful, |e| matches!(e, Event::Status { agent: ALICE, status: RosterStatus::Shutdown }));
    assert_eq!(stopped_at, Some(Millis(2000)));

    let killed = run(alice_asked_to_stop_and_silent());
    assert_eq!(killed.status_of("alice"), Some(RosterStatus::Killed));
    assert!(file_is_partial(&killed, "src/auth.rs"), "{:?}", killed.files);
}

// ---------------------------------------------------------------- the clock and determinism

#[test]
fn a_sixty_second_timeout_takes_no_real_time() {
    // Best of three, so a busy machine cannot make the check flaky; a clock
    // that really waited would take a minute.
    let mut best = std::time::Duration::MAX;
    for _ in 0..3 {
        let started = std::time::Instant::now();
        let out = run(alice_asked_to_stop_and_silent());
        best = best.min(started.elapsed());
        assert_eq!(status(&out, "stop-alice"), Status::Expired);
        assert!(out.ended_at >= STOP_ALICE_DEADLINE);
    }
    assert!(best < std::time::Duration::from_millis(50), "a 60 s virtual timeout took {best:?} of real time");
}

/// A busy run with random latency and random faults: everything draws from the seed.
fn busy_team(seed: u64) -> TeamSpec {
    let mut spec = alice_and_bob(alice_planning());
    std::sync::Arc::make_mut(&mut spec.teammates[1].1).work = vec![write("src/bob.rs", 6, Millis(300))];
    spec.seed = seed;
    spec.latency = Latency::Range(Millis(1), Millis(20));
    spec.lead = lead_answering(&[Answer::Reject, Answer::Approve]);
    let mut flaky = link_fault(LinkEffect::Duplicate, of_type("shutdown_response"));
    flaky.probability = 0.5;
    spec.link_faults.push(flaky);
    spec.steps.push(shutdown(Millis(1000), BOB, "stop-bob"));
    spec.steps.push(shutdown(Millis(3000), ALICE, "stop-alice"));
    spec.steps.push(say(Millis(500), LEAD, Address::Everyone, "status?"));
    spec
}

#[test]
fn the_same_seed_gives_an_identical_trace() {
    let a = run(busy_team(7));
    let b = run(busy_team(7));
    assert!(a.events.len() > 20, "{}", dump(&a));
    assert_eq!(trace_text(&a), trace_text(&b));
    assert_eq!(a.requests, b.requests);
}

#[test]
fn another_seed_gives_other_request_ids() {
    let a = run(busy_team(7));
    let b = run(busy_team(8));
    let ids = |o: &Outcome| o.requests.iter().map(|r| r.id).collect::<BTreeSet<_>>();
    assert!(!ids(&a).is_empty());
    assert!(ids(&a).is_disjoint(&ids(&b)), "seeds 7 and 8 drew the same id");
}

// ---------------------------------------------------------------- send rules at runtime

/// At 1 s alice submits a plan to bob instead of the lead.
fn alice_asks_bob_to_approve_a_plan(strict_hierarchy: bool) -> TeamSpec {
    let mut spec = alice_and_bob(TeammateSpec::default());
    spec.policy.strict_hierarchy = strict_hierarchy;
    spec.steps.push(Step {
        at: Millis(1000),
        agent: ALICE,
        script: Script::Ask {
            kind: Kind::Plan,
            to: BOB,
            words: Some("rename the table".into()),
            label: Some("peer-plan".into()),
        },
    });
    spec
}

#[test]
fn a_peer_plan_under_strict_hierarchy_is_refused_and_opens_nothing() {
    let out = run(alice_asks_bob_to_approve_a_plan(true));

    let refusals: Vec<_> = out
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Refuse { from, to, message_type, error } => Some((*from, *to, *message_type, *error)),
            _ => None,
        })
        .collect();
    assert_eq!(
        refusals,
        vec![(ALICE, Address::Agent(BOB), MessageType::Request(Kind::Plan), SendError::PeerBlockingRequest)],
        "{}",
        dump(&out)
    );
    assert!(out.requests.is_empty());
    assert_eq!(count(&out, |e| matches!(e, Event::Opened { .. })), 0);
    assert_eq!(count(&out, |e| matches!(e, Event::Send { .. } | Event::Deliver { .. })), 0);
    assert_eq!(out.status_of("alice"), Some(RosterStatus::Idle));
}

#[test]
fn the_same_peer_plan_without_strict_hierarchy_is_delivered_and_answered() {
    let out = run(alice_asks_bob_to_approve_a_plan(false));

    assert_eq!(count(&out, |e| matches!(e, Event::Refuse { .. })), 0, "{}", dump(&out));
    assert_eq!(
        count(&out, |e| matches!(
            e,
            Event::Deliver {
                message_type: handshake::protocol::MessageType::Request(handshake::protocol::Kind::Plan),
                to: BOB,
                ..
            }
        )),
        1
    );
    assert_eq!(status(&out, "peer-plan"), Status::Approved);
}
