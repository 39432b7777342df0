//! The scenario file as written: TOML mapped onto plain structs. Unknown keys
//! are refused (a typo must not pass silently), and every value a later check
//! may complain about keeps its position in the file.

use crate::agent::Answer;
use crate::protocol::{Defences, OnPlanTimeout, OnShutdownTimeout};
use serde::Deserialize;
use toml::Spanned;

pub type S<T> = Spanned<T>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileDoc {
    pub name: S<String>,
    pub about: S<String>,
    pub seed: Option<u64>,
    /// Stop the run at this virtual time even if work remains.
    pub end: Option<S<String>>,
    /// A run that never settles is stopped here (default one hour).
    pub cap: Option<S<String>>,
    #[serde(default)]
    pub policy: PolicyDoc,
    #[serde(default)]
    pub lead: LeadDoc,
    #[serde(default, rename = "teammate")]
    pub teammates: Vec<S<TeammateDoc>>,
    #[serde(default, rename = "step")]
    pub steps: Vec<S<StepDoc>>,
    #[serde(default, rename = "fault")]
    pub faults: Vec<S<FaultDoc>>,
    #[serde(default, rename = "expect")]
    pub expects: Vec<S<ExpectDoc>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyDoc {
    pub shutdown_timeout: Option<S<String>>,
    pub plan_timeout: Option<S<String>>,
    pub on_shutdown_timeout: Option<OnShutdownTimeout>,
    pub on_plan_timeout: Option<OnPlanTimeout>,
    pub strict_hierarchy: Option<bool>,
    pub latency: Option<S<String>>,
    pub defences: Option<Defences>,
}

/// One answer, or a list used in order whose last answer repeats.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum AnswersDoc {
    One(Answer),
    Many(Vec<Answer>),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeadDoc {
    pub on_plan: Option<S<AnswersDoc>>,
    pub feedback: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeammateDoc {
    pub name: S<String>,
    pub on_shutdown: Option<S<AnswersDoc>>,
    pub reject_reason: Option<String>,
    pub on_plan: Option<S<AnswersDoc>>,
    #[serde(default)]
    pub require_plan: bool,
    pub plan: Option<String>,
    #[serde(default)]
    pub work: Vec<S<WorkDoc>>,
    pub max_revisions: Option<u32>,
    /// Make this many identical teammates named `<name>-1`, `<name>-2`, ...
    pub count: Option<S<u32>>,
}

/// One action of work: exactly one of `write`, `edit`, `shell`, `read`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkDoc {
    pub write: Option<String>,
    pub edit: Option<String>,
    pub shell: Option<String>,
    pub read: Option<String>,
    pub steps: Option<S<u32>>,
    pub step_time: Option<S<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepDoc {
    pub at: S<String>,
    #[serde(rename = "do")]
    pub action: S<String>,
    pub to: Option<S<String>>,
    pub from: Option<S<String>>,
    pub label: Option<S<String>>,
    pub reason: Option<String>,
    pub plan: Option<String>,
    pub text: Option<String>,
}

/// Every fault's keys in one table; which ones a kind needs is checked after
/// parsing, so a missing key is reported with the kind that needs it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultDoc {
    pub kind: S<String>,
    pub at: Option<S<String>>,
    pub until: Option<S<String>>,
    pub agent: Option<S<String>>,
    pub from: Option<S<String>>,
    pub to: Option<S<String>>,
    /// Message types the fault touches (`type = "shutdown_response"` or a list).
    #[serde(rename = "type")]
    pub types: Option<S<OneOrMany>>,
    /// Only messages of this labelled request.
    pub request: Option<S<String>>,
    pub delay: Option<S<String>>,
    pub count: Option<S<u32>>,
    pub probability: Option<S<f64>>,
    pub restart: Option<S<String>>,
    pub between: Option<S<Vec<String>>>,
    /// `"both"` (default) or `"one_way"` (from the first to the second only).
    pub direction: Option<S<String>>,
    /// Partition: `"hold"` (default: messages wait until it heals) or `"drop"`.
    pub mode: Option<S<String>>,
    pub message: Option<S<toml::Value>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectDoc {
    pub request: Option<S<String>>,
    pub teammate: Option<S<String>>,
    pub status: Option<S<String>>,
    pub file: Option<S<String>>,
    pub state: Option<S<String>>,
    pub ignored: Option<u32>,
    /// With `ignored`: count only this reason (`late`, `not_pending`, ...).
    pub reason: Option<S<String>>,
    pub refused: Option<u32>,
    /// With `refused`: count only this rule (`strict-hierarchy`, ...).
    pub rule: Option<S<String>>,
    pub expired: Option<u32>,
    pub violation: Option<S<String>>,
    /// A gate state at the end: with `teammate`.
    pub gate: Option<S<String>>,
}
