//! matching-response: only a matching response changes a request's state.
//! A response matches when it is of the request's kind, comes from its
//! target, is applied by its requester, while the request is pending and
//! before its deadline. The oracle applies this full rule whatever defences
//! the scenario switched off.
//!
//! Observes each applied verdict, against the request the [`Book`] keeps.
//! Checks nothing at the end.

use super::{At, Book, Invariant, Tracked, Violation};
use crate::protocol::{AgentId, Kind, Status, Verdict};
use crate::trace::Event;

/// Keeps nothing of its own: the requests it judges by are the book's.
#[derive(Clone, Copy, Debug)]
pub(super) struct MatchingResponse;

impl MatchingResponse {
    pub(super) fn observe(&mut self, book: &Book, at: &At, e: &Event, out: &mut Vec<Violation>) {
        let Event::Verdict { at: by, request_id, response_kind, sender, verdict: Verdict::Applied { to, .. }, .. } = e
        else {
            return;
        };
        let Some(r) = book.request(*request_id) else {
            let detail = format!("{} applied a response for an id it never issued", at.who(*by));
            out.push(at.violation(Invariant::MatchingResponse, detail));
            return;
        };
        let broken = mismatches(r, *response_kind, *sender, *by, at);
        if !broken.is_empty() {
            let detail = format!(
                "[{}] moved to {to} by a response that does not match: {}",
                at.label(*request_id),
                broken.join("; ")
            );
            out.push(at.violation(Invariant::MatchingResponse, detail));
        }
    }
}

/// How a response of `kind` from `sender`, applied by `by` at this event,
/// fails to match request `r`, in words: empty when it matches. The words
/// are built only for a response that does not match. Gated-action asks
/// too: a gate opened by a response that does not match licenses nothing.
pub(super) fn mismatches(r: &Tracked, kind: Kind, sender: AgentId, by: AgentId, at: &At) -> Vec<String> {
    let mut broken = Vec::new();
    if r.kind != kind {
        broken.push(format!("a {kind} response changed a {} request", r.kind));
    }
    if sender != r.target {
        broken.push(format!("it came from {}, not from {}", at.who(sender), at.who(r.target)));
    }
    if by != r.requester {
        broken.push(format!("it was applied by {}, not by the requester {}", at.who(by), at.who(r.requester)));
    }
    if r.status != Status::Pending {
        broken.push(format!("the request was already {}", r.status));
    }
    if at.t >= r.deadline {
        broken.push(format!("it arrived at {}, at or after the deadline {}", at.t, r.deadline));
    }
    broken
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use crate::oracle::Invariant;
    use crate::protocol::{Kind, Status};

    #[test]
    fn a_response_from_someone_other_than_the_target_breaks_matching_response() {
        let answered_by = |sender| {
            broken(
                vec![
                    (0, opened(1, Kind::Shutdown, LEAD, ALICE)),
                    (1_000, applied(1, Kind::Shutdown, LEAD, sender, Status::Approved)),
                ],
                false,
            )
        };
        assert_eq!(answered_by(ALICE), vec![]);
        assert_eq!(answered_by(AGENT_ADVERSARY), vec![Invariant::MatchingResponse]);
    }

    #[test]
    fn a_response_for_an_id_nobody_issued_breaks_matching_response() {
        let v = violations(vec![(0, applied(9, Kind::Plan, ALICE, LEAD, Status::Approved))], false);
        assert_eq!(v.iter().map(|v| v.invariant).collect::<Vec<_>>(), vec![Invariant::MatchingResponse]);
        assert!(v[0].detail.contains("alice applied a response for an id it never issued"), "{}", v[0].detail);
    }
}
