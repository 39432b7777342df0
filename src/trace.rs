//! The event log: everything that happened in a run, in order, on the virtual
//! clock. The oracle reads it as an independent witness, reports quote it, and
//! `--trace` writes it as JSON Lines.

use crate::protocol::{
    Action, Address, AgentId, GateState, Kind, Label, Millis, Reason, RequestId, SendError, Status, TimeoutDefault,
    Verdict,
};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

mod codec;
pub use codec::{Reading, Team};

/// Sees every event as it happens, with the agents' names (the CLI's `-v`).
pub type LiveSink = Box<dyn FnMut(&Stamped, &[String])>;
/// Sees the events agents report even with the log off (benchmarks).
pub type Probe = Box<dyn FnMut(&Event)>;
/// Asked now and then during a run; `true` stops it.
pub type AbortGuard = Box<dyn FnMut() -> bool>;

/// Where a teammate stands, as the roster shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RosterStatus {
    Working,
    WaitingApproval,
    Idle,
    Shutdown,
    Killed,
    Crashed,
}

impl RosterStatus {
    /// Whether the agent can still receive messages.
    pub fn is_active(self) -> bool {
        matches!(self, RosterStatus::Working | RosterStatus::WaitingApproval | RosterStatus::Idle)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RosterStatus::Working => "working",
            RosterStatus::WaitingApproval => "waiting_approval",
            RosterStatus::Idle => "idle",
            RosterStatus::Shutdown => "shutdown",
            RosterStatus::Killed => "killed",
            RosterStatus::Crashed => "crashed",
        }
    }
}

impl fmt::Display for RosterStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a message vanished. The oracle accepts a disappearance only with one
/// of these in the log: an injected fault (`Drop`, `Partition`, `Crash`), the
/// timeout policy's kill, or a recipient that had already stopped when the
/// message reached it (a race with its shutdown, said out loud).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, strum::IntoStaticStr, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Cause {
    Drop,
    Partition,
    /// The recipient crashed with the message in its mailbox or in flight.
    Crash,
    /// The recipient was killed with the message in its mailbox or in flight.
    Killed,
    /// The recipient had already stopped when the message arrived.
    Undeliverable,
    /// File inboxes: appended between a read and its truncate, destroyed
    /// unread. Nobody injected it: the reference's drain did it.
    DrainLoss,
    /// File inboxes: its writer crashed in the middle of the append (an
    /// injected `torn_write` fault); the reader skips the fragment.
    TornWrite,
    /// Claude Code inboxes with `lock = "off"`: written while the owner's
    /// runtime read the array, then overwritten by its rewrite. Nobody
    /// injected it: the missing lock did it.
    LostUpdate,
    /// Claude Code inboxes with `mark_read = "all"`: marked read by a read
    /// that never showed it to its owner, so never shown.
    MarkedRead,
}

impl Cause {
    /// Every cause, in the variants' order.
    pub const ALL: &'static [Cause] = <Cause as strum::VariantArray>::VARIANTS;

    /// Its name in the log and in reports (derived: the variant's, in
    /// snake_case, as its serde name is); a loss an injected fault caused
    /// is named as the scenario file names that fault (tested).
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The cause `name` names: its name, or the spelling logs written
    /// until fault kinds had one spelling used (`torn-write`, `drain-loss`).
    pub fn named(name: &str) -> Option<Cause> {
        let legacy = match name {
            "torn-write" => Some(Cause::TornWrite),
            "drain-loss" => Some(Cause::DrainLoss),
            _ => None,
        };
        Cause::ALL.iter().copied().find(|c| c.as_str() == name).or(legacy)
    }
}

/// One thing that happened. Fields are ids; names are filled in on output.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// The router accepted a message; `seq` pairs it with its delivery.
    Send {
        seq: u64,
        from: AgentId,
        to: Address,
        message_type: crate::protocol::MessageType,
        request_id: Option<RequestId>,
        /// A response's answer.
        approve: Option<bool>,
        /// What the message says: text, reason, plan or feedback.
        words: Option<crate::protocol::Text>,
    },
    /// A send rule refused the message before delivery.
    Refuse {
        from: AgentId,
        to: Address,
        message_type: crate::protocol::MessageType,
        error: SendError,
    },
    Deliver {
        seq: u64,
        sender: AgentId,
        claimed_from: AgentId,
        to: AgentId,
        message_type: crate::protocol::MessageType,
        request_id: Option<RequestId>,
    },
    /// A message disappeared; `cause` says which fault took it.
    Dropped {
        seq: u64,
        to: AgentId,
        message_type: crate::protocol::MessageType,
        cause: Cause,
    },
    /// A fault touched a message in flight without losing it.
    Fault {
        seq: u64,
        fault: crate::fault_kind::FaultKind,
        detail: String,
    },
    /// The next message `agent` sends is a scenario's scripted answer: only
    /// a message, not the agent's own act (its state does not follow it).
    Scripted {
        agent: AgentId,
    },
    /// An adversary injected a message (it is then sent like any other).
    Forge {
        seq: u64,
        claimed_from: AgentId,
        to: AgentId,
        message_type: crate::protocol::MessageType,
    },
    Opened {
        id: RequestId,
        label: Label,
        kind: Kind,
        requester: AgentId,
        target: AgentId,
        deadline: Millis,
    },
    Verdict {
        at: AgentId,
        request_id: RequestId,
        response_kind: Kind,
        approve: bool,
        sender: AgentId,
        claimed_from: AgentId,
        verdict: Verdict,
    },
    Expired {
        id: RequestId,
        kind: Kind,
        default: TimeoutDefault,
    },
    Gate {
        agent: AgentId,
        state: GateState,
    },
    Act {
        agent: AgentId,
        action: Action,
        /// Shared with the work item that names it: a run logs its paths
        /// at every act and step, and a copy each time was an allocation.
        path: Option<crate::protocol::Text>,
        blocked: Option<GateState>,
    },
    FileStep {
        agent: AgentId,
        path: crate::protocol::Text,
        done: u32,
        total: u32,
    },
    Status {
        agent: AgentId,
        status: RosterStatus,
    },
    /// A teammate that waits for an answer put an incoming request aside.
    Deferred {
        agent: AgentId,
        request_id: RequestId,
    },
    /// A receiver refused to consider a request (a forged asker, an expired
    /// deadline): no answer, and nothing in the receiver changed.
    RequestIgnored {
        agent: AgentId,
        request_id: RequestId,
        message_type: crate::protocol::MessageType,
        sender: AgentId,
        claimed_from: AgentId,
        reason: Reason,
    },
    /// An agent chose not to answer a request (its behaviour says `ignore`).
    NoAnswer {
        agent: AgentId,
        request_id: RequestId,
    },
    Crash {
        agent: AgentId,
        /// When the crash's restart is due; `None` makes the crash final.
        restart_at: Option<Millis>,
    },
    Restart {
        agent: AgentId,
    },
    /// The lead started `agent` again, as a new process under the same name.
    Respawn {
        agent: AgentId,
    },
    Stall {
        agent: AgentId,
        until: Millis,
    },
    /// A partition begins: messages between `a` and `b` (only from `a` to `b`
    /// if `one_way`) are held until it heals, or lost if `drop`.
    Partition {
        index: u32,
        a: AgentId,
        b: AgentId,
        one_way: bool,
        drop: bool,
        until: Option<Millis>,
    },
    /// Partition `index` heals; what it held is delivered.
    Heal {
        index: u32,
    },
    Alert {
        agent: AgentId,
        text: String,
    },
    /// File inboxes: an agent takes up the lines of its inbox file and is
    /// busy with them for `busy` (the read's cost), answering nothing meanwhile.
    Read {
        agent: AgentId,
        path: String,
        lines: u32,
        bytes: u64,
        busy: Millis,
    },
    /// A wait-for cycle closed: each member is blocked on the next (the last
    /// on the first), each through the request at the same index.
    Deadlock {
        members: Vec<AgentId>,
        requests: Vec<RequestId>,
    },
    /// A standing deadlock ended: `by` stopped blocking its asker, through
    /// its deadline (`default` is the policy's default then applied) or
    /// otherwise (an answer after all, or a member gone for good).
    DeadlockBroken {
        members: Vec<AgentId>,
        by: RequestId,
        default: Option<TimeoutDefault>,
    },
    Note {
        text: String,
    },
}

impl Event {
    /// Whether the event is about the protocol and the team's lives, rather
    /// than the progress of work (a file's every step): what a learner
    /// watches first (`-v --events protocol`).
    pub fn is_protocol(&self) -> bool {
        !matches!(self, Event::FileStep { .. })
    }
}

/// An event stamped with the virtual time it happened at.
#[derive(Clone, Debug, PartialEq)]
pub struct Stamped {
    pub t: Millis,
    pub event: Event,
}

/// Turns ids into the names people wrote.
#[derive(Clone, Debug, Default)]
pub struct Names {
    pub agents: Vec<String>,
    pub labels: BTreeMap<RequestId, String>,
}

impl Names {
    pub fn agent(&self, id: AgentId) -> &str {
        self.agents.get(id.index()).map(String::as_str).unwrap_or("?")
    }

    pub fn address(&self, a: Address) -> &str {
        match a {
            Address::Agent(id) => self.agent(id),
            Address::Everyone => "*",
        }
    }

    pub fn label(&self, id: RequestId) -> Option<&str> {
        self.labels.get(&id).map(String::as_str)
    }

    /// The request's label, or for one no label names its id's first
    /// eight hex digits, as a line of `-v` shows it.
    pub fn label_or_short(&self, id: RequestId) -> String {
        self.label(id).map_or_else(|| short(&id), str::to_string)
    }

    /// Learns the label of a request as it is opened; other events pass.
    pub fn learn(&mut self, event: &Event) {
        if let Event::Opened { id, label, .. } = event {
            let text = label.render(|a| self.agent(a));
            self.labels.insert(*id, text);
        }
    }

    /// Learns the labels of every request opened in `events`.
    pub fn learn_labels(&mut self, events: &[Stamped]) {
        for e in events {
            self.learn(&e.event);
        }
    }
}

/// How a crash whose restart a shell chooses the time of (by hand, the
/// explorer) is narrated: the restart is due at the crash's own time, the
/// earliest it may come.
pub const RESTART_CHOSEN: &str = "(a restart may come from now on)";

impl Stamped {
    /// One line for a person: `  1.000s  lead → alice  shutdown_request  stop-alice`.
    pub fn describe(&self, n: &Names) -> String {
        format!("{:>9}  {}", self.t.to_string(), self.sentence(n))
    }

    /// The line of [`Stamped::describe`] without its time: what happened.
    pub fn sentence(&self, n: &Names) -> String {
        let label = |id: &RequestId| n.label_or_short(*id);
        let text = match &self.event {
            Event::Send { from, to, message_type, request_id, approve, words, .. } => format!(
                "{} → {}  {}{}{}{}",
                n.agent(*from),
                n.address(*to),
                message_type,
                request_id.map(|id| format!(" [{}]", label(&id))).unwrap_or_default(),
                approve.map(|yes| format!(" {}", message_type.answer_word(yes))).unwrap_or_default(),
                words.as_ref().map(|w| format!(" \"{w}\"")).unwrap_or_default()
            ),
            Event::Refuse { from, to, message_type, error } => {
                format!("REFUSED {} → {} {}: {}", n.agent(*from), n.address(*to), message_type, error)
            }
            Event::Deliver { sender, claimed_from, to, message_type, request_id, .. } => format!(
                "{} ⇒ {}  {}{}{}",
                n.agent(*sender),
                n.agent(*to),
                message_type,
                request_id.map(|id| format!(" [{}]", label(&id))).unwrap_or_default(),
                if claimed_from != sender {
                    format!(" (claims to be {})", n.agent(*claimed_from))
                } else {
                    String::new()
                }
            ),
            Event::Dropped { to, message_type, cause, .. } => {
                format!("LOST {} to {} ({})", message_type, n.agent(*to), cause.as_str())
            }
            Event::Fault { fault, detail, .. } => format!("fault {fault}: {detail}"),
            Event::Scripted { agent } => {
                format!("the script makes {} send the next message (its own state does not follow)", n.agent(*agent))
            }
            Event::Forge { claimed_from, to, message_type, .. } => {
                format!("FORGED {} to {} claiming to be {}", message_type, n.agent(*to), n.agent(*claimed_from))
            }
            Event::Opened { id, kind, requester, target, deadline, .. } => format!(
                "{} asks {}: {} request [{}] pending, {}{}",
                n.agent(*requester),
                n.agent(*target),
                kind,
                label(id),
                deadline.as_deadline(),
                if deadline.is_never() { " (timeouts off)" } else { "" }
            ),
            Event::Verdict { at, request_id, verdict, .. } => match verdict {
                Verdict::Applied { from, to, .. } => {
                    format!("{}: [{}] {} → {}", n.agent(*at), label(request_id), from, to)
                }
                Verdict::Ignored(r) => {
                    format!("{}: response for [{}] ignored ({})", n.agent(*at), label(request_id), r)
                }
            },
            Event::Expired { id, default, .. } => {
                format!("[{}] expired → default {}", label(id), default.as_str())
            }
            Event::Gate { agent, state } => format!("{}'s plan gate is {}", n.agent(*agent), state),
            Event::Act { agent, action, path, blocked } => format!(
                "{} {} {}{}",
                n.agent(*agent),
                if blocked.is_some() { "BLOCKED from" } else { "starts" },
                action.as_str(),
                path.as_ref().map(|p| format!(" {p}")).unwrap_or_default()
            ),
            Event::FileStep { path, done, total, .. } => format!("{path}: {done}/{total} written"),
            Event::Status { agent, status } => format!("{} status: {}", n.agent(*agent), status),
            Event::Deferred { agent, request_id } => {
                format!("{} is blocked waiting; puts [{}] aside", n.agent(*agent), label(request_id))
            }
            Event::NoAnswer { agent, request_id } => {
                format!("{} leaves [{}] unanswered", n.agent(*agent), label(request_id))
            }
            Event::RequestIgnored { agent, request_id, message_type, sender, claimed_from, reason } => format!(
                "{} ignores {} [{}] from {}{}: {}",
                n.agent(*agent),
                message_type,
                label(request_id),
                n.agent(*sender),
                if claimed_from != sender {
                    format!(" (claims to be {})", n.agent(*claimed_from))
                } else {
                    String::new()
                },
                reason
            ),
            Event::Crash { agent, restart_at } => match restart_at {
                // A restart due at the crash's own time is one a shell
                // chooses when to make (by hand, the explorer): from now on.
                Some(at) if *at == self.t => format!("{} CRASHED {RESTART_CHOSEN}", n.agent(*agent)),
                Some(at) => format!("{} CRASHED (restart due at {at})", n.agent(*agent)),
                None => format!("{} CRASHED (no restart: this is final)", n.agent(*agent)),
            },
            Event::Restart { agent } => format!("{} restarts", n.agent(*agent)),
            Event::Respawn { agent } => {
                format!("{} RESPAWNED by the lead: a new process under the same name", n.agent(*agent))
            }
            Event::Stall { agent, until } => format!("{} stalls until {}", n.agent(*agent), until),
            Event::Partition { index, a, b, one_way, drop, until } => format!(
                "PARTITION {}: {} {} {}, messages {}{}",
                index + 1,
                n.agent(*a),
                if *one_way { "cut off from sending to" } else { "and" },
                if *one_way { n.agent(*b).to_string() } else { format!("{} cut off from each other", n.agent(*b)) },
                if *drop { "lost" } else { "held until it heals" },
                until.map(|u| format!(" (heals at {u})")).unwrap_or_else(|| " (never heals)".to_string())
            ),
            Event::Heal { index } => format!("partition {} heals", index + 1),
            Event::Alert { agent, text } => format!("ALERT {}: {}", n.agent(*agent), text),
            Event::Read { agent, path, lines, bytes, busy } => format!(
                "{} reads {path} ({}, {bytes} bytes): busy for {busy}",
                n.agent(*agent),
                crate::words::plural(u64::from(*lines), "line")
            ),
            Event::Deadlock { members, requests } => format!(
                "DEADLOCK {}: each waits for the next ({}); none of them can move on its own",
                cycle_text(members, n),
                requests.iter().map(|id| format!("[{}]", label(id))).collect::<Vec<_>>().join(", ")
            ),
            Event::DeadlockBroken { members, by, default } => match default {
                Some(d) => format!(
                    "deadlock {} broken: [{}] expired, default {}",
                    cycle_text(members, n),
                    label(by),
                    d.as_str()
                ),
                None => format!("deadlock {} broken: [{}] no longer blocks", cycle_text(members, n), label(by)),
            },
            Event::Note { text } => text.clone(),
        };
        // A file's strings (labels, texts, reasons) are in the line: none
        // may end it early or move the cursor.
        match crate::input::shown(&text) {
            std::borrow::Cow::Borrowed(_) => {}
            std::borrow::Cow::Owned(cleaned) => return cleaned,
        }
        text
    }
}

/// `alice → bob → alice`: a cycle, back to where it starts.
pub fn cycle_text(members: &[AgentId], n: &Names) -> String {
    cycle_of(members.iter().map(|a| n.agent(*a)))
}

/// Names in waiting order, joined back to the first: `alice → bob → alice`.
pub fn cycle_of<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.into_iter().collect();
    names.iter().chain(names.first()).copied().collect::<Vec<_>>().join(" → ")
}

fn short(id: &RequestId) -> String {
    id.to_string()[..8].to_string()
}

/// Ignored reasons, as counted in reports.
pub fn ignored_reason(e: &Event) -> Option<Reason> {
    match e {
        Event::Verdict { verdict: Verdict::Ignored(r), .. } => Some(*r),
        Event::RequestIgnored { reason, .. } => Some(*reason),
        _ => None,
    }
}

/// The status an `Opened`/`Verdict`/`Expired` event leaves a request in.
pub fn status_after(e: &Event) -> Option<(RequestId, Status)> {
    match e {
        Event::Opened { id, .. } => Some((*id, Status::Pending)),
        Event::Verdict { request_id, verdict: Verdict::Applied { to, .. }, .. } => Some((*request_id, *to)),
        Event::Expired { id, .. } => Some((*id, Status::Expired)),
        _ => None,
    }
}
