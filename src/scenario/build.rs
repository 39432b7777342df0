//! From a parsed file to a runnable scenario: resolve names and labels, parse
//! durations, check every rule a file can break, and say where it broke it.

use super::duration::{human, parse_duration, parse_latency};
use super::file::{self, limits, AnswersDoc, ExpectDoc, FaultDoc, FileDoc, StepDoc, TeammateDoc, WorkDoc, S};
use crate::agent::{Answer, Answers, Quote, Script, TeammateSpec, WorkItem};
use crate::inbox::Drain;
use crate::oracle::Invariant;
use crate::protocol::kinds::Asker;
use crate::protocol::{
    check_teammate_name, Action, Address, AgentId, GateState, Kind, Message, MessageType, Millis, Policy, Reason,
    RequestId, SendError, Status, Text, LEAD_NAME,
};
use crate::trace::RosterStatus;
use crate::world::{
    FaultKind, FileMailbox, Filter, Latency, LeadSpec, LinkEffect, LinkFault, Partition, Scheduled, Step, TeamSpec,
};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

/// A bad scenario file: where, what is wrong, and how to fix it. The parts
/// are kept apart so that a renderer (the diagnostic module, which reads
/// this type) can lay them out as rustc does; `Display` gives them on one
/// line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: String,
    /// 1-based; 0 when the problem is the whole file (it cannot be read, it is too big).
    pub line: usize,
    pub col: usize,
    /// What is wrong, in one sentence.
    pub message: String,
    /// A few words to print under the offending text.
    pub label: Option<String>,
    /// The fix, when there is one: the values allowed, the word probably meant, how to write it.
    pub help: Option<String>,
    /// The line the problem is on, to show it.
    pub excerpt: Option<Box<Excerpt>>,
}

/// The source line of a problem, cut to a bounded width around it: a file
/// of one long line with many problems must not print the line each time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt {
    /// The text shown (part of one line, without its line break).
    pub text: String,
    /// Bytes of `text` to underline (empty: a caret before the byte).
    pub span: Range<usize>,
    /// Whether `text` starts after the line's start, or ends before its end.
    pub cut_before: bool,
    pub cut_after: bool,
}

impl ScenarioError {
    /// A problem with the whole file, at no line of it.
    pub fn whole_file(path: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            path: path.to_string(),
            line: 0,
            col: 0,
            message: message.into(),
            label: None,
            help: None,
            excerpt: None,
        }
    }

    /// The message and its help as one line: what a one-line report (a log,
    /// a test) shows.
    pub fn text(&self) -> String {
        match &self.help {
            Some(h) => format!("{}; {h}", self.message),
            None => self.message.clone(),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.path, self.text())
        } else {
            write!(f, "{}:{}:{}: {}", self.path, self.line, self.col, self.text())
        }
    }
}

impl std::error::Error for ScenarioError {}

impl ScenarioError {
    pub fn label(&mut self, label: impl Into<String>) -> &mut ScenarioError {
        self.label = Some(label.into());
        self
    }

    pub fn help(&mut self, help: impl Into<String>) -> &mut ScenarioError {
        self.help = Some(help.into());
        self
    }
}

/// What a file says must hold at the end of a run.
#[derive(Clone, Debug, PartialEq)]
pub enum Expect {
    Request {
        label: String,
        status: Status,
    },
    Teammate {
        name: String,
        status: RosterStatus,
    },
    Gate {
        name: String,
        state: GateState,
    },
    File {
        path: String,
        state: FileExpect,
    },
    Ignored {
        count: u32,
        reason: Option<Reason>,
    },
    Refused {
        count: u32,
        rule: Option<String>,
    },
    Expired {
        count: u32,
    },
    /// A deadlock among exactly these teammates forms; with `broken`, a
    /// timeout must break it (`true`) or it must last to the end (`false`).
    Deadlock {
        members: Vec<String>,
        broken: Option<bool>,
    },
    Violation(Invariant),
    /// `by` received messages of this type (from `from`, if given): exactly
    /// `count`, or at least one.
    Received {
        message_type: MessageType,
        by: String,
        from: Option<String>,
        count: Option<u32>,
    },
    /// File mode: `owner`'s inbox file holds exactly `lines` lines at the
    /// end (of `message_type` only, if given).
    InboxLines {
        owner: String,
        lines: u32,
        message_type: Option<MessageType>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileExpect {
    Complete,
    Partial,
    Absent,
}

impl FileExpect {
    pub fn as_str(self) -> &'static str {
        match self {
            FileExpect::Complete => "complete",
            FileExpect::Partial => "partial",
            FileExpect::Absent => "absent",
        }
    }
}

/// A checked scenario, ready to run with any seed.
#[derive(Debug)]
pub struct Scenario {
    pub path: String,
    pub name: String,
    pub about: String,
    /// The file's seed, if it names one.
    pub seed: Option<u64>,
    /// The team, script and faults, as the runtime takes them (no hooks).
    pub team: TeamSpec,
    pub expects: Vec<Expect>,
}

/// The seed a file runs with when it names none and none is given.
pub const DEFAULT_SEED: u64 = 1;

impl Clone for Scenario {
    fn clone(&self) -> Scenario {
        Scenario {
            path: self.path.clone(),
            name: self.name.clone(),
            about: self.about.clone(),
            seed: self.seed,
            team: self.team.fork(),
            expects: self.expects.clone(),
        }
    }
}

impl Scenario {
    pub fn default_seed(&self) -> u64 {
        self.seed.unwrap_or(DEFAULT_SEED)
    }

    /// A runnable team. `cap` overrides the file's virtual-time cap.
    pub fn team_spec(&self, seed: u64, cap: Option<Millis>) -> TeamSpec {
        let mut spec = self.team.fork();
        spec.seed = seed;
        if let Some(cap) = cap {
            spec.cap = cap;
        }
        spec
    }

    pub fn policy(&self) -> &Policy {
        &self.team.policy
    }

    pub fn require_plan(&self) -> Vec<bool> {
        std::iter::once(false).chain(self.team.teammates.iter().map(|(_, t)| t.require_plan)).collect()
    }

    /// Whether this file may expect `invariant` broken (see [`may_expect`]).
    pub fn may_expect(&self, invariant: Invariant) -> bool {
        let truncate = self.team.mailbox.as_ref().is_some_and(|m| m.drain == Drain::ReadThenTruncate);
        may_expect(self.policy().defences == crate::protocol::Defences::default(), truncate, invariant)
    }
}

/// Which broken invariants a file may expect: any, with a defence switched
/// off (the file shows what the defence prevents); with every defence on,
/// no-silent-loss alone, and only under the reference's drain in file mode
/// (read, then truncate), which loses messages by design. Anything else
/// broken with every defence on is a bug, not an expectation. The file check
/// and `shrink` both ask this.
pub fn may_expect(all_defences_on: bool, truncate_drain: bool, invariant: Invariant) -> bool {
    !all_defences_on || (truncate_drain && invariant == Invariant::NoSilentLoss)
}

/// Parses and checks a scenario. All problems found are returned, first one first.
pub fn load_str(path: &str, src: &str) -> Result<Scenario, Vec<ScenarioError>> {
    if src.len() > limits::MAX_FILE_BYTES {
        return Err(vec![too_big(path, Some(src.len() as u64))]);
    }
    let mut b = Builder {
        path,
        index: LineIndex::new(src),
        errors: Vec::new(),
        all_defences_on: true,
        truncate_drain: false,
        file_mode: false,
        hidden: std::collections::BTreeSet::new(),
    };
    let (doc, problems) = match file::read(src) {
        Ok(read) => read,
        Err(p) => {
            b.problem(p);
            return Err(b.errors);
        }
    };
    for p in problems {
        b.problem(p);
    }
    let scenario = b.build(doc);
    if b.errors.is_empty() {
        Ok(scenario)
    } else {
        b.errors.sort_by_key(|e| (e.line, e.col));
        Err(b.errors)
    }
}

pub fn load_file(path: &std::path::Path) -> Result<Scenario, Vec<ScenarioError>> {
    let src = read_file(path).map_err(|e| vec![e])?;
    load_str(&path.display().to_string(), &src)
}

/// A scenario file's text, read within the file-size bound whatever the file
/// is (a pipe has no size to check first, `/dev/zero` says 0), or why not.
pub fn read_file(path: &std::path::Path) -> Result<String, ScenarioError> {
    use crate::input::{read_text, ReadError};
    let shown = path.display().to_string();
    // Problems of the whole file, at no line of it: a help, and no label.
    read_text(path, limits::MAX_FILE_BYTES as u64).map_err(|e| {
        let (message, help) = match e {
            ReadError::TooBig { bytes, .. } => return too_big(&shown, bytes),
            ReadError::NotAFile(what) => {
                (format!("this is {what}, not a file"), "give a regular file, or a pipe such as `<(command)`")
            }
            ReadError::EmptyPipe => (
                "the pipe gave nothing: no program was writing to it".to_string(),
                "start the program that writes to the pipe first, or give a regular file",
            ),
            ReadError::NotUtf8 => (e.to_string(), "save it as UTF-8, the encoding TOML files are written in"),
            ReadError::Io(_) => (e.to_string(), "check the path, and that you may read the file"),
        };
        let mut e = ScenarioError::whole_file(&shown, message);
        e.help(help);
        e
    })
}

/// `bytes` is the file's size, or `None` for a pipe read past the bound.
fn too_big(path: &str, bytes: Option<u64>) -> ScenarioError {
    let max = format!("a scenario file may be at most {} MiB", limits::MAX_FILE_BYTES / (1024 * 1024));
    let what = match bytes {
        Some(n) => format!("the file is {:.1} MiB; {max}", n as f64 / (1024.0 * 1024.0)),
        None => format!("{max}, and the pipe gave more"),
    };
    let mut e = ScenarioError::whole_file(path, format!("{what} (parsing takes up to about 100 times a file's size)"));
    e.help("for many identical teammates use `count`; a long script can be split into several files");
    e
}

struct Builder<'a> {
    path: &'a str,
    index: LineIndex<'a>,
    errors: Vec<ScenarioError>,
    /// No defence is switched off, so no violation can be expected (but
    /// no-silent-loss, where `truncate_drain` says so).
    all_defences_on: bool,
    /// File mode with the reference's drain (read, then truncate), which
    /// loses messages by design: no-silent-loss may break with every
    /// defence on, and only that.
    truncate_drain: bool,
    /// `mailbox = "file"`: file-only faults (torn_write) are allowed.
    file_mode: bool,
    /// Labels of steps left out for a problem already reported: referring to
    /// one is not a second problem.
    hidden: std::collections::BTreeSet<String>,
}

/// The longest end or cap a file may set: a year as durations are written
/// (365.25 days), so that it prints as `1y`.
pub const MAX_RUN: Millis = Millis(31_557_600_000);

/// The default cap of a run.
const DEFAULT_CAP: Millis = Millis(3_600_000);

/// How many names a message lists before it only counts the rest.
const LISTED: usize = 10;

/// The agents a file can name, looked up without scanning: a file may name
/// agents of a large team many times.
struct Team {
    names: Vec<String>,
    ids: BTreeMap<String, AgentId>,
}

impl Team {
    fn new(names: Vec<String>) -> Team {
        let ids = names.iter().enumerate().map(|(i, n)| (n.clone(), AgentId(i as u32))).collect();
        Team { names, ids }
    }

    fn id(&self, name: &str) -> Option<AgentId> {
        self.ids.get(name).copied()
    }

    /// The team, for a message: every name of a small team, the first few of
    /// a large one.
    fn describe(&self) -> String {
        listed(&self.names, "agents")
    }
}

/// Where a name ending in `*` stands for a group of teammates: a step's
/// `to` or `from`, an expectation's `teammate`.
#[derive(Clone, Copy)]
enum Group {
    Step,
    Expect,
}

/// A table that may name a group (`to = "worker-*"`), made one per member.
trait Grouped: Clone {
    /// The key and its value that name a group, if one does.
    fn group(&self, what: Group) -> Option<(&'static str, &S<String>)>;
    /// A copy addressed to `member` instead.
    fn for_member(&self, key: &str, member: &str) -> Self;
    fn label(&self) -> Option<&S<String>>;
}

impl Grouped for S<StepDoc> {
    fn group(&self, _: Group) -> Option<(&'static str, &S<String>)> {
        let d = self.get_ref();
        let starred = |v: &Option<S<String>>| v.as_ref().filter(|v| v.get_ref().ends_with('*')).cloned();
        match (starred(&d.to), starred(&d.from)) {
            (Some(_), _) => d.to.as_ref().map(|v| ("to", v)),
            (None, Some(_)) => d.from.as_ref().map(|v| ("from", v)),
            _ => None,
        }
    }

    fn for_member(&self, key: &str, member: &str) -> Self {
        let mut one = self.clone();
        let slot = if key == "to" { &mut one.get_mut().to } else { &mut one.get_mut().from };
        if let Some(v) = slot {
            *v = S::new(v.span(), member.to_string());
        }
        one
    }

    fn label(&self) -> Option<&S<String>> {
        self.get_ref().label.as_ref()
    }
}

impl Grouped for S<ExpectDoc> {
    fn group(&self, _: Group) -> Option<(&'static str, &S<String>)> {
        self.get_ref().teammate.as_ref().filter(|v| v.get_ref().ends_with('*')).map(|v| ("teammate", v))
    }

    fn for_member(&self, _: &str, member: &str) -> Self {
        let mut one = self.clone();
        if let Some(v) = &mut one.get_mut().teammate {
            *v = S::new(v.span(), member.to_string());
        }
        one
    }

    fn label(&self) -> Option<&S<String>> {
        None
    }
}

/// Up to `LISTED` names, then how many there are in all.
fn listed(names: &[String], what: &str) -> String {
    if names.len() <= LISTED {
        return names.join(", ");
    }
    format!("{}, … ({} {what} in all)", names[..LISTED].join(", "), names.len())
}

/// The labels steps give their requests, with the kind of request each names.
type Labels = BTreeMap<String, &'static str>;
/// Every message type a filter may name.
pub use crate::protocol::message::message_types;

/// What a `[[step]]` may `do`, as the file spells it.
/// The protocols' own (`shutdown`, `submit_plan`) come first, from their specs.
pub fn step_actions() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Kind::ALL.iter().map(|k| k.spec().step).collect();
    out.extend(["request_plan", "respawn", "answer", "message", "broadcast"]);
    out
}

/// The id an answer step's `request_id` stands for: the same text, the same
/// id, on every run, and (by the odds of 122 random bits) none a request of
/// the run has.
pub fn unissued_id(written: &str) -> RequestId {
    let mut bytes = [0u8; 16];
    for (half, seed) in [(0usize, 0xcbf2_9ce4_8422_2325u64), (8, 0x8422_2325_cbf2_9ce4)] {
        let mut h = seed;
        for b in written.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        bytes[half..half + 8].copy_from_slice(&h.to_le_bytes());
    }
    RequestId::from_random_bytes(bytes)
}

/// What the lead's `request_plan` says when the step gives no `text` (the
/// reference's teammate is told "[Plan required]" and this).
pub const DEFAULT_PLAN_REQUEST: &str = "submit a plan and wait for approval before changing anything";

impl Builder<'_> {
    fn problem(&mut self, p: file::Problem) {
        let e = self.err(p.span, p.message);
        e.label = p.label;
        e.help = p.help;
    }

    /// Records a problem; the caller may add its label and help to what this returns.
    fn err(&mut self, span: Range<usize>, message: impl Into<String>) -> &mut ScenarioError {
        let (line, col) = self.index.line_col(span.start);
        self.errors.push(ScenarioError {
            path: self.path.to_string(),
            line,
            col,
            message: message.into(),
            label: None,
            help: None,
            excerpt: Some(Box::new(self.index.excerpt(span))),
        });
        self.errors.last_mut().expect("just pushed")
    }

    /// A duration the file gives, at most `MAX_RUN`: nothing in a run can
    /// take longer than the run (an `inbox_poll = "2y"` would never poll),
    /// and tokio clamps timers past about two years.
    fn duration(&mut self, s: &S<String>, what: &str) -> Option<Millis> {
        match parse_duration(s.get_ref()) {
            Ok(m) if m > MAX_RUN => {
                let message = format!("{what} = {:?} is longer than a run may be ({})", s.get_ref(), human(MAX_RUN));
                self.err(s.span(), message)
                    .label("longer than a run")
                    .help(format!("give at most \"{}\"", human(MAX_RUN)));
                None
            }
            Ok(m) => Some(m),
            Err(e) => {
                let (message, help) = split_fix(&e);
                // Each of parse_duration's words without a fix after a colon
                // ("finer than a millisecond", "too long for any run") is one
                // a whole number of milliseconds within a year mends.
                let help = help.map_or_else(
                    || format!("give whole milliseconds, at most a year, like \"1500ms\" or \"{}\"", human(MAX_RUN)),
                    str::to_string,
                );
                self.err(s.span(), format!("{what}: {message}")).label("not a duration").help(help);
                None
            }
        }
    }

    /// Refuses a text that would print as something else: a report prints
    /// `name` on its own line, so a newline or a terminal escape in it could
    /// forge a line (`PASS ...`) or move the cursor. `allowed` are the
    /// control characters this text may hold (`about` is wrapped as words).
    fn printable(&mut self, text: &Option<S<String>>, key: &str, allowed: &str) {
        let Some(t) = text else { return };
        if let Some(c) = t.get_ref().chars().find(|&c| crate::input::hidden(c) && !allowed.contains(c)) {
            let also = if allowed.is_empty() { "" } else { " (line breaks and tabs are fine)" };
            self.err(
                t.span(),
                format!(
                    "`{key}` holds the control character {:?}{also}: reports print it as it is, so it may hold no \
                     control characters (newlines, tabs, terminal escapes) or text-reversing marks",
                    c
                ),
            )
            .label("holds a control character")
            .help(format!("remove the {c:?} from `{key}`"));
        }
    }

    fn answers(&mut self, a: &Option<S<AnswersDoc>>, what: &str) -> Option<Answers> {
        let a = a.as_ref()?;
        let list = a.get_ref().clone();
        if list.is_empty() {
            self.err(a.span(), format!("{what} needs at least one answer (approve, reject or ignore)"))
                .label("no answers")
                .help(format!("give one, like {} = \"approve\", or a list, like [\"reject\", \"approve\"]", what));
            return None;
        }
        Some(Answers::new(list))
    }

    fn build(&mut self, doc: FileDoc) -> Scenario {
        if let Some(name) = doc.name.as_ref().filter(|n| n.get_ref().trim().is_empty()) {
            self.err(name.span(), "`name` cannot be empty")
                .label("empty")
                .help("name the scenario, like name = \"my-scenario\"");
        }
        self.printable(&doc.name, "name", "");
        self.printable(&doc.about, "about", "\n\t");
        let policy = self.policy(&doc);
        self.all_defences_on = policy.defences == crate::protocol::Defences::default();
        let latency = match &doc.policy.latency {
            Some(l) => match parse_latency(l.get_ref()) {
                Ok(Latency::Fixed(most) | Latency::Range(_, most)) if most > MAX_RUN => {
                    let message = format!(
                        "latency = {:?}: a delay longer than a run may be ({}) would never end",
                        l.get_ref(),
                        human(MAX_RUN),
                    );
                    self.err(l.span(), message)
                        .label("longer than a run")
                        .help(format!("give at most \"{}\"", human(MAX_RUN)));
                    Latency::Fixed(Millis(1))
                }
                Ok(l) => l,
                Err(e) => {
                    let (message, fix) = split_fix(&e);
                    let help = fix.map_or_else(
                        || {
                            "give a duration, like latency = \"5ms\", or a range, like latency = \"1ms..20ms\""
                                .to_string()
                        },
                        str::to_string,
                    );
                    self.err(l.span(), format!("latency: {message}")).label("not a latency").help(help);
                    Latency::Fixed(Millis(1))
                }
            },
            None => Latency::Fixed(Millis(1)),
        };
        let (end, cap) = self.end_and_cap(&doc);
        let mailbox = self.mailbox(&doc);
        self.file_mode = mailbox.is_some();
        self.truncate_drain = mailbox.as_ref().is_some_and(|m| m.drain == Drain::ReadThenTruncate);
        let lead = LeadSpec {
            on_plan: self.answers(&doc.lead.on_plan, "lead.on_plan").unwrap_or(Answers::always(Answer::Approve)),
            feedback: doc.lead.feedback.as_deref().map(Text::from),
            approval_feedback: doc.lead.approval_feedback.as_deref().map(Text::from),
            ask_again_on_reject: doc.lead.ask_again_on_reject.as_ref().map_or(0, |n| *n.get_ref()),
        };

        let teammates = self.teammates(&doc.teammates);
        let team =
            Team::new(std::iter::once(LEAD_NAME.to_string()).chain(teammates.iter().map(|(n, _)| n.clone())).collect());
        let limit = end.map_or(cap, |e| e.min(cap));

        // Steps, with the labels they give their requests.
        let mut label_kinds = Labels::new();
        // Where each label was first given, to point a repeat back at it.
        let mut label_lines: BTreeMap<String, usize> = BTreeMap::new();
        let mut steps = Vec::new();
        let mut last_at = Millis::ZERO;
        self.hidden.extend(doc.hidden_labels.iter().cloned());
        let each_step = self.for_each_member(&doc.steps, &team, Group::Step);
        for s in each_step.iter() {
            let built = self.step(s.get_ref().n, s, &team, limit, &mut last_at);
            if built.is_none() {
                self.hidden.extend(s.get_ref().label.as_ref().map(|l| l.get_ref().clone()));
            }
            if let Some(step) = built {
                if let (Script::Answer { quote: Quote::Label(l), .. }, Some(written)) =
                    (&step.script, &s.get_ref().request)
                {
                    // An automatic label (`alice/plan/1`) names a request no step made.
                    let automatic = l.split('/').count() == 3;
                    if !automatic && !label_kinds.contains_key(&**l) && !self.hidden.contains(&**l) {
                        let known: Vec<&str> = label_kinds.keys().map(String::as_str).collect();
                        let message = format!(
                            "step #{}: no step before this one labels a request {l:?} (labels so far: {})",
                            s.get_ref().n,
                            if known.is_empty() { "none".to_string() } else { known.join(", ") }
                        );
                        let help = format!(
                            "{}label a request with label = \"...\" on the step that asks it, before this step",
                            file::guess(l, &known)
                        );
                        self.err(written.span(), message).label("no request has this label yet").help(help);
                    }
                }
                if let Some(l) = &s.get_ref().label {
                    let kind = match step.script {
                        Script::Ask { kind, .. } => kind.as_str(),
                        _ => "plan",
                    };
                    if let Some(first) = label_lines.get(l.get_ref()) {
                        let help = format!("labels must be unique: rename one, e.g. \"{}-2\"", l.get_ref());
                        self.err(l.span(), format!("label {:?} is used twice", l.get_ref()))
                            .label(format!("already given on line {first}"))
                            .help(help);
                    } else {
                        label_kinds.insert(l.get_ref().clone(), kind);
                        label_lines.insert(l.get_ref().clone(), self.index.line_col(l.span().start).0);
                    }
                }
                steps.push(step);
            }
        }

        if self.file_mode {
            self.broadcast_bound(&doc.steps, teammates.len() as u64 + 1);
        }

        let mut link_faults = Vec::new();
        let mut partitions = Vec::new();
        let mut timed = Vec::new();
        for f in &doc.faults {
            self.fault(f.get_ref().n, f, &team, &label_kinds, limit, &mut link_faults, &mut partitions, &mut timed);
        }
        let mut expects = Vec::new();
        let each_expect = self.for_each_member(&doc.expects, &team, Group::Expect);
        for e in each_expect.iter() {
            if let Some(x) = self.expect(e, &team, &label_kinds) {
                expects.push(x);
            }
        }
        let mut team = TeamSpec::new(teammates);
        team.policy = policy;
        team.latency = latency;
        team.lead = lead;
        team.steps = steps;
        team.link_faults = link_faults;
        team.partitions = partitions;
        team.timed = timed;
        team.end = end;
        team.cap = cap;
        team.mailbox = mailbox;
        Scenario {
            path: self.path.to_string(),
            name: doc.name.as_ref().map(|n| n.get_ref().clone()).unwrap_or_default(),
            // Written as a paragraph in the file; kept as one line for reports.
            about: doc
                .about
                .as_ref()
                .map(|a| a.get_ref().split_whitespace().collect::<Vec<_>>().join(" "))
                .unwrap_or_default(),
            seed: doc.seed,
            team,
            expects,
        }
    }

    /// The run's end and cap: each at most `MAX_RUN`, and an end the cap
    /// would cut short says how to raise the cap.
    fn end_and_cap(&mut self, doc: &FileDoc) -> (Option<Millis>, Millis) {
        // Virtual time is cheap, but tokio clamps timers past about two years
        // and the driver would spin: a year is more than any scenario needs,
        // and `duration` refuses more.
        let end = doc.end.as_ref().and_then(|e| self.duration(e, "end"));
        let cap = doc.cap.as_ref().and_then(|c| self.duration(c, "cap"));
        if let (Some(e), Some(given)) = (end, &doc.end) {
            let wanted = human(e);
            match cap {
                None if e > DEFAULT_CAP => {
                    let message = format!(
                        "end = {wanted} comes after the default cap ({}): the run would stop there first",
                        human(DEFAULT_CAP)
                    );
                    self.err(given.span(), message)
                        .label("after the cap")
                        .help(format!("raise it with cap = \"{wanted}\""));
                }
                Some(c) if e > c => {
                    let message = format!(
                        "end = {wanted} comes after the cap ({}): the run would stop at the cap first",
                        human(c)
                    );
                    self.err(given.span(), message)
                        .label("after the cap")
                        .help(format!("raise it to cap = \"{wanted}\" or end earlier"));
                }
                _ => {}
            }
        }
        (end, cap.unwrap_or(DEFAULT_CAP))
    }

    fn policy(&mut self, doc: &FileDoc) -> Policy {
        let p = &doc.policy;
        let mut policy = Policy::default();
        for k in Kind::ALL {
            let i = k.index();
            if let Some(d) = &p.timeouts_by_kind[i] {
                policy.timeouts[i] = self.timeout(d, k.spec().timeout_key, policy.timeouts[i]);
            }
            if let Some(x) = p.on_expiry[i] {
                policy.on_expiry[i] = x;
            }
        }
        if let Some(x) = p.strict_hierarchy {
            policy.strict_hierarchy = x;
        }
        if let Some(d) = p.defences {
            policy.defences = d;
        }
        if p.timeouts == Some(false) {
            policy.timeouts = [Millis::NEVER; Kind::COUNT];
        }
        if let Some(d) = &p.deadlocks {
            match d.get_ref().as_str() {
                "fail" => policy.fail_on_deadlock = true,
                "allow" => policy.fail_on_deadlock = false,
                other => {
                    let help = format!("{}use \"fail\" or \"allow\"", file::guess(other, &["fail", "allow"]));
                    self.err(d.span(), format!("deadlocks = {other:?} is not a setting"))
                        .label("unknown setting")
                        .help(help);
                }
            }
        }
        policy
    }

    /// File mode's settings, or `None` for memory mode. A file-mode key
    /// without `mailbox = "file"` would do nothing: refused.
    fn mailbox(&mut self, doc: &FileDoc) -> Option<FileMailbox> {
        let p = &doc.policy;
        let file = match &p.mailbox {
            None => false,
            Some(m) => match m.get_ref().as_str() {
                "memory" => false,
                "file" => true,
                other => {
                    let help = format!("{}use \"memory\" or \"file\"", file::guess(other, &["memory", "file"]));
                    self.err(m.span(), format!("mailbox = {other:?} is not a setting"))
                        .label("unknown setting")
                        .help(help);
                    false
                }
            },
        };
        if !file {
            let stray = [
                ("drain", p.drain.as_ref().map(|x| x.span())),
                ("inbox_poll", p.inbox_poll.as_ref().map(|x| x.span())),
                ("read_cost", p.read_cost.as_ref().map(|x| x.span())),
                ("read_cost_per_kib", p.read_cost_per_kib.as_ref().map(|x| x.span())),
                ("prune", p.prune.as_ref().map(|x| x.span())),
            ];
            for (key, span) in stray {
                if let Some(span) = span {
                    self.err(span, format!("`{key}` applies to file inboxes only: set mailbox = \"file\" in [policy]"))
                        .label("file inboxes only")
                        .help(format!("add mailbox = \"file\" to [policy], or remove `{key}`"));
                }
            }
            return None;
        }
        let mut m = FileMailbox::default();
        if let Some(d) = &p.drain {
            match d.get_ref().as_str() {
                "truncate" => m.drain = Drain::ReadThenTruncate,
                "offset" => m.drain = Drain::CommittedOffset,
                other => {
                    let help = format!("{}use \"truncate\" or \"offset\"", file::guess(other, &["truncate", "offset"]));
                    self.err(d.span(), format!("drain = {other:?} is not a setting"))
                        .label("unknown setting")
                        .help(help);
                }
            }
        }
        if let Some(d) = &p.inbox_poll {
            if let Some(t) = self.duration(d, "inbox_poll") {
                if t == Millis::ZERO {
                    self.err(d.span(), "inbox_poll = \"0ms\": an owner would read without end; use at least \"1ms\"")
                        .label("zero")
                        .help("give at least \"1ms\", like inbox_poll = \"1ms\"");
                } else {
                    m.poll = t;
                }
            }
        }
        if let Some(d) = &p.read_cost {
            if let Some(t) = self.duration(d, "read_cost") {
                m.cost.per_read = t;
            }
        }
        if let Some(d) = &p.read_cost_per_kib {
            if let Some(t) = self.duration(d, "read_cost_per_kib") {
                m.cost.per_kib = t;
            }
        }
        if let Some(x) = &p.prune {
            m.prune = *x.get_ref();
            // A truncating drain empties the file at every read: nothing is
            // left before a committed position to cut.
            if m.prune && m.drain == Drain::ReadThenTruncate {
                let drain = if p.drain.is_some() { "drain = \"truncate\"" } else { "the default drain (\"truncate\")" };
                self.err(
                    x.span(),
                    format!("prune = true does nothing with {drain}, which empties the file at every read"),
                )
                .label("does nothing here")
                .help("prune works with drain = \"offset\": set it in [policy], or leave prune out");
            }
        }
        Some(m)
    }

    /// A timeout of zero would expire every request the moment it is sent.
    fn timeout(&mut self, d: &S<String>, key: &str, default: Millis) -> Millis {
        // No deadline at all: a learner watches a deadlock last to the cap.
        if d.get_ref() == "never" {
            return Millis::NEVER;
        }
        let Some(t) = self.duration(d, key) else { return default };
        if t == Millis::ZERO {
            let shown = human(default);
            self.err(
                d.span(),
                format!(
                    "{key} = {:?}: every request would expire the moment it is sent; \
                     use at least \"1ms\" (the default is \"{shown}\")",
                    d.get_ref()
                ),
            )
            .label("zero")
            .help(format!(
                "give at least \"1ms\", like {key} = \"{shown}\" (the default), or {key} = \"never\" for no deadline"
            ));
            return default;
        }
        t
    }

    /// Every teammate, `count` expanded, within the bounds on the team's size
    /// and on the work and revisions it may ask for.
    fn teammates(&mut self, docs: &[S<TeammateDoc>]) -> Vec<(String, TeammateSpec)> {
        let mut out = Vec::new();
        // Lower-cased, so that `alice` and `Alice` are caught: people and logs
        // read them as the same agent, as they do `lead` and `Lead`.
        // Each name with the line of the entry that first gave it.
        let mut seen: BTreeMap<String, (String, usize)> = BTreeMap::new();
        let (mut work, mut revisions) = (0u64, 0u64);
        let (mut work_said, mut revisions_said) = (false, false);
        for t in docs {
            let d = t.get_ref();
            let copies = d.count.as_ref().map_or(1, |c| u64::from(*c.get_ref()));
            if out.len() as u64 + copies > limits::MAX_TEAMMATES {
                let message = format!(
                    "with {:?} the team would have {} teammates: a file may ask for at most {}",
                    d.name.get_ref(),
                    out.len() as u64 + copies,
                    limits::MAX_TEAMMATES
                );
                let help = format!("lower `count` so that the team has at most {} teammates", limits::MAX_TEAMMATES);
                self.err(d.name.span(), message).label("the team is too large here").help(help);
                continue;
            }
            let steps: u64 =
                d.work.iter().map(|w| w.get_ref().steps.as_ref().map_or(1, |s| u64::from(*s.get_ref()))).sum();
            work += copies * steps;
            if work > limits::MAX_TEAM_WORK_STEPS && !work_said {
                work_said = true;
                let message = format!(
                    "with {:?} the team's work comes to {work} steps: a file may ask for at most {} steps in all",
                    d.name.get_ref(),
                    limits::MAX_TEAM_WORK_STEPS
                );
                let help = "lower `steps` in the work items, or `count`, up to here";
                self.err(d.name.span(), message).label("the work passes the bound here").help(help);
            }
            revisions += copies * u64::from(d.max_revisions.unwrap_or(3));
            if revisions > limits::MAX_TEAM_REVISIONS && !revisions_said {
                revisions_said = true;
                let message = format!(
                    "with {:?} the team may revise plans {revisions} times: a file may ask for at most {} in all",
                    d.name.get_ref(),
                    limits::MAX_TEAM_REVISIONS
                );
                let help = "lower `max_revisions` (3 when left out), or `count`, up to here";
                self.err(d.name.span(), message).label("the revisions pass the bound here").help(help);
            }
            let before = out.len();
            self.teammate(t, &mut out);
            // Checked per entry, so the error points at the entry that repeats
            // a name, even when `count` expanded it into many.
            let line = self.index.line_col(d.name.span().start).0;
            for (name, _) in &out[before..] {
                match seen.get(&name.to_ascii_lowercase()) {
                    None => {}
                    Some((first, at)) if first == name => {
                        let help = format!("names must be unique: rename one, e.g. \"{}\"", fresh(name, &seen));
                        self.err(d.name.span(), format!("two teammates are named {name:?}"))
                            .label(format!("also given on line {at}"))
                            .help(help);
                        break;
                    }
                    Some((first, at)) => {
                        let message = format!(
                            "teammates {first:?} and {name:?} differ only in case: names must differ in more than case"
                        );
                        let help = format!("rename one, e.g. \"{}\"", fresh(name, &seen));
                        self.err(d.name.span(), message).label(format!("{first:?} is on line {at}")).help(help);
                        break;
                    }
                }
                seen.insert(name.to_ascii_lowercase(), (name.clone(), line));
            }
        }
        out
    }

    /// A teammate's answers to one protocol, and the words its "no" says:
    /// answers that may say no need them (`no` names the answer, then the
    /// label and the help's first words).
    fn answers_saying_why(
        &mut self,
        t: &S<TeammateDoc>,
        (answers, key): (&Option<S<AnswersDoc>>, &str),
        (words, words_key): (&Option<String>, &str),
        (no, label, why): (&str, &str, &str),
    ) -> (Answers, Option<Text>) {
        let parsed = self.answers(answers, key).unwrap_or(Answers::always(Answer::Approve));
        let may_say_no = answers.as_ref().is_some_and(|a| a.get_ref().contains(&Answer::Reject));
        let given = words.as_deref().map(str::trim);
        let words = given.filter(|r| !crate::input::says_nothing(r));
        if let (Some(blank), None) = (given.filter(|g| !g.is_empty()), words) {
            let name = t.get_ref().name.get_ref();
            self.err(t.span(), format!("{name}'s `{words_key}` {blank:?} says nothing: it has no visible character"))
                .label("only blanks or invisible characters")
                .help(format!("{why}: write one a reader can see, like {words_key} = \"tests running\""));
        } else if may_say_no && words.is_none() {
            let span = answers.as_ref().map_or(t.span(), |a| a.span());
            let name = t.get_ref().name.get_ref();
            self.err(span, format!("{name} may {no} but has no `{words_key}`"))
                .label(label)
                .help(format!("{why}: add {words_key} = \"...\" to this [[teammate]]"));
        }
        (parsed, words.map(Text::from))
    }

    fn teammate(&mut self, t: &S<TeammateDoc>, out: &mut Vec<(String, TeammateSpec)>) {
        let d = t.get_ref();
        let name = d.name.get_ref();
        if let Err(e) = check_teammate_name(name) {
            let (label, help) = name_fix(&e);
            self.err(d.name.span(), format!("teammate name: {e}")).label(label).help(help);
        }
        let (on_shutdown, reason) = self.answers_saying_why(
            t,
            (&d.on_shutdown, "on_shutdown"),
            (&d.reject_reason, "reject_reason"),
            ("reject a shutdown", "may reject", "a rejection must say why"),
        );
        let (on_task, decline_reason) = self.answers_saying_why(
            t,
            (&d.on_task, "on_task"),
            (&d.decline_reason, "decline_reason"),
            ("decline a task", "may decline", "declining needs a reason"),
        );
        let mut work = Vec::new();
        for w in &d.work {
            if let Some(item) = self.work(w) {
                work.push(item);
            }
        }
        // What the file leaves out is what a teammate does by default.
        let base = TeammateSpec::default();
        let spec = TeammateSpec {
            on_shutdown,
            reject_reason: reason,
            on_plan: self.answers(&d.on_plan, "on_plan").unwrap_or(base.on_plan),
            on_task,
            decline_reason,
            task_steps: d.task_steps.as_ref().map_or(base.task_steps, |n| *n.get_ref()),
            require_plan: d.require_plan,
            plan: d.plan.clone().unwrap_or_else(|| format!("{name}'s plan")).into(),
            work,
            max_revisions: d.max_revisions.unwrap_or(base.max_revisions),
            ..base
        };
        match &d.count {
            None => out.push((name.clone(), spec)),
            // The reader refused these with its bound; kept against a change there.
            Some(c) if *c.get_ref() == 0 || u64::from(*c.get_ref()) > limits::MAX_TEAMMATES => {
                self.err(c.span(), format!("count must be between 1 and {}", limits::MAX_TEAMMATES))
                    .label("out of bounds")
                    .help(format!("give a count from 1 to {}", limits::MAX_TEAMMATES));
            }
            Some(c) => {
                let last = format!("{name}-{}", c.get_ref());
                if let Err(e) = check_teammate_name(&last) {
                    let message = format!("with count = {}, the names run up to {last:?}: {e}", c.get_ref());
                    let (label, help) = match &e {
                        crate::protocol::NameError::TooLong(_) => (
                            "too long with its number".to_string(),
                            format!(
                                "shorten the name: `count` adds `-` and up to {} digits, within 64 characters",
                                c.get_ref().to_string().len()
                            ),
                        ),
                        other => name_fix(other),
                    };
                    self.err(d.name.span(), message).label(label).help(help);
                    return;
                }
                for i in 1..=*c.get_ref() {
                    out.push((format!("{name}-{i}"), spec.clone()));
                }
            }
        }
    }

    fn work(&mut self, w: &S<WorkDoc>) -> Option<WorkItem> {
        let d = w.get_ref();
        let chosen: Vec<(Action, &String)> =
            [(Action::Write, &d.write), (Action::Edit, &d.edit), (Action::Shell, &d.shell), (Action::Read, &d.read)]
                .into_iter()
                .filter_map(|(a, v)| v.as_ref().map(|v| (a, v)))
                .collect();
        let (action, target) = match chosen.as_slice() {
            [one] => *one,
            _ => {
                let found =
                    if chosen.is_empty() { "no action".to_string() } else { format!("{} actions", chosen.len()) };
                self.err(w.span(), "a work item needs exactly one of `write`, `edit`, `shell` or `read`")
                    .label(found)
                    .help("give each action its own item, like work = [{ write = \"a.md\" }, { shell = \"make\" }]");
                return None;
            }
        };
        if crate::input::says_nothing(target) {
            let key = action.as_str();
            self.err(w.span(), format!("a work item's `{key}` {target:?} says nothing"))
                .label(format!("an empty {key}"))
                .help(format!("name what it works on, like {{ {key} = \"src/lib.rs\" }}"));
            return None;
        }
        // At least 1: the reader refused 0 with the bound.
        let steps = d.steps.as_ref().map_or(1, |s| *s.get_ref());
        let step_time = match &d.step_time {
            Some(s) => self.duration(s, "step_time")?,
            None => Millis(100),
        };
        let path = matches!(action, Action::Write | Action::Edit | Action::Read).then(|| Text::from(target.as_str()));
        Some(WorkItem { action, path, steps, step_time })
    }

    /// The tables as written, with each one that names a group (a name
    /// ending in `*`, like `to = "worker-*"`) made once per member: the
    /// teammates whose names start with what comes before the `*`, in the
    /// team's order. So `count` is the one line to change for another team
    /// size. A group step may not carry a label (each copy would need its
    /// own); a group no teammate is in is refused.
    fn for_each_member<'d, T: Grouped>(&mut self, tables: &'d [T], team: &Team, what: Group) -> Vec<Cow<'d, T>> {
        let mut out = Vec::with_capacity(tables.len());
        for t in tables {
            let Some((key, group)) = t.group(what) else {
                out.push(Cow::Borrowed(t));
                continue;
            };
            let prefix = group.get_ref().trim_end_matches('*');
            let members: Vec<&String> = team.names[1..].iter().filter(|n| n.starts_with(prefix)).collect();
            if members.is_empty() {
                self.err(group.span(), format!("no teammate's name starts with {prefix:?}"))
                    .label("an empty group")
                    .help(format!("a name ending in `*` stands for every teammate whose name starts with what comes before it ({}); write an existing prefix, like \"worker-*\" for worker-1, worker-2, ...", team.describe()));
                continue;
            }
            if let Some(l) = t.label() {
                self.err(
                    l.span(),
                    format!(
                        "a step to the group {:?} cannot carry a label: it makes one request per member",
                        group.get_ref()
                    ),
                )
                .label("one label, many requests")
                .help("leave the label out: each member's request has its own, like worker-1/shutdown/1");
                continue;
            }
            out.extend(members.into_iter().map(|m| Cow::Owned(t.for_member(key, m))));
        }
        out
    }

    fn agent(&mut self, s: &S<String>, team: &Team, what: &str) -> Option<AgentId> {
        match team.id(s.get_ref()) {
            Some(id) => Some(id),
            None => {
                let guess = if team.names.len() <= 1000 {
                    let names: Vec<&str> = team.names.iter().map(String::as_str).collect();
                    file::guess(s.get_ref(), &names)
                } else {
                    String::new()
                };
                self.err(s.span(), format!("{what}: no agent is named {:?}", s.get_ref()))
                    .label("no such agent")
                    .help(format!("{guess}the team is {}", team.describe()));
                None
            }
        }
    }

    /// File mode: a broadcast whose copies alone would take the inbox files
    /// past their bound is refused here, where the file says so, rather than
    /// stopping the run at its first append past the bound. Each copy's line
    /// holds the text at least once, and a broadcast may reach every agent
    /// but its sender: text bytes × (team − 1) is a floor on what it writes.
    fn broadcast_bound(&mut self, steps: &[S<StepDoc>], team: u64) {
        let bound = crate::inbox::MAX_HELD_BYTES;
        let reach = team.saturating_sub(1);
        for s in steps {
            let d = s.get_ref();
            if d.action.get_ref() != "broadcast" {
                continue;
            }
            let text = d.text.as_deref().map_or(0, str::len) as u64;
            let bytes = text.saturating_mul(reach);
            if bytes > bound {
                let message = format!(
                    "step #{}: a broadcast of {text} bytes of text to {reach} file inboxes writes at least {bytes} bytes, more than the inbox files may hold ({} MiB): shorten the text or the team",
                    d.n,
                    bound >> 20
                );
                self.err(d.action.span(), message)
                    .label("too much for the inbox files")
                    .help(format!("keep the text under {} bytes, or make the team smaller", bound / reach.max(1)));
            }
        }
    }

    /// `do = "answer"`: a response sent as written (see `Script::Answer`).
    fn answer_step(&mut self, n: usize, d: &StepDoc, team: &Team) -> Option<Script> {
        let span = d.action.span();
        let responses: Vec<&str> = Kind::ALL.iter().map(|k| k.spec().response).collect();
        let Some(t) = &d.message_type else {
            self.err(span, format!("step #{n}: an answer needs `type`: {}", responses.join(" or ")))
                .label("no `type`")
                .help(format!("add the response's type, like type = \"{}\"", responses[0]));
            return None;
        };
        let kind = match MessageType::parse(t.get_ref()) {
            Some(MessageType::Response(k)) => k,
            _ => {
                let other = t.get_ref();
                let message = format!("step #{n}: an answer's type {other:?} is not a response type");
                let help = file::one_of(other, &responses);
                self.err(t.span(), message).label("not a response type").help(help);
                return None;
            }
        };
        let Some(approve) = d.approve else {
            self.err(span, format!("step #{n}: an answer needs `approve = true` or `false`"))
                .label("no `approve`")
                .help("add approve = true or approve = false");
            return None;
        };
        let quote = match (&d.request, &d.request_id) {
            (Some(l), None) => Quote::Label(l.get_ref().trim_start_matches('@').into()),
            (None, Some(raw)) => Quote::Id(unissued_id(raw.get_ref())),
            _ => {
                let message = format!(
                    "step #{n}: an answer quotes one request: `request` (a label in this file) or `request_id` (an \
                     id as a team wrote it, which no request here has)"
                );
                let (found, fix) = if d.request.is_some() {
                    ("both given", "keep one of them: `request` for a label of this file, `request_id` for an id")
                } else {
                    ("neither given", "add one, like request = \"stop-alice\" (the label of a step that asked)")
                };
                self.err(span, message).label(found).help(fix);
                return None;
            }
        };
        // An answer goes to whoever may ask: the lead, for what only it asks.
        let to = match (&d.to, kind.spec().asker) {
            (Some(t), _) => self.agent(t, team, "to")?,
            (None, Asker::Lead { .. }) => AgentId::LEAD,
            (None, Asker::Teammate { .. }) => {
                let response = kind.spec().response;
                self.err(span, format!("step #{n}: a {response} answer needs `to` (who asked)"))
                    .label("no `to`")
                    .help(format!("add the teammate that asked, like to = \"alice\"; the team is {}", team.describe()));
                return None;
            }
        };
        Some(Script::Answer { to, kind, quote, approve, words: d.reason.as_deref().map(Text::from) })
    }

    /// A message type as the wire spells it, or an error listing them.
    fn message_type(&mut self, t: &S<String>) -> Option<MessageType> {
        let found = MessageType::parse(t.get_ref());
        if found.is_none() {
            let help = file::one_of(t.get_ref(), message_types());
            self.err(t.span(), format!("unknown message type {:?}", t.get_ref()))
                .label("unknown message type")
                .help(help);
        }
        found
    }

    /// A step's `to`, which its action needs.
    fn required_to<'s>(&mut self, v: &'s Option<S<String>>, span: Range<usize>, what: &str) -> Option<&'s S<String>> {
        if v.is_none() {
            self.err(span, what.to_string()).label("no `to`").help("add who it goes to, like to = \"alice\"");
        }
        v.as_ref()
    }

    fn step(&mut self, n: usize, s: &S<StepDoc>, team: &Team, limit: Millis, last_at: &mut Millis) -> Option<Step> {
        let d = s.get_ref();
        // A bad time is reported with the step's other problems, not instead.
        let at = self.duration(&d.at, &format!("step #{n} `at`"));
        if let Some(at) = at {
            self.step_time(n, &d.at, at, limit, last_at);
        }
        let label = d.label.as_ref().map(|l| Text::from(l.get_ref().as_str()));
        if let Some(l) = &d.label {
            if let Err(e) = crate::protocol::check_name(l.get_ref()) {
                let (label, help) = name_fix(&e);
                self.err(
                    l.span(),
                    format!("label: {e} (a label is a plain name like \"stop-alice\"; \"/\" is kept for automatic labels like alice/plan/1)"),
                )
                .label(label)
                .help(help);
            }
        }
        let from = match &d.from {
            Some(f) => self.agent(f, team, "from"),
            None => Some(AgentId::LEAD),
        };
        let action = d.action.get_ref().as_str();
        let asks = Kind::of_step(action);
        let ask_keys;
        let takes: &[&str] = match action {
            _ if asks.is_some() => {
                let words = asks.map_or("", |k| k.spec().request_words.key);
                ask_keys = ["to", "from", "label", words];
                &ask_keys
            }
            "message" => &["to", "from", "text"],
            "broadcast" => &["from", "text"],
            "request_plan" => &["to", "from", "text"],
            "respawn" => &["to", "from"],
            "answer" => &["to", "from", "type", "request", "request_id", "approve", "reason"],
            _ => &["to", "from", "label", "reason", "plan", "text"],
        };
        let present = [
            ("type", d.message_type.is_some()),
            ("request", d.request.is_some()),
            ("request_id", d.request_id.is_some()),
            ("approve", d.approve.is_some()),
            ("to", d.to.is_some()),
            ("label", d.label.is_some()),
            ("reason", d.reason.is_some()),
            ("plan", d.plan.is_some()),
            ("text", d.text.is_some()),
        ];
        for (key, here) in present {
            if here && !takes.contains(&key) {
                // The reader keeps no place for these keys: the action is what they do not fit.
                self.err(d.action.span(), format!("step #{n}: `{key}` does not apply to {action}"))
                    .label(format!("takes no `{key}`"))
                    .help(format!(
                        "remove `{key}`: {action} takes {}",
                        takes.iter().filter(|k| !k.is_empty()).copied().collect::<Vec<_>>().join(", ")
                    ));
                return None;
            }
        }
        let script = match action {
            _ if asks.is_some() => {
                let kind = asks?;
                self.ask_step(n, d, kind, team, label)?
            }
            "message" => {
                let to = self.required_to(&d.to, d.action.span(), &format!("step #{n}: a message needs `to`"))?;
                let to = self.agent(to, team, "to")?;
                Script::Say { to: Address::Agent(to), text: d.text.clone().unwrap_or_default().into() }
            }
            "broadcast" => Script::Say { to: Address::Everyone, text: d.text.clone().unwrap_or_default().into() },
            "request_plan" => {
                let to = self.required_to(&d.to, d.action.span(), &format!("step #{n}: request_plan needs `to`"))?;
                let to = self.agent(to, team, "to")?;
                let text = d.text.clone().unwrap_or_else(|| DEFAULT_PLAN_REQUEST.to_string());
                Script::AskPlan { to, text: text.into() }
            }
            "answer" => self.answer_step(n, d, team)?,
            "respawn" => {
                let to = self.required_to(&d.to, d.action.span(), &format!("step #{n}: respawn needs `to`"))?;
                let to = self.agent(to, team, "to")?;
                if from != Some(AgentId::LEAD) || to.is_lead() {
                    let message =
                        format!("step #{n}: the lead respawns a teammate: `from` must be the lead and `to` a teammate");
                    self.err(d.action.span(), message)
                        .label("not the lead respawning a teammate")
                        .help("leave `from` out (the lead) and name a teammate in `to`, like to = \"alice\"");
                    return None;
                }
                Script::Respawn { to }
            }
            other => {
                let help = file::one_of(other, &step_actions());
                self.err(d.action.span(), format!("step #{n}: unknown action {other:?}"))
                    .label("unknown action")
                    .help(help);
                return None;
            }
        };
        Some(Step { at: at?, agent: from?, script })
    }

    /// A step that asks a protocol's question (`do = "shutdown"`,
    /// `do = "submit_plan"`): the lead asks what only it may ask, of the
    /// teammate `to`; a teammate asks what teammates ask, of the lead unless
    /// `to` names a peer.
    fn ask_step(&mut self, n: usize, d: &StepDoc, kind: Kind, team: &Team, label: Option<Text>) -> Option<Script> {
        let spec = kind.spec();
        let span = d.action.span();
        let to = match spec.asker {
            Asker::Lead { .. } => {
                let to = self.required_to(&d.to, span.clone(), &format!("step #{n}: a {} needs `to`", spec.step))?;
                self.agent(to, team, "to")?
            }
            Asker::Teammate { .. } => {
                if d.from.is_none() {
                    self.err(span, format!("step #{n}: {} needs `from` (the teammate asking)", spec.step))
                        .label("no `from`")
                        .help("add the teammate that asks, like from = \"alice\"");
                    return None;
                }
                match &d.to {
                    Some(t) => self.agent(t, team, "to")?,
                    None => AgentId::LEAD,
                }
            }
        };
        let key = spec.request_words.key;
        if let Some(blank) = d.words(key).filter(|w| spec.request_words.required && crate::input::says_nothing(w)) {
            self.err(span.clone(), format!("step #{n}: `{key}` {blank:?} says nothing"))
                .label(format!("an empty {key}"))
                .help(format!("name the {key}, like {key} = \"a {key}\", or leave the key out for a placeholder"));
            return None;
        }
        let words = d.words(key).map(Text::from);
        // Words a request must carry, a step may leave out: it asks with a
        // placeholder ("a plan"), as a learner's first file does.
        let words = match words {
            None if spec.request_words.required => Some(Text::from(format!("a {key}").as_str())),
            w => w,
        };
        Some(Script::Ask { kind, to, words, label })
    }

    /// Steps come in time order and within the run.
    fn step_time(&mut self, n: usize, written: &S<String>, at: Millis, limit: Millis, last_at: &mut Millis) {
        if at < *last_at {
            let message = format!(
                "step #{n} at {} is in the past: the step before it is at {}; list steps in time order",
                human(at),
                human(*last_at)
            );
            self.err(written.span(), message)
                .label(format!("before {}", human(*last_at)))
                .help("move this step after the one at its time, or give it a later `at`");
        }
        if at > limit {
            self.err(
                written.span(),
                format!("step #{n} at {} comes after the end of the run ({})", human(at), human(limit)),
            )
            .label(format!("after {}", human(limit)))
            .help("give an earlier `at`, or raise the file's `end` or `cap`");
        }
        *last_at = at.max(*last_at);
    }

    /// A label this file can refer to: a step's, or an automatic `<teammate>/<kind>/<n>`.
    fn label_kind(&self, label: &str, team: &Team, labels: &Labels) -> Option<&'static str> {
        if let Some(k) = labels.get(label) {
            return Some(k);
        }
        let parts: Vec<&str> = label.split('/').collect();
        match parts.as_slice() {
            [who, kind, n]
                if team.id(who).is_some_and(|id| !id.is_lead()) && n.parse::<u32>().is_ok_and(|n| n >= 1) =>
            {
                Kind::parse(kind).map(Kind::as_str)
            }
            _ => None,
        }
    }

    fn label(&mut self, s: &S<String>, team: &Team, labels: &Labels) -> Option<&'static str> {
        let l = s.get_ref().trim_start_matches('@');
        let kind = self.label_kind(l, team, labels);
        if kind.is_none() && !self.hidden.contains(l) {
            let known: Vec<String> = labels.keys().take(LISTED + 1).cloned().collect();
            let known = match known.len() {
                0 => "none".to_string(),
                n if n > LISTED => format!("{} and {} more", known[..LISTED].join(", "), labels.len() - LISTED),
                _ => known.join(", "),
            };
            let guess = if labels.len() <= 1000 {
                let names: Vec<&str> = labels.keys().map(String::as_str).collect();
                file::guess(l, &names)
            } else {
                String::new()
            };
            self.err(s.span(), format!("unknown label {:?}", s.get_ref()))
                .label("no such label")
                .help(format!("{guess}step labels are {known}; automatic ones look like \"alice/plan/1\""));
        }
        kind
    }

    #[allow(clippy::too_many_arguments)]
    fn fault(
        &mut self,
        n: usize,
        f: &S<FaultDoc>,
        team: &Team,
        labels: &Labels,
        limit: Millis,
        link: &mut Vec<LinkFault>,
        partitions: &mut Vec<Partition>,
        timed: &mut Vec<(Millis, Scheduled)>,
    ) {
        // The kind is known and every key applies to it: the file reader
        // checked both and named what did not fit.
        let d = f.get_ref();
        let Some(kind) = FaultKind::named(d.kind.get_ref()) else { return };
        if let Some(c) = d.count.as_ref().filter(|c| *c.get_ref() == 0) {
            self.err(c.span(), format!("fault #{n}: count = 0 touches nothing"))
                .label("zero")
                .help("give count = 1 or more, or leave `count` out to touch every matching message");
        }
        let at = match &d.at {
            Some(a) => self.duration(a, &format!("fault #{n} `at`")),
            None if !kind.at_is_optional() => {
                self.missing(n, f, kind, "at");
                None
            }
            None => Some(Millis::ZERO),
        };
        let until = d.until.as_ref().and_then(|u| self.duration(u, &format!("fault #{n} `until`")));
        if let (Some(a), Some(u)) = (at, until) {
            if let (true, Some(written)) = (u <= a, &d.until) {
                self.err(
                    written.span(),
                    format!("fault #{n}: `until` ({}) must come after `at` ({})", human(u), human(a)),
                )
                .label(format!("not after {}", human(a)))
                .help("give an `until` later than `at`, or leave it out to last to the end of the run");
            }
        }
        if let Some(a) = at {
            if a > limit {
                self.err(
                    d.at.as_ref().map_or(f.span(), |x| x.span()),
                    format!("fault #{n} at {} comes after the end of the run ({})", human(a), human(limit)),
                )
                .label(format!("after {}", human(limit)))
                .help("give an earlier `at`, or raise the file's `end` or `cap`");
            }
        }
        if d.stray_keys {
            return;
        }
        let Some(at) = at else { return };
        let c = FaultCtx { n, f, kind, at, until, team, labels };
        match kind {
            FaultKind::Delay | FaultKind::Drop | FaultKind::Duplicate | FaultKind::Reorder => self.link_fault(&c, link),
            FaultKind::Partition => self.partition_fault(&c, partitions),
            FaultKind::Crash | FaultKind::Stall | FaultKind::TornWrite => self.agent_fault(&c, timed),
            FaultKind::JunkLine => self.junk_line_fault(&c, timed),
            FaultKind::Forge => self.forge_fault(&c, timed),
            FaultKind::Replay => self.replay_fault(&c, timed),
        }
    }

    /// Whether the fault has `key`; if not, says so.
    fn needs(&mut self, c: &FaultCtx, present: bool, key: &str) -> bool {
        if !present {
            self.missing(c.n, c.f, c.kind, key);
        }
        present
    }

    /// Fault #`n` lacks `key`. A missing key has no place: the fault's
    /// table is shown, with the keys its kind takes.
    fn missing(&mut self, n: usize, f: &S<FaultDoc>, kind: FaultKind, key: &str) {
        let takes = kind.keys().join(", ");
        self.err(f.span(), format!("fault #{n} ({kind}) is missing `{key}`"))
            .label(format!("no `{key}`"))
            .help(format!("add `{key}`, like {}; a {kind} fault takes {takes}", example(key)));
    }

    /// A fault on a link's messages: delay, drop, duplicate or reorder.
    fn link_fault(&mut self, c: &FaultCtx, link: &mut Vec<LinkFault>) {
        let (n, d, kind, at, until, team, labels) = (c.n, c.f.get_ref(), c.kind, c.at, c.until, c.team, c.labels);
        let effect = match kind {
            FaultKind::Delay => {
                if !self.needs(c, d.delay.is_some(), "delay") {
                    return;
                }
                let s = d.delay.as_ref().unwrap();
                match parse_latency(s.get_ref()) {
                    Ok(l) => LinkEffect::Delay(l),
                    Err(e) => {
                        let (message, fix) = split_fix(&e);
                        let help = fix.map_or_else(
                            || "give a duration, like delay = \"5s\", or a range, like delay = \"1s..5s\"".to_string(),
                            str::to_string,
                        );
                        self.err(s.span(), format!("fault #{n} delay: {message}")).label("not a delay").help(help);
                        return;
                    }
                }
            }
            FaultKind::Drop => LinkEffect::Drop,
            FaultKind::Duplicate => LinkEffect::Duplicate,
            _ => LinkEffect::Reorder,
        };
        let probability = d.probability.as_ref().map_or(1.0, |p| *p.get_ref());
        if let (false, Some(p)) = ((0.0..=1.0).contains(&probability), &d.probability) {
            self.err(p.span(), "probability must be between 0 and 1")
                .label("outside 0..1")
                .help("give a chance from 0 to 1, like probability = 0.5 for half the messages");
            return;
        }
        let mut filter = Filter::default();
        if let Some(x) = &d.from {
            filter.from = Some(match self.agent(x, team, "from") {
                Some(a) => a,
                None => return,
            });
        }
        if let Some(x) = &d.to {
            filter.to = Some(match self.agent(x, team, "to") {
                Some(a) => a,
                None => return,
            });
        }
        if let Some(t) = &d.types {
            for name in t.get_ref().to_vec() {
                match MessageType::parse(&name) {
                    Some(m) => filter.types.push(m),
                    None => {
                        let help = file::one_of(&name, message_types());
                        self.err(t.span(), format!("unknown message type {name:?}"))
                            .label("unknown message type")
                            .help(help);
                        return;
                    }
                }
            }
        }
        if let Some(r) = &d.request {
            self.label(r, team, labels);
            filter.request = Some(r.get_ref().trim_start_matches('@').to_string());
        }
        link.push(LinkFault {
            effect,
            filter,
            at,
            until,
            count: d.count.as_ref().map(|c| *c.get_ref()),
            probability,
            hits: 0,
        });
    }

    /// A partition between two agents, both ways or one, holding or dropping.
    fn partition_fault(&mut self, c: &FaultCtx, partitions: &mut Vec<Partition>) {
        let (d, at, until, team) = (c.f.get_ref(), c.at, c.until, c.team);
        if !self.needs(c, d.between.is_some(), "between") {
            return;
        }
        let between = d.between.as_ref().unwrap();
        let [a, b] = between.get_ref().as_slice() else {
            self.err(between.span(), "`between` names exactly two agents")
                .label(format!("{} named", between.get_ref().len()))
                .help("name the two sides, like between = [\"lead\", \"alice\"]");
            return;
        };
        let (Some(a), Some(b)) = (team.id(a), team.id(b)) else {
            let unknown = if team.id(a).is_none() { a } else { b };
            let guess = if team.names.len() <= 1000 {
                let names: Vec<&str> = team.names.iter().map(String::as_str).collect();
                file::guess(unknown, &names)
            } else {
                String::new()
            };
            self.err(between.span(), format!("`between`: no agent is named {unknown:?}"))
                .label("no such agent")
                .help(format!("{guess}the team is {}", team.describe()));
            return;
        };
        if a == b {
            self.err(between.span(), "`between` names two different agents: an agent cannot be cut off from itself")
                .label("the same agent twice")
                .help("name two different agents, like between = [\"lead\", \"alice\"]");
            return;
        }
        let one_way = match d.direction.as_ref().map(|x| x.get_ref().as_str()) {
            None | Some("both") => false,
            Some("one_way") => true,
            Some(other) => {
                let help = format!("{}use \"both\" or \"one_way\"", file::guess(other, &["both", "one_way"]));
                self.err(d.direction.as_ref().unwrap().span(), format!("direction {other:?} is not a direction"))
                    .label("unknown direction")
                    .help(help);
                return;
            }
        };
        let drop = match d.mode.as_ref().map(|x| x.get_ref().as_str()) {
            None | Some("hold") => false,
            Some("drop") => true,
            Some(other) => {
                let help = format!("{}use \"hold\" or \"drop\"", file::guess(other, &["hold", "drop"]));
                self.err(d.mode.as_ref().unwrap().span(), format!("mode {other:?} is not a mode"))
                    .label("unknown mode")
                    .help(help);
                return;
            }
        };
        partitions.push(Partition { a, b, one_way, at, until, drop });
    }

    /// A fault that stops a teammate at a time: a crash (maybe restarted), a
    /// stall, or a crash in the middle of an append (file mode only).
    fn agent_fault(&mut self, c: &FaultCtx, timed: &mut Vec<(Millis, Scheduled)>) {
        let (n, d, kind, at, until, team) = (c.n, c.f.get_ref(), c.kind, c.at, c.until, c.team);
        if kind == FaultKind::TornWrite && !self.file_mode {
            self.err(d.kind.span(), format!("fault #{n}: a torn write tears an append to an inbox file"))
                .label("file inboxes only")
                .help("set mailbox = \"file\" in [policy], or use a crash fault");
            return;
        }
        if !self.needs(c, d.agent.is_some(), "agent") {
            return;
        }
        let Some(agent) = self.agent(d.agent.as_ref().unwrap(), team, "agent") else { return };
        if let (true, Some(written)) = (agent.is_lead(), &d.agent) {
            let verb = if kind == FaultKind::Stall { "stall" } else { "crash" };
            let first = team.names.get(1).map_or("alice", String::as_str);
            self.err(written.span(), format!("fault #{n}: the lead cannot {verb} in this version"))
                .label("the lead")
                .help(format!("pick a teammate, like agent = \"{first}\""));
            return;
        }
        if kind == FaultKind::Stall {
            if !self.needs(c, until.is_some(), "until") {
                return;
            }
            timed.push((at, Scheduled::Stall { agent, until: until.unwrap() }));
            return;
        }
        let restart_after = match &d.restart {
            Some(r) => match self.duration(r, "restart") {
                Some(m) => Some(m),
                None => return,
            },
            None => None,
        };
        timed.push((
            at,
            if kind == FaultKind::Crash {
                Scheduled::Crash { agent, restart_after }
            } else {
                Scheduled::TornWrite { agent, restart_after }
            },
        ));
    }

    /// A line that is not a message, written into an inbox file.
    fn junk_line_fault(&mut self, c: &FaultCtx, timed: &mut Vec<(Millis, Scheduled)>) {
        let (n, d, at, team) = (c.n, c.f.get_ref(), c.at, c.team);
        if !self.file_mode {
            self.err(d.kind.span(), format!("fault #{n}: a junk line is written into an inbox file"))
                .label("file inboxes only")
                .help("set mailbox = \"file\" in [policy]");
            return;
        }
        if !self.needs(c, d.agent.is_some(), "agent") {
            return;
        }
        let Some(agent) = self.agent(d.agent.as_ref().unwrap(), team, "agent") else { return };
        let text = d.text.as_ref().map_or("this line is not JSON", |t| t.get_ref().as_str());
        timed.push((at, Scheduled::JunkLine { agent, text: text.into() }));
    }

    /// A message an adversary injects, claiming to be someone else.
    fn forge_fault(&mut self, c: &FaultCtx, timed: &mut Vec<(Millis, Scheduled)>) {
        let (n, d, at, team, labels) = (c.n, c.f.get_ref(), c.at, c.team, c.labels);
        let (true, true, true) = (
            self.needs(c, d.from.is_some(), "from"),
            self.needs(c, d.to.is_some(), "to"),
            self.needs(c, d.message.is_some(), "message"),
        ) else {
            return;
        };
        let (Some(claimed_from), Some(to)) =
            (self.agent(d.from.as_ref().unwrap(), team, "from"), self.agent(d.to.as_ref().unwrap(), team, "to"))
        else {
            return;
        };
        let m = d.message.as_ref().unwrap();
        let Some((message, id_label)) = self.forged_message(n, m, &d.message_fields, team, labels) else {
            return;
        };
        timed.push((at, Scheduled::Forge { claimed_from, to, message, id_label }));
    }

    /// The network delivering again a message it saw for a labelled request.
    fn replay_fault(&mut self, c: &FaultCtx, timed: &mut Vec<(Millis, Scheduled)>) {
        let (d, at, team, labels) = (c.f.get_ref(), c.at, c.team, c.labels);
        if !self.needs(c, d.request.is_some(), "request") {
            return;
        }
        let r = d.request.as_ref().unwrap();
        let Some(kind_of) = self.label(r, team, labels) else { return };
        let message_type = match &d.types {
            // By default the answer of the label's protocol.
            None => match Kind::parse(kind_of) {
                Some(k) => MessageType::Response(k),
                None => return,
            },
            Some(t) => match t.get_ref().to_vec().as_slice() {
                [one] => match MessageType::parse(one) {
                    Some(m) if !matches!(m, MessageType::Message | MessageType::Broadcast) => m,
                    _ => {
                        let protocol: Vec<&str> = message_types()
                            .iter()
                            .copied()
                            .filter(|m| {
                                !matches!(MessageType::parse(m), Some(MessageType::Message | MessageType::Broadcast))
                            })
                            .collect();
                        self.err(t.span(), format!("replay `type`: {one:?} is not a protocol message type"))
                            .label("not a protocol message")
                            .help(file::one_of(one, &protocol));
                        return;
                    }
                },
                _ => {
                    self.err(t.span(), "replay takes one message `type`")
                        .label(format!("{} types", t.get_ref().len()))
                        .help(
                            "give one, like type = \"shutdown_response\", or leave `type` out for the \
                             answer of the label's request",
                        );
                    return;
                }
            },
        };
        timed.push((at, Scheduled::Replay { label: r.get_ref().trim_start_matches('@').to_string(), message_type }));
    }

    /// A forged message: any message, with `"@label"` standing for a real id.
    fn forged_message(
        &mut self,
        n: usize,
        m: &S<toml::Value>,
        fields: &[(String, Range<usize>)],
        team: &Team,
        labels: &Labels,
    ) -> Option<(Message, Option<String>)> {
        // A problem with one field is shown at that field.
        let at = |key: &str| fields.iter().find(|(k, _)| k == key).map_or(m.span(), |(_, span)| span.clone());
        let mut value = m.get_ref().clone();
        let mut id_label = None;
        if let Some(toml::Value::String(id)) = value.get("request_id").cloned() {
            if let Some(label) = id.strip_prefix('@') {
                let spanned = S::new(at("request_id"), id.clone());
                self.label(&spanned, team, labels)?;
                id_label = Some(label.to_string());
                // A placeholder; the real id is filled in when the forgery fires.
                if let Some(t) = value.as_table_mut() {
                    t.insert("request_id".into(), toml::Value::String(uuid::Uuid::nil().to_string()));
                }
            }
        }
        let json = serde_json::to_value(&value).ok()?;
        match serde_json::from_value::<Message>(json) {
            Ok(msg) => Some((msg, id_label)),
            Err(e) => {
                // serde names the field it missed or did not know in backquotes.
                let e = e.to_string();
                let named = e.split('`').nth(1).filter(|k| fields.iter().any(|(f, _)| f == k));
                let span = named.map_or(m.span(), at);
                self.err(span, format!("fault #{n}: the forged message is not a valid message: {e}"))
                    .label(named.map_or("not a message", |_| "this field"))
                    .help(
                        "a forged message is written as the wire has it, like { type = \"shutdown_response\", \
                         request_id = \"@stop-alice\", approve = true }",
                    );
                None
            }
        }
    }

    fn expect(&mut self, e: &S<ExpectDoc>, team: &Team, labels: &Labels) -> Option<Expect> {
        let d = e.get_ref();
        // Keys that belong to another form of [[expect]] would silently check
        // nothing: name them.
        let form: (&str, &[&str]) = if d.request.is_some() {
            ("request", &["request", "status"])
        } else if d.teammate.is_some() {
            ("teammate", &["teammate", "status", "gate"])
        } else if d.file.is_some() {
            ("file", &["file", "state"])
        } else if d.ignored.is_some() {
            ("ignored", &["ignored", "reason"])
        } else if d.refused.is_some() {
            ("refused", &["refused", "rule"])
        } else if d.expired.is_some() {
            ("expired", &["expired"])
        } else if d.deadlock.is_some() {
            ("deadlock", &["deadlock", "broken"])
        } else if d.received.is_some() {
            ("received", &["received", "by", "from", "count"])
        } else if d.inbox.is_some() {
            ("inbox", &["inbox", "lines", "type"])
        } else {
            ("violation", &["violation"])
        };
        let present: [(&str, Option<Range<usize>>); 13] = [
            ("status", d.status.as_ref().map(|x| x.span())),
            ("gate", d.gate.as_ref().map(|x| x.span())),
            ("state", d.state.as_ref().map(|x| x.span())),
            ("reason", d.reason.as_ref().map(|x| x.span())),
            ("rule", d.rule.as_ref().map(|x| x.span())),
            ("request", d.request.as_ref().map(|x| x.span())),
            ("teammate", d.teammate.as_ref().map(|x| x.span())),
            ("broken", d.broken.map(|_| e.span())),
            ("by", d.by.as_ref().map(|x| x.span())),
            ("from", d.from.as_ref().map(|x| x.span())),
            ("count", d.count.map(|_| e.span())),
            ("lines", d.lines.map(|_| e.span())),
            ("type", d.of_type.as_ref().map(|x| x.span())),
        ];
        let mut stray = false;
        for (key, span) in present {
            if let Some(span) = span {
                if !form.1.contains(&key) {
                    let with = form.1[1..].iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
                    let takes = if with.is_empty() { "nothing else".to_string() } else { with };
                    self.err(span, format!("`{key}` does not go with `{}` in an [[expect]]", form.0))
                        .label(format!("not for `{}`", form.0))
                        .help(format!(
                            "remove `{key}`, or check it in an [[expect]] of its own; `{}` takes {takes}",
                            form.0
                        ));
                    stray = true;
                }
            }
        }
        if let (Some(_), Some(g), Some(_)) = (&d.teammate, &d.gate, &d.status) {
            self.err(g.span(), "an [[expect]] on a teammate checks `status` or `gate`, not both")
                .label("and `status` too")
                .help("write two [[expect]] entries, one with `status` and one with `gate`");
            stray = true;
        }
        if stray {
            return None;
        }
        let status = d.status.as_ref();
        let subjects = [
            d.request.is_some(),
            d.teammate.is_some(),
            d.file.is_some(),
            d.ignored.is_some(),
            d.refused.is_some(),
            d.expired.is_some(),
            d.violation.is_some(),
            d.deadlock.is_some(),
            d.received.is_some(),
            d.inbox.is_some(),
        ];
        let checked = subjects.iter().filter(|x| **x).count();
        if checked != 1 {
            // Nothing or several things to point at: the whole entry is shown.
            self.err(
                e.span(),
                "an [[expect]] checks one thing: request, teammate, file, ignored, refused, expired, deadlock, \
                 received, inbox or violation",
            )
            .label(if checked == 0 { "checks nothing".to_string() } else { format!("checks {checked} things") })
            .help(if checked == 0 {
                "add what to check, like request = \"stop-alice\" with status = \"approved\""
            } else {
                "write one [[expect]] for each thing checked"
            });
            return None;
        }
        if let Some(r) = &d.received {
            let message_type = self.message_type(r)?;
            let Some(by) = &d.by else {
                self.err(r.span(), "expect on a received message needs `by` (who received it)")
                    .label("received by whom?")
                    .help("add the agent that received it, like by = \"alice\"");
                return None;
            };
            self.agent(by, team, "by")?;
            if let Some(f) = &d.from {
                self.agent(f, team, "from")?;
            }
            let from = d.from.as_ref().map(|f| f.get_ref().clone());
            return Some(Expect::Received { message_type, by: by.get_ref().clone(), from, count: d.count });
        }
        if let Some(owner) = &d.inbox {
            self.agent(owner, team, "inbox")?;
            if !self.file_mode {
                self.err(
                    owner.span(),
                    "expect on an inbox's lines needs mailbox = \"file\": memory mailboxes leave no file",
                )
                .label("no inbox file")
                .help("set mailbox = \"file\" in [policy]");
                return None;
            }
            let Some(lines) = d.lines else {
                self.err(owner.span(), "expect on an inbox needs `lines` (how many lines its file holds at the end)")
                    .label("no `lines`")
                    .help("add how many lines the file holds at the end, like lines = 2");
                return None;
            };
            let message_type = match &d.of_type {
                Some(t) => Some(self.message_type(t)?),
                None => None,
            };
            return Some(Expect::InboxLines { owner: owner.get_ref().clone(), lines, message_type });
        }
        if let Some(r) = &d.request {
            self.label(r, team, labels)?;
            let Some(s) = status else {
                self.err(r.span(), "expect on a request needs `status` (approved, rejected, expired or pending)")
                    .label("no `status`")
                    .help("add the request's end state, like status = \"approved\"");
                return None;
            };
            let status = match s.get_ref().as_str() {
                "pending" => Status::Pending,
                "approved" => Status::Approved,
                "rejected" => Status::Rejected,
                "expired" => Status::Expired,
                other => {
                    let help = file::one_of(other, &["approved", "rejected", "expired", "pending"]);
                    self.err(s.span(), format!("request status {other:?} is not a status"))
                        .label("unknown status")
                        .help(help);
                    return None;
                }
            };
            return Some(Expect::Request { label: r.get_ref().trim_start_matches('@').to_string(), status });
        }
        if let Some(t) = &d.teammate {
            let id = self.agent(t, team, "teammate")?;
            if id.is_lead() {
                let first = team.names.get(1).map_or("alice", String::as_str);
                self.err(t.span(), "the lead is not a teammate: expect on one of the teammates")
                    .label("the lead")
                    .help(format!("name a teammate, like teammate = \"{first}\""));
                return None;
            }
            let name = t.get_ref().clone();
            if let Some(g) = &d.gate {
                let state = match g.get_ref().as_str() {
                    "not_required" => GateState::NotRequired,
                    "required" => GateState::Required,
                    "pending" => GateState::Pending,
                    "approved" => GateState::Approved,
                    "rejected" => GateState::Rejected,
                    other => {
                        let help =
                            file::one_of(other, &["not_required", "required", "pending", "approved", "rejected"]);
                        self.err(g.span(), format!("gate state {other:?} is not a gate state"))
                            .label("unknown gate state")
                            .help(help);
                        return None;
                    }
                };
                return Some(Expect::Gate { name, state });
            }
            let Some(s) = status else {
                self.err(t.span(), "expect on a teammate needs `status` (or `gate`)").label("no `status`").help(
                    "add the teammate's end status, like status = \"shutdown\", or its gate, like gate = \"approved\"",
                );
                return None;
            };
            let status = match s.get_ref().as_str() {
                "working" => RosterStatus::Working,
                "waiting_approval" => RosterStatus::WaitingApproval,
                "idle" => RosterStatus::Idle,
                "shutdown" => RosterStatus::Shutdown,
                "killed" => RosterStatus::Killed,
                "crashed" => RosterStatus::Crashed,
                other => {
                    let statuses = ["working", "waiting_approval", "idle", "shutdown", "killed", "crashed"];
                    self.err(s.span(), format!("teammate status {other:?} is not a status"))
                        .label("unknown status")
                        .help(file::one_of(other, &statuses));
                    return None;
                }
            };
            return Some(Expect::Teammate { name, status });
        }
        if let Some(f) = &d.file {
            let Some(s) = &d.state else {
                self.err(f.span(), "expect on a file needs `state` (complete, partial or absent)")
                    .label("no `state`")
                    .help("add the file's end state, like state = \"complete\"");
                return None;
            };
            let state = match s.get_ref().as_str() {
                "complete" => FileExpect::Complete,
                "partial" => FileExpect::Partial,
                "absent" => FileExpect::Absent,
                other => {
                    let help = file::one_of(other, &["complete", "partial", "absent"]);
                    self.err(s.span(), format!("file state {other:?} is not a file state"))
                        .label("unknown state")
                        .help(help);
                    return None;
                }
            };
            return Some(Expect::File { path: f.get_ref().clone(), state });
        }
        if let Some(count) = d.ignored {
            let reason = match &d.reason {
                None => None,
                Some(r) => match Reason::parse(r.get_ref()) {
                    Some(reason) => Some(reason),
                    None => {
                        let names: Vec<&str> = Reason::ALL.iter().map(|r| r.as_str()).collect();
                        let help = file::one_of(r.get_ref(), &names);
                        self.err(r.span(), format!("reason {:?} is not a reason", r.get_ref()))
                            .label("unknown reason")
                            .help(help);
                        return None;
                    }
                },
            };
            return Some(Expect::Ignored { count, reason });
        }
        if let Some(count) = d.refused {
            if let Some(r) = &d.rule {
                if !SendError::all().iter().any(|e| e.rule() == r.get_ref()) {
                    let names: Vec<&str> = SendError::all().iter().map(|e| e.rule()).collect();
                    let help = file::one_of(r.get_ref(), &names);
                    self.err(r.span(), format!("rule {:?} is not a rule", r.get_ref()))
                        .label("unknown rule")
                        .help(help);
                    return None;
                }
            }
            return Some(Expect::Refused { count, rule: d.rule.as_ref().map(|r| r.get_ref().clone()) });
        }
        if let Some(count) = d.expired {
            return Some(Expect::Expired { count });
        }
        if let Some(members) = &d.deadlock {
            if members.get_ref().len() < 2 {
                self.err(members.span(), "a deadlock needs at least two teammates waiting on each other")
                    .label(format!("{} named", members.get_ref().len()))
                    .help("name every teammate in the cycle, like deadlock = [\"alice\", \"bob\"]");
                return None;
            }
            for (i, name) in members.get_ref().iter().enumerate() {
                if members.get_ref()[..i].contains(name) {
                    self.err(members.span(), format!("deadlock names {name:?} twice"))
                        .label(format!("{name:?} twice"))
                        .help("list each teammate in the deadlock once");
                    return None;
                }
                let named = S::new(members.span(), name.clone());
                let id = self.agent(&named, team, "deadlock")?;
                if id.is_lead() {
                    self.err(members.span(), "the lead never blocks, so it is never part of a deadlock")
                        .label("names the lead")
                        .help("list only teammates, like deadlock = [\"alice\", \"bob\"]");
                    return None;
                }
            }
            return Some(Expect::Deadlock { members: members.get_ref().clone(), broken: d.broken });
        }
        let v = d.violation.as_ref()?;
        let invariant = Invariant::parse(v.get_ref());
        let allowed = |i| may_expect(self.all_defences_on, self.truncate_drain, i);
        if self.truncate_drain && invariant.is_some_and(|i| !allowed(i)) {
            self.err(
                v.span(),
                format!(
                    "with every defence on, drain = \"truncate\" lets a file expect no-silent-loss only (the drain \
                     loses messages by design, and breaks nothing else): a {} violation is a bug, not an expectation",
                    v.get_ref()
                ),
            )
            .label("cannot happen here")
            .help("switch a defence off in [policy.defences] to show what it prevents, or expect no-silent-loss");
            return None;
        }
        // Not even no-silent-loss: with these settings nothing may be expected.
        if !allowed(Invariant::NoSilentLoss) {
            self.err(
                v.span(),
                "expecting a violation needs a defence switched off ([policy.defences]), or, for no-silent-loss \
                 only, drain = \"truncate\" with mailbox = \"file\"; with all on, none can happen",
            )
            .label("cannot happen with every defence on")
            .help("switch one off, like [policy.defences] with sender_check = false, or remove this [[expect]]");
            return None;
        }
        match invariant {
            Some(i) => Some(Expect::Violation(i)),
            None => {
                let names: Vec<&str> = Invariant::all().iter().map(|i| i.name()).collect();
                let help = file::one_of(v.get_ref(), &names);
                self.err(v.span(), format!("unknown invariant {:?}", v.get_ref()))
                    .label("unknown invariant")
                    .help(help);
                None
            }
        }
    }
}

/// Where each line starts, found once, so that placing an error is a binary
/// search rather than a scan of the file: a file with many errors is checked
/// in time linear in its size.
pub struct LineIndex<'a> {
    /// Byte offset of each line's start, and whether the line is all ASCII
    /// (then a column is a byte count and needs no decoding).
    starts: Vec<(usize, bool)>,
    src: &'a str,
}

impl<'a> LineIndex<'a> {
    pub fn new(src: &'a str) -> LineIndex<'a> {
        let mut starts = vec![(0, true)];
        for (i, b) in src.bytes().enumerate() {
            if b == b'\n' {
                starts.push((i + 1, true));
            } else if !b.is_ascii() {
                starts.last_mut().expect("a first line").1 = false;
            }
        }
        LineIndex { starts, src }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.src.len());
        let line = self.starts.partition_point(|(start, _)| *start <= offset);
        let (start, ascii) = self.starts[line - 1];
        let col = if ascii { offset - start } else { self.src.get(start..offset).map_or(0, |s| s.chars().count()) };
        (line, col + 1)
    }
}

/// How much of a long line a problem shows, in characters before and after its start.
const SHOWN_BEFORE: usize = 60;
const SHOWN_AFTER: usize = 100;

impl LineIndex<'_> {
    /// The line `span` starts on, cut to a bounded width around it, with
    /// `span` clipped to that line. A character that would drive the
    /// terminal or reverse the text is shown as U+FFFD.
    pub fn excerpt(&self, span: Range<usize>) -> Excerpt {
        let start = span.start.min(self.src.len());
        let line = self.starts.partition_point(|(s, _)| *s <= start);
        let line_start = self.starts[line - 1].0;
        let line_end = self.starts.get(line).map_or(self.src.len(), |(next, _)| next - 1);
        let text = &self.src[line_start..line_end];
        let text = text.strip_suffix('\r').unwrap_or(text);
        let (start, end) = (start - line_start, span.end.clamp(start, line_start + text.len()) - line_start);
        let mut out = Excerpt { text: String::new(), span: 0..0, cut_before: false, cut_after: false };
        let before = text[..start].chars().count();
        for (n, (i, c)) in text.char_indices().enumerate() {
            if n + SHOWN_BEFORE < before {
                out.cut_before = true;
                continue;
            }
            if n > before + SHOWN_AFTER {
                out.cut_after = true;
                break;
            }
            if i == start {
                out.span.start = out.text.len();
            }
            if i == end {
                out.span.end = out.text.len();
            }
            out.text.push(if crate::input::hidden(c) { '\u{fffd}' } else { c });
        }
        if start >= text.len() {
            out.span.start = out.text.len();
        }
        if end >= text.len() || out.cut_after && out.span.end < out.span.start {
            out.span.end = out.text.len();
        }
        out.span.end = out.span.end.max(out.span.start);
        out
    }
}

/// One fault being built: its place in the file, its kind, when it acts,
/// and the names it may use.
struct FaultCtx<'a> {
    n: usize,
    f: &'a S<FaultDoc>,
    kind: FaultKind,
    at: Millis,
    until: Option<Millis>,
    team: &'a Team,
    labels: &'a Labels,
}

/// A key as a file writes it, for a help that says to add it.
fn example(key: &str) -> String {
    match key {
        "at" => "at = \"1s\"".into(),
        "until" => "until = \"10s\"".into(),
        "delay" => "delay = \"5s\"".into(),
        "between" => "between = [\"lead\", \"alice\"]".into(),
        "agent" | "from" => format!("{key} = \"alice\""),
        "to" => "to = \"lead\"".into(),
        "request" => "request = \"stop-alice\"".into(),
        "message" => "message = { type = \"shutdown_response\", request_id = \"@stop-alice\", approve = true }".into(),
        _ => format!("{key} = \"...\""),
    }
}

/// A name nobody in `seen` has (by lower case): `name-2`, `name-3`, ...
fn fresh(name: &str, seen: &BTreeMap<String, (String, usize)>) -> String {
    (2u64..)
        .map(|i| format!("{name}-{i}"))
        .find(|n| !seen.contains_key(&n.to_ascii_lowercase()))
        .unwrap_or_else(|| format!("{name}-2"))
}

/// The label and help of a name `check_name` refused.
fn name_fix(e: &crate::protocol::NameError) -> (String, String) {
    use crate::protocol::NameError;
    match e {
        NameError::Empty => ("empty".into(), "give a name, like \"alice\"".into()),
        NameError::TooLong(_) => ("longer than 64 characters".into(), "shorten it to 64 characters or fewer".into()),
        NameError::BadCharacter { name, bad } => {
            let plain: String =
                name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '-' }).collect();
            (format!("{bad:?} is not allowed"), format!("use only letters, digits, '_' and '-', like {plain:?}"))
        }
        NameError::Reserved(_) => (
            "reserved".into(),
            format!("pick another name: {} are kept for the system", crate::protocol::names::RESERVED_NAMES.join(", ")),
        ),
    }
}

/// A message that carries its fix after a colon (`"x" is not a duration:
/// write a number and a unit, ...`), as its two parts.
fn split_fix(text: &str) -> (&str, Option<&str>) {
    match text.split_once(": ") {
        Some((message, fix)) => (message, Some(fix)),
        None => (text, None),
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(src: &str, offset: usize) -> (usize, usize) {
    LineIndex::new(src).line_col(offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_offsets_on_lines_and_columns() {
        let src = "ab\n\ncé x\n";
        let index = LineIndex::new(src);
        let cases =
            [(0, (1, 1)), (1, (1, 2)), (2, (1, 3)), (3, (2, 1)), (4, (3, 1)), (7, (3, 3)), (8, (3, 4)), (99, (4, 1))];
        for (offset, want) in cases {
            assert_eq!(index.line_col(offset), want, "offset {offset}");
        }
    }
}
