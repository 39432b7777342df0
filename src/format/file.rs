//! The scenario file as written: TOML read into plain structs. Every value a
//! later check may complain about keeps its position in the file.
//!
//! toml parses the text into a tree of positioned values, and this module
//! reads that tree by hand rather than through serde's derive: serde stops at
//! the first problem and words it in the program's terms ("expected struct
//! WorkDoc", "data did not match any variant of untagged enum"), while the
//! author of a file needs every problem at once, in the file's own terms, with
//! what is allowed. Each table is read key by key; whatever is left over is an
//! unknown key, named with the keys that table takes.

use crate::agent::Answer;
use crate::protocol::{Defences, Kind, TimeoutDefault};
use crate::world::faults::FaultKind;
use serde::Deserialize;
use std::ops::Range;
use toml::de::{DeTable, DeValue, ValueDeserializer};
use toml::Spanned;

pub type S<T> = Spanned<T>;
type Value<'i> = Spanned<DeValue<'i>>;

/// What a file may ask for. Each bound is far above what a scenario needs and
/// low enough that a file cannot make the runner allocate without limit; an
/// error past a bound names it.
pub mod limits {
    /// toml's parser needs up to about 100 times a file's size (measured
    /// worst: a list of one-digit numbers, 96 times; ordinary scenarios 25
    /// to 55 times), so a larger file is refused before it is read: a check
    /// stays under about 420 MB.
    pub const MAX_FILE_BYTES: usize = 4 * 1024 * 1024;
    /// Teammates in a team, counting those `count` makes.
    pub const MAX_TEAMMATES: u64 = 100_000;
    pub const MAX_STEPS: usize = 100_000;
    pub const MAX_FAULTS: usize = 10_000;
    pub const MAX_EXPECTS: usize = 100_000;
    pub const MAX_WORK_ITEMS: usize = 1_000;
    /// Steps of one work item; each step is an event in the trace.
    pub const MAX_ITEM_STEPS: u64 = 1_000_000;
    /// Work steps of the whole team, `count` included.
    pub const MAX_TEAM_WORK_STEPS: u64 = 1_000_000;
    /// Revisions of one teammate's rejected plan; each is a new request.
    pub const MAX_REVISIONS: u64 = 1_000;
    /// An accepted task's steps: as a work item's.
    pub const MAX_TASK_STEPS: u64 = 1_000_000;
    /// Asked again more often than this, a teammate that always rejects
    /// would keep the lead busy for nothing.
    pub const MAX_ASK_AGAIN: u64 = 100;
    /// Revisions the whole team may make, `count` included.
    pub const MAX_TEAM_REVISIONS: u64 = 1_000_000;
    /// The steps, or expectations, that tables naming a group (`to = "w-*"`)
    /// make, one per member: two tables to a whole team of the most
    /// teammates. Without it 200 steps to a group of 100,000 asked for 20
    /// million steps, and 11 GB, from a 10 KB file.
    pub const MAX_GROUPED: usize = 2 * MAX_TEAMMATES as usize;
}

use limits::*;

#[derive(Debug, Clone)]
pub struct FileDoc {
    pub name: Option<S<String>>,
    /// What the scenario teaches: optional in a user's file, required of the
    /// bundled ones (a test holds them to it).
    pub about: Option<S<String>>,
    pub seed: Option<u64>,
    /// Stop the run at this virtual time even if work remains.
    pub end: Option<S<String>>,
    /// A run that never settles is stopped here (default one hour).
    pub cap: Option<S<String>>,
    pub policy: PolicyDoc,
    pub lead: LeadDoc,
    pub teammates: Vec<S<TeammateDoc>>,
    pub steps: Vec<S<StepDoc>>,
    pub faults: Vec<S<FaultDoc>>,
    pub expects: Vec<S<ExpectDoc>>,
    /// The labels of steps left out for a problem already reported: a
    /// reference to one is not reported again as unknown.
    pub hidden_labels: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub struct PolicyDoc {
    /// Each protocol's timeout (`shutdown_timeout`), by [`Kind::index`].
    pub timeouts_by_kind: [Option<S<String>>; Kind::COUNT],
    /// Each protocol's default on expiry (`on_plan_timeout`), by [`Kind::index`].
    pub on_expiry: [Option<TimeoutDefault>; Kind::COUNT],
    pub strict_hierarchy: Option<bool>,
    pub latency: Option<S<String>>,
    pub defences: Option<Defences>,
    /// `false`: no request ever expires (every protocol), to watch a deadlock last.
    pub timeouts: Option<bool>,
    /// `"fail"`: any deadlock fails the run.
    pub deadlocks: Option<S<String>>,
    /// `"memory"` (default), `"file"` (inboxes as JSON Lines files) or
    /// `"claude-code"` (inboxes as Claude Code's JSON arrays).
    pub mailbox: Option<S<String>>,
    /// File mode: `"truncate"` (the reference's) or `"offset"` (safe).
    pub drain: Option<S<String>>,
    /// File mode: how often an owner reads its file.
    pub inbox_poll: Option<S<String>>,
    /// File mode: what one read costs its reader, and what each KiB of the file adds.
    pub read_cost: Option<S<String>>,
    pub read_cost_per_kib: Option<S<String>>,
    /// File mode: cut what has been read from the front of the file.
    pub prune: Option<S<bool>>,
    /// Claude Code mode: `"on"` (default) or `"off"`: whether rewrites of an
    /// inbox take its lock.
    pub lock: Option<S<String>>,
    /// Claude Code mode: `"shown"` (default) or `"all"`: what the mark after
    /// a read marks read.
    pub mark_read: Option<S<String>>,
    /// Claude Code mode: `"team"` (default) or `"any"`: which names a send
    /// may go to.
    pub recipients: Option<S<String>>,
}

/// One answer, or a list used in order whose last answer repeats; one answer
/// is read as a list of one.
pub type AnswersDoc = Vec<Answer>;

#[derive(Debug, Clone, Default)]
pub struct LeadDoc {
    pub on_plan: Option<S<AnswersDoc>>,
    pub feedback: Option<String>,
    pub approval_feedback: Option<String>,
    pub ask_again_on_reject: Option<S<u32>>,
}

#[derive(Debug, Clone)]
pub struct TeammateDoc {
    pub name: S<String>,
    pub on_shutdown: Option<S<AnswersDoc>>,
    pub reject_reason: Option<String>,
    pub on_plan: Option<S<AnswersDoc>>,
    pub on_task: Option<S<AnswersDoc>>,
    pub decline_reason: Option<String>,
    pub task_steps: Option<S<u32>>,
    pub require_plan: bool,
    pub plan: Option<String>,
    pub work: Vec<S<WorkDoc>>,
    pub max_revisions: Option<u32>,
    /// Make this many identical teammates named `<name>-1`, `<name>-2`, ...
    pub count: Option<S<u32>>,
}

/// One action of work: exactly one of `write`, `edit`, `shell`, `read`.
#[derive(Debug, Clone)]
pub struct WorkDoc {
    pub write: Option<String>,
    pub edit: Option<String>,
    pub shell: Option<String>,
    pub read: Option<String>,
    pub steps: Option<S<u32>>,
    pub step_time: Option<S<String>>,
}

#[derive(Debug, Clone)]
pub struct StepDoc {
    /// Its place among the file's steps, from 1, as errors name it.
    pub n: usize,
    pub at: S<String>,
    pub action: S<String>,
    pub to: Option<S<String>>,
    pub from: Option<S<String>>,
    pub label: Option<S<String>>,
    pub reason: Option<String>,
    pub plan: Option<String>,
    pub task: Option<String>,
    pub text: Option<String>,
    /// `answer`: the response's type, the request it quotes (a label, or an
    /// id as a team wrote it that no request here has), and its answer.
    pub message_type: Option<S<String>>,
    pub request: Option<S<String>>,
    pub request_id: Option<S<String>>,
    pub approve: Option<bool>,
}

impl StepDoc {
    /// The words a step gives under `key` (a protocol's `reason`, `plan`).
    pub fn words(&self, key: &str) -> Option<&str> {
        match key {
            "reason" => self.reason.as_deref(),
            "plan" => self.plan.as_deref(),
            "task" => self.task.as_deref(),
            _ => None,
        }
    }
}

/// Every fault's keys in one table. Keys that do not apply to the kind are
/// refused while reading; which keys a kind needs is checked after, so a
/// missing key is reported with the kind that needs it.
#[derive(Debug, Clone)]
pub struct FaultDoc {
    /// Its place among the file's faults, from 1, as errors name it.
    pub n: usize,
    pub kind: S<String>,
    /// A key that does not apply to this kind was refused: build nothing.
    pub stray_keys: bool,
    pub at: Option<S<String>>,
    pub until: Option<S<String>>,
    pub agent: Option<S<String>>,
    pub from: Option<S<String>>,
    pub to: Option<S<String>>,
    /// Message types the fault touches (`type = "shutdown_response"` or a list).
    pub types: Option<S<Vec<String>>>,
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
    /// Where each of the forged message's values is, by key, so that a
    /// problem with one points at it.
    pub message_fields: Vec<(String, Range<usize>)>,
    /// `junk_line`: the line written.
    pub text: Option<S<String>>,
}

#[derive(Debug, Clone, Default)]
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
    /// The members of a deadlock that must form, in any order.
    pub deadlock: Option<S<Vec<String>>>,
    /// With `deadlock`: whether a timeout must break it (`false`: it must last to the end).
    pub broken: Option<bool>,
    /// A message type that `by` must have received (`from` and `count` narrow it).
    pub received: Option<S<String>>,
    pub by: Option<S<String>>,
    pub from: Option<S<String>>,
    pub count: Option<u32>,
    /// File mode: the agent whose inbox file is checked, for `lines` (of `type`).
    pub inbox: Option<S<String>>,
    pub lines: Option<u32>,
    pub of_type: Option<S<String>>,
}

/// One thing wrong with a file, where it is, and how to fix it when that can be said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub span: Range<usize>,
    pub message: String,
    pub label: Option<String>,
    pub help: Option<String>,
}

impl Problem {
    fn new(span: Range<usize>, message: impl Into<String>) -> Problem {
        Problem { span, message: message.into(), label: None, help: None }
    }

    fn label(&mut self, label: impl Into<String>) -> &mut Problem {
        self.label = Some(label.into());
        self
    }

    fn help(&mut self, help: impl Into<String>) -> &mut Problem {
        self.help = Some(help.into());
        self
    }
}

/// Reads a file. A file that is not TOML is one problem (`Err`); otherwise
/// every problem found is returned alongside what could be read.
pub fn read(src: &str) -> Result<(FileDoc, Vec<Problem>), Problem> {
    let doc = DeTable::parse(src).map_err(|e| syntax(e.span().unwrap_or_else(|| unplaced(src)), e.message()))?;
    let mut r = Reader { src, problems: Vec::new(), hidden_labels: Vec::new() };
    let file = r.file(doc.into_inner());
    Ok((file, r.problems))
}

/// Where an error toml gives no place for (its nesting limit, say) is: the
/// first line whose prefix of the file fails to parse, found by halving.
/// A file of a few thousand lines takes a dozen parses of its prefixes.
fn unplaced(src: &str) -> Range<usize> {
    let ends: Vec<usize> = src.match_indices('\n').map(|(i, _)| i + 1).chain([src.len()]).collect();
    let fails = |k: usize| DeTable::parse(&src[..ends[k]]).is_err();
    // The whole file fails; look for the shortest prefix that does.
    let (mut lo, mut hi) = (0, ends.len() - 1);
    if !fails(hi) {
        return 0..0;
    }
    while lo < hi {
        let mid = (lo + hi) / 2;
        if fails(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let start = if lo == 0 { 0 } else { ends[lo - 1] };
    start..start
}

/// A TOML syntax error, at the place toml found it, with the fix for the
/// mistakes a scenario's author makes (toml words the problem in its grammar's
/// terms: "unclosed array table", "string values must be quoted").
fn syntax(span: Range<usize>, message: &str) -> Problem {
    let message = message.trim().replace('\n', " ");
    let has = |words: &[&str]| words.iter().any(|w| message.contains(w));
    // The label: what is wrong where a few words say it better than toml's
    // grammar does, else what toml expected there.
    let deep = has(&["recursion limit", "max recursion depth"]);
    let label = if has(&["duplicate key"]) {
        "given twice".to_string()
    } else if deep {
        "nested too deeply".to_string()
    } else if has(&["must be quoted", "unquoted string"]) {
        "not in quotes".to_string()
    } else if has(&["extra comma"]) {
        "extra comma".to_string()
    } else {
        match message.split_once(", expected ") {
            Some((_, want)) => format!("expected {want}"),
            None => "not valid TOML here".to_string(),
        }
    };
    let help = if deep {
        "keys, lists and tables nest a few levels in a scenario (policy.defences.kind_check is three); this line \
         nests them past what the reader follows"
    } else if has(&["duplicate key"]) {
        "a key may be given once in a table: remove one, or start another entry with [[teammate]], [[step]], ..."
    } else if has(&["must be quoted", "unquoted string"]) {
        "put text in quotes, like about = \"text\"; numbers, `true` and `false` go without"
    } else if has(&["extra comma"]) {
        "remove the extra comma: items are separated by one comma each"
    } else if has(&["basic string", "literal string"]) {
        "text is written in quotes closed on the same line, like about = \"text\"; text over several lines goes \
         in triple quotes, \"\"\"...\"\"\""
    } else if has(&["array table"]) {
        "a list entry's header has two brackets on each side, like [[teammate]]"
    } else if has(&["inline table"]) {
        "an inline table is one line of key = value pairs in braces, like { write = \"a.md\", steps = 2 }"
    } else if has(&["table"]) {
        "a table's header has one bracket on each side, like [policy]"
    } else if has(&["array"]) {
        "a list separates its items with commas and ends with `]`, like [\"reject\", \"approve\"]"
    } else if has(&["value"]) {
        "give the key a value after `=`, like name = \"my-scenario\""
    } else {
        "a scenario file is TOML: one key = value per line, text in quotes, tables as [policy], entries as \
         [[teammate]] (docs/scenarios.md; every key: docs/reference.md)"
    };
    let mut p = Problem::new(span, message);
    p.label(label).help(help);
    p
}

pub const TOP_KEYS: &[&str] =
    &["name", "about", "seed", "end", "cap", "policy", "lead", "teammate", "step", "fault", "expect"];
/// `[policy]`'s keys: each protocol's timeout and default on expiry, then these.
pub fn policy_keys() -> Vec<&'static str> {
    let mut keys: Vec<&str> = Kind::ALL.iter().map(|k| k.spec().timeout_key).collect();
    keys.extend(Kind::ALL.iter().map(|k| k.spec().expiry_key));
    keys.extend(POLICY_OTHER_KEYS);
    keys
}

const POLICY_OTHER_KEYS: &[&str] = &[
    "strict_hierarchy",
    "latency",
    "defences",
    "timeouts",
    "deadlocks",
    "mailbox",
    "drain",
    "inbox_poll",
    "read_cost",
    "read_cost_per_kib",
    "prune",
    "lock",
    "mark_read",
    "recipients",
];
pub const LEAD_KEYS: &[&str] = &["on_plan", "feedback", "approval_feedback", "ask_again_on_reject"];
pub const TEAMMATE_KEYS: &[&str] = &[
    "name",
    "on_shutdown",
    "reject_reason",
    "on_plan",
    "on_task",
    "decline_reason",
    "task_steps",
    "require_plan",
    "plan",
    "work",
    "max_revisions",
    "count",
];
pub const WORK_KEYS: &[&str] = &["write", "edit", "shell", "read", "steps", "step_time"];
pub const STEP_KEYS: &[&str] =
    &["at", "do", "to", "from", "label", "reason", "plan", "task", "text", "type", "request", "request_id", "approve"];
pub const EXPECT_KEYS: &[&str] = &[
    "request",
    "teammate",
    "status",
    "file",
    "state",
    "ignored",
    "reason",
    "refused",
    "rule",
    "expired",
    "violation",
    "gate",
    "deadlock",
    "broken",
    "received",
    "by",
    "from",
    "count",
    "inbox",
    "lines",
    "type",
];
/// Every fault kind's name, as a file writes it ([`FaultKind`]).
pub static FAULT_KINDS: std::sync::LazyLock<Vec<&'static str>> =
    std::sync::LazyLock::new(|| FaultKind::ALL.iter().copied().map(FaultKind::name).collect());
pub const FAULT_KEYS: &[&str] = &[
    "kind",
    "at",
    "until",
    "agent",
    "from",
    "to",
    "type",
    "request",
    "delay",
    "count",
    "probability",
    "restart",
    "between",
    "direction",
    "mode",
    "message",
    "text",
];

/// The keys a fault of `kind` takes, `kind` aside (every fault key, for a
/// kind that is not one).
pub fn fault_keys(kind: &str) -> &'static [&'static str] {
    FaultKind::named(kind).map_or(FAULT_KEYS, FaultKind::keys)
}

const DURATION: &str = "a duration in quotes, like \"500ms\", \"5s\", \"2m\" or \"1h30m\"";
const ANSWERS: &str = "approve, reject or ignore, or a list of them used in order, like [\"reject\", \"approve\"]";

/// A table being read: each key is taken once; what is left is unknown.
struct Fields<'i> {
    span: Range<usize>,
    map: DeTable<'i>,
}

impl<'i> Fields<'i> {
    fn take(&mut self, key: &str) -> Option<Value<'i>> {
        self.map.remove(key)
    }
}

struct Reader<'s> {
    src: &'s str,
    problems: Vec<Problem>,
    hidden_labels: Vec<String>,
}

impl Reader<'_> {
    fn problem(&mut self, span: Range<usize>, message: impl Into<String>) -> &mut Problem {
        self.problems.push(Problem::new(span, message));
        self.problems.last_mut().expect("just pushed")
    }

    /// A value as the file wrote it, short enough for a message.
    fn shown(&self, v: &Value<'_>) -> String {
        match v.get_ref() {
            DeValue::Array(_) => "a list".into(),
            DeValue::Table(_) => "a table".into(),
            _ => {
                let text = self.src.get(v.span()).unwrap_or("?");
                match text.char_indices().nth(40) {
                    Some((cut, _)) => format!("{}…", &text[..cut]),
                    None => text.to_string(),
                }
            }
        }
    }

    /// A value of the wrong type. The help is the fix the value's own form
    /// suggests; a caller with a better one replaces it.
    fn wrong(&mut self, v: &Value<'_>, key: &str, want: &str) -> &mut Problem {
        let message = format!("`{key}` must be {want}, not {}", self.shown(v));
        let found = format!("found {}", kind_of(v.get_ref()));
        let help = self.fix(v, key, want);
        self.problem(v.span(), message).label(found).help(help)
    }

    /// How to write `key` as `want`, from what the file wrote instead.
    fn fix(&self, v: &Value<'_>, key: &str, want: &str) -> String {
        let raw = self.shown(v);
        let scalar = !matches!(v.get_ref(), DeValue::String(_) | DeValue::Array(_) | DeValue::Table(_));
        let numeric = want.starts_with("a whole number") || want.starts_with("a number");
        let boolean = want.contains("true") && want.contains("false") && !want.contains("in quotes");
        match v.get_ref() {
            DeValue::String(inner) if numeric && inner.trim().parse::<f64>().is_ok() => {
                format!("remove the quotes: {key} = {}", inner.trim())
            }
            DeValue::String(inner) if boolean && matches!(inner.trim(), "true" | "false") => {
                format!("remove the quotes: {key} = {}", inner.trim())
            }
            DeValue::Integer(_) if want.starts_with("a duration") => {
                format!("a duration has a unit, in quotes: {key} = \"{raw}ms\" or {key} = \"{raw}s\"")
            }
            _ if scalar && want == "text in quotes" => format!("put it in quotes: {key} = \"{raw}\""),
            // A `want` that carries its own fix ("a table: write [policy] ...").
            _ => match want.split_once(": write ") {
                Some((_, how)) => format!("write {how}"),
                None => format!("give `{key}` {want}"),
            },
        }
    }

    /// Reports the keys nobody took, with the keys `place` takes.
    fn leftover(&mut self, f: Fields<'_>, place: &str, allowed: &[&str]) {
        for (key, _) in f.map {
            let guess = closest(key.get_ref(), allowed).map(|g| format!("did you mean `{g}`? ")).unwrap_or_default();
            let message = format!("unknown field `{}` in {place}", key.get_ref());
            // A top-level key written under a table (`cap` in [policy]): say
            // where it goes rather than list the table's keys.
            let help = if allowed != TOP_KEYS && TOP_KEYS.contains(&key.get_ref().as_ref()) {
                format!(
                    "`{0}` is a key of the file's top level, not of {place}: write it above the first table",
                    key.get_ref()
                )
            } else {
                format!("{guess}{place} takes {}", allowed.join(", "))
            };
            self.problem(key.span(), message).label("unknown field").help(help);
        }
    }

    fn table<'i>(&mut self, v: Value<'i>, key: &str, want: &str) -> Option<Fields<'i>> {
        let span = v.span();
        match v.into_inner() {
            DeValue::Table(map) => Some(Fields { span, map }),
            other => {
                self.wrong(&Spanned::new(span, other), key, want);
                None
            }
        }
    }

    fn text(&mut self, v: Option<Value<'_>>, key: &str) -> Option<S<String>> {
        self.string(v, key, "text in quotes")
    }

    fn duration(&mut self, v: Option<Value<'_>>, key: &str) -> Option<S<String>> {
        self.string(v, key, DURATION)
    }

    fn string(&mut self, v: Option<Value<'_>>, key: &str, want: &str) -> Option<S<String>> {
        let v = v?;
        match v.get_ref() {
            DeValue::String(s) => Some(Spanned::new(v.span(), s.to_string())),
            _ => {
                self.wrong(&v, key, want);
                None
            }
        }
    }

    fn flag(&mut self, v: Option<Value<'_>>, key: &str) -> Option<bool> {
        let v = v?;
        match v.get_ref() {
            DeValue::Boolean(b) => Some(*b),
            _ => {
                self.wrong(&v, key, "a boolean, `true` or `false`")
                    .help(format!("write {key} = true or {key} = false, without quotes"));
                None
            }
        }
    }

    /// A whole number from `min` to `max`; `bound` says what a larger one
    /// asks for, when the limit is ours rather than the number type's. Every
    /// number below `min`, zero or negative, is refused in the same words.
    fn whole(&mut self, v: Option<Value<'_>>, key: &str, min: u64, max: u64, bound: Option<&str>) -> Option<S<u64>> {
        let v = v?;
        let want = format!("a whole number from {min} to {max}");
        let n = match v.get_ref() {
            DeValue::Integer(i) => i128::from_str_radix(i.as_str(), i.radix()).ok(),
            _ => {
                self.wrong(&v, key, &want);
                return None;
            }
        };
        match (n, bound) {
            (Some(n), _) if (min as i128..=max as i128).contains(&n) => Some(Spanned::new(v.span(), n as u64)),
            (Some(n), _) if n < min as i128 => {
                let message = format!("`{key}` must be {want}, not {}", self.shown(&v));
                let label = if min == 0 { "below zero".to_string() } else { format!("less than {min}") };
                let help = format!("give {min} or more (at most {max}), like {key} = {}", min.max(1));
                self.problem(v.span(), message).label(label).help(help);
                None
            }
            (_, Some(what)) => {
                let message =
                    format!("`{key}` = {} is more than a file may ask for: at most {max} {what}", self.shown(&v));
                let help = format!("lower it to {max} or less");
                self.problem(v.span(), message).label(format!("more than {max}")).help(help);
                None
            }
            (_, None) => {
                let message = format!("`{key}` must be {want}, not {}", self.shown(&v));
                let help = format!("lower it to {max} or less");
                self.problem(v.span(), message).label(format!("more than {max}")).help(help);
                None
            }
        }
    }

    fn small(&mut self, v: Option<Value<'_>>, key: &str, max: u64, bound: Option<&str>) -> Option<S<u32>> {
        self.small_from(v, key, 0, max, bound)
    }

    fn small_from(
        &mut self,
        v: Option<Value<'_>>,
        key: &str,
        min: u64,
        max: u64,
        bound: Option<&str>,
    ) -> Option<S<u32>> {
        let max = max.min(u32::MAX as u64);
        self.whole(v, key, min, max, bound).map(|n| Spanned::new(n.span(), n.into_inner() as u32))
    }

    fn number(&mut self, v: Option<Value<'_>>, key: &str) -> Option<S<f64>> {
        let v = v?;
        let n = match v.get_ref() {
            DeValue::Float(f) => f.as_str().parse::<f64>().ok(),
            DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix()).ok().map(|i| i as f64),
            _ => None,
        };
        if n.is_none() {
            self.wrong(&v, key, "a number, like 0.5");
        }
        n.map(|n| Spanned::new(v.span(), n))
    }

    /// One string, or a list of them.
    fn strings(&mut self, v: Option<Value<'_>>, key: &str, want: &str) -> Option<S<Vec<String>>> {
        let v = v?;
        let span = v.span();
        match v.get_ref() {
            DeValue::String(s) => Some(Spanned::new(span, vec![s.to_string()])),
            DeValue::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items.iter() {
                    match item.get_ref() {
                        DeValue::String(s) => out.push(s.to_string()),
                        _ => {
                            self.wrong(item, key, want);
                            return None;
                        }
                    }
                }
                Some(Spanned::new(span, out))
            }
            _ => {
                self.wrong(&v, key, want);
                None
            }
        }
    }

    fn answers(&mut self, v: Option<Value<'_>>, key: &str) -> Option<S<AnswersDoc>> {
        let v = v?;
        let one = |s: &str| match s {
            "approve" => Some(Answer::Approve),
            "reject" => Some(Answer::Reject),
            "ignore" => Some(Answer::Ignore),
            _ => None,
        };
        let items: Vec<&Value<'_>> = match v.get_ref() {
            DeValue::Array(items) => items.iter().collect(),
            _ => vec![&v],
        };
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            match item.get_ref() {
                DeValue::String(s) if one(s).is_some() => out.extend(one(s)),
                _ => {
                    let message = format!("`{key}` = {} is not an answer", self.shown(item));
                    let guess = match item.get_ref() {
                        DeValue::String(s) => guess(s, &["approve", "reject", "ignore"]),
                        _ => String::new(),
                    };
                    self.problem(item.span(), message)
                        .label("not an answer")
                        .help(format!("{guess}an answer is {ANSWERS}"));
                    return None;
                }
            }
        }
        Some(Spanned::new(v.span(), out))
    }

    /// The entries of an array of tables (`[[step]]`), at most `max` of them:
    /// one error at the first entry past the bound, and the rest unread.
    fn entries<'i>(&mut self, v: Option<Value<'i>>, key: &str, max: usize) -> Vec<Fields<'i>> {
        let Some(v) = v else { return Vec::new() };
        let span = v.span();
        let items = match v.into_inner() {
            DeValue::Array(items) => items,
            DeValue::Table(_) => {
                self.problem(span, format!("write [[{key}]] with two brackets: a file may have several of them"))
                    .label("one bracket on each side")
                    .help(format!("write the header as [[{key}]]; each [[{key}]] starts one more"));
                return Vec::new();
            }
            other => {
                self.wrong(&Spanned::new(span, other), key, &format!("a list of tables: write [[{key}]] for each"));
                return Vec::new();
            }
        };
        let mut out = Vec::new();
        for (i, item) in items.into_iter().enumerate() {
            if i == max {
                let message = format!("too many [[{key}]]: a file may have at most {max}; this is number {}", i + 1);
                let help = format!("split the scenario into files of at most {max} [[{key}]] each");
                self.problem(item.span(), message).label(format!("number {}", i + 1)).help(help);
                break;
            }
            if let Some(f) = self.table(item, key, &format!("a table: write [[{key}]] and its keys below it")) {
                out.push(f);
            }
        }
        out
    }

    fn file(&mut self, map: DeTable<'_>) -> FileDoc {
        let mut f = Fields { span: 0..0, map };
        let name = f.take("name");
        if name.is_none() {
            // No key to point at: the start of the file is where the name goes.
            self.problem(0..0, "the file needs a `name`")
                .label("no `name` in this file")
                .help("add one at the top, like name = \"my-scenario\"");
        }
        let name = self.text(name, "name");
        let about = f.take("about");
        let about = self.text(about, "about");
        let seed = f.take("seed");
        let seed = self.whole(seed, "seed", 0, u64::MAX, None).map(|s| s.into_inner());
        let end = f.take("end");
        let end = self.duration(end, "end");
        let cap = f.take("cap");
        let cap = self.duration(cap, "cap");
        let policy = f.take("policy").map(|v| self.policy(v)).unwrap_or_default();
        let lead = f.take("lead").map(|v| self.lead(v)).unwrap_or_default();
        // Entries are read one at a time and their parsed form dropped as they
        // go, so reading adds little to what the parser took.
        let teammate = f.take("teammate");
        let teammates = self
            .entries(teammate, "teammate", MAX_TEAMMATES as usize)
            .into_iter()
            .filter_map(|t| self.teammate(t))
            .collect();
        let step = f.take("step");
        let steps = self
            .entries(step, "step", MAX_STEPS)
            .into_iter()
            .enumerate()
            .filter_map(|(i, s)| self.step(i + 1, s))
            .collect();
        let fault = f.take("fault");
        let faults = self
            .entries(fault, "fault", MAX_FAULTS)
            .into_iter()
            .enumerate()
            .filter_map(|(i, x)| self.fault(i + 1, x))
            .collect();
        let expect = f.take("expect");
        let expects = self.entries(expect, "expect", MAX_EXPECTS).into_iter().filter_map(|e| self.expect(e)).collect();
        self.leftover(f, "the file's top level", TOP_KEYS);
        let hidden_labels = std::mem::take(&mut self.hidden_labels);
        FileDoc { name, about, seed, end, cap, policy, lead, teammates, steps, faults, expects, hidden_labels }
    }

    fn policy(&mut self, v: Value<'_>) -> PolicyDoc {
        let Some(mut f) = self.table(v, "policy", "a table: write [policy] and its keys below it") else {
            return PolicyDoc::default();
        };
        let timeouts_by_kind = Kind::ALL.map(|k| {
            let key = k.spec().timeout_key;
            self.duration(f.take(key), key)
        });
        let on_expiry = Kind::ALL.map(|k| {
            let (key, allowed) = (k.spec().expiry_key, k.spec().on_expiry);
            let words: Vec<(&str, TimeoutDefault)> = allowed.iter().map(|d| (d.as_str(), *d)).collect();
            self.choice(f.take(key), key, &words)
        });
        let doc = PolicyDoc {
            timeouts_by_kind,
            on_expiry,
            strict_hierarchy: self.flag(f.take("strict_hierarchy"), "strict_hierarchy"),
            latency: self.string(
                f.take("latency"),
                "latency",
                "a duration in quotes, like \"1ms\", or a range like \"1ms..20ms\"",
            ),
            defences: f.take("defences").and_then(|v| self.defences(v)),
            timeouts: self.flag(f.take("timeouts"), "timeouts"),
            deadlocks: self.string(f.take("deadlocks"), "deadlocks", "\"fail\" or \"allow\""),
            mailbox: self.string(f.take("mailbox"), "mailbox", "\"memory\", \"file\" or \"claude-code\""),
            drain: self.string(f.take("drain"), "drain", "\"truncate\" or \"offset\""),
            inbox_poll: self.duration(f.take("inbox_poll"), "inbox_poll"),
            read_cost: self.duration(f.take("read_cost"), "read_cost"),
            read_cost_per_kib: self.duration(f.take("read_cost_per_kib"), "read_cost_per_kib"),
            prune: f.take("prune").and_then(|v| {
                let span = v.span();
                self.flag(Some(v), "prune").map(|b| Spanned::new(span, b))
            }),
            lock: self.string(f.take("lock"), "lock", "\"on\" or \"off\""),
            mark_read: self.string(f.take("mark_read"), "mark_read", "\"shown\" or \"all\""),
            recipients: self.string(f.take("recipients"), "recipients", "\"team\" or \"any\""),
        };
        self.leftover(f, "[policy]", &policy_keys());
        doc
    }

    /// A closed set of words, each standing for a value.
    fn choice<T: Copy>(&mut self, v: Option<Value<'_>>, key: &str, words: &[(&str, T)]) -> Option<T> {
        let v = v?;
        let names: Vec<String> = words.iter().map(|(w, _)| format!("\"{w}\"")).collect();
        let want = names.join(" or ");
        match v.get_ref() {
            DeValue::String(s) => match words.iter().find(|(w, _)| w == s) {
                Some((_, t)) => Some(*t),
                None => {
                    let message = format!("`{key}` = {} is not one of its settings", self.shown(&v));
                    let allowed: Vec<&str> = words.iter().map(|(w, _)| *w).collect();
                    let help = format!("{}use {want}", guess(s, &allowed));
                    self.problem(v.span(), message).label("unknown setting").help(help);
                    None
                }
            },
            _ => {
                self.wrong(&v, key, &want);
                None
            }
        }
    }

    /// The switches are read by serde, so a defence added to the protocol is
    /// a key here at once; its values are checked first, so that every
    /// message names the switch.
    fn defences(&mut self, v: Value<'_>) -> Option<Defences> {
        let span = v.span();
        let f = self.table(v, "defences", "a table: write [policy.defences] and its switches below it")?;
        let mut ok = true;
        for (key, value) in f.map.iter() {
            if !matches!(value.get_ref(), DeValue::Boolean(_)) {
                self.wrong(value, key.get_ref(), "true or false");
                ok = false;
            }
        }
        if !ok {
            return None;
        }
        match Defences::deserialize(ValueDeserializer::from(Spanned::new(span.clone(), DeValue::Table(f.map)))) {
            Ok(d) => Some(d),
            Err(e) => {
                let message = format!("[policy.defences]: {}", e.message().trim().replace('\n', " "));
                // serde names the key it did not know in backquotes.
                let names = defence_names();
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                let typed = e.message().split('`').nth(1).unwrap_or("");
                let help = format!("{}the switches are {}, each true or false", guess(typed, &names), names.join(", "));
                self.problem(e.span().unwrap_or(span), message).label("not a defence").help(help);
                None
            }
        }
    }

    fn lead(&mut self, v: Value<'_>) -> LeadDoc {
        let Some(mut f) = self.table(v, "lead", "a table: write [lead] and its keys below it") else {
            return LeadDoc::default();
        };
        let doc = LeadDoc {
            on_plan: self.answers(f.take("on_plan"), "on_plan"),
            feedback: self.text(f.take("feedback"), "feedback").map(|s| s.into_inner()),
            approval_feedback: self.text(f.take("approval_feedback"), "approval_feedback").map(|s| s.into_inner()),
            ask_again_on_reject: self.small(
                f.take("ask_again_on_reject"),
                "ask_again_on_reject",
                MAX_ASK_AGAIN,
                Some("times the lead asks a teammate again"),
            ),
        };
        self.leftover(f, "[lead]", LEAD_KEYS);
        doc
    }

    fn teammate(&mut self, mut f: Fields<'_>) -> Option<S<TeammateDoc>> {
        let name = f.take("name");
        if name.is_none() {
            self.problem(f.span.clone(), "a [[teammate]] needs a `name`")
                .label("no `name`")
                .help("add one, like name = \"alice\"");
        }
        let name = self.text(name, "name");
        let work = match f.take("work") {
            None => Vec::new(),
            Some(v) => self.work(v),
        };
        let max_revisions = f.take("max_revisions");
        let count = f.take("count");
        let on_shutdown = f.take("on_shutdown");
        let on_plan = f.take("on_plan");
        let on_task = f.take("on_task");
        let task_steps = f.take("task_steps");
        let tasks = (
            self.answers(on_task, "on_task"),
            self.text(f.take("decline_reason"), "decline_reason").map(|s| s.into_inner()),
            self.small_from(task_steps, "task_steps", 1, MAX_TASK_STEPS, Some("steps of a task")),
        );
        let rest = (
            self.answers(on_shutdown, "on_shutdown"),
            self.text(f.take("reject_reason"), "reject_reason").map(|s| s.into_inner()),
            self.answers(on_plan, "on_plan"),
            self.flag(f.take("require_plan"), "require_plan").unwrap_or(false),
            self.text(f.take("plan"), "plan").map(|s| s.into_inner()),
            self.small(max_revisions, "max_revisions", MAX_REVISIONS, Some("revisions of a plan"))
                .map(|n| n.into_inner()),
            self.small_from(count, "count", 1, MAX_TEAMMATES, Some("teammates in a team")),
        );
        let span = f.span.clone();
        self.leftover(f, "[[teammate]]", TEAMMATE_KEYS);
        // A teammate without a usable name cannot be referred to; its other
        // problems were still reported above.
        let (on_shutdown, reject_reason, on_plan, require_plan, plan, max_revisions, count) = rest;
        let (on_task, decline_reason, task_steps) = tasks;
        let doc = TeammateDoc {
            name: name?,
            on_shutdown,
            reject_reason,
            on_plan,
            on_task,
            decline_reason,
            task_steps,
            require_plan,
            plan,
            work,
            max_revisions,
            count,
        };
        Some(Spanned::new(span, doc))
    }

    fn work(&mut self, v: Value<'_>) -> Vec<S<WorkDoc>> {
        const ITEM: &str = "a table like { write = \"src/a.rs\", steps = 4, step_time = \"500ms\" }";
        let span = v.span();
        let items = match v.into_inner() {
            DeValue::Array(items) => items,
            other => {
                self.wrong(&Spanned::new(span, other), "work", &format!("a list of work items, each {ITEM}"));
                return Vec::new();
            }
        };
        let mut out = Vec::new();
        for (i, item) in items.into_iter().enumerate() {
            if i == MAX_WORK_ITEMS {
                let message = format!("too many work items: a teammate may have at most {MAX_WORK_ITEMS}");
                let help = "give each item more `steps`, or split the work among more teammates";
                self.problem(item.span(), message).label(format!("item {}", i + 1)).help(help);
                break;
            }
            let before = self.problems.len();
            let Some(mut f) = self.table(item, "work", &format!("a list of work items, each {ITEM}")) else {
                continue;
            };
            let steps = f.take("steps");
            let step_time = f.take("step_time");
            let doc = WorkDoc {
                write: self.text(f.take("write"), "write").map(|s| s.into_inner()),
                edit: self.text(f.take("edit"), "edit").map(|s| s.into_inner()),
                shell: self.text(f.take("shell"), "shell").map(|s| s.into_inner()),
                read: self.text(f.take("read"), "read").map(|s| s.into_inner()),
                steps: self.small_from(steps, "steps", 1, MAX_ITEM_STEPS, Some("steps per work item")),
                step_time: self.duration(step_time, "step_time"),
            };
            let span = f.span.clone();
            self.leftover(f, "a work item", WORK_KEYS);
            if self.problems.len() == before {
                out.push(Spanned::new(span, doc));
            }
        }
        out
    }

    fn step(&mut self, n: usize, mut f: Fields<'_>) -> Option<S<StepDoc>> {
        let before = self.problems.len();
        let at = f.take("at");
        let action = f.take("do");
        for (key, missing) in [("at", at.is_none()), ("do", action.is_none())] {
            if missing {
                let like = if key == "at" { "at = \"1s\"" } else { "do = \"shutdown\"" };
                self.problem(f.span.clone(), format!("step #{n} needs `{key}`"))
                    .label(format!("no `{key}`"))
                    .help(format!("add it, like {like}"));
            }
        }
        let at = self.duration(at, "at");
        // The actions' names from the one list the builder takes them by.
        let actions = format!("an action in quotes: {}", step_actions().join(", "));
        let action = self.string(action, "do", &actions);
        let doc = (
            self.text(f.take("to"), "to"),
            self.text(f.take("from"), "from"),
            self.text(f.take("label"), "label"),
            self.text(f.take("reason"), "reason").map(|s| s.into_inner()),
            self.text(f.take("plan"), "plan").map(|s| s.into_inner()),
            self.text(f.take("text"), "text").map(|s| s.into_inner()),
            self.text(f.take("task"), "task").map(|s| s.into_inner()),
        );
        let answer = (
            self.text(f.take("type"), "type"),
            self.text(f.take("request"), "request"),
            self.text(f.take("request_id"), "request_id"),
            self.flag(f.take("approve"), "approve"),
        );
        let span = f.span.clone();
        self.leftover(f, &format!("step #{n}"), STEP_KEYS);
        let (to, from, label, reason, plan, text, task) = doc;
        if self.problems.len() > before {
            self.hidden_labels.extend(label.as_ref().map(|l| l.get_ref().clone()));
        }
        let (message_type, request, request_id, approve) = answer;
        let doc = StepDoc {
            n,
            at: at?,
            action: action?,
            to,
            from,
            label,
            reason,
            plan,
            task,
            text,
            message_type,
            request,
            request_id,
            approve,
        };
        self.whole_entry(before, span, doc)
    }

    fn fault(&mut self, n: usize, mut f: Fields<'_>) -> Option<S<FaultDoc>> {
        let before = self.problems.len();
        let kind = f.take("kind");
        if kind.is_none() {
            let message = format!("fault #{n} needs a `kind`");
            let help = format!("add kind = \"...\", one of {}", FAULT_KINDS.join(", "));
            self.problem(f.span.clone(), message).label("no `kind`").help(help);
        }
        let kind = self.string(kind, "kind", &format!("a kind in quotes: one of {}", FAULT_KINDS.join(", ")));
        let known = kind.as_ref().filter(|k| FAULT_KINDS.contains(&k.get_ref().as_str())).map(|k| k.get_ref().clone());
        if let Some(k) = kind.as_ref().filter(|_| known.is_none()) {
            let message = format!("fault #{n}: unknown kind {:?}", k.get_ref());
            let help = one_of(k.get_ref(), &FAULT_KINDS);
            self.problem(k.span(), message).label("unknown fault kind").help(help);
        }
        // Keys of another kind are named as such; keys of no kind are unknown.
        let mut stray_keys = false;
        if let Some(k) = &known {
            let takes = fault_keys(k);
            let stray: Vec<String> = f
                .map
                .keys()
                .map(|key| key.get_ref().to_string())
                .filter(|key| FAULT_KEYS.contains(&key.as_str()) && !takes.contains(&key.as_str()))
                .collect();
            for key in stray {
                if let Some((kspan, _)) = f.map.remove_entry(key.as_str()) {
                    let message = format!("fault #{n} ({k}): `{key}` does not apply to a {k} fault");
                    let help = format!("a {k} fault takes {}", takes.join(", "));
                    self.problem(kspan.span(), message).label("not for this kind").help(help);
                    stray_keys = true;
                }
            }
        }
        let count = f.take("count");
        let probability = f.take("probability");
        let mut message_fields = Vec::new();
        let message = f.take("message").and_then(|v| self.forged(v, &mut message_fields));
        let doc = FaultDoc {
            n,
            kind: kind.unwrap_or_else(|| Spanned::new(f.span.clone(), String::new())),
            stray_keys,
            at: self.duration(f.take("at"), "at"),
            until: self.duration(f.take("until"), "until"),
            agent: self.text(f.take("agent"), "agent"),
            from: self.text(f.take("from"), "from"),
            to: self.text(f.take("to"), "to"),
            types: self.strings(f.take("type"), "type", "a message type in quotes, or a list of them"),
            request: self.text(f.take("request"), "request"),
            delay: self.string(
                f.take("delay"),
                "delay",
                "a duration in quotes like \"5s\", or a range like \"1s..5s\"",
            ),
            // At least 1; a zero is read here and refused when the fault is
            // built, with a message of its own (it touches nothing).
            count: {
                let zero =
                    count.as_ref().is_some_and(|v| matches!(v.get_ref(), DeValue::Integer(i) if i.as_str() == "0"));
                self.small_from(count, "count", if zero { 0 } else { 1 }, u32::MAX as u64, None)
            },
            probability: self.number(probability, "probability"),
            restart: self.duration(f.take("restart"), "restart"),
            between: self.strings(f.take("between"), "between", "a list of two agents, like [\"lead\", \"alice\"]"),
            direction: self.text(f.take("direction"), "direction"),
            mode: self.text(f.take("mode"), "mode"),
            message,
            message_fields,
            text: self.text(f.take("text"), "text"),
        };
        let span = f.span.clone();
        self.leftover(f, &format!("fault #{n}"), FAULT_KEYS);
        self.whole_entry(before, span, doc)
    }

    /// A forged message is any TOML table; the protocol's own parser judges
    /// it once the fault is built. The values a message's fields take are
    /// checked here first, each at its own place.
    fn forged(&mut self, v: Value<'_>, fields: &mut Vec<(String, Range<usize>)>) -> Option<S<toml::Value>> {
        const LIKE: &str =
            "a table, like { type = \"shutdown_response\", request_id = \"@stop-alice\", approve = true }";
        let span = v.span();
        let DeValue::Table(table) = v.get_ref() else {
            self.wrong(&v, "message", LIKE);
            return None;
        };
        let before = self.problems.len();
        for (key, value) in table.iter() {
            fields.push((key.get_ref().to_string(), value.span()));
            self.forged_field(key.get_ref(), value);
        }
        if self.problems.len() > before {
            return None;
        }
        match toml::Value::deserialize(ValueDeserializer::from(v)) {
            Ok(value) => Some(Spanned::new(span, value)),
            Err(e) => {
                self.problem(span, format!("`message`: {}", e.message().trim().replace('\n', " ")))
                    .label("not a message")
                    .help(format!("write the message as the wire has it, {LIKE}"));
                None
            }
        }
    }

    /// One field of a forged message, as the wire takes it.
    fn forged_field(&mut self, key: &str, v: &Value<'_>) {
        let field = format!("message.{key}");
        // The protocols' own keys, as their specs name them.
        let is_answer = Kind::ALL.iter().any(|k| k.spec().answer_key == key);
        let is_words = Kind::ALL.iter().any(|k| k.spec().request_words.key == key || k.spec().answer_words == key);
        match (key, v.get_ref()) {
            (_, DeValue::Boolean(_)) if is_answer => {}
            ("deadline", DeValue::Integer(_)) => {}
            _ if is_answer => {
                self.wrong(v, &field, "a boolean, `true` or `false`")
                    .help(format!("write {key} = true or {key} = false, without quotes"));
            }
            ("deadline", _) => {
                self.wrong(v, &field, "a whole number of milliseconds").help("write deadline = 60000 for one minute");
            }
            ("type", DeValue::String(t)) if !crate::protocol::message::message_types().contains(&&**t) => {
                let message = format!("`{field}` = {} is not a message type", self.shown(v));
                let help = one_of(t, crate::protocol::message::message_types());
                self.problem(v.span(), message).label("unknown message type").help(help);
            }
            ("request_id", DeValue::String(id)) if !id.starts_with('@') && uuid::Uuid::parse_str(id).is_err() => {
                let message = format!("`{field}` = {} is not a request id", self.shown(v));
                self.problem(v.span(), message).label("neither a UUID nor @label").help(format!(
                    "to quote a request of this file, write its label after an `@`: request_id = \"@{id}\"; \
                     an id of no request here is a UUID, like \"{}\"",
                    uuid::Uuid::nil()
                ));
            }
            ("type" | "request_id" | "text", DeValue::String(_)) => {}
            (_, DeValue::String(_)) if is_words => {}
            _ if is_words || matches!(key, "type" | "request_id" | "text") => {
                let help = if key == "request_id" {
                    "quote it: a request's label after an `@`, like request_id = \"@stop-alice\", or a UUID"
                } else {
                    "put it in quotes"
                };
                self.wrong(v, &field, "text in quotes").help(help);
            }
            // Anything else is the protocol parser's to judge.
            _ => {}
        }
    }

    fn expect(&mut self, mut f: Fields<'_>) -> Option<S<ExpectDoc>> {
        let before = self.problems.len();
        let mut count = |r: &mut Self, key: &str| {
            let v = f.take(key);
            r.small(v, key, u32::MAX as u64, None).map(|n| n.into_inner())
        };
        let ignored = count(self, "ignored");
        let refused = count(self, "refused");
        let expired = count(self, "expired");
        let received_count = count(self, "count");
        let lines = count(self, "lines");
        let doc = ExpectDoc {
            request: self.text(f.take("request"), "request"),
            teammate: self.text(f.take("teammate"), "teammate"),
            status: self.text(f.take("status"), "status"),
            file: self.text(f.take("file"), "file"),
            state: self.text(f.take("state"), "state"),
            ignored,
            reason: self.text(f.take("reason"), "reason"),
            refused,
            rule: self.text(f.take("rule"), "rule"),
            expired,
            violation: self.text(f.take("violation"), "violation"),
            gate: self.text(f.take("gate"), "gate"),
            deadlock: self.strings(
                f.take("deadlock"),
                "deadlock",
                "a list of teammate names, like [\"alice\", \"bob\"]",
            ),
            broken: self.flag(f.take("broken"), "broken"),
            received: self.text(f.take("received"), "received"),
            by: self.text(f.take("by"), "by"),
            from: self.text(f.take("from"), "from"),
            count: received_count,
            inbox: self.text(f.take("inbox"), "inbox"),
            lines,
            of_type: self.text(f.take("type"), "type"),
        };
        let span = f.span.clone();
        self.leftover(f, "[[expect]]", EXPECT_KEYS);
        self.whole_entry(before, span, doc)
    }

    /// An entry in which a value could not be read is not checked further:
    /// its later checks would only echo the problem already reported (a
    /// `to = 1` is not also "missing `to`").
    fn whole_entry<T>(&self, before: usize, span: Range<usize>, doc: T) -> Option<S<T>> {
        (self.problems.len() == before).then(|| Spanned::new(span, doc))
    }
}

/// The defences' switches, as serde names them: a defence added to the
/// protocol is named here at once.
pub fn defence_names() -> Vec<String> {
    match serde_json::to_value(Defences::default()) {
        Ok(serde_json::Value::Object(map)) => map.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// What a TOML value is, in a file author's words.
fn kind_of(v: &DeValue<'_>) -> &'static str {
    match v {
        DeValue::String(_) => "text in quotes",
        DeValue::Integer(_) => "a whole number",
        DeValue::Float(_) => "a number with a fraction",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date",
        DeValue::Array(_) => "a list",
        DeValue::Table(_) => "a table",
    }
}

/// "did you mean `x`? " when a word is a near miss of an allowed one, or nothing.
pub(crate) fn guess(word: &str, allowed: &[&str]) -> String {
    closest(word, allowed).map(|g| format!("did you mean `{g}`? ")).unwrap_or_default()
}

/// The help for a word outside a closed set: a guess, then the set.
pub(crate) fn one_of(word: &str, allowed: &[&str]) -> String {
    match allowed {
        [a, b] => format!("{}use {a} or {b}", guess(word, allowed)),
        _ => format!("{}use one of {}", guess(word, allowed), allowed.join(", ")),
    }
}

/// The allowed key a mistyped one most likely meant: one edit away for a
/// short key, two for a longer one (a swap of two letters is one edit).
fn closest<'a>(key: &str, allowed: &[&'a str]) -> Option<&'a str> {
    let reach = if key.chars().count() <= 4 { 1 } else { 2 };
    allowed.iter().map(|a| (edits(key, a), *a)).filter(|(d, _)| *d <= reach).min_by_key(|(d, _)| *d).map(|(_, a)| a)
}

/// Edit distance with swaps of neighbours (optimal string alignment), for
/// short keys only.
fn edits(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    d[0] = (0..=b.len()).collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// A TOML basic string (for the programs that write scenario files: fuzz,
/// audit --to-scenario). Line breaks become spaces.
pub fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {
                let _ = std::fmt::Write::write_fmt(&mut out, format_args!("\\u{:04X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// What a `[[step]]` may `do`, as the file spells it.
/// The protocols' own (`shutdown`, `submit_plan`) come first, from their specs.
pub fn step_actions() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Kind::ALL.iter().map(|k| k.spec().step).collect();
    out.extend(["request_plan", "respawn", "answer", "message", "broadcast"]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_protocol_has_an_answers_key_named_after_it() {
        // `on_<protocol>` says how an agent answers it; the history's
        // scenario writer silences every protocol through these keys.
        for k in crate::protocol::Kind::ALL {
            let key = format!("on_{k}");
            assert!(TEAMMATE_KEYS.contains(&key.as_str()), "{key}");
            if !k.spec().asker.is_lead() {
                assert!(LEAD_KEYS.contains(&key.as_str()), "{key}");
            }
        }
    }

    #[test]
    fn guesses_a_key_two_edits_away_at_most() {
        assert_eq!(closest("on_shutdwon", TEAMMATE_KEYS), Some("on_shutdown"));
        assert_eq!(closest("nmae", TEAMMATE_KEYS), Some("name"));
        assert_eq!(closest("nope", TOP_KEYS), None, "two edits are too many for a short key");
        assert_eq!(closest("completely_else", TEAMMATE_KEYS), None);
    }

    /// toml gives its nesting limit no place; the line was the file's
    /// first, whatever line nested too deeply.
    #[test]
    fn a_line_nested_too_deeply_is_named_though_toml_gives_no_place() {
        let src = format!("name = \"x\"\nabout = \"y\"\n{} = 1\nseed = 2\n", vec!["a"; 50_000].join("."));
        let p = read(&src).expect_err("past toml's nesting limit");
        let line_three = src.match_indices('\n').nth(1).map(|(i, _)| i + 1).expect("three lines");
        assert_eq!(p.span, line_three..line_three, "{}", p.message);
        assert_eq!(p.label.as_deref(), Some("nested too deeply"));
        let arrays = format!("name = \"x\"\nx = {}{}\n", "[".repeat(5_000), "]".repeat(5_000));
        let p = read(&arrays).expect_err("past toml's nesting limit");
        assert!(p.span.start >= arrays.find('\n').expect("two lines"), "{:?}", p.span);
        assert_eq!(p.label.as_deref(), Some("nested too deeply"), "{}", p.message);
    }

    #[test]
    fn reads_what_it_can_and_names_every_problem() {
        let src = "name = 1\n[lead]\non_plan = \"maybe\"\nfeedback = \"no\"\n";
        let (doc, problems) = read(src).expect("TOML");
        assert_eq!(doc.lead.feedback.as_deref(), Some("no"));
        // The message and its help, as a reader is told them.
        let messages: Vec<String> =
            problems.iter().map(|p| format!("{}; {}", p.message, p.help.as_deref().unwrap_or(""))).collect();
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(messages[0].starts_with("`name` must be text"), "{messages:?}");
        assert!(messages[1].contains("approve, reject or ignore"), "{messages:?}");
    }
}
