//! terminal-final: a request in a terminal state (approved, rejected,
//! expired) never changes again.
//!
//! Observes each applied verdict and each expiry, against the request's
//! state the [`Book`] keeps from before the event. Checks nothing at the end.

use super::{At, Book, Invariant, Violation};
use crate::protocol::Verdict;
use crate::trace::Event;

/// Keeps nothing of its own: the states it judges by are the book's.
#[derive(Clone, Copy, Debug)]
pub(super) struct TerminalFinal;

impl TerminalFinal {
    pub(super) fn observe(&mut self, book: &Book, at: &At, e: &Event, out: &mut Vec<Violation>) {
        let (id, now) = match e {
            Event::Verdict { request_id, verdict: Verdict::Applied { to, .. }, .. } => (*request_id, Some(*to)),
            Event::Expired { id, .. } => (*id, None),
            _ => return,
        };
        let Some(r) = book.request(id) else { return };
        if r.status.is_terminal() {
            let detail = match now {
                Some(to) => format!("[{}] was {} and became {to}", at.label(id), r.status),
                None => format!("[{}] was {} and then expired", at.label(id), r.status),
            };
            out.push(at.violation(Invariant::TerminalFinal, detail));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use crate::oracle::Invariant;
    use crate::protocol::{kinds, Kind, Status};
    use crate::trace::Event;

    #[test]
    fn a_request_that_expires_after_its_answer_breaks_terminal_final() {
        let answered = vec![
            (0, opened(1, Kind::Plan, ALICE, LEAD)),
            (1_000, delivered(1, Kind::Plan, ALICE, LEAD)),
            (1_000, applied(1, Kind::Plan, ALICE, LEAD, Status::Approved)),
        ];
        assert_eq!(broken(answered.clone(), true), vec![]);
        let mut expired = answered;
        expired.push((60_000, Event::Expired { id: id(1), kind: Kind::Plan, default: kinds::plan::REJECT }));
        let v = violations(expired, true);
        assert_eq!(v.iter().map(|v| v.invariant).collect::<Vec<_>>(), vec![Invariant::TerminalFinal], "{v:?}");
        assert!(v[0].detail.contains("was approved and then expired"), "{}", v[0].detail);
    }
}
