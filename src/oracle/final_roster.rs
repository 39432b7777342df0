//! final-roster: killed, shut down, and crashed without a restart are final.
//! Such an agent never acts again, its state never changes, and a restart
//! brings back only a crash that scheduled it.
//!
//! Observes every action (against the life of the agent who took it),
//! every status change and every restart, by the lives the [`Book`] keeps.
//! A respawn (the lead starting a new process under the name) is the one
//! way back from a final state: the new process is not the old one.
//! Checks nothing at the end: a broken roster shows at the event.

use super::{At, Book, Invariant, Life, Violation};
use crate::protocol::{AgentId, Kind};
use crate::trace::Event;
use std::fmt;

/// Keeps nothing of its own: the lives it judges by are the book's.
#[derive(Clone, Copy, Debug)]
pub(super) struct FinalRoster;

impl FinalRoster {
    pub(super) fn observe(&mut self, book: &Book, at: &At, e: &Event, out: &mut Vec<Violation>) {
        if let Some((agent, what)) = actor_of(e) {
            // A replay is the network acting, not its sender.
            if let Some(life) = book.life(agent).filter(|l| *l != Life::Alive && !at.replayed) {
                let detail = format!("{} {what} while {}", at.who(agent), life.describe());
                out.push(at.violation(Invariant::FinalRoster, detail));
            }
        }
        match e {
            Event::Status { agent, status } => {
                let life = book.agent(*agent).life;
                if life.after(*status).is_none() {
                    let (was, now) = (life.describe(), status.as_str());
                    let detail = format!("{} was {was} and became {now}", at.who(*agent));
                    out.push(at.violation(Invariant::FinalRoster, detail));
                }
            }
            Event::Restart { agent } => {
                let life = book.agent(*agent).life;
                if life != (Life::Crashed { restart: true }) {
                    let detail = format!("{} was {} and was restarted", at.who(*agent), life.describe());
                    out.push(at.violation(Invariant::FinalRoster, detail));
                }
            }
            // A respawn is a new process under the old name, so it may follow
            // any end; it must not pretend a running process is new.
            Event::Respawn { agent } if book.agent(*agent).life == Life::Alive => {
                let detail = format!("{} was running and was respawned", at.who(*agent));
                out.push(at.violation(Invariant::FinalRoster, detail));
            }
            _ => {}
        }
    }
}

/// What an agent did, in words, built only when a report needs them.
enum Deed<'a> {
    Sent(crate::protocol::MessageType),
    Tried(&'static str),
    Wrote(&'a str),
    Opened(Kind),
    Judged,
    SetAside,
    NoAnswer,
    JudgedRequest,
    MovedGate,
}

impl fmt::Display for Deed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Deed::Sent(message_type) => write!(f, "sent a {message_type}"),
            Deed::Tried(action) => write!(f, "tried to {action}"),
            Deed::Wrote(path) => write!(f, "wrote to {path}"),
            Deed::Opened(kind) => write!(f, "opened a {kind} request"),
            Deed::Judged => f.write_str("judged a response"),
            Deed::SetAside => f.write_str("set a request aside"),
            Deed::NoAnswer => f.write_str("chose not to answer a request"),
            Deed::JudgedRequest => f.write_str("judged a request"),
            Deed::MovedGate => f.write_str("moved its plan gate"),
        }
    }
}

/// What an event says an agent did, if it is an action by that agent.
fn actor_of(e: &Event) -> Option<(AgentId, Deed<'_>)> {
    Some(match e {
        Event::Send { from, message_type, .. } => (*from, Deed::Sent(*message_type)),
        Event::Act { agent, action, .. } => (*agent, Deed::Tried(action.as_str())),
        Event::FileStep { agent, path, .. } => (*agent, Deed::Wrote(path)),
        Event::Opened { requester, kind, .. } => (*requester, Deed::Opened(*kind)),
        Event::Verdict { at, .. } => (*at, Deed::Judged),
        Event::Deferred { agent, .. } => (*agent, Deed::SetAside),
        Event::NoAnswer { agent, .. } => (*agent, Deed::NoAnswer),
        Event::RequestIgnored { agent, .. } => (*agent, Deed::JudgedRequest),
        Event::Gate { agent, .. } => (*agent, Deed::MovedGate),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use crate::oracle::Invariant;
    use crate::protocol::Millis;
    use crate::trace::{Event, RosterStatus};

    #[test]
    fn a_killed_agent_that_writes_again_breaks_final_roster() {
        let mut log = vec![(0, write_starts()), (1_000, write_step(1))];
        log.extend(kill_owed(2_000, 1, ALICE));
        assert!(broken(log.clone(), false).is_empty());
        let mut after = log;
        after.push((3_000, write_step(2)));
        assert_eq!(broken(after, false), vec![Invariant::FinalRoster]);
    }

    #[test]
    fn a_killed_agent_that_comes_back_breaks_final_roster() {
        let mut log = vec![
            (0, Event::Crash { agent: ALICE, restart_at: Some(Millis(5_000)) }),
            (0, status(ALICE, RosterStatus::Crashed)),
        ];
        log.extend(kill_owed(1_000, 1, ALICE));
        log.extend([(5_000, Event::Restart { agent: ALICE }), (5_000, status(ALICE, RosterStatus::Working))]);
        let found = broken(log, false);
        assert!(found.contains(&Invariant::FinalRoster), "{found:?}");
        assert!(found.iter().all(|i| *i == Invariant::FinalRoster), "{found:?}");
    }

    #[test]
    fn a_respawn_brings_back_a_stopped_agent_but_not_a_running_one() {
        let after = |end: RosterStatus| {
            let mut log = match end {
                RosterStatus::Killed => kill_owed(0, 1, ALICE),
                _ => vec![(0, status(ALICE, end))],
            };
            log.extend([
                (1_000, Event::Respawn { agent: ALICE }),
                (1_000, status(ALICE, RosterStatus::Working)),
                (2_000, write_starts()),
            ]);
            broken(log, false)
        };
        assert!(after(RosterStatus::Shutdown).is_empty());
        assert!(after(RosterStatus::Killed).is_empty());
        let running = vec![(0, write_starts()), (1_000, Event::Respawn { agent: ALICE })];
        assert_eq!(broken(running, false), vec![Invariant::FinalRoster]);
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
            message_type: crate::protocol::MessageType::Message,
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
                    message_type: crate::protocol::MessageType::Message,
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
}
