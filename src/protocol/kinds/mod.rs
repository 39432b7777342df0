//! The request/response protocols, each described once.
//!
//! Every protocol here has one shape: a request that carries words (a
//! shutdown's reason, a plan), answered yes or no with words (a rejection's
//! reason, feedback). What differs from one to the next is data — its names
//! on the wire, who may ask, whom a request is about, its timeout and what
//! happens when it expires — and that data is its [`Spec`], in a module of
//! its own. The rest of the program asks a kind for its spec, or walks
//! [`Kind::ALL`]; what matches on a kind is what only an agent can decide
//! (how a teammate answers each protocol), where the compiler then points
//! at every match when a protocol is added.

pub mod plan;
pub mod shutdown;
pub mod task;

/// What the reference's lead writes as the content of a shutdown request.
pub const SHUTDOWN_WORDS_WHEN_SILENT: &str = shutdown::SPEC.request_words.when_silent;

use super::names::AgentId;
use super::time::Millis;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The request/response protocols.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Shutdown,
    Plan,
    Task,
}

impl Kind {
    /// Every protocol, in the order tables and lists show them.
    pub const ALL: [Kind; 3] = [Kind::Shutdown, Kind::Plan, Kind::Task];
    /// How many there are: the size of anything kept per protocol.
    pub const COUNT: usize = Kind::ALL.len();

    /// What this protocol is.
    pub fn spec(self) -> &'static Spec {
        match self {
            Kind::Shutdown => &shutdown::SPEC,
            Kind::Plan => &plan::SPEC,
            Kind::Task => &task::SPEC,
        }
    }

    /// Its place in [`Kind::ALL`], for what is kept per protocol.
    #[inline(always)]
    pub fn index(self) -> usize {
        self as usize
    }

    /// The protocol's name, as labels (`alice/plan/2`) and the trace spell it.
    pub fn as_str(self) -> &'static str {
        self.spec().name
    }

    /// The protocol named `name` (`shutdown`, `plan`).
    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The protocol a `[[step]]`'s `do` asks (`shutdown`, `submit_plan`).
    pub fn of_step(action: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.spec().step == action)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One protocol, as data.
#[derive(Debug)]
pub struct Spec {
    /// Its name: labels (`alice/shutdown/1`), the trace's `kind`.
    pub name: &'static str,
    /// What a scenario's `[[step]]` does to ask it (`do = "shutdown"`).
    pub step: &'static str,
    /// The request's `type` on the wire.
    pub request: &'static str,
    /// The response's `type` on the wire.
    pub response: &'static str,
    /// What a request says, under which key (a shutdown's `reason`, a `plan`).
    pub request_words: Words,
    /// The key an answer's yes or no is under (`approve`).
    pub answer_key: &'static str,
    /// How the trace says an answer's yes and its no (`approve`, `reject`).
    pub yes_no: [&'static str; 2],
    /// The key an answer's words are under (`reason`, `feedback`).
    pub answer_words: &'static str,
    /// Who may ask, and the rule a request from anyone else breaks.
    pub asker: Asker,
    /// Whom a request is about: the teammate its label and the views name.
    pub about: About,
    /// What a yes commits the teammate who gives it to (the oracle and the
    /// pictures read it).
    pub yes_means: YesMeans,
    /// The asker waits for the answer and does nothing else meanwhile: a
    /// wait-for edge, which the strict hierarchy keeps from forming between
    /// teammates.
    pub blocks_asker: bool,
    /// A response may go only to the lead (the rule it breaks otherwise).
    pub answer_to_lead: Option<Rule>,
    /// A "no" must carry words (the rule it breaks otherwise).
    pub no_needs_words: Option<Rule>,
    /// `[policy]` key of its timeout, and the timeout when none is given.
    pub timeout_key: &'static str,
    pub default_timeout: Millis,
    /// `[policy]` key of what an expired request does; the defaults it may
    /// choose, the first being the safe one and the default.
    pub expiry_key: &'static str,
    pub on_expiry: &'static [TimeoutDefault],
    /// The fill of its requests' bars in the pictures, pale enough for
    /// black text (an SVG colour).
    pub colour: &'static str,
    /// The invariants it brings of its own, beyond those every protocol is
    /// held to; the oracle's witness of this protocol checks them.
    pub invariants: &'static [OwnInvariant],
    /// The `type`s other runtimes write for its messages, as `audit` reads
    /// their histories (the production agent's `shutdown_approved`).
    pub other_names: &'static [OtherName],
}

/// A message `type` another runtime writes for one of a protocol's
/// messages, and which of them it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OtherName {
    pub written: &'static str,
    pub is: Written,
    /// Read so only from a line that has this field and no answer (a type
    /// one runtime also uses for something else).
    pub only_with: Option<&'static str>,
}

/// Which of a protocol's messages another runtime's name stands for: the
/// request, or an answer whose yes or no the name itself says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    Request,
    Answer { yes: bool },
}

/// An invariant one protocol brings: its stable name (reports, `[[expect]]
/// violated`) and what it promises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OwnInvariant {
    pub name: &'static str,
    pub says: &'static str,
}

/// The words a request carries: the key the wire gives them, whether a
/// request must have them, and what an inbox line's `content` says when a
/// request has none (the reference's lead writes a sentence there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Words {
    pub key: &'static str,
    pub required: bool,
    pub when_silent: &'static str,
}

/// Who may ask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asker {
    /// Only the lead (a teammate's request breaks `rule`).
    Lead { rule: Rule },
    /// A teammate, of the lead or (with the hierarchy off) of a peer; the
    /// lead's request breaks `rule`.
    Teammate { rule: Rule },
}

impl Asker {
    /// Whether the lead is the one who asks.
    pub fn is_lead(self) -> bool {
        matches!(self, Asker::Lead { .. })
    }

    /// The rule a request from someone who may not ask breaks.
    pub fn rule(self) -> Rule {
        match self {
            Asker::Lead { rule } | Asker::Teammate { rule } => rule,
        }
    }
}

/// What a teammate's yes commits it to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum YesMeans {
    /// Nothing of its own: the yes is the asker's to use (a plan approved
    /// opens its author's gate).
    Nothing,
    /// To stop, once the item in hand is done (a shutdown approved).
    Stop,
    /// To new work, which a plan approved before it does not cover (a task
    /// accepted): a plan gate in play closes until a new plan is approved.
    NewWork,
}

/// Whom a request is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum About {
    /// The teammate asked (a shutdown is about who is to stop).
    Target,
    /// The teammate who asks (a plan is about its author's work).
    Asker,
}

impl About {
    /// Of a request from `requester` to `target`, the one it is about.
    #[inline(always)]
    pub fn of(self, requester: AgentId, target: AgentId) -> AgentId {
        match self {
            About::Target => target,
            About::Asker => requester,
        }
    }
}

/// A send rule: its stable name (traces, `[[expect]] refused`) and what it says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    pub name: &'static str,
    pub says: &'static str,
}

/// What an expired request does, as recorded in the trace: the name a
/// scenario's `[policy]` and the trace give it, and its effect. Each
/// protocol's module defines the defaults it may choose (its spec lists
/// them, the safe one first); what they *do* is one of the few [`Effect`]s
/// the agents know how to carry out, so a new protocol adds defaults
/// without a new case anywhere else.
///
/// A handle, one pointer wide: the trace's events carry one, and a fatter
/// default made every event bigger (72 bytes, from 64), which the bench
/// felt. Its fields are read through it (`d.name`, `d.effect`).
#[derive(Clone, Copy)]
pub struct TimeoutDefault(&'static OnExpiry);

/// A default on expiry's name and effect, which a [`TimeoutDefault`] points at.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct OnExpiry {
    pub name: &'static str,
    pub effect: Effect,
}

impl TimeoutDefault {
    /// The default `d` describes (a protocol's module makes its own).
    pub const fn new(d: &'static OnExpiry) -> TimeoutDefault {
        TimeoutDefault(d)
    }
}

impl std::ops::Deref for TimeoutDefault {
    type Target = OnExpiry;
    fn deref(&self) -> &OnExpiry {
        self.0
    }
}

// Equal when they say the same: a default is its name and effect, wherever
// the constant that made it was placed in memory.
impl PartialEq for TimeoutDefault {
    fn eq(&self, other: &TimeoutDefault) -> bool {
        self.0 == other.0
    }
}

impl Eq for TimeoutDefault {}

impl std::hash::Hash for TimeoutDefault {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.hash(h);
    }
}

impl fmt::Debug for TimeoutDefault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

/// What a default does once its request has expired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Effect {
    /// The teammate asked is killed: a silent worker is treated as lost
    /// (the lead kills it; the oracle checks that the kill came).
    KillTarget,
    /// The teammate asked stays: the asker stops waiting, and nothing
    /// kills it for this request.
    KeepTarget,
    /// The asker takes the silence as an answer, yes or no: a plan's
    /// author opens its gate, or keeps it shut.
    Answer { yes: bool },
    /// The asker makes the same request, in the same words, of the next
    /// idle teammate in the team's order that it has not asked yet; with
    /// none left, it lets the request go.
    AskNext,
    /// The asker lets the request go; nothing else follows.
    Nothing,
}

impl TimeoutDefault {
    /// Every default some protocol may choose, each once, in protocol order.
    pub fn all() -> impl Iterator<Item = TimeoutDefault> {
        let mut seen: Vec<TimeoutDefault> = Vec::new();
        for k in Kind::ALL {
            for d in k.spec().on_expiry {
                if !seen.contains(d) {
                    seen.push(*d);
                }
            }
        }
        seen.into_iter()
    }

    /// The default some protocol calls `name`.
    pub fn named(name: &str) -> Option<TimeoutDefault> {
        TimeoutDefault::all().find(|d| d.name == name)
    }

    /// Whether it passes the request on to another teammate, chosen by the
    /// team's order: identical teammates are then no longer interchangeable
    /// (the explorer's symmetry reads this).
    pub fn picks_by_order(self) -> bool {
        self.effect == Effect::AskNext
    }

    pub fn as_str(self) -> &'static str {
        self.name
    }
}

impl Serialize for TimeoutDefault {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_protocol_has_names_of_its_own() {
        let mut names: Vec<&str> = Vec::new();
        let mut colours: Vec<&str> = Vec::new();
        for k in Kind::ALL {
            let s = k.spec();
            assert_eq!(Kind::parse(s.name), Some(k));
            assert_eq!(Kind::ALL[k.index()], k);
            assert!(s.request.starts_with(s.name) || s.request.starts_with("plan_approval"), "{}", s.request);
            assert!(!s.on_expiry.is_empty(), "{k}: no default on expiry");
            for d in s.on_expiry {
                // One name, one effect: the trace names a default, and the
                // oracle reads its effect back from that name.
                assert_eq!(TimeoutDefault::named(d.name), Some(*d), "{k}: `{}` means two things", d.name);
            }
            names.extend([s.name, s.request, s.response, s.timeout_key, s.expiry_key, s.asker.rule().name]);
            names.extend(s.answer_to_lead.map(|r| r.name));
            names.extend(s.no_needs_words.map(|r| r.name));
            names.extend(s.invariants.iter().map(|i| i.name));
            // Another runtime's name is read as it says unless a line has
            // the field that tells it apart: only then may it be one of ours.
            names.extend(s.other_names.iter().filter(|o| o.only_with.is_none()).map(|o| o.written));
            colours.push(s.colour);
        }
        let mut unique_colours = colours.clone();
        unique_colours.sort_unstable();
        unique_colours.dedup();
        assert_eq!(unique_colours.len(), colours.len(), "two protocols drawn alike: {colours:?}");
        let mut steps: Vec<&str> = Kind::ALL.iter().map(|k| k.spec().step).collect();
        steps.sort_unstable();
        steps.dedup();
        assert_eq!(steps.len(), Kind::COUNT, "two protocols asked by one step");
        for k in Kind::ALL {
            assert_eq!(Kind::of_step(k.spec().step), Some(k));
        }
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "a name used twice: {names:?}");
    }
}
