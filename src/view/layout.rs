//! What a picture of a run is made of: lanes, rows on a piecewise time axis,
//! arrows, marks, spans and request bars. The model builder (`model`) fills
//! these in from the event log, `quiet` folds uneventful rows away, and the
//! renderers draw them; the types live here, below all three, so that each
//! of those modules depends on this one and none on another's internals.

use crate::protocol::{AgentId, GateState, Kind, Millis, TimeoutDefault};
use crate::trace::{Cause, RosterStatus};

/// What an agent's lifeline shows at a point in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneState {
    /// The lead has no roster status of its own: it is always there.
    Lead,
    /// The adversary exists only to forge and replay.
    Adversary,
    /// A name not on the team, which only a send to a name that is not a
    /// member writes to (Claude Code's runtime writes to any name).
    Outside,
    Working,
    WaitingApproval,
    Idle,
    /// Approved its shutdown, finishing the step in progress.
    Stopping,
    /// Stopped reading its inbox (a stall fault).
    Stalled,
    Shutdown,
    Killed,
    Crashed,
}

impl LaneState {
    pub const LEGEND: [LaneState; 8] = [
        LaneState::Working,
        LaneState::WaitingApproval,
        LaneState::Idle,
        LaneState::Stopping,
        LaneState::Stalled,
        LaneState::Shutdown,
        LaneState::Killed,
        LaneState::Crashed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LaneState::Lead => "lead",
            LaneState::Adversary => "adversary",
            LaneState::Outside => "not on the team",
            LaneState::Working => "working",
            LaneState::WaitingApproval => "waiting for approval",
            LaneState::Idle => "idle",
            LaneState::Stopping => "stopping",
            LaneState::Stalled => "stalled",
            LaneState::Shutdown => "shut down",
            LaneState::Killed => "killed",
            LaneState::Crashed => "crashed",
        }
    }

    /// An agent in this state is gone: its lifeline is drawn thin.
    pub fn is_gone(self) -> bool {
        matches!(self, LaneState::Shutdown | LaneState::Killed | LaneState::Crashed)
    }

    pub(super) fn from_roster(s: RosterStatus) -> LaneState {
        match s {
            RosterStatus::Working => LaneState::Working,
            RosterStatus::WaitingApproval => LaneState::WaitingApproval,
            RosterStatus::Idle => LaneState::Idle,
            RosterStatus::Shutdown => LaneState::Shutdown,
            RosterStatus::Killed => LaneState::Killed,
            RosterStatus::Crashed => LaneState::Crashed,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Lead,
    Teammate,
    Adversary,
    /// A name not on the team that a message was written to.
    Outside,
}

#[derive(Clone, Debug)]
pub struct Lane {
    pub agent: AgentId,
    pub name: String,
    pub role: Role,
    /// Consecutive, covering every row from the first to the last.
    pub segments: Vec<Segment>,
    /// How many request bars stand side by side on this lane at most.
    pub slots: usize,
    /// The roster's last word, shown under the lane.
    pub last: Option<RosterStatus>,
    /// How many alike agents the lane stands for (`view::fold`): 1 but for a group.
    pub stands_for: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub from: usize,
    pub to: usize,
    pub state: LaneState,
}

/// How a row stands to the one above it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gap {
    First,
    /// Same millisecond, later in the log: a row of its own so labels do not collide.
    Same,
    Step(Millis),
    /// A stretch with nothing in the log, at least `ViewOptions::idle_after` long:
    /// drawn as a fixed-height break, not to scale.
    Idle(Millis),
    /// Uneventful work folded away (`quiet`): `steps` file steps and nothing
    /// else over `over`, drawn like an idle break.
    Folded {
        steps: usize,
        over: Millis,
    },
}

impl Gap {
    /// What a break says in place of the time it leaves out, if it is one.
    pub fn break_words(self) -> Option<String> {
        match self {
            Gap::Idle(ms) => Some(format!("⋯ {ms} idle ⋯")),
            Gap::Folded { steps: 1, over } => Some(format!("⋯ {over}: 1 work step, nothing else ⋯")),
            Gap::Folded { steps, over } => Some(format!("⋯ {over}: {steps} work steps, nothing else ⋯")),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    pub t: Millis,
    pub gap: Gap,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsgClass {
    Request,
    Response,
    Plain,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Delivered,
    Lost(Cause),
    /// Neither delivered nor lost when the run ended.
    InFlight,
}

/// One message on its way: from the sender's lifeline at `sent` to the
/// receiver's at `end` (a duplicated message has two arrows).
#[derive(Clone, Debug)]
pub struct Arrow {
    pub seq: u64,
    pub from: usize,
    pub to: usize,
    pub sent: usize,
    pub end: usize,
    pub t_sent: Millis,
    pub t_end: Millis,
    pub class: MsgClass,
    /// Type, request label and answer: `shutdown_response [stop-alice] reject`.
    pub text: String,
    /// What it says in words (a reason, a plan, a message's text), quoted.
    pub words: Option<String>,
    pub fate: Fate,
    /// For a forged message: whom it claims to come from.
    pub forged_as: Option<String>,
    /// What faults did to it on the way (delay, duplicate, partition, replay).
    pub notes: Vec<String>,
    /// Position in the log, for renderers that draw in log order.
    pub k: usize,
    /// How many messages it stands for: 1 but to or from a folded group.
    pub times: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkKind {
    /// A request opened (only where a lane asks few; otherwise its bar says it).
    Asked,
    Approved,
    Rejected,
    Expired,
    /// A response or request the protocol ignored, with its reason.
    Ignored,
    /// A send rule refused the message.
    Refused,
    Gate(GateState),
    Action,
    Blocked,
    Deferred,
    NoAnswer,
    Stopped,
    Crash,
    Restart,
    Stall,
    Alert,
    /// A step of a file written (no text: a tick on the lifeline).
    FileStep,
    /// File inboxes: a read of the inbox file begins.
    Read,
    FileDone,
    /// A file some writer left partly written (at a crash or kill, or at the end).
    Partial,
    /// A wait-for cycle closed: the member is blocked on the next in the ring.
    Deadlock,
    /// The cycle opened again (a deadline, an answer, a member gone).
    DeadlockBroken,
    /// Says something about the whole run, not one agent.
    Note,
}

/// Something that happened at one agent at one moment.
#[derive(Clone, Debug)]
pub struct Mark {
    /// `None` for notes about the whole run.
    pub lane: Option<usize>,
    pub row: usize,
    pub t: Millis,
    pub kind: MarkKind,
    pub text: String,
    /// For a refused send: the lane it was meant for.
    pub toward: Option<usize>,
    pub k: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    Crash,
    Stall,
    /// Cut off by a partition (on both agents' lifelines) until it heals.
    Partition,
    /// File inboxes: busy reading its inbox file, answering nothing meanwhile.
    Reading,
}

/// A stretch of one lane: a crash until its restart, a stall until it ends.
#[derive(Clone, Debug)]
pub struct Span {
    pub lane: usize,
    pub from: usize,
    pub to: usize,
    pub kind: SpanKind,
    pub text: String,
    /// Still going when the run ended.
    pub open: bool,
    pub k: usize,
    pub k_end: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarEnd {
    Approved,
    Rejected,
    Expired(TimeoutDefault),
    /// Still pending when the run ended.
    Pending,
}

impl BarEnd {
    pub fn as_str(self) -> String {
        match self {
            BarEnd::Approved => "approved".into(),
            BarEnd::Rejected => "rejected".into(),
            BarEnd::Expired(d) => format!("expired → {}", d.as_str()),
            BarEnd::Pending => "pending at end".into(),
        }
    }
}

/// A request's life on its requester's lifeline: from sending to its end
/// state, then (faint) on to its deadline.
#[derive(Clone, Debug)]
pub struct Bar {
    pub lane: usize,
    pub target: usize,
    pub slot: usize,
    pub label: String,
    pub kind: Kind,
    pub from: usize,
    /// Where it reached its end state (the last row if it never did).
    pub end: usize,
    pub end_t: Millis,
    pub fate: BarEnd,
    pub deadline: Millis,
    /// `None` when the run ended before the deadline.
    pub deadline_row: Option<usize>,
    /// Its opening is told in words beside the lifeline, so the bar needs no caption.
    pub told: bool,
    pub k: usize,
    /// How many requests it stands for: 1 but to or from a folded group.
    pub times: usize,
}

/// Everything a renderer needs; no renderer looks at events.
#[derive(Clone, Debug)]
pub struct Model {
    pub lanes: Vec<Lane>,
    pub rows: Vec<Row>,
    pub arrows: Vec<Arrow>,
    pub marks: Vec<Mark>,
    pub spans: Vec<Span>,
    pub bars: Vec<Bar>,
    pub ended_at: Millis,
    /// Why the run stopped, in words.
    pub stop: &'static str,
}

impl Model {
    /// The first row at or after `t` (every time the model refers to has a row).
    pub fn row_at(&self, t: Millis) -> usize {
        row_at(&self.rows, t)
    }
}

/// The first of `rows` at or after `t`, the last row if none is.
pub(super) fn row_at(rows: &[Row], t: Millis) -> usize {
    rows.partition_point(|r| r.t < t).min(rows.len().saturating_sub(1))
}
