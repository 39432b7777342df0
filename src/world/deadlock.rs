//! Deadlocks, named as they form: the runtime feeds every event to a
//! wait-for graph and records a `deadlock` event when a cycle closes and a
//! `deadlock_broken` event when one opens again.

use crate::protocol::{Policy, WaitFor};
use crate::trace::{Event, RosterStatus};

/// What `event` does to the graph, as the events to record after it.
pub fn observe(graph: &mut WaitFor, event: &Event, policy: &Policy) -> Vec<Event> {
    let broken = |cycles: Vec<crate::protocol::Cycle>, by, default| {
        cycles.into_iter().map(|c| Event::DeadlockBroken { members: c.members, by, default }).collect()
    };
    match event {
        // A teammate that asks what blocks its asker (a plan approval)
        // answers nothing until it is decided: it is blocked on the one it
        // asked. The lead never blocks.
        Event::Opened { id, kind, requester, target, .. } if kind.spec().blocks_asker && !requester.is_lead() => {
            match graph.wait(*requester, *target, *id) {
                Some(c) => vec![Event::Deadlock { members: c.members, requests: c.requests }],
                None => Vec::new(),
            }
        }
        Event::Verdict { request_id, verdict: crate::protocol::Verdict::Applied { .. }, .. } => {
            broken(graph.release(*request_id), *request_id, None)
        }
        Event::Expired { id, kind, .. } => broken(graph.release(*id), *id, Some(policy.on_expiry(*kind))),
        Event::Status { agent, status: RosterStatus::Killed | RosterStatus::Shutdown }
        | Event::Crash { agent, restart_at: None } => {
            let waited_on = graph.waiting_on(*agent);
            match waited_on {
                Some(by) => broken(graph.forget(*agent), by, None),
                None => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}
