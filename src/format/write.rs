//! A scenario file as it is written: the document the reader reads
//! ([`FileDoc`], in `file.rs`), written back whole by [`document`], one
//! section after another, each entry by one writer. What adds entries of its
//! own (fuzz's faults, the history's `--to-scenario`, the explorer's
//! counterexample file) builds a [`Fault`] or a [`Step`], which become the
//! reader's [`FaultDoc`] and [`StepDoc`] and are written by the same writer,
//! so every key is spelled and quoted here, in one order, and each is one a
//! fault of its kind takes ([`FaultKind::keys`], tested). Read, written and
//! read again, every bundled scenario runs as it did (tested).

use super::file::{toml_string, ExpectDoc, FaultDoc, FileDoc, LeadDoc, PolicyDoc, StepDoc, TeammateDoc, WorkDoc, S};
use crate::agent::Answer;
use crate::fault_kind::FaultKind;
use crate::protocol::{Defences, Kind, Millis};
use std::fmt::Write as _;
use toml::Spanned;

/// A value read from no file (a writer's own): it has no place to point at.
pub fn unplaced<T>(v: T) -> S<T> {
    Spanned::new(0..0, v)
}

/// A duration as the files this program writes spell it.
pub fn millis(m: Millis) -> String {
    format!("{}ms", m.0)
}

/// The lines of one table, each `key = value` with the value already TOML.
#[derive(Default)]
struct Lines(Vec<(String, String)>);

impl Lines {
    fn put(&mut self, key: impl Into<String>, value: Option<String>) {
        self.0.extend(value.map(|v| (key.into(), v)));
    }
    fn text(&mut self, key: &str, value: Option<&str>) {
        self.put(key, value.map(toml_string));
    }
    fn write(&self, out: &mut String, header: &str) {
        if self.0.is_empty() && header.starts_with("[") && !header.starts_with("[[") {
            return;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        if !header.is_empty() {
            let _ = writeln!(out, "{header}");
        }
        for (key, value) in &self.0 {
            let _ = writeln!(out, "{key} = {value}");
        }
    }
}

fn answers(list: &[Answer]) -> String {
    let one = |a: &Answer| {
        toml_string(match a {
            Answer::Approve => "approve",
            Answer::Reject => "reject",
            Answer::Ignore => "ignore",
        })
    };
    match list {
        [a] => one(a),
        many => format!("[{}]", many.iter().map(one).collect::<Vec<_>>().join(", ")),
    }
}

/// A text the file gave, quoted as TOML.
fn text(v: &Option<S<String>>) -> Option<String> {
    v.as_ref().map(|s| toml_string(s.get_ref()))
}

fn strings(list: &[String]) -> String {
    format!("[{}]", list.iter().map(|s| toml_string(s)).collect::<Vec<_>>().join(", "))
}

/// The whole file: the top level, `[policy]` (its defences those switched
/// from their default), `[lead]`, then every `[[teammate]]`, `[[step]]`,
/// `[[fault]]` and `[[expect]]` in the file's order.
pub fn document(doc: &FileDoc) -> String {
    let mut out = String::new();
    let mut top = Lines::default();
    top.text("name", doc.name.as_ref().map(|s| s.get_ref().as_str()));
    top.text("about", doc.about.as_ref().map(|s| s.get_ref().as_str()));
    top.put("seed", doc.seed.map(|n| n.to_string()));
    top.text("end", doc.end.as_ref().map(|s| s.get_ref().as_str()));
    top.text("cap", doc.cap.as_ref().map(|s| s.get_ref().as_str()));
    top.write(&mut out, "");
    policy_lines(&doc.policy).write(&mut out, "[policy]");
    defence_lines(doc.policy.defences.as_ref()).write(&mut out, "[policy.defences]");
    lead_lines(&doc.lead).write(&mut out, "[lead]");
    for t in &doc.teammates {
        teammate_lines(t.get_ref()).write(&mut out, "[[teammate]]");
    }
    for s in &doc.steps {
        step_lines(s.get_ref()).write(&mut out, "[[step]]");
    }
    for f in &doc.faults {
        fault_lines(f.get_ref()).write(&mut out, "[[fault]]");
    }
    for e in &doc.expects {
        expect_lines(e.get_ref()).write(&mut out, "[[expect]]");
    }
    out
}

fn policy_lines(p: &PolicyDoc) -> Lines {
    let mut l = Lines::default();
    for k in Kind::ALL {
        l.put(k.spec().timeout_key, text(&p.timeouts_by_kind[k.index()]));
    }
    for k in Kind::ALL {
        l.put(k.spec().expiry_key, p.on_expiry[k.index()].map(|d| toml_string(d.as_str())));
    }
    l.put("strict_hierarchy", p.strict_hierarchy.map(|b| b.to_string()));
    l.put("latency", text(&p.latency));
    l.put("timeouts", p.timeouts.map(|b| b.to_string()));
    l.put("deadlocks", text(&p.deadlocks));
    l.put("mailbox", text(&p.mailbox));
    l.put("lock", text(&p.lock));
    l.put("mark_read", text(&p.mark_read));
    l.put("recipients", text(&p.recipients));
    l.put("drain", text(&p.drain));
    l.put("inbox_poll", text(&p.inbox_poll));
    l.put("read_cost", text(&p.read_cost));
    l.put("read_cost_per_kib", text(&p.read_cost_per_kib));
    l.put("prune", p.prune.as_ref().map(|b| b.get_ref().to_string()));
    l
}

/// The switches that differ from their default, by their names in the file.
pub fn defences_switched(d: &Defences) -> Vec<(String, bool)> {
    let default = Defences::default().switches();
    d.switches().into_iter().filter(|switch| !default.contains(switch)).collect()
}

fn defence_lines(d: Option<&Defences>) -> Lines {
    let mut l = Lines::default();
    for (key, on) in d.map(defences_switched).unwrap_or_default() {
        l.put(key, Some(on.to_string()));
    }
    l
}

fn lead_lines(lead: &LeadDoc) -> Lines {
    let mut l = Lines::default();
    l.put("on_plan", lead.on_plan.as_ref().map(|a| answers(a.get_ref())));
    l.text("feedback", lead.feedback.as_deref());
    l.text("approval_feedback", lead.approval_feedback.as_deref());
    l.put("ask_again_on_reject", lead.ask_again_on_reject.as_ref().map(|n| n.get_ref().to_string()));
    l
}

fn teammate_lines(t: &TeammateDoc) -> Lines {
    let mut l = Lines::default();
    l.text("name", Some(t.name.get_ref()));
    l.put("count", t.count.as_ref().map(|n| n.get_ref().to_string()));
    l.put("on_shutdown", t.on_shutdown.as_ref().map(|a| answers(a.get_ref())));
    l.text("reject_reason", t.reject_reason.as_deref());
    l.put("require_plan", t.require_plan.then(|| "true".to_string()));
    l.text("plan", t.plan.as_deref());
    l.put("on_plan", t.on_plan.as_ref().map(|a| answers(a.get_ref())));
    l.put("max_revisions", t.max_revisions.map(|n| n.to_string()));
    l.put("on_task", t.on_task.as_ref().map(|a| answers(a.get_ref())));
    l.text("decline_reason", t.decline_reason.as_deref());
    l.put("task_steps", t.task_steps.as_ref().map(|n| n.get_ref().to_string()));
    if !t.work.is_empty() {
        let items: Vec<String> = t.work.iter().map(|w| work_item(w.get_ref())).collect();
        l.put("work", Some(format!("[{}]", items.join(", "))));
    }
    l
}

/// A work item, inline: `{ write = "src/a.rs", steps = 4, step_time = "500ms" }`.
pub fn work_item(w: &WorkDoc) -> String {
    let mut l = Lines::default();
    l.text("write", w.write.as_deref());
    l.text("edit", w.edit.as_deref());
    l.text("shell", w.shell.as_deref());
    l.text("read", w.read.as_deref());
    l.put("steps", w.steps.as_ref().map(|n| n.get_ref().to_string()));
    l.text("step_time", w.step_time.as_ref().map(|s| s.get_ref().as_str()));
    let pairs: Vec<String> = l.0.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!("{{ {} }}", pairs.join(", "))
}

fn step_lines(s: &StepDoc) -> Lines {
    let mut l = Lines::default();
    l.text("at", Some(s.at.get_ref()));
    l.text("do", Some(s.action.get_ref()));
    l.put("from", text(&s.from));
    l.put("to", text(&s.to));
    l.put("label", text(&s.label));
    l.put("type", text(&s.message_type));
    l.put("request", text(&s.request));
    l.put("request_id", text(&s.request_id));
    l.put("approve", s.approve.map(|b| b.to_string()));
    // What it says last: an answer reads as what it answers, then why.
    l.text("reason", s.reason.as_deref());
    l.text("plan", s.plan.as_deref());
    l.text("task", s.task.as_deref());
    l.text("text", s.text.as_deref());
    l
}

fn fault_lines(f: &FaultDoc) -> Lines {
    let mut l = Lines::default();
    l.text("kind", Some(f.kind.get_ref()));
    l.put("at", text(&f.at));
    l.put("until", text(&f.until));
    l.put("agent", text(&f.agent));
    l.put("from", text(&f.from));
    l.put("to", text(&f.to));
    l.put(
        "type",
        f.types.as_ref().map(|t| match t.get_ref().as_slice() {
            [one] => toml_string(one),
            many => strings(many),
        }),
    );
    l.put("request", text(&f.request));
    l.put("count", f.count.as_ref().map(|n| n.get_ref().to_string()));
    l.put("probability", f.probability.as_ref().map(|p| format!("{:?}", p.get_ref())));
    l.put("delay", text(&f.delay));
    l.put("restart", text(&f.restart));
    l.put("between", f.between.as_ref().map(|b| strings(b.get_ref())));
    l.put("direction", text(&f.direction));
    l.put("mode", text(&f.mode));
    l.put("message", f.message.as_ref().map(|m| m.get_ref().to_string()));
    l.put("text", text(&f.text));
    l
}

fn expect_lines(e: &ExpectDoc) -> Lines {
    let mut l = Lines::default();
    let number = |n: Option<u32>| n.map(|n| n.to_string());
    l.put("request", text(&e.request));
    l.put("teammate", text(&e.teammate));
    l.put("status", text(&e.status));
    l.put("file", text(&e.file));
    l.put("state", text(&e.state));
    l.put("ignored", number(e.ignored));
    l.put("reason", text(&e.reason));
    l.put("refused", number(e.refused));
    l.put("rule", text(&e.rule));
    l.put("expired", number(e.expired));
    l.put("violation", text(&e.violation));
    l.put("gate", text(&e.gate));
    l.put("deadlock", e.deadlock.as_ref().map(|d| strings(d.get_ref())));
    l.put("broken", e.broken.map(|b| b.to_string()));
    l.put("received", text(&e.received));
    l.put("by", text(&e.by));
    l.put("from", text(&e.from));
    l.put("count", number(e.count));
    l.put("inbox", text(&e.inbox));
    l.put("lines", number(e.lines));
    l.put("type", text(&e.of_type));
    l
}

/// One `[[fault]]`: its kind and the keys it sets, each optional.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    pub kind: FaultKind,
    pub at: Option<Millis>,
    pub until: Option<Millis>,
    pub agent: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    /// `type`: the message types it touches (one is written as a string).
    pub types: Vec<String>,
    /// Only the messages of this labelled request.
    pub request: Option<String>,
    pub count: Option<u32>,
    pub probability: Option<f64>,
    /// A duration, or a range of them, as a file writes it (`"5ms"`, `"1s..5s"`).
    pub delay: Option<String>,
    pub restart: Option<Millis>,
    /// A partition's two sides.
    pub between: Option<(String, String)>,
    /// A partition's `direction = "one_way"` (else both ways).
    pub one_way: bool,
    /// A partition's `mode = "drop"` (else it holds).
    pub drop: bool,
    /// A forged message: its keys and their values as TOML, written inline.
    pub message: Vec<(String, String)>,
    /// A junk line's text.
    pub text: Option<String>,
}

impl Fault {
    pub fn new(kind: FaultKind) -> Fault {
        Fault {
            kind,
            at: None,
            until: None,
            agent: None,
            from: None,
            to: None,
            types: Vec::new(),
            request: None,
            count: None,
            probability: None,
            delay: None,
            restart: None,
            between: None,
            one_way: false,
            drop: false,
            message: Vec::new(),
            text: None,
        }
    }

    /// The entry as the file reader holds it, to be written by its writer.
    pub fn doc(&self) -> FaultDoc {
        let text = |v: &Option<String>| v.clone().map(unplaced);
        FaultDoc {
            n: 0,
            kind: unplaced(self.kind.name().to_string()),
            stray_keys: false,
            at: self.at.map(|m| unplaced(millis(m))),
            until: self.until.map(|m| unplaced(millis(m))),
            agent: text(&self.agent),
            from: text(&self.from),
            to: text(&self.to),
            types: (!self.types.is_empty()).then(|| unplaced(self.types.clone())),
            request: text(&self.request),
            delay: text(&self.delay),
            count: self.count.map(unplaced),
            probability: self.probability.map(unplaced),
            restart: self.restart.map(|m| unplaced(millis(m))),
            between: self.between.as_ref().map(|(a, b)| unplaced(vec![a.clone(), b.clone()])),
            direction: self.one_way.then(|| unplaced("one_way".to_string())),
            mode: self.drop.then(|| unplaced("drop".to_string())),
            message: self.message_value().map(unplaced),
            message_fields: Vec::new(),
            text: text(&self.text),
        }
    }

    /// The forged message's keys and values (each already TOML) as one
    /// inline table.
    fn message_value(&self) -> Option<toml::Value> {
        if self.message.is_empty() {
            return None;
        }
        let pairs: Vec<String> = self.message.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        let parsed = format!("m = {{ {} }}", pairs.join(", ")).parse::<toml::Table>();
        debug_assert!(parsed.is_ok(), "a forged message written as {pairs:?}");
        parsed.ok().and_then(|mut t| t.remove("m"))
    }

    /// The keys it sets, in the order it writes them.
    #[cfg(test)]
    fn lines(&self) -> Vec<(String, String)> {
        fault_lines(&self.doc()).0
    }

    /// The `[[fault]]` table, each key on its line.
    pub fn to_toml(&self) -> String {
        let mut out = String::new();
        fault_lines(&self.doc()).write(&mut out, "[[fault]]");
        out
    }
}

/// One `[[step]]`: when, what the team does (`do`), and the keys that action takes.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub at: Millis,
    /// `do`: `shutdown`, `answer`, `message`, ...
    pub action: String,
    pub from: Option<String>,
    pub to: Option<String>,
    pub label: Option<String>,
    /// An answer's message type.
    pub message_type: Option<String>,
    /// An answer's request, by label.
    pub request: Option<String>,
    /// An answer's request, by an id no request of the file has.
    pub request_id: Option<String>,
    pub approve: Option<bool>,
    /// The words it says, under the key its protocol gives them (`reason`,
    /// `plan`, `task`, `text`).
    pub words: Option<(&'static str, String)>,
}

impl Step {
    pub fn new(at: Millis, action: &str) -> Step {
        Step {
            at,
            action: action.to_string(),
            from: None,
            to: None,
            label: None,
            message_type: None,
            request: None,
            request_id: None,
            approve: None,
            words: None,
        }
    }

    /// The entry as the file reader holds it, to be written by its writer.
    pub fn doc(&self) -> StepDoc {
        let text = |v: &Option<String>| v.clone().map(unplaced);
        let words = |key: &str| self.words.as_ref().filter(|(k, _)| *k == key).map(|(_, w)| w.clone());
        StepDoc {
            n: 0,
            at: unplaced(millis(self.at)),
            action: unplaced(self.action.clone()),
            to: text(&self.to),
            from: text(&self.from),
            label: text(&self.label),
            reason: words("reason"),
            plan: words("plan"),
            task: words("task"),
            text: words("text"),
            message_type: text(&self.message_type),
            request: text(&self.request),
            request_id: text(&self.request_id),
            approve: self.approve,
        }
    }

    /// The `[[step]]` table, each key on its line.
    pub fn to_toml(&self) -> String {
        let mut out = String::new();
        step_lines(&self.doc()).write(&mut out, "[[step]]");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key a fault may be written with is one its kind takes, and the
    /// file reader reads what is written back.
    #[test]
    fn a_written_fault_sets_only_keys_its_kind_takes_and_reads_back() {
        for &kind in FaultKind::ALL {
            let mut f = Fault::new(kind);
            f.at = Some(Millis(1000));
            f.until = Some(Millis(2000));
            f.agent = Some("alice".into());
            f.from = Some("lead".into());
            f.to = Some("alice".into());
            f.types = vec!["message".into(), "shutdown_request".into()];
            f.request = Some("stop-alice".into());
            f.count = Some(2);
            f.probability = Some(0.5);
            f.delay = Some("5ms..50ms".into());
            f.restart = Some(Millis(500));
            f.between = Some(("lead".into(), "alice".into()));
            f.one_way = true;
            f.drop = true;
            f.message = vec![("type".into(), "\"message\"".into()), ("text".into(), "\"hi\"".into())];
            f.text = Some("junk".into());
            // Every key its kind takes, a Fault can write.
            let lines = f.lines();
            for key in kind.keys() {
                assert!(lines.iter().any(|(k, _)| k == key), "{kind} takes {key}, which a Fault cannot write");
            }
            // Written as the reader reads them: a table of the keys its kind
            // takes reads without a problem.
            let table: String = lines
                .iter()
                .filter(|(k, _)| *k == "kind" || kind.keys().contains(&k.as_str()))
                .map(|(k, v)| format!("{k} = {v}\n"))
                .collect();
            let text = format!("name = \"x\"\n[[teammate]]\nname = \"alice\"\n[[fault]]\n{table}");
            let (_, problems) = crate::format::file::read(&text).unwrap_or_else(|p| panic!("{kind}: {p:?}\n{text}"));
            assert!(problems.is_empty(), "{kind}: {problems:?}\n{text}");
        }
        let mut drop = Fault::new(FaultKind::Drop);
        drop.types = vec!["message".into()];
        drop.count = Some(1);
        assert_eq!(drop.to_toml(), "[[fault]]\nkind = \"drop\"\ntype = \"message\"\ncount = 1\n");
        let text = format!("name = \"x\"\n[[teammate]]\nname = \"alice\"\n{}", drop.to_toml());
        assert!(crate::format::load_str("x.toml", &text).is_ok(), "{text}");
    }

    /// A step writes what a file writes, and the file loads.
    #[test]
    fn a_written_step_reads_back() {
        let mut ask = Step::new(Millis(1000), "shutdown");
        ask.to = Some("alice".into());
        ask.label = Some("stop-alice".into());
        ask.words = Some(("reason", "done \"now\"".into()));
        let mut answer = Step::new(Millis(2000), "answer");
        answer.from = Some("alice".into());
        answer.to = Some("lead".into());
        answer.message_type = Some("shutdown_response".into());
        answer.request = Some("stop-alice".into());
        answer.approve = Some(true);
        assert_eq!(
            ask.to_toml(),
            "[[step]]\nat = \"1000ms\"\ndo = \"shutdown\"\nto = \"alice\"\nlabel = \"stop-alice\"\nreason = \"done \\\"now\\\"\"\n"
        );
        let text = format!("name = \"x\"\n[[teammate]]\nname = \"alice\"\n{}{}", ask.to_toml(), answer.to_toml());
        let s = crate::format::load_str("x.toml", &text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
        assert_eq!(s.team.steps.len(), 2, "{text}");
    }
}
