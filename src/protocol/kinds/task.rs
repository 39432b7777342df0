//! Task assignment: the lead offers a teammate a task; the teammate accepts
//! it, and the task becomes its work, or declines, saying why. Unanswered,
//! the default offers it to the next idle teammate (`reassign`), or lets it
//! go (`drop`).

use super::{About, Asker, Effect, OnExpiry, OwnInvariant, Rule, Spec, TimeoutDefault, Words, YesMeans};
use crate::protocol::time::Millis;

pub const SPEC: Spec = Spec {
    name: "task",
    step: "assign_task",
    request: "task_request",
    response: "task_response",
    request_words: Words { key: "task", required: true, when_silent: "" },
    answer_key: "accept",
    yes_no: ["accept", "decline"],
    answer_words: "reason",
    asker: Asker::Lead { rule: Rule { name: "task-from-lead", says: "only the lead assigns tasks" } },
    about: About::Target,
    yes_means: YesMeans::NewWork,
    blocks_asker: false,
    answer_to_lead: Some(Rule { name: "task-response-to-lead", says: "a task_response goes to the lead only" }),
    no_needs_words: Some(Rule { name: "decline-needs-reason", says: "declining a task needs a non-empty reason" }),
    timeout_key: "task_timeout",
    default_timeout: Millis::from_secs(60),
    expiry_key: "on_task_timeout",
    on_expiry: &[REASSIGN, DROP],
    colour: "#fff9c4",
    invariants: &[
        OwnInvariant { name: "single-holder", says: "a task is held by one teammate at a time" },
        OwnInvariant {
            name: "work-in-assignment",
            says: "a teammate takes up a task only while the offer it accepted stands",
        },
    ],
    other_names: &[],
};

/// The task is offered to the next idle teammate not yet offered it.
pub const REASSIGN: TimeoutDefault = TimeoutDefault::new(&OnExpiry { name: "reassign", effect: Effect::AskNext });

/// The task is let go.
pub const DROP: TimeoutDefault = TimeoutDefault::new(&OnExpiry { name: "drop", effect: Effect::Nothing });
