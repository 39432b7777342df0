//! matching-response: only a matching response changes a request's state.
//! A response matches when it is of the request's kind, comes from its
//! target, is applied by its requester, while the request is pending and
//! before its deadline. The oracle applies this full rule whatever defences
//! the scenario switched off.
//!
//! Observes each applied verdict, against the request the [`Book`] keeps
//! and against the delivery it judged: an agent judges a response in the
//! turn it is delivered, so the verdict follows its `deliver` (as every
//! shell and every reader of other programs' files writes them), and a
//! verdict that names another sender, or no delivery at all, applied a
//! response the log says never came. A history that logs no deliveries at
//! all (an implementation that writes only its decisions, docs/history.md)
//! is taken at its verdicts' word. Checks nothing at the end.

use super::{At, Book, Invariant, Tracked, Violation};
use crate::protocol::{AgentId, Kind, MessageType, RequestId, Status, Verdict};
use crate::trace::Event;

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct MatchingResponse {
    /// The last delivery, until a verdict uses it or another delivery follows.
    delivered: Option<Delivered>,
    /// Whether the log has shown a delivery: then it logs them all.
    logs_deliveries: bool,
}

/// What a verdict must repeat of the delivery it judged.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Delivered {
    to: AgentId,
    sender: AgentId,
    claimed_from: AgentId,
    message_type: MessageType,
    request_id: Option<RequestId>,
}

impl MatchingResponse {
    pub(super) fn observe(&mut self, book: &Book, at: &At, e: &Event, out: &mut Vec<Violation>) {
        let (by, request_id, response_kind, sender, claimed_from, to) = match e {
            Event::Deliver { sender, claimed_from, to, message_type, request_id, .. } => {
                let (sender, claimed_from, to, message_type, request_id) =
                    (*sender, *claimed_from, *to, *message_type, *request_id);
                self.delivered = Some(Delivered { to, sender, claimed_from, message_type, request_id });
                self.logs_deliveries = true;
                return;
            }
            Event::Verdict {
                at: by,
                request_id,
                response_kind,
                sender,
                claimed_from,
                verdict: Verdict::Applied { to, .. },
                ..
            } => (*by, *request_id, *response_kind, *sender, *claimed_from, *to),
            Event::Verdict { .. } => {
                self.delivered = None;
                return;
            }
            _ => return,
        };
        let judged = Delivered {
            to: by,
            sender,
            claimed_from,
            message_type: MessageType::Response(response_kind),
            request_id: Some(request_id),
        };
        let last = self.delivered.take();
        if self.logs_deliveries && last != Some(judged) {
            let last = match last {
                None => "none".to_string(),
                Some(d) => format!("a {} from {} to {}", d.message_type, at.who(d.sender), at.who(d.to)),
            };
            let detail = format!(
                "{} applied a {response_kind} response to [{}] from {} that was never delivered to it (the \
                 delivery just before: {last})",
                at.who(by),
                at.label(request_id),
                at.who(sender),
            );
            out.push(at.violation(Invariant::MatchingResponse, detail));
            return;
        }
        let Some(r) = book.request(request_id) else {
            let detail = format!("{} applied a response for an id it never issued", at.who(by));
            out.push(at.violation(Invariant::MatchingResponse, detail));
            return;
        };
        let broken = mismatches(r, response_kind, sender, by, at);
        if !broken.is_empty() {
            let detail = format!(
                "[{}] moved to {to} by a response that does not match: {}",
                at.label(request_id),
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
    use crate::protocol::{AgentId, Kind, Status};
    use crate::trace::Event;

    #[test]
    fn a_response_from_someone_other_than_the_target_breaks_matching_response() {
        let answered_by = |sender| {
            broken(
                vec![
                    (0, opened(1, Kind::Shutdown, LEAD, ALICE)),
                    (1_000, delivered(1, Kind::Shutdown, LEAD, sender)),
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
        let v = violations(
            vec![
                (0, delivered(9, Kind::Plan, ALICE, LEAD)),
                (0, applied(9, Kind::Plan, ALICE, LEAD, Status::Approved)),
            ],
            false,
        );
        assert_eq!(v.iter().map(|v| v.invariant).collect::<Vec<_>>(), vec![Invariant::MatchingResponse]);
        assert!(v[0].detail.contains("alice applied a response for an id it never issued"), "{}", v[0].detail);
    }

    /// Alice's shutdown request 1, answered at 1 s: the delivery the lead
    /// judges, as `deliver`, then the verdict.
    fn answered(deliver: Option<Event>, verdict_sender: AgentId) -> Vec<(u64, Event)> {
        let mut log = vec![(0, opened(1, Kind::Shutdown, LEAD, ALICE))];
        log.extend(deliver.map(|d| (1_000, d)));
        log.push((1_000, applied(1, Kind::Shutdown, LEAD, verdict_sender, Status::Approved)));
        log
    }

    #[test]
    fn a_verdict_must_judge_the_delivery_just_before_it() {
        // As written, the answer came from alice and was judged: nothing broken.
        let from_alice = delivered(1, Kind::Shutdown, LEAD, ALICE);
        assert_eq!(broken(answered(Some(from_alice), ALICE), false), vec![]);
        // A history another program wrote, where the adversary's answer is
        // judged as alice's: the delivery says who sent it.
        let mut forged = delivered(1, Kind::Shutdown, LEAD, AGENT_ADVERSARY);
        if let Event::Deliver { claimed_from, .. } = &mut forged {
            *claimed_from = ALICE;
        }
        let v = violations(answered(Some(forged), ALICE), false);
        assert_eq!(v.iter().map(|v| v.invariant).collect::<Vec<_>>(), vec![Invariant::MatchingResponse], "{v:?}");
        assert!(v[0].detail.contains("from alice that was never delivered to it"), "{}", v[0].detail);
        assert!(
            v[0].detail.contains("(the delivery just before: a shutdown_response from adversary to lead)"),
            "{}",
            v[0].detail
        );
        // No delivery of it, in a log that shows deliveries: an answer
        // nobody sent.
        let mut log = vec![(0, delivered(7, Kind::Plan, LEAD, ALICE))];
        log.extend(answered(None, ALICE));
        let v = violations(log, false);
        assert_eq!(v.iter().map(|v| v.invariant).collect::<Vec<_>>(), vec![Invariant::MatchingResponse], "{v:?}");
        let other = "(the delivery just before: a plan_approval_response from alice to lead)";
        assert!(v[0].detail.contains(other), "{}", v[0].detail);
        // A history that logs no messages at all is taken at its word.
        assert_eq!(broken(answered(None, ALICE), false), vec![]);
        // One delivery judged twice: the second verdict has none.
        let mut twice = answered(Some(delivered(1, Kind::Shutdown, LEAD, ALICE)), ALICE);
        twice.push((1_000, applied(1, Kind::Shutdown, LEAD, ALICE, Status::Approved)));
        let v = violations(twice, false);
        assert!(v.iter().any(|v| v.detail.contains("never delivered to it (the delivery just before: none)")), "{v:?}");
    }
}
