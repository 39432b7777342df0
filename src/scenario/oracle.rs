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

/// Checks all seven invariants over a finished run.
pub fn check(outcome: &Outcome, policy: &Policy, require_plan: &[bool]) -> Vec<Violation> {
    let names = &outcome.names;
    let label = |id: &RequestId| names.label(*id).map(str::to_string).unwrap_or_else(|| id.to_string());
    let who = |a: AgentId| names.agent(a).to_string();
    let mut out = Vec::new();
    let mut requests: BTreeMap<RequestId, Tracked> = BTreeMap::new();
    let mut gates: Vec<GateState> =
        require_plan.iter().map(|r| if *r { GateState::Required } else { GateState::NotRequired }).collect();
    let mut statuses: Vec<RosterStatus> = vec![RosterStatus::Working; require_plan.len()];
    // Whether the latest plan decision for each agent was legitimate (a
    // matching response or the timeout policy), and whether its open gate is.
    // A gate opened by a forgery must not license a write.
    let mut decision_legit: Vec<bool> = vec![false; require_plan.len()];
    let mut gate_legit: Vec<bool> = vec![false; require_plan.len()];
    let mut files: BTreeMap<(AgentId, String), (u32, u32)> = BTreeMap::new();
    let mut sent: BTreeMap<u64, (usize, AgentId)> = BTreeMap::new();
    let mut accounted: BTreeSet<u64> = BTreeSet::new();
    let events = &outcome.events;

    for (i, e) in events.iter().enumerate() {
        let t = e.t;
        let mut violate =
            |inv: Invariant, detail: String| out.push(Violation { invariant: inv, at: t, event: Some(i), detail });
        match &e.event {
            Event::Opened { id, kind, requester, target, deadline, .. } => {
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
                    decision_legit[r.requester.index()] = broken.is_empty();
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
                    decision_legit[r.requester.index()] = true;
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
                        let already_down =
                            matches!(statuses[target.index()], RosterStatus::Shutdown | RosterStatus::Killed);
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
            Event::Gate { agent, state } => {
                gates[agent.index()] = *state;
                if *state == GateState::Approved {
                    gate_legit[agent.index()] = decision_legit[agent.index()];
                }
            }
            Event::Act { agent, action, blocked: None, path } if action.is_mutating() => {
                let g = gates[agent.index()];
                let what = path.as_deref().map(|p| format!(" {p}")).unwrap_or_default();
                let act = action.as_str();
                if !matches!(g, GateState::NotRequired | GateState::Approved) {
                    violate(
                        Invariant::GatedAction,
                        format!("{} ran {act}{what} while its plan gate was {g}", who(*agent)),
                    );
                } else if g == GateState::Approved && !gate_legit[agent.index()] {
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
                statuses[agent.index()] = *status;
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
            Event::Send { seq, to: crate::protocol::Address::Agent(to), .. } => {
                sent.insert(*seq, (i, *to));
            }
            Event::Deliver { seq, .. } | Event::Dropped { seq, .. } => {
                accounted.insert(*seq);
            }
            _ => {}
        }
    }

    let end = outcome.ended_at;
    for (id, r) in &requests {
        if r.status != Status::Pending {
            continue;
        }
        // A crashed or killed requester takes its timer with it: its pending
        // requests are abandoned, not forgotten by the protocol.
        if matches!(statuses[r.requester.index()], RosterStatus::Crashed | RosterStatus::Killed) {
            continue;
        }
        // A live requester always has a timer on its earliest deadline, so a
        // run that settled with a request pending lost a timer; a run stopped
        // early may leave one pending only if its deadline is still to come.
        let detail = if outcome.stop == Stop::Settled {
            format!("[{}] is still pending when nothing is left to happen (deadline {})", label(id), r.deadline)
        } else if r.deadline <= end {
            format!("[{}] is still pending at {end}, past its deadline {}", label(id), r.deadline)
        } else {
            continue;
        };
        out.push(Violation { invariant: Invariant::SingleTerminal, at: end, event: None, detail });
    }
    if outcome.stop == Stop::Settled {
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
