//! The lifecycle oracle: reads the event log as an independent witness and
//! reports every always-on invariant the run broke. It re-derives request
//! states from the log instead of trusting the agents' tables, and it always
//! applies the full matching rule, whatever defences the scenario switched off.

use super::invariant::Invariant;
use crate::protocol::{AgentId, GateState, Kind, Millis, Policy, RequestId, Status, TimeoutDefault, Verdict};
use crate::team::{Outcome, Stop};
use crate::trace::{Event, RosterStatus};
use std::collections::{BTreeMap, BTreeSet};

/// One broken invariant: which, when, at which event, and why in words.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    pub invariant: Invariant,
    pub at: Millis,
    /// Index in `Outcome::events` of the event that broke it, when there is one.
    pub event: Option<usize>,
    pub detail: String,
}

struct Tracked {
    kind: Kind,
    requester: AgentId,
    target: AgentId,
    deadline: Millis,
    status: Status,
}

/// Where an agent is in its life, as the log tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Life {
    Alive,
    /// Crashed; `restart` says whether the crash scheduled a restart.
    Crashed {
        restart: bool,
    },
    /// Killed or shut down.
    Final(RosterStatus),
}

impl Life {
    fn is_final(self) -> bool {
        matches!(self, Life::Final(_) | Life::Crashed { restart: false })
    }

    fn describe(self) -> &'static str {
        match self {
            Life::Alive => "running",
            Life::Crashed { restart: true } => "crashed (its restart not yet due)",
            Life::Crashed { restart: false } => "crashed with no restart",
            Life::Final(RosterStatus::Killed) => "killed",
            Life::Final(_) => "shut down",
        }
    }
}

/// An agent's plan gate as the oracle derives it from requests and verdicts,
/// not from what the agent says about its own gate.
#[derive(Clone, Copy, Debug)]
struct Gate {
    state: GateState,
    /// The plan the gate follows: the latest one sent to the lead.
    current: Option<RequestId>,
    /// Whether the decision that opened it was legitimate (a matching
    /// response or the timeout policy). A gate opened by a forgery must not
    /// license a write.
    legit: bool,
}

/// What an event says an agent did, if it is an action by that agent.
fn actor_of(e: &Event) -> Option<(AgentId, String)> {
    let (agent, what) = match e {
        Event::Send { from, message_type, .. } => (*from, format!("sent a {message_type}")),
        Event::Act { agent, action, .. } => (*agent, format!("tried to {}", action.as_str())),
        Event::FileStep { agent, path, .. } => (*agent, format!("wrote to {path}")),
        Event::Opened { requester, kind, .. } => (*requester, format!("opened a {kind} request")),
        Event::Verdict { at, .. } => (*at, "judged a response".to_string()),
        Event::Deferred { agent, .. } => (*agent, "set a request aside".to_string()),
        Event::NoAnswer { agent, .. } => (*agent, "chose not to answer a request".to_string()),
        Event::RequestIgnored { agent, .. } => (*agent, "judged a request".to_string()),
        Event::Gate { agent, .. } => (*agent, "moved its plan gate".to_string()),
        _ => return None,
    };
    Some((agent, what))
}

/// Checks all eight invariants over a finished run.
pub fn check(outcome: &Outcome, policy: &Policy, require_plan: &[bool]) -> Vec<Violation> {
    let log = Log { names: &outcome.names, events: &outcome.events, ended_at: outcome.ended_at, stop: outcome.stop };
    check_log(&log, policy, require_plan)
}

/// What the oracle reads of a run: borrowed, so an explorer can check a path
/// at every state without copying its log into an `Outcome` each time.
pub struct Log<'a> {
    pub names: &'a crate::trace::Names,
    pub events: &'a [crate::trace::Stamped],
    pub ended_at: Millis,
    pub stop: Stop,
}

/// [`check`] over a borrowed log.
pub fn check_log(log: &Log, policy: &Policy, require_plan: &[bool]) -> Vec<Violation> {
    let names = log.names;
    let label = |id: &RequestId| names.label(*id).map(str::to_string).unwrap_or_else(|| id.to_string());
    let who = |a: AgentId| names.agent(a).to_string();
    let mut out = Vec::new();
    let mut requests: BTreeMap<RequestId, Tracked> = BTreeMap::new();
    let mut gates: Vec<Gate> = require_plan
        .iter()
        .map(|r| Gate {
            state: if *r { GateState::Required } else { GateState::NotRequired },
            current: None,
            legit: false,
        })
        .collect();
    let mut lives: Vec<Life> = vec![Life::Alive; require_plan.len()];
    // When each agent's latest stall ends: a stalled requester's timers are frozen.
    let mut stalled_until: Vec<Millis> = vec![Millis::ZERO; require_plan.len()];
    // A shutdown an agent approved after its request had expired.
    let mut obeyed_expired: Vec<Option<RequestId>> = vec![None; require_plan.len()];
    // Sends that are the network replaying a message, not its sender acting.
    let mut replays: BTreeSet<u64> = BTreeSet::new();
    let mut files: BTreeMap<(AgentId, String), (u32, u32)> = BTreeMap::new();
    let mut sent: BTreeMap<u64, (usize, AgentId)> = BTreeMap::new();
    let mut accounted: BTreeSet<u64> = BTreeSet::new();
    let events = log.events;

    for (i, e) in events.iter().enumerate() {
        let t = e.t;
        let mut violate =
            |inv: Invariant, detail: String| out.push(Violation { invariant: inv, at: t, event: Some(i), detail });
        if let Some((agent, what)) = actor_of(&e.event) {
            let replayed = matches!(&e.event, Event::Send { seq, .. } if replays.contains(seq));
            if let Some(life) = lives.get(agent.index()).copied().filter(|l| *l != Life::Alive && !replayed) {
                violate(Invariant::FinalRoster, format!("{} {what} while {}", who(agent), life.describe()));
            }
        }
        match &e.event {
            Event::Opened { id, kind, requester, target, deadline, .. } => {
                if let Some(g) = gates.get_mut(requester.index()) {
                    if *kind == Kind::Plan && target.is_lead() && g.state != GateState::NotRequired {
                        *g = Gate { state: GateState::Pending, current: Some(*id), legit: false };
                    }
                }
                requests.insert(
                    *id,
                    Tracked {
                        kind: *kind,
                        requester: *requester,
                        target: *target,
                        deadline: *deadline,
                        status: Status::Pending,
                    },
                );
            }
            Event::Verdict { at, request_id, response_kind, sender, verdict: Verdict::Applied { to, .. }, .. } => {
                let Some(r) = requests.get_mut(request_id) else {
                    violate(
                        Invariant::MatchingResponse,
                        format!("{} applied a response for an id it never issued", who(*at)),
                    );
                    continue;
                };
                let mut broken = Vec::new();
                if r.kind != *response_kind {
                    broken.push(format!("a {response_kind} response changed a {} request", r.kind));
                }
                if *sender != r.target {
                    broken.push(format!("it came from {}, not from {}", who(*sender), who(r.target)));
                }
                if *at != r.requester {
                    broken.push(format!("it was applied by {}, not by the requester {}", who(*at), who(r.requester)));
                }
                if r.status != Status::Pending {
                    broken.push(format!("the request was already {}", r.status));
                }
                if t >= r.deadline {
                    broken.push(format!("it arrived at {t}, at or after the deadline {}", r.deadline));
                }
                if r.kind == Kind::Plan {
                    let g = &mut gates[r.requester.index()];
                    if g.current == Some(*request_id) && g.state == GateState::Pending {
                        g.state = if *to == Status::Approved { GateState::Approved } else { GateState::Rejected };
                        g.legit = broken.is_empty();
                    }
                }
                if !broken.is_empty() {
                    violate(
                        Invariant::MatchingResponse,
                        format!(
                            "[{}] moved to {to} by a response that does not match: {}",
                            label(request_id),
                            broken.join("; ")
                        ),
                    );
                }
                if r.status.is_terminal() {
                    violate(
                        Invariant::TerminalFinal,
                        format!("[{}] was {} and became {to}", label(request_id), r.status),
                    );
                }
                r.status = *to;
            }
            Event::Expired { id, kind, default } => {
                let Some(r) = requests.get_mut(id) else { continue };
                if r.status.is_terminal() {
                    violate(Invariant::TerminalFinal, format!("[{}] was {} and then expired", label(id), r.status));
                }
                r.status = Status::Expired;
                if *kind == Kind::Plan {
                    let g = &mut gates[r.requester.index()];
                    if g.current == Some(*id) && g.state == GateState::Pending {
                        let approve = *default == TimeoutDefault::Approve;
                        g.state = if approve { GateState::Approved } else { GateState::Rejected };
                        g.legit = true;
                    }
                }
                let wanted = policy.on_expiry(*kind);
                if *default != wanted {
                    violate(
                        Invariant::ExpiryPolicy,
                        format!(
                            "[{}] expired and applied {}, but the policy says {}",
                            label(id),
                            default.as_str(),
                            wanted.as_str()
                        ),
                    );
                    continue;
                }
                // The default's effect must follow at the same instant.
                let same_instant = || events[i + 1..].iter().take_while(|x| x.t == t);
                match default {
                    TimeoutDefault::Kill => {
                        let target = r.target;
                        // Shut down or already killed: nothing left to kill. A
                        // crashed teammate must still be killed, or a restart
                        // would bring back what the policy stopped.
                        let already_down = lives[target.index()].is_final();
                        let killed = same_instant().any(|x| matches!(x.event, Event::Status { agent, status: RosterStatus::Killed } if agent == target));
                        if !already_down && !killed {
                            violate(
                                Invariant::ExpiryPolicy,
                                format!(
                                    "[{}] expired with default kill, but {} was not killed",
                                    label(id),
                                    who(target)
                                ),
                            );
                        }
                    }
                    TimeoutDefault::Reject => {
                        let author = r.requester;
                        let opened = same_instant().any(
                            |x| matches!(x.event, Event::Gate { agent, state: GateState::Approved } if agent == author),
                        );
                        if opened {
                            violate(
                                Invariant::ExpiryPolicy,
                                format!(
                                    "[{}] expired with default reject, yet {}'s gate opened",
                                    label(id),
                                    who(author)
                                ),
                            );
                        }
                    }
                    TimeoutDefault::Keep => {
                        let target = r.target;
                        let killed = same_instant().any(|x| matches!(x.event, Event::Status { agent, status: RosterStatus::Killed } if agent == target));
                        if killed {
                            violate(
                                Invariant::ExpiryPolicy,
                                format!("[{}] expired with default keep, yet {} was killed", label(id), who(target)),
                            );
                        }
                    }
                    // Whether an approved plan opens a gate depends on whether
                    // it is the gate's current plan; the gate checks that.
                    TimeoutDefault::Approve => {}
                }
            }
            Event::Act { agent, action, blocked: None, path } if action.is_mutating() => {
                let g = gates[agent.index()];
                let what = path.as_deref().map(|p| format!(" {p}")).unwrap_or_default();
                let act = action.as_str();
                if !matches!(g.state, GateState::NotRequired | GateState::Approved) {
                    let state = g.state;
                    let plan = g.current.map(|id| format!(" (current plan [{}])", label(&id))).unwrap_or_default();
                    violate(
                        Invariant::GatedAction,
                        format!("{} ran {act}{what} while its plan gate was {state}{plan}", who(*agent)),
                    );
                } else if g.state == GateState::Approved && !g.legit {
                    violate(
                        Invariant::GatedAction,
                        format!(
                            "{} ran {act}{what} behind a gate opened by a response that does not match",
                            who(*agent)
                        ),
                    );
                }
            }
            Event::FileStep { agent, path, done, total } => {
                files.insert((*agent, path.clone()), (*done, *total));
            }
            Event::Status { agent, status } => {
                let a = agent.index();
                let life = lives[a];
                lives[a] = match (life, *status) {
                    (Life::Alive, RosterStatus::Killed | RosterStatus::Shutdown) => Life::Final(*status),
                    // The kill default overrides a pending restart.
                    (Life::Crashed { restart: true }, RosterStatus::Killed) => Life::Final(*status),
                    // A crash's own status; the crash event came first.
                    (Life::Crashed { .. }, RosterStatus::Crashed) => life,
                    (Life::Alive, _) => life,
                    (_, _) => {
                        let (was, now) = (life.describe(), status.as_str());
                        violate(Invariant::FinalRoster, format!("{} was {was} and became {now}", who(*agent)));
                        life
                    }
                };
                if let (RosterStatus::Shutdown, Some(id)) = (*status, obeyed_expired[a]) {
                    if let Some(r) = requests.get(&id) {
                        let default = policy.on_expiry(r.kind).as_str();
                        violate(
                            Invariant::ExpiryPolicy,
                            format!(
                                "{} shut down on [{}], which had expired at {} (default {default}): the lead no \
                                 longer waits for that answer, so the two disagree",
                                who(*agent),
                                label(&id),
                                r.deadline
                            ),
                        );
                    }
                }
                if *status == RosterStatus::Shutdown {
                    for ((a, path), (done, total)) in files.range((*agent, String::new())..) {
                        if a != agent {
                            break;
                        }
                        if done < total {
                            violate(
                                Invariant::GracefulComplete,
                                format!(
                                    "{} shut down gracefully with {path} half-written ({done}/{total})",
                                    who(*agent)
                                ),
                            );
                        }
                    }
                }
            }
            Event::Send { seq, from, to, message_type, request_id, approve, .. } => {
                if let crate::protocol::Address::Agent(to) = to {
                    sent.insert(*seq, (i, *to));
                }
                // An approval sent at or after the request's own deadline: the
                // asker has applied its default by then.
                let late = request_id.and_then(|id| requests.get(&id).map(|r| (id, r)));
                if let (Some((id, r)), "shutdown_response", Some(true)) = (late, *message_type, *approve) {
                    if r.target == *from && t >= r.deadline && !replays.contains(seq) {
                        if let Some(o) = obeyed_expired.get_mut(from.index()) {
                            *o = Some(id);
                        }
                    }
                }
            }
            Event::Fault { seq, fault: "replay", .. } => {
                replays.insert(*seq);
            }
            Event::Crash { agent, restart_at } => {
                lives[agent.index()] = Life::Crashed { restart: restart_at.is_some() };
            }
            Event::Restart { agent } => {
                let life = lives[agent.index()];
                if life == (Life::Crashed { restart: true }) {
                    lives[agent.index()] = Life::Alive;
                } else {
                    let was = life.describe();
                    violate(Invariant::FinalRoster, format!("{} was {was} and was restarted", who(*agent)));
                }
            }
            Event::Stall { agent, until } => {
                stalled_until[agent.index()] = *until;
            }
            Event::Deliver { seq, .. } | Event::Dropped { seq, .. } => {
                accounted.insert(*seq);
            }
            _ => {}
        }
    }

    let end = log.ended_at;
    for (id, r) in &requests {
        // With timeouts off a request has no deadline: the run always ends
        // before it, so pending is where it is meant to be.
        if r.status != Status::Pending || r.deadline.is_never() {
            continue;
        }
        // A crashed or killed requester takes its timer with it: its pending
        // requests are abandoned, not forgotten by the protocol.
        if matches!(lives[r.requester.index()], Life::Crashed { .. } | Life::Final(RosterStatus::Killed)) {
            continue;
        }
        // A stalled requester's timers are frozen with it: its request is
        // pending because it is stalled, which breaks nothing.
        if stalled_until[r.requester.index()] > end {
            continue;
        }
        // A live requester always has a timer on its earliest deadline, so a
        // run that settled with a request pending lost a timer; a run stopped
        // early may leave one pending only if its deadline is still to come.
        let detail = if log.stop == Stop::Settled {
            format!("[{}] is still pending when nothing is left to happen (deadline {})", label(id), r.deadline)
        } else if r.deadline <= end {
            format!("[{}] is still pending at {end}, past its deadline {}", label(id), r.deadline)
        } else {
            continue;
        };
        out.push(Violation { invariant: Invariant::SingleTerminal, at: end, event: None, detail });
    }
    if log.stop == Stop::Settled {
        for (seq, (i, to)) in &sent {
            if !accounted.contains(seq) {
                out.push(Violation {
                    invariant: Invariant::NoSilentLoss,
                    at: events[*i].t,
                    event: Some(*i),
                    detail: format!("message #{seq} to {} was never delivered and no fault took it", who(*to)),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    //! Each check of the oracle, fed a log where it must fail (and its twin
    //! where it must not): the oracle is what catches the simulator lying.
    use super::*;
    use crate::protocol::{Action, Label, Verdict};
    use crate::trace::{Names, Stamped};

    const LEAD: AgentId = AgentId(0);
    const ALICE: AgentId = AgentId(1);

    fn id(n: u8) -> RequestId {
        RequestId::from_random_bytes([n; 16])
    }

    fn outcome(events: Vec<(u64, Event)>) -> Outcome {
        let events: Vec<Stamped> = events.into_iter().map(|(t, event)| Stamped { t: Millis(t), event }).collect();
        let ended_at = events.last().map_or(Millis::ZERO, |e| e.t);
        Outcome {
            names: Names { agents: vec!["lead".into(), "alice".into(), "adversary".into()], labels: BTreeMap::new() },
            roster: vec![RosterStatus::Working; 2],
            requests: Vec::new(),
            events,
            files: BTreeMap::new(),
            ended_at,
            stop: Stop::Settled,
            load_done: 0,
        }
    }

    fn violations(events: Vec<(u64, Event)>, require_plan: bool) -> Vec<Violation> {
        check(&outcome(events), &Policy::default(), &[false, require_plan])
    }

    fn broken(events: Vec<(u64, Event)>, require_plan: bool) -> Vec<Invariant> {
        violations(events, require_plan).into_iter().map(|v| v.invariant).collect()
    }

    fn status(agent: AgentId, status: RosterStatus) -> Event {
        Event::Status { agent, status }
    }

    fn write_step(done: u32) -> Event {
        Event::FileStep { agent: ALICE, path: "a.rs".into(), done, total: 4 }
    }

    fn write_starts() -> Event {
        Event::Act { agent: ALICE, action: Action::Write, path: Some("a.rs".into()), blocked: None }
    }

    fn opened(n: u8, kind: Kind, requester: AgentId, target: AgentId) -> Event {
        Event::Opened {
            id: id(n),
            label: Label::Auto { teammate: if requester == LEAD { target } else { requester }, kind, n: n as u32 },
            kind,
            requester,
            target,
            deadline: Millis(60_000),
        }
    }

    fn applied(n: u8, kind: Kind, at: AgentId, sender: AgentId, to: Status) -> Event {
        Event::Verdict {
            at,
            request_id: id(n),
            response_kind: kind,
            approve: to == Status::Approved,
            sender,
            claimed_from: sender,
            verdict: Verdict::Applied { kind, from: Status::Pending, to },
        }
    }

    #[test]
    fn a_killed_agent_that_writes_again_breaks_final_roster() {
        let log = vec![(0, write_starts()), (1_000, write_step(1)), (2_000, status(ALICE, RosterStatus::Killed))];
        assert!(broken(log.clone(), false).is_empty());
        let mut after = log;
        after.push((3_000, write_step(2)));
        assert_eq!(broken(after, false), vec![Invariant::FinalRoster]);
    }

    #[test]
    fn a_killed_agent_that_comes_back_breaks_final_roster() {
        let log = vec![
            (0, Event::Crash { agent: ALICE, restart_at: Some(Millis(5_000)) }),
            (0, status(ALICE, RosterStatus::Crashed)),
            (1_000, status(ALICE, RosterStatus::Killed)),
            (5_000, Event::Restart { agent: ALICE }),
            (5_000, status(ALICE, RosterStatus::Working)),
        ];
        let found = broken(log, false);
        assert!(found.contains(&Invariant::FinalRoster), "{found:?}");
        assert!(found.iter().all(|i| *i == Invariant::FinalRoster), "{found:?}");
    }

    #[test]
    fn a_restart_after_a_crash_that_scheduled_none_breaks_final_roster() {
        let with = |restart_at| {
            broken(
                vec![
                    (0, Event::Crash { agent: ALICE, restart_at }),
                    (0, status(ALICE, RosterStatus::Crashed)),
                    (5_000, Event::Restart { agent: ALICE }),
                    (5_000, status(ALICE, RosterStatus::Working)),
                ],
                false,
            )
        };
        assert!(with(Some(Millis(5_000))).is_empty());
        assert!(with(None).contains(&Invariant::FinalRoster));
    }

    #[test]
    fn a_crashed_agent_that_sends_before_its_restart_breaks_final_roster() {
        let send = Event::Send {
            seq: 1,
            from: ALICE,
            to: crate::protocol::Address::Agent(LEAD),
            message_type: "message",
            request_id: None,
            approve: None,
            words: None,
        };
        let log = vec![
            (0, Event::Crash { agent: ALICE, restart_at: Some(Millis(5_000)) }),
            (0, status(ALICE, RosterStatus::Crashed)),
            (1_000, send),
            (
                1_001,
                Event::Deliver {
                    seq: 1,
                    sender: ALICE,
                    claimed_from: ALICE,
                    to: LEAD,
                    message_type: "message",
                    request_id: None,
                },
            ),
        ];
        assert_eq!(broken(log, false), vec![Invariant::FinalRoster]);
    }

    #[test]
    fn a_shut_down_agent_whose_status_changes_breaks_final_roster() {
        let log = vec![(0, status(ALICE, RosterStatus::Shutdown)), (1, status(ALICE, RosterStatus::Idle))];
        assert_eq!(broken(log, false), vec![Invariant::FinalRoster]);
    }

    #[test]
    fn a_write_after_a_later_plan_was_rejected_breaks_gated_action() {
        // The gate is derived from the requests: the agent's own gate events
        // are not consulted, so a lying agent cannot hide the write.
        let first = vec![
            (0, opened(1, Kind::Plan, ALICE, LEAD)),
            (2, applied(1, Kind::Plan, ALICE, LEAD, Status::Approved)),
            (2, write_starts()),
        ];
        assert!(broken(first.clone(), true).is_empty());
        let mut second = first;
        second.push((10, opened(2, Kind::Plan, ALICE, LEAD)));
        second.push((12, applied(2, Kind::Plan, ALICE, LEAD, Status::Rejected)));
        second.push((13, write_starts()));
        let v = violations(second, true);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].invariant, Invariant::GatedAction);
        assert!(v[0].detail.contains("rejected"), "{}", v[0].detail);
    }

    #[test]
    fn a_write_while_a_later_plan_is_pending_breaks_gated_action() {
        let log = vec![
            (0, opened(1, Kind::Plan, ALICE, LEAD)),
            (2, applied(1, Kind::Plan, ALICE, LEAD, Status::Approved)),
            (10, opened(2, Kind::Plan, ALICE, LEAD)),
            (11, write_starts()),
        ];
        // The run ends before the second plan's deadline, so it may still be pending.
        let mut o = outcome(log);
        o.stop = Stop::EndTime;
        let found: Vec<Invariant> =
            check(&o, &Policy::default(), &[false, true]).into_iter().map(|v| v.invariant).collect();
        assert_eq!(found, vec![Invariant::GatedAction]);
    }

    #[test]
    fn shutting_down_on_an_expired_request_breaks_expiry_policy() {
        let approve = |t| {
            (
                t,
                Event::Send {
                    seq: 2,
                    from: ALICE,
                    to: crate::protocol::Address::Agent(LEAD),
                    message_type: "shutdown_response",
                    request_id: Some(id(1)),
                    approve: Some(true),
                    words: None,
                },
            )
        };
        let keep = Policy { on_shutdown_timeout: crate::protocol::OnShutdownTimeout::Keep, ..Policy::default() };
        let run = |answer_at: u64| {
            let mut log = vec![(0, opened(1, Kind::Shutdown, LEAD, ALICE))];
            if answer_at >= 60_000 {
                log.push((60_000, Event::Expired { id: id(1), kind: Kind::Shutdown, default: TimeoutDefault::Keep }));
            }
            log.push(approve(answer_at));
            log.push((answer_at, status(ALICE, RosterStatus::Shutdown)));
            log.push((
                answer_at + 1,
                Event::Dropped {
                    seq: 2,
                    to: LEAD,
                    message_type: "shutdown_response",
                    cause: crate::trace::Cause::Drop,
                },
            ));
            if answer_at < 60_000 {
                log.push((60_000, Event::Expired { id: id(1), kind: Kind::Shutdown, default: TimeoutDefault::Keep }));
            }
            check(&outcome(log), &keep, &[false, false]).into_iter().map(|v| v.invariant).collect::<Vec<_>>()
        };
        assert!(run(1_000).is_empty(), "an answer in time that is lost on the wire is no one's fault");
        assert_eq!(run(70_000), vec![Invariant::ExpiryPolicy]);
    }

    #[test]
    fn a_request_pending_behind_a_stall_that_outlasts_the_run_is_no_violation() {
        let mut o = outcome(vec![
            (0, opened(1, Kind::Plan, ALICE, LEAD)),
            (1_000, Event::Stall { agent: ALICE, until: Millis(600_000) }),
        ]);
        o.stop = Stop::EndTime;
        o.ended_at = Millis(300_000);
        assert!(check(&o, &Policy::default(), &[false, true]).is_empty());
        // The same request with no stall is pending past its deadline: a lost timer.
        let mut o = outcome(vec![(0, opened(1, Kind::Plan, ALICE, LEAD))]);
        o.stop = Stop::EndTime;
        o.ended_at = Millis(300_000);
        let v = check(&o, &Policy::default(), &[false, true]);
        assert_eq!(v.into_iter().map(|v| v.invariant).collect::<Vec<_>>(), vec![Invariant::SingleTerminal]);
    }
}
