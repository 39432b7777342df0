//! From a parsed file to a runnable scenario: resolve names and labels, parse
//! durations, check every rule a file can break, and say where it broke it.

use super::duration::{human, parse_duration, parse_latency};
use super::file::{
    self, limits, AnswersDoc, ExpectDoc, FaultDoc, FileDoc, PolicyDoc, StepDoc, TeammateDoc, WorkDoc, S,
};
use crate::agent::{Answer, Answers, Quote, Script, TeammateSpec, WorkItem};
use crate::inbox::{Drain, ReadCost};
use crate::oracle::Invariant;
use crate::protocol::kinds::Asker;
use crate::protocol::{
    check_teammate_name, Action, Address, AgentId, GateState, Kind, Message, MessageType, Millis, Policy, Reason,
    RequestId, SendError, Status, Text, LEAD_NAME,
};
use crate::trace::RosterStatus;
use crate::world::{
    FaultKind, FileMailbox, Filter, Latency, LeadSpec, LinkEffect, LinkFault, MailboxWorld, Partition, Scheduled, Step,
    TeamMailbox, TeamSpec,
};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

mod expect;
mod faults;
mod policy;
mod steps;
mod team;

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
    /// An inbox world: `owner`'s inbox file holds exactly `lines` lines
    /// (file mode) or entries (Claude Code mode) at the end (of
    /// `message_type` only, if given).
    InboxLines {
        owner: String,
        lines: u32,
        message_type: Option<MessageType>,
        /// Counted in the array's entries (Claude Code mode), not lines.
        entries: bool,
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

    /// Whether an expectation reads the inbox files a run leaves (it counts
    /// an inbox's lines or entries): a run that is only judged keeps them
    /// for that alone (`TeamSpec::folder`).
    pub fn reads_inbox_files(&self) -> bool {
        self.expects.iter().any(|e| matches!(e, Expect::InboxLines { .. }))
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
        let truncate = lossy(&self.team.mailbox);
        may_expect(self.policy().defences == crate::protocol::Defences::default(), truncate, invariant)
    }
}

/// Whether the file's inboxes lose messages by design, with no fault: the
/// reference's drain (read, then truncate), or Claude Code inboxes whose
/// rewrites take no lock or mark unseen entries read.
fn lossy(m: &MailboxWorld) -> bool {
    match m {
        MailboxWorld::Memory => false,
        MailboxWorld::File(f) => f.drain == Drain::ReadThenTruncate,
        MailboxWorld::ClaudeCode(t) => !t.lock || t.mark_all || !t.check_recipients,
    }
}

/// Which broken invariants a file may expect: any, with a defence switched
/// off (the file shows what the defence prevents); with every defence on,
/// no-silent-loss alone, and only with inboxes that lose messages by design
/// (the reference's drain, Claude Code's with a switch of its own off: see
/// [`lossy`]). Anything else
/// broken with every defence on is a bug, not an expectation. The file check
/// and `shrink` both ask this.
pub fn may_expect(all_defences_on: bool, lossy_inboxes: bool, invariant: Invariant) -> bool {
    !all_defences_on || (lossy_inboxes && invariant == Invariant::NoSilentLoss)
}

/// Parses and checks a scenario. All problems found are returned, first one first.
pub fn load_str(path: &str, src: &str) -> Result<Scenario, Vec<ScenarioError>> {
    if src.len() > limits::MAX_FILE_BYTES {
        return Err(vec![too_big(path, Some(src.len() as u64))]);
    }
    let mut b = Builder::new(path, src);
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
    b.finish(doc)
}

/// Builds a document read from `src` and then changed (`run --compare`): a
/// problem with a value the file wrote names its line in `src`; a value
/// added since has no place there and names the file's first line.
pub fn load_doc(path: &str, src: &str, doc: FileDoc) -> Result<Scenario, Vec<ScenarioError>> {
    Builder::new(path, src).finish(doc)
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
    // A file of that name, if there is one, is read as any file is.
    let missing = std::fs::symlink_metadata(path).is_err();
    // A bare word (no folder, no extension) that names no file was meant as a
    // bundled scenario's number or name: `explore 99`.
    let bare = path.components().count() == 1 && path.extension().is_none();
    if missing && bare && !super::bundled::is_bundled(path) {
        let mut e = ScenarioError::whole_file(&shown, "no such file, and no bundled scenario of that number or name");
        e.help(format!(
            "`{} scenarios` lists the bundled ones; write one by its number, like 22, or its name",
            crate::words::program()
        ));
        return Err(e);
    }
    if super::bundled::is_bundled(path) && missing {
        return super::bundled::by_path(path).map(|b| b.text.to_string()).ok_or_else(|| {
            let mut e = ScenarioError::whole_file(&shown, "no bundled scenario has this name".to_string());
            e.help(format!(
                "`{} scenarios` lists them; write one by its number, like 22, or its name",
                crate::words::program()
            ));
            e
        });
    }
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
            ReadError::NotUtf8 { .. } => (e.to_string(), "save it as UTF-8, the encoding TOML files are written in"),
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
    /// no-silent-loss, where `lossy_inboxes` says so).
    all_defences_on: bool,
    /// Inboxes that lose messages by design (see [`lossy`]): no-silent-loss
    /// may break with every defence on, and only that.
    lossy_inboxes: bool,
    /// `mailbox = "file"`: file-only faults (torn_write) are allowed.
    file_mode: bool,
    /// `mailbox = "claude-code"`: its faults (repeated_delivery) are allowed.
    claude_code: bool,
    /// Labels of steps left out for a problem already reported: referring to
    /// one is not a second problem.
    hidden: std::collections::BTreeSet<String>,
}

/// The longest end or cap a file may set: a year as durations are written
/// (365.25 days), so that it prints as `1y`.
pub const MAX_RUN: Millis = Millis(31_557_600_000);

/// The default cap of a run.
pub const DEFAULT_CAP: Millis = Millis(3_600_000);

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

pub use super::file::step_actions;

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

    /// A builder for the file `path`, whose text `src` places its problems.
    fn new<'a>(path: &'a str, src: &'a str) -> Builder<'a> {
        Builder {
            path,
            index: LineIndex::new(src),
            errors: Vec::new(),
            all_defences_on: true,
            lossy_inboxes: false,
            file_mode: false,
            claude_code: false,
            hidden: std::collections::BTreeSet::new(),
        }
    }

    /// The scenario, or every problem found, first one first.
    fn finish(mut self, doc: FileDoc) -> Result<Scenario, Vec<ScenarioError>> {
        let scenario = self.build(doc);
        if self.errors.is_empty() {
            Ok(scenario)
        } else {
            self.errors.sort_by_key(|e| (e.line, e.col));
            Err(self.errors)
        }
    }

    fn build(&mut self, doc: FileDoc) -> Scenario {
        if let Some(name) = doc.name.as_ref().filter(|n| n.get_ref().trim().is_empty()) {
            self.err(name.span(), "`name` cannot be empty")
                .label("empty")
                .help("name the scenario, like name = \"my-scenario\"");
        }
        self.printable(&doc.name, "name", "");
        self.printable(&doc.about, "about", "\n\t");
        let (end, cap) = self.end_and_cap(&doc);
        let policy = self.policy(&doc, cap);
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
        let mailbox = self.mailbox(&doc);
        self.file_mode = mailbox.file().is_some();
        self.claude_code = matches!(mailbox, MailboxWorld::ClaudeCode(_));
        self.lossy_inboxes = lossy(&mailbox);
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
        // A byte-order mark is no character of the first line: its columns
        // count from after it, as an editor shows them.
        let mut starts = vec![(if src.starts_with('\u{feff}') { 3 } else { 0 }, true)];
        for (i, b) in src.bytes().enumerate().skip(starts[0].0) {
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
        let offset = offset.min(self.src.len()).max(self.starts[0].0);
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
        let start = span.start.min(self.src.len()).max(self.starts[0].0);
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

    #[test]
    fn a_byte_order_mark_is_no_column_of_the_first_line() {
        let src = "\u{feff}name = 1\nx = 2\n";
        let index = LineIndex::new(src);
        // `=` is the 6th character an editor shows on line 1.
        assert_eq!(index.line_col(src.find('=').unwrap()), (1, 6));
        assert_eq!(index.line_col(0), (1, 1));
        assert_eq!(index.line_col(src.find('x').unwrap()), (2, 1));
        assert_eq!(index.excerpt(3..7).text, "name = 1");
    }
}
