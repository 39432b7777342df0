//! A scenario file's faults and steps as they are written: one typed entry
//! each, one writer. Whatever writes a `[[fault]]` or a `[[step]]` (fuzz's
//! additions, the history's `--to-scenario`, the explorer's counterexample
//! file) builds a [`Fault`] or a [`Step`] and lets it write itself, so every
//! key is spelled and quoted here, in one order, and each is one a fault of
//! its kind takes ([`FaultKind::keys`], tested).

use super::file::toml_string;
use crate::fault_kind::FaultKind;
use crate::protocol::Millis;
use std::fmt::Write as _;

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

    /// The keys it sets, in the order it writes them.
    fn lines(&self) -> Vec<(&'static str, String)> {
        let q = |s: &str| toml_string(s);
        let ms = |m: Millis| format!("\"{}ms\"", m.0);
        let mut out: Vec<(&'static str, String)> = vec![("kind", q(self.kind.name()))];
        let mut put = |key: &'static str, value: Option<String>| out.extend(value.map(|v| (key, v)));
        put("at", self.at.map(ms));
        put("until", self.until.map(ms));
        put("agent", self.agent.as_deref().map(q));
        put("from", self.from.as_deref().map(q));
        put("to", self.to.as_deref().map(q));
        put(
            "type",
            match self.types.as_slice() {
                [] => None,
                [one] => Some(q(one)),
                many => Some(format!("[{}]", many.iter().map(|t| q(t)).collect::<Vec<_>>().join(", "))),
            },
        );
        put("request", self.request.as_deref().map(q));
        put("count", self.count.map(|c| c.to_string()));
        put("probability", self.probability.map(|p| format!("{p:?}")));
        put("delay", self.delay.as_deref().map(q));
        put("restart", self.restart.map(ms));
        put("between", self.between.as_ref().map(|(a, b)| format!("[{}, {}]", q(a), q(b))));
        put("direction", self.one_way.then(|| q("one_way")));
        put("mode", self.drop.then(|| q("drop")));
        let message = self.message.iter().map(|(k, v)| format!("{k} = {v}")).collect::<Vec<_>>();
        put("message", (!message.is_empty()).then(|| format!("{{ {} }}", message.join(", "))));
        put("text", self.text.as_deref().map(q));
        out
    }

    /// The `[[fault]]` table, each key on its line.
    pub fn to_toml(&self) -> String {
        let mut out = String::from("[[fault]]\n");
        for (key, value) in self.lines() {
            let _ = writeln!(out, "{key} = {value}");
        }
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

    /// The `[[step]]` table, each key on its line.
    pub fn to_toml(&self) -> String {
        let q = |s: &str| toml_string(s);
        let mut out = format!("[[step]]\nat = \"{}ms\"\ndo = {}\n", self.at.0, q(&self.action));
        let mut put = |key: &str, value: Option<String>| {
            if let Some(v) = value {
                let _ = writeln!(out, "{key} = {v}");
            }
        };
        put("from", self.from.as_deref().map(q));
        put("to", self.to.as_deref().map(q));
        put("label", self.label.as_deref().map(q));
        put("type", self.message_type.as_deref().map(q));
        put("request", self.request.as_deref().map(q));
        put("request_id", self.request_id.as_deref().map(q));
        put("approve", self.approve.map(|a| a.to_string()));
        if let Some((key, words)) = &self.words {
            put(key, Some(q(words)));
        }
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
                .filter(|(k, _)| *k == "kind" || kind.keys().contains(k))
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
