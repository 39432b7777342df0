//! The shutdown handshake: the lead asks a teammate to stop; the teammate
//! approves (it finishes what it is doing, then stops) or rejects, saying
//! why. Unanswered, the default kills it: a silent worker is treated as lost.

use super::{About, Asker, Effect, OnExpiry, OtherName, Rule, Spec, TimeoutDefault, Words, Written, YesMeans};
use crate::protocol::time::Millis;

pub const SPEC: Spec = Spec {
    name: "shutdown",
    step: "shutdown",
    request: "shutdown_request",
    response: "shutdown_response",
    request_words: Words { key: "reason", required: false, when_silent: "Please shut down gracefully." },
    answer_key: "approve",
    yes_no: ["approve", "reject"],
    answer_words: "reason",
    asker: Asker::Lead {
        rule: Rule { name: "shutdown-request-from-lead", says: "only the lead may send a shutdown_request" },
    },
    about: About::Target,
    yes_means: YesMeans::Stop,
    blocks_asker: false,
    answer_to_lead: Some(Rule { name: "shutdown-response-to-lead", says: "a shutdown_response goes to the lead only" }),
    no_needs_words: Some(Rule {
        name: "rejection-needs-reason",
        says: "rejecting a shutdown needs a non-empty reason",
    }),
    timeout_key: "shutdown_timeout",
    default_timeout: Millis::from_secs(60),
    expiry_key: "on_shutdown_timeout",
    on_expiry: &[KILL, KEEP],
    invariants: &[],
    colour: "#bbdefb",
    // The production agent's names: the answer is in the type.
    other_names: &[
        OtherName { written: "shutdown_approved", is: Written::Answer { yes: true }, only_with: None },
        OtherName { written: "shutdown_rejected", is: Written::Answer { yes: false }, only_with: None },
    ],
};

/// A silent worker is treated as lost: the lead kills it.
pub const KILL: TimeoutDefault = TimeoutDefault::new(&OnExpiry { name: "kill", effect: Effect::KillTarget });

/// The lead stops asking; the teammate goes on working.
pub const KEEP: TimeoutDefault = TimeoutDefault::new(&OnExpiry { name: "keep", effect: Effect::KeepTarget });
