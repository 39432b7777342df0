//! Send-time rules: checked before anything is delivered. A refused send
//! changes nothing; the refusal names the rule it broke.

use super::message::{Address, Envelope, Kind, Message, Role};
use super::names::AgentId;
use super::policy::Policy;

/// What the rules need to know about the team.
pub trait Directory {
    /// Whether `id` names a member of the team.
    fn exists(&self, id: AgentId) -> bool;
    /// Whether `id` can receive messages now (not shut down, killed or crashed).
    fn is_active(&self, id: AgentId) -> bool;
}

/// Why a send was refused. Each variant is one rule of the design.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    #[error("only the lead may send a shutdown_request")]
    ShutdownRequestNotFromLead,
    #[error("a shutdown_response goes to the lead only")]
    ShutdownResponseNotToLead,
    #[error("rejecting a shutdown needs a non-empty reason")]
    RejectionWithoutReason,
    #[error("protocol messages are point to point: a {0} cannot be broadcast")]
    ProtocolBroadcast(&'static str),
    #[error("a broadcast goes to everyone: address it to all, not to one agent")]
    BroadcastToOne,
    #[error("strict hierarchy: a teammate may not send a blocking request to another teammate")]
    PeerBlockingRequest,
    #[error("the lead approves plans; it does not submit them")]
    PlanFromLead,
    #[error("only the lead asks a teammate for a plan")]
    PlanRequestNotFromLead,
    #[error("an agent cannot send a message to itself")]
    SelfAddressed,
    #[error("the recipient is not a member of the team")]
    UnknownRecipient,
    #[error("the recipient is no longer active (shut down, killed or crashed)")]
    InactiveRecipient,
}

impl SendError {
    /// Every rule, for listing them in errors and docs.
    pub const ALL: [SendError; 11] = [
        SendError::ShutdownRequestNotFromLead,
        SendError::ShutdownResponseNotToLead,
        SendError::RejectionWithoutReason,
        SendError::ProtocolBroadcast(""),
        SendError::BroadcastToOne,
        SendError::PeerBlockingRequest,
        SendError::PlanFromLead,
        SendError::PlanRequestNotFromLead,
        SendError::SelfAddressed,
        SendError::UnknownRecipient,
        SendError::InactiveRecipient,
    ];

    /// A short stable name for traces and expectations.
    pub fn rule(self) -> &'static str {
        match self {
            SendError::ShutdownRequestNotFromLead => "shutdown-request-from-lead",
            SendError::ShutdownResponseNotToLead => "shutdown-response-to-lead",
            SendError::RejectionWithoutReason => "rejection-needs-reason",
            SendError::ProtocolBroadcast(_) => "no-protocol-broadcast",
            SendError::BroadcastToOne => "broadcast-to-everyone",
            SendError::PeerBlockingRequest => "strict-hierarchy",
            SendError::PlanFromLead => "plan-from-teammate",
            SendError::PlanRequestNotFromLead => "plan-request-from-lead",
            SendError::SelfAddressed => "not-to-self",
            SendError::UnknownRecipient => "recipient-exists",
            SendError::InactiveRecipient => "recipient-active",
        }
    }
}

/// Whether a reason says nothing. Stops at the first visible ASCII byte, so
/// the usual case (a real reason) costs one comparison, not a Unicode trim.
fn is_blank(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_whitespace() || !b.is_ascii()) && s.trim().is_empty()
}

/// Checks every send rule, in the order a reader would: addressing first,
/// then the protocol's own rules, then whether the recipient can receive.
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
    match (msg.protocol(), msg) {
        (Some((Kind::Shutdown, Role::Request)), _) if !env.from.is_lead() => {
            return Err(SendError::ShutdownRequestNotFromLead)
        }
        (Some((Kind::Shutdown, Role::Response)), _) if !to.is_lead() => {
            return Err(SendError::ShutdownResponseNotToLead)
        }
        (_, Message::ShutdownResponse { approve: false, reason, .. }) if reason.as_deref().is_none_or(is_blank) => {
            return Err(SendError::RejectionWithoutReason)
        }
        (Some((Kind::Plan, Role::Request)), _) if env.from.is_lead() => return Err(SendError::PlanFromLead),
        (None, Message::PlanRequest { .. }) if !env.from.is_lead() => return Err(SendError::PlanRequestNotFromLead),
        (Some((Kind::Plan, Role::Request)), _) if policy.strict_hierarchy && !to.is_lead() => {
            return Err(SendError::PeerBlockingRequest)
        }
        _ => {}
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
        Message::ShutdownRequest { request_id: id(), reason: None, deadline: Millis::NEVER }
    }
    fn plan_req() -> Message {
        Message::PlanApprovalRequest { request_id: id(), plan: "p".into(), deadline: Millis::NEVER }
    }
    fn shutdown_resp(approve: bool, reason: Option<&str>) -> Message {
        Message::ShutdownResponse { request_id: id(), approve, reason: reason.map(Into::into) }
    }

    #[test]
    fn the_lead_asks_a_teammate_to_shut_down() {
        assert_eq!(send(LEAD, Address::Agent(ALICE), shutdown_req()), Ok(()));
    }

    #[test]
    fn shutdown_request_only_from_the_lead() {
        assert_eq!(send(ALICE, Address::Agent(BOB), shutdown_req()), Err(SendError::ShutdownRequestNotFromLead));
    }

    #[test]
    fn shutdown_response_only_to_the_lead() {
        assert_eq!(send(ALICE, Address::Agent(LEAD), shutdown_resp(true, None)), Ok(()));
        assert_eq!(
            send(ALICE, Address::Agent(BOB), shutdown_resp(true, None)),
            Err(SendError::ShutdownResponseNotToLead)
        );
    }

    #[test]
    fn a_rejected_shutdown_needs_a_reason() {
        assert_eq!(
            send(ALICE, Address::Agent(LEAD), shutdown_resp(false, None)),
            Err(SendError::RejectionWithoutReason)
        );
        assert_eq!(
            send(ALICE, Address::Agent(LEAD), shutdown_resp(false, Some("  "))),
            Err(SendError::RejectionWithoutReason)
        );
        assert_eq!(send(ALICE, Address::Agent(LEAD), shutdown_resp(false, Some("tests running"))), Ok(()));
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
        assert_eq!(send(LEAD, Address::Agent(ALICE), plan_req()), Err(SendError::PlanFromLead));
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
        let all = SendError::ALL;
        let names: std::collections::BTreeSet<_> = all.iter().map(|e| e.rule()).collect();
        assert_eq!(names.len(), all.len());
    }
}
