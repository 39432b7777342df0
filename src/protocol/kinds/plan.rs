//! Plan approval: a teammate whose work is gated submits a plan and waits;
//! the lead (or, with the hierarchy off, a peer) approves it, opening the
//! gate, or rejects it with feedback. Unanswered, the default rejects: the
//! gate stays closed, since silence is not consent.

use super::{About, Asker, Effect, OnExpiry, OtherName, Rule, Spec, TimeoutDefault, Words, Written, YesMeans};
use crate::protocol::time::Millis;

pub const SPEC: Spec = Spec {
    name: "plan",
    step: "submit_plan",
    request: "plan_approval_request",
    response: "plan_approval_response",
    request_words: Words { key: "plan", required: true, when_silent: "" },
    answer_key: "approve",
    yes_no: ["approve", "reject"],
    answer_words: "feedback",
    asker: Asker::Teammate {
        rule: Rule { name: "plan-from-teammate", says: "the lead approves plans; it does not submit them" },
    },
    about: About::Asker,
    yes_means: YesMeans::Nothing,
    blocks_asker: true,
    answer_to_lead: None,
    no_needs_words: None,
    timeout_key: "plan_timeout",
    default_timeout: Millis::from_secs(120),
    expiry_key: "on_plan_timeout",
    on_expiry: &[REJECT, APPROVE],
    invariants: &[],
    colour: "#b2dfdb",
    other_names: &[
        // The reference's s10 submits a plan as a `plan_approval_response`
        // that carries it, and no answer.
        OtherName { written: "plan_approval_response", is: Written::Request, only_with: Some("plan") },
        OtherName { written: "plan_approval", is: Written::Request, only_with: None },
    ],
};

/// Silence is not consent: the gate stays closed.
pub const REJECT: TimeoutDefault =
    TimeoutDefault::new(&OnExpiry { name: "reject", effect: Effect::Answer { yes: false } });

/// Silence is consent: the gate opens (for teams that trust their authors).
pub const APPROVE: TimeoutDefault =
    TimeoutDefault::new(&OnExpiry { name: "approve", effect: Effect::Answer { yes: true } });
