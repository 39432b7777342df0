//! Send-time rules: checked before anything is delivered. A refused send
//! changes nothing; the refusal names the rule it broke.

use super::kinds::{Asker, Kind, Rule};
use super::message::{Address, Envelope, Message, Role};
use super::names::AgentId;
use super::policy::Policy;

/// What the rules need to know about the team.
pub trait Directory {
    /// Whether `id` names a member of the team.
    fn exists(&self, id: AgentId) -> bool;
    /// Whether `id` can receive messages now (not shut down, killed or crashed).
    fn is_active(&self, id: AgentId) -> bool;
}

/// Why a send was refused. Each variant is one rule of the design; the
/// rules a protocol adds are its spec's, named by its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendError {
    /// Someone who may not ask this protocol's question asked it (its
    /// [`Asker`] rule: only the lead asks for a shutdown, only a teammate
    /// submits a plan).
    NotTheAsker(Kind),
    /// An answer went elsewhere than the lead, where the protocol says
    /// answers go.
    AnswerNotToLead(Kind),
    /// A "no" without the words the protocol requires with one.
    NoWithoutWords(Kind),
    ProtocolBroadcast(&'static str),
    BroadcastToOne,
    PeerBlockingRequest,
    PlanRequestNotFromLead,
    SelfAddressed,
    UnknownRecipient,
    InactiveRecipient,
}

impl std::error::Error for SendError {}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::ProtocolBroadcast(t) => {
                write!(f, "protocol messages are point to point: a {t} cannot be broadcast")
            }
            other => f.write_str(other.says()),
        }
    }
}

impl SendError {
    /// Every rule, for listing them in errors and docs, and for reading a
    /// history's refusals: each protocol's own, then the common ones.
    pub fn all() -> Vec<SendError> {
        let mut out = Vec::new();
        for k in Kind::ALL {
            let spec = k.spec();
            out.push(SendError::NotTheAsker(k));
            if spec.answer_to_lead.is_some() {
                out.push(SendError::AnswerNotToLead(k));
            }
            if spec.no_needs_words.is_some() {
                out.push(SendError::NoWithoutWords(k));
            }
        }
        out.extend([
            SendError::ProtocolBroadcast(""),
            SendError::BroadcastToOne,
            SendError::PeerBlockingRequest,
            SendError::PlanRequestNotFromLead,
            SendError::SelfAddressed,
            SendError::UnknownRecipient,
            SendError::InactiveRecipient,
        ]);
        out
    }

    /// The rule a protocol's own refusal breaks.
    fn protocol_rule(self) -> Option<Rule> {
        match self {
            SendError::NotTheAsker(k) => Some(k.spec().asker.rule()),
            // A protocol without the rule never refuses by it: `all` leaves it out.
            SendError::AnswerNotToLead(k) => k.spec().answer_to_lead,
            SendError::NoWithoutWords(k) => k.spec().no_needs_words,
            _ => None,
        }
    }

    /// A short stable name for traces and expectations.
    pub fn rule(self) -> &'static str {
        if let Some(rule) = self.protocol_rule() {
            return rule.name;
        }
        match self {
            SendError::ProtocolBroadcast(_) => "no-protocol-broadcast",
            SendError::BroadcastToOne => "broadcast-to-everyone",
            SendError::PeerBlockingRequest => "strict-hierarchy",
            SendError::PlanRequestNotFromLead => "plan-request-from-lead",
            SendError::SelfAddressed => "not-to-self",
            SendError::UnknownRecipient => "recipient-exists",
            SendError::InactiveRecipient => "recipient-active",
            SendError::NotTheAsker(_) | SendError::AnswerNotToLead(_) | SendError::NoWithoutWords(_) => "",
        }
    }

    /// What the rule says, in a sentence.
    fn says(self) -> &'static str {
        if let Some(rule) = self.protocol_rule() {
            return rule.says;
        }
        match self {
            SendError::ProtocolBroadcast(_) => "protocol messages are point to point: they cannot be broadcast",
            SendError::BroadcastToOne => "a broadcast goes to everyone: address it to all, not to one agent",
            SendError::PeerBlockingRequest => {
                "strict hierarchy: a teammate may not send a blocking request to another teammate"
            }
            SendError::PlanRequestNotFromLead => "only the lead asks a teammate for a plan",
            SendError::SelfAddressed => "an agent cannot send a message to itself",
            SendError::UnknownRecipient => "the recipient is not a member of the team",
            SendError::InactiveRecipient => "the recipient is no longer active (shut down, killed or crashed)",
            SendError::NotTheAsker(_) | SendError::AnswerNotToLead(_) | SendError::NoWithoutWords(_) => "",
        }
    }
}

/// Whether `from` may ask `to` this protocol's question: the rule it breaks
/// if not. The send rules and the receiver's admission both ask this, so
/// "who may ask" is written once.
#[inline(always)]
pub fn may_ask(kind: Kind, from: AgentId, to: AgentId, strict_hierarchy: bool) -> Result<(), SendError> {
    let spec = kind.spec();
    match spec.asker {
        Asker::Lead { .. } if !from.is_lead() => Err(SendError::NotTheAsker(kind)),
        Asker::Teammate { .. } if from.is_lead() => Err(SendError::NotTheAsker(kind)),
        // A teammate that waits on a peer can wait in a cycle.
        _ if spec.blocks_asker && strict_hierarchy && !from.is_lead() && !to.is_lead() => {
            Err(SendError::PeerBlockingRequest)
        }
        _ => Ok(()),
    }
}

/// Whether a reason says nothing (blanks, or invisible characters such as
/// a zero-width space). Stops at the first visible ASCII byte, so
/// the usual case (a real reason) costs one comparison, not a Unicode trim.
fn is_blank(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_whitespace() || !b.is_ascii()) && crate::input::says_nothing(s)
}

/// Checks every send rule, in the order a reader would: addressing first,
/// then the protocol's own rules, then whether the recipient can receive.
///
/// Inlined so that each sender's copy folds away the rules its message
/// cannot break (a teammate's answer is never a broadcast). With a third
/// protocol the compiler stopped inlining it on its own, and the bench's
/// shutdown row paid about a hundred instructions a handshake for the call.
#[inline(always)]
pub fn check_send(env: &Envelope, dir: &(impl Directory + ?Sized), policy: &Policy) -> Result<(), SendError> {
    let msg = &env.message;
    let to = match (env.to, msg) {
        (Address::Everyone, Message::Broadcast { .. }) => return Ok(()),
        (Address::Everyone, Message::Message { .. }) => return Err(SendError::BroadcastToOne),
        (Address::Everyone, m) => return Err(SendError::ProtocolBroadcast(m.type_name())),
        (Address::Agent(_), Message::Broadcast { .. }) => return Err(SendError::BroadcastToOne),
        (Address::Agent(to), _) => to,
    };
    if !dir.exists(to) {
        return Err(SendError::UnknownRecipient);
    }
    if to == env.from {
        return Err(SendError::SelfAddressed);
    }
    match msg.protocol() {
        Some((kind, Role::Request)) => may_ask(kind, env.from, to, policy.strict_hierarchy)?,
        Some((kind, Role::Response)) => {
            let spec = kind.spec();
            if spec.answer_to_lead.is_some() && !to.is_lead() {
                return Err(SendError::AnswerNotToLead(kind));
            }
            let no = msg.approval() == Some(false);
            if spec.no_needs_words.is_some() && no && msg.words().is_none_or(|w| is_blank(w)) {
                return Err(SendError::NoWithoutWords(kind));
            }
        }
        None if matches!(msg, Message::PlanRequest { .. }) && !env.from.is_lead() => {
            return Err(SendError::PlanRequestNotFromLead)
        }
        None => {}
    }
    if !dir.is_active(to) {
        return Err(SendError::InactiveRecipient);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::message::RequestId;
    use crate::protocol::time::Millis;

    /// Lead, alice, bob; carol (3) has shut down.
    struct Team;
    impl Directory for Team {
        fn exists(&self, id: AgentId) -> bool {
            id.0 <= 3
        }
        fn is_active(&self, id: AgentId) -> bool {
            id.0 <= 2
        }
    }

    const LEAD: AgentId = AgentId::LEAD;
    const ALICE: AgentId = AgentId(1);
    const BOB: AgentId = AgentId(2);
    const CAROL: AgentId = AgentId(3);

    fn id() -> RequestId {
        RequestId::from_random_bytes([1; 16])
    }

    fn send(from: AgentId, to: Address, message: Message) -> Result<(), SendError> {
        send_with(from, to, message, &Policy::default())
    }

    fn send_with(from: AgentId, to: Address, message: Message, policy: &Policy) -> Result<(), SendError> {
        check_send(&Envelope { from, to, sent_at: Millis(0), message }, &Team, policy)
    }

    fn shutdown_req() -> Message {
        Message::Request { kind: Kind::Shutdown, request_id: id(), words: None, deadline: Millis::NEVER }
    }
    fn plan_req() -> Message {
        Message::Request { kind: Kind::Plan, request_id: id(), words: Some("p".into()), deadline: Millis::NEVER }
    }
    fn shutdown_resp(approve: bool, reason: Option<&str>) -> Message {
        Message::Response { kind: Kind::Shutdown, request_id: id(), approve, words: reason.map(Into::into) }
    }

    #[test]
    fn the_lead_asks_a_teammate_to_shut_down() {
        assert_eq!(send(LEAD, Address::Agent(ALICE), shutdown_req()), Ok(()));
    }

    #[test]
    fn shutdown_request_only_from_the_lead() {
        assert_eq!(send(ALICE, Address::Agent(BOB), shutdown_req()), Err(SendError::NotTheAsker(Kind::Shutdown)));
    }

    #[test]
    fn shutdown_response_only_to_the_lead() {
        assert_eq!(send(ALICE, Address::Agent(LEAD), shutdown_resp(true, None)), Ok(()));
        assert_eq!(
            send(ALICE, Address::Agent(BOB), shutdown_resp(true, None)),
            Err(SendError::AnswerNotToLead(Kind::Shutdown))
        );
    }

    #[test]
    fn a_rejected_shutdown_needs_a_reason() {
        assert_eq!(
            send(ALICE, Address::Agent(LEAD), shutdown_resp(false, None)),
            Err(SendError::NoWithoutWords(Kind::Shutdown))
        );
        assert_eq!(
            send(ALICE, Address::Agent(LEAD), shutdown_resp(false, Some("  "))),
            Err(SendError::NoWithoutWords(Kind::Shutdown))
        );
        // Invisible characters say nothing either (issue 39, point 18).
        assert_eq!(
            send(ALICE, Address::Agent(LEAD), shutdown_resp(false, Some("\u{200b}\u{feff} "))),
            Err(SendError::NoWithoutWords(Kind::Shutdown))
        );
        assert_eq!(send(ALICE, Address::Agent(LEAD), shutdown_resp(false, Some("tests running"))), Ok(()));
        assert_eq!(send(ALICE, Address::Agent(LEAD), shutdown_resp(false, Some("prêt"))), Ok(()));
    }

    #[test]
    fn protocol_messages_are_never_broadcast() {
        for m in [shutdown_req(), plan_req(), shutdown_resp(true, None)] {
            let name = m.type_name();
            assert_eq!(send(LEAD, Address::Everyone, m), Err(SendError::ProtocolBroadcast(name)));
        }
        assert_eq!(send(LEAD, Address::Everyone, Message::Broadcast { text: "hi".into() }), Ok(()));
        assert_eq!(
            send(LEAD, Address::Agent(ALICE), Message::Broadcast { text: "hi".into() }),
            Err(SendError::BroadcastToOne)
        );
        assert_eq!(
            send(LEAD, Address::Everyone, Message::Message { text: "hi".into() }),
            Err(SendError::BroadcastToOne)
        );
    }

    #[test]
    fn strict_hierarchy_refuses_peer_plans_unless_switched_off() {
        assert_eq!(send(ALICE, Address::Agent(LEAD), plan_req()), Ok(()));
        assert_eq!(send(ALICE, Address::Agent(BOB), plan_req()), Err(SendError::PeerBlockingRequest));
        let loose = Policy { strict_hierarchy: false, ..Policy::default() };
        assert_eq!(send_with(ALICE, Address::Agent(BOB), plan_req(), &loose), Ok(()));
    }

    #[test]
    fn the_lead_does_not_submit_plans() {
        assert_eq!(send(LEAD, Address::Agent(ALICE), plan_req()), Err(SendError::NotTheAsker(Kind::Plan)));
    }

    #[test]
    fn recipient_must_exist_and_be_active() {
        assert_eq!(send(LEAD, Address::Agent(AgentId(9)), shutdown_req()), Err(SendError::UnknownRecipient));
        assert_eq!(send(LEAD, Address::Agent(CAROL), shutdown_req()), Err(SendError::InactiveRecipient));
        assert_eq!(
            send(LEAD, Address::Agent(LEAD), Message::Message { text: "me".into() }),
            Err(SendError::SelfAddressed)
        );
    }

    #[test]
    fn plain_messages_go_anywhere_active() {
        assert_eq!(send(ALICE, Address::Agent(BOB), Message::Message { text: "hi".into() }), Ok(()));
    }

    #[test]
    fn every_rule_has_a_distinct_name() {
        let all = SendError::all();
        let names: std::collections::BTreeSet<_> = all.iter().map(|e| e.rule()).collect();
        assert_eq!(names.len(), all.len());
        assert!(all.iter().all(|e| !e.rule().is_empty() && !e.to_string().is_empty()), "{all:?}");
    }
}
