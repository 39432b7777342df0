//! What one Claude Code message says: the `text` of an inbox entry, or the
//! body of a `<teammate-message>` in a transcript, read as one of the shapes
//! the runtime writes (docs/claude-code.md lists each with its evidence).
//!
//! A protocol message is a JSON object serialised into the text, told apart
//! by `type`; anything that is not JSON is a plain message. JSON this reader
//! does not know is not guessed at: it is `Said::Unknown`, with the reason,
//! and the history that holds it is never given a bare pass.

use crate::protocol::Kind;
use serde_json::{Map, Value};

/// What a message says, as far as this reader can tell.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Said {
    /// Prose: no protocol state moves.
    Plain,
    /// A protocol request: its id as written and the words it carries.
    Request { kind: Kind, id: Option<String>, words: Option<String> },
    /// An answer to the request written `id`.
    Answer { kind: Kind, id: Option<String>, yes: bool, words: Option<String> },
    /// One of the runtime's own notices.
    Notice(Notice),
    /// JSON this reader cannot interpret, and why.
    Unknown { reason: String },
    /// A send the runtime refused (a transcript shows the call and its
    /// error): not made, but news, as any defence that fired is.
    Refused { what: Box<Said>, why: String },
}

/// The runtime's notices that are not a protocol's messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Notice {
    /// `idle_notification`: the sender finished its turn.
    Idle,
    /// `teammate_terminated`: the runtime says a teammate has ended (its
    /// `message` names it, as "alice has shut down.").
    Terminated { who: String },
    /// `task_assignment`: a task's owner set to the receiver (no answer is
    /// asked for: the runtime assigns, nobody accepts).
    TaskAssigned { task: String },
    /// Permissions and modes: the runtime's, not a coordination protocol's.
    Other(&'static str),
}

/// Which of a protocol's messages a written `type` is.
#[derive(Clone, Copy, Debug)]
enum Is {
    Request(Kind),
    /// An answer whose yes or no the type itself says.
    Answer(Kind, bool),
    /// An answer that says yes or no in one of these fields.
    AnswerIn(Kind, &'static [&'static str]),
    /// A notice, or why its fields cannot be read.
    Notice(fn(&Map<String, Value>) -> Result<Notice, String>),
    /// A notice of the runtime's own (permissions, modes), named by its type.
    Other,
}

/// One shape the runtime writes: its `type`, what it is, and where its id
/// and words are. The keys are the ones written to inboxes (camelCase) and,
/// after them, the ones the SendMessage tool takes (snake_case), which the
/// lead's transcript records.
struct Shape {
    written: &'static str,
    is: Is,
    id: &'static [&'static str],
    words: &'static [&'static str],
}

const ID: &[&str] = &["requestId", "request_id"];

const SHAPES: &[Shape] = &[
    Shape { written: "shutdown_request", is: Is::Request(Kind::Shutdown), id: ID, words: &["reason", "content"] },
    Shape { written: "shutdown_approved", is: Is::Answer(Kind::Shutdown, true), id: ID, words: &["reason"] },
    Shape { written: "shutdown_rejected", is: Is::Answer(Kind::Shutdown, false), id: ID, words: &["reason"] },
    // The SendMessage tool's input, and another runtime's inbox frame.
    Shape {
        written: "shutdown_response",
        is: Is::AnswerIn(Kind::Shutdown, &["approve", "approved"]),
        id: ID,
        words: &["reason", "content"],
    },
    Shape {
        written: "plan_approval_request",
        is: Is::Request(Kind::Plan),
        id: ID,
        words: &["planContent", "plan", "planFilePath"],
    },
    Shape {
        written: "plan_approval_response",
        is: Is::AnswerIn(Kind::Plan, &["approved", "approve"]),
        id: ID,
        words: &["feedback", "content"],
    },
    Shape { written: "idle_notification", is: Is::Notice(|_| Ok(Notice::Idle)), id: &[], words: &[] },
    Shape { written: "teammate_terminated", is: Is::Notice(terminated), id: &[], words: &[] },
    Shape { written: "task_assignment", is: Is::Notice(task_assigned), id: &[], words: &[] },
    Shape { written: "permission_request", is: Is::Other, id: &[], words: &[] },
    Shape { written: "permission_response", is: Is::Other, id: &[], words: &[] },
    Shape { written: "sandbox_permission_request", is: Is::Other, id: &[], words: &[] },
    Shape { written: "sandbox_permission_response", is: Is::Other, id: &[], words: &[] },
    Shape { written: "team_permission_update", is: Is::Other, id: &[], words: &[] },
    Shape { written: "mode_set_request", is: Is::Other, id: &[], words: &[] },
];

/// Every `type` this reader knows, for the docs and for a message naming
/// what it looked for.
pub fn known_types() -> impl Iterator<Item = &'static str> {
    SHAPES.iter().map(|s| s.written)
}

/// The words the runtime writes after the teammate's name.
const SHUT_DOWN: &str = " has shut down.";

fn terminated(m: &Map<String, Value>) -> Result<Notice, String> {
    // "alice has shut down.": the teammate's name, and nothing else before
    // the words; any other message would name someone by guess.
    let who = m
        .get("message")
        .and_then(Value::as_str)
        .and_then(|t| t.trim().strip_suffix(SHUT_DOWN))
        .filter(|name| !name.is_empty() && !name.contains(char::is_whitespace));
    match who {
        Some(name) => Ok(Notice::Terminated { who: name.to_string() }),
        None => Err(format!(
            "a teammate_terminated whose \"message\" does not name the teammate as \"NAME{SHUT_DOWN}\": who ended is unknown"
        )),
    }
}

fn task_assigned(m: &Map<String, Value>) -> Result<Notice, String> {
    match ["subject", "taskId"].iter().find_map(|k| text_of(m.get(*k))) {
        Some(task) => Ok(Notice::TaskAssigned { task }),
        None => Err("a task_assignment that names no task (no \"subject\" or \"taskId\")".into()),
    }
}

/// A string, or a number written as one (`taskId: 3`).
fn text_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The character a JSON object opens with (written by its code point, which
/// keeps this file's braces paired for tools that count them).
const OBJECT_OPENS: char = '\u{7b}';

/// The leading JSON object of `text`, if it starts with one: a delivered
/// body may be the JSON followed by prose the runtime appends.
pub fn leading_object(text: &str) -> Option<Map<String, Value>> {
    leading_object_and_rest(text).map(|(m, _)| m)
}

/// [`leading_object`], and what follows it, white space trimmed.
fn leading_object_and_rest(text: &str) -> Option<(Map<String, Value>, &str)> {
    let trimmed = text.trim_start();
    if !trimmed.starts_with(OBJECT_OPENS) {
        return None;
    }
    let mut values = serde_json::Deserializer::from_str(trimmed).into_iter::<Value>();
    match values.next() {
        Some(Ok(Value::Object(m))) => Some((m, trimmed[values.byte_offset()..].trim())),
        _ => None,
    }
}

/// What `text` says.
pub fn read(text: &str) -> Said {
    read_named(text).0
}

/// A digest of a message's text as written. `DefaultHasher::new` has fixed
/// keys: the same text gives the same digest in every run.
pub fn digest(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// What `text` says, and the `type` it was written as, if it is a shape
/// this reader knows (the generation a history comes from is told by them).
pub fn read_named(text: &str) -> (Said, Option<&'static str>) {
    let (said, shape, _) = read_with_rest(text);
    (said, shape)
}

/// [`read_named`], and the text after its JSON object when anything but
/// white space follows it (the object is parsed once).
pub fn read_with_rest(text: &str) -> (Said, Option<&'static str>, Option<&str>) {
    match leading_object_and_rest(text) {
        Some((m, rest)) => {
            let (said, shape) = read_object_named(&m);
            (said, shape, Some(rest).filter(|r| !r.is_empty()))
        }
        None => (not_an_object(text).map_or(Said::Plain, |reason| Said::Unknown { reason: reason.into() }), None, None),
    }
}

/// Why `text`, which holds no leading JSON object, is not prose either:
/// it starts as an object and does not parse (cut short, say), or it is
/// JSON of another kind (an array, or a string holding an object: the
/// message encoded twice). A message in a shape half-known is not prose.
fn not_an_object(text: &str) -> Option<&'static str> {
    let t = text.trim();
    if t.starts_with(OBJECT_OPENS) {
        return Some("the text starts as a JSON object but does not parse");
    }
    match serde_json::from_str::<Value>(t) {
        Ok(Value::Array(_)) => Some("the text is a JSON array, not a message this reader knows"),
        Ok(Value::String(inner)) if inner.trim_start().starts_with(OBJECT_OPENS) => {
            Some("the text is a JSON string holding JSON (the message encoded twice)")
        }
        _ => None,
    }
}

/// What a message already parsed as a JSON object says.
pub fn read_object(m: &Map<String, Value>) -> Said {
    read_object_named(m).0
}

fn read_object_named(m: &Map<String, Value>) -> (Said, Option<&'static str>) {
    let Some(written) = m.get("type").and_then(Value::as_str) else {
        return (
            Said::Unknown { reason: "a JSON object with no \"type\": not a message this reader knows".into() },
            None,
        );
    };
    let Some(shape) = SHAPES.iter().find(|s| s.written == written) else {
        return (Said::Unknown { reason: format!("type {written:?} is not one this reader knows") }, None);
    };
    (said_as(shape, m), Some(shape.written))
}

fn said_as(shape: &Shape, m: &Map<String, Value>) -> Said {
    let written = shape.written;
    let id = shape.id.iter().find_map(|k| text_of(m.get(*k)));
    let words = shape.words.iter().find_map(|k| text_of(m.get(*k)));
    // An answer is applied by its id alone: one whose id cannot be read
    // answers nothing anyone can name. (A request may come without one: the
    // lead's call learns it from the call's result.)
    let no_id = || Said::Unknown {
        reason: format!(
            "a {written} with no readable request id ({}): what it answers is unknown",
            shape.id.join(" or ")
        ),
    };
    match shape.is {
        Is::Request(kind) => Said::Request { kind, id, words },
        Is::Answer(..) | Is::AnswerIn(..) if id.is_none() => no_id(),
        Is::Answer(kind, yes) => Said::Answer { kind, id, yes, words },
        Is::AnswerIn(kind, keys) => match keys.iter().find_map(|k| yes_of(m.get(*k))) {
            Some(yes) => Said::Answer { kind, id, yes, words },
            None => {
                Said::Unknown { reason: format!("a {written} that says neither yes nor no ({})", keys.join(" or ")) }
            }
        },
        Is::Notice(make) => make(m).map_or_else(|reason| Said::Unknown { reason }, Said::Notice),
        Is::Other => Said::Notice(Notice::Other(shape.written)),
    }
}

/// A yes or no: a boolean, or the strings "true" / "false" (the tool takes
/// both).
fn yes_of(v: Option<&Value>) -> Option<bool> {
    match v? {
        Value::Bool(b) => Some(*b),
        Value::String(s) if s == "true" => Some(true),
        Value::String(s) if s == "false" => Some(false),
        _ => None,
    }
}

/// The text the runtime writes for `said`, sent by `from` at `timestamp`
/// (ISO 8601): the first shape of the reader's table that reads back as
/// `said`, so what is written and what is read are declared once. `None`
/// where the runtime has no shape for it: prose is its own text, and the
/// task protocol, a refusal or an unknown have none.
pub fn write(said: &Said, from: &str, timestamp: &str) -> Option<String> {
    let shape = SHAPES.iter().find(|s| writes(s, said))?;
    let mut m = Entries(Vec::with_capacity(5));
    m.insert("type", Value::from(shape.written));
    let mut put = |keys: &[&'static str], v: Option<Value>| {
        if let (Some(key), Some(v)) = (keys.first(), v) {
            m.insert(key, v);
        }
    };
    match said {
        Said::Request { id, words, .. } => {
            put(shape.id, id.clone().map(Value::from));
            put(&["from"], Some(Value::from(from)));
            put(shape.words, words.clone().map(Value::from));
        }
        Said::Answer { id, yes, words, .. } => {
            put(shape.id, id.clone().map(Value::from));
            put(&["from"], Some(Value::from(from)));
            if let Is::AnswerIn(_, keys) = shape.is {
                put(keys, Some(Value::from(*yes)));
            }
            put(shape.words, words.clone().map(Value::from));
        }
        Said::Notice(Notice::Terminated { who }) => {
            put(&["message"], Some(Value::from(format!("{who}{SHUT_DOWN}"))));
        }
        Said::Notice(_) => put(&["from"], Some(Value::from(from))),
        Said::Plain | Said::Unknown { .. } | Said::Refused { .. } => return None,
    }
    m.insert("timestamp", Value::from(timestamp));
    serde_json::to_string(&m).ok()
}

/// An entry's keys and values in the order first written, a key written
/// again keeping its place: what a `serde_json` object with
/// `preserve_order` holds and prints, without hashing each key into a map
/// for an object of five keys written once.
struct Entries(Vec<(&'static str, Value)>);

impl Entries {
    fn insert(&mut self, key: &'static str, v: Value) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = v,
            None => self.0.push((key, v)),
        }
    }
}

impl serde::Serialize for Entries {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// Whether `shape` is one the runtime writes for `said`.
fn writes(shape: &Shape, said: &Said) -> bool {
    match (shape.is, said) {
        (Is::Request(k), Said::Request { kind, .. }) => k == *kind,
        (Is::Answer(k, y), Said::Answer { kind, yes, .. }) => k == *kind && y == *yes,
        (Is::AnswerIn(k, _), Said::Answer { kind, .. }) => k == *kind,
        (Is::Notice(_), Said::Notice(Notice::Idle)) => shape.written == "idle_notification",
        (Is::Notice(_), Said::Notice(Notice::Terminated { .. })) => shape.written == "teammate_terminated",
        _ => false,
    }
}

/// Whom a request id says it is for: the name after the last `@` of
/// `shutdown-1775755623068@alice`, if there is one.
pub fn id_target(id: &str) -> Option<&str> {
    id.rsplit_once('@').map(|(_, name)| name).filter(|n| !n.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_reads_back_as_it_was_said() {
        let id = || Some("shutdown-1775755623068@alice".to_string());
        let words = || Some("done".to_string());
        let said = [
            Said::Request { kind: Kind::Shutdown, id: id(), words: words() },
            Said::Answer { kind: Kind::Shutdown, id: id(), yes: true, words: None },
            Said::Answer { kind: Kind::Shutdown, id: id(), yes: false, words: words() },
            Said::Request { kind: Kind::Plan, id: id(), words: words() },
            Said::Answer { kind: Kind::Plan, id: id(), yes: true, words: None },
            Said::Answer { kind: Kind::Plan, id: id(), yes: false, words: words() },
            Said::Notice(Notice::Idle),
            Said::Notice(Notice::Terminated { who: "alice".into() }),
        ];
        for s in said {
            let text = write(&s, "team-lead", "2026-04-09T17:27:03.068Z").unwrap_or_else(|| panic!("{s:?}"));
            assert_eq!(read(&text), s, "{text}");
        }
        // The production shapes, as issue 40's evidence has them.
        let approved = write(&Said::Answer { kind: Kind::Shutdown, id: id(), yes: true, words: None }, "alice", "t");
        let approved: Value = serde_json::from_str(&approved.unwrap()).unwrap();
        assert_eq!(approved["type"], "shutdown_approved");
        assert_eq!(approved["requestId"], "shutdown-1775755623068@alice");
        let plan = write(&Said::Answer { kind: Kind::Plan, id: id(), yes: false, words: words() }, "team-lead", "t");
        let plan: Value = serde_json::from_str(&plan.unwrap()).unwrap();
        assert_eq!((plan["type"].as_str(), plan["approved"].as_bool()), (Some("plan_approval_response"), Some(false)));
        // What the runtime has no shape for is not made up.
        assert_eq!(write(&Said::Request { kind: Kind::Task, id: id(), words: None }, "team-lead", "t"), None);
        assert_eq!(write(&Said::Plain, "team-lead", "t"), None);
    }

    #[test]
    fn each_generation_of_a_shutdown_reads_as_the_same_protocol_message() {
        let request = r#"{"type":"shutdown_request","requestId":"shutdown-1775755623068@alice","from":"team-lead","reason":"done","timestamp":"2026-04-09T17:27:03.068Z"}"#;
        assert_eq!(
            read(request),
            Said::Request {
                kind: Kind::Shutdown,
                id: Some("shutdown-1775755623068@alice".into()),
                words: Some("done".into())
            }
        );
        let approved = r#"{"type":"shutdown_approved","requestId":"shutdown-1@alice","from":"alice","timestamp":"x","paneId":"%3","backendType":"tmux"}"#;
        assert!(matches!(read(approved), Said::Answer { kind: Kind::Shutdown, yes: true, .. }));
        let rejected = r#"{"type":"shutdown_rejected","requestId":"shutdown-1@alice","from":"alice","reason":"busy"}"#;
        assert_eq!(
            read(rejected),
            Said::Answer {
                kind: Kind::Shutdown,
                id: Some("shutdown-1@alice".into()),
                yes: false,
                words: Some("busy".into())
            }
        );
        let response = r#"{"type":"shutdown_response","request_id":"shutdown-2","approve":"true"}"#;
        assert!(matches!(read(response), Said::Answer { kind: Kind::Shutdown, yes: true, .. }));
        let plan = r#"{"type":"plan_approval_response","requestId":"p-1","approved":false,"feedback":"add tests"}"#;
        assert!(matches!(read(plan), Said::Answer { kind: Kind::Plan, yes: false, words: Some(_), .. }));
    }

    #[test]
    fn prose_is_plain_and_json_it_does_not_know_is_unknown_with_the_reason() {
        assert_eq!(read("Parser done, see PR 12"), Said::Plain);
        assert!(
            matches!(read(r#"{"type":"join_request","requestId":"x"}"#), Said::Unknown { reason } if reason.contains("\"join_request\" is not one"))
        );
        assert!(matches!(read(r#"{"hello":1}"#), Said::Unknown { reason } if reason.contains("no \"type\"")));
        assert!(
            matches!(read(r#"{"type":"shutdown_response","request_id":"x"}"#), Said::Unknown { reason } if reason.contains("neither yes nor no"))
        );
        assert!(matches!(read("{not json}"), Said::Unknown { .. }));
    }

    #[test]
    fn a_body_with_prose_after_its_json_reads_as_the_json() {
        let body = "{\"type\":\"shutdown_request\",\"requestId\":\"shutdown-9@bob\"}\nTo approve it, call SendMessage.";
        assert!(matches!(read(body), Said::Request { kind: Kind::Shutdown, .. }));
    }

    #[test]
    fn notices_say_who_ended_and_what_was_assigned() {
        assert_eq!(
            read(r#"{"type":"teammate_terminated","message":"alice has shut down."}"#),
            Said::Notice(Notice::Terminated { who: "alice".into() })
        );
        assert_eq!(
            read(r#"{"type":"task_assignment","taskId":3,"subject":"Write tests","assignedBy":"team-lead"}"#),
            Said::Notice(Notice::TaskAssigned { task: "Write tests".into() })
        );
        assert_eq!(id_target("shutdown-1@team-lead"), Some("team-lead"));
        assert_eq!(id_target("shutdown-1788495271271"), None);
    }

    /// Whether `text` reads as unknown, with a reason holding `why`.
    fn unknown_because(text: &str, why: &str) -> bool {
        matches!(read(text), Said::Unknown { reason } if reason.contains(why))
    }

    #[test]
    fn a_notice_that_names_nobody_or_nothing_is_unknown_not_dropped_or_guessed() {
        for message in
            ["null", "7", "\"\"", "\"has shut down.\"", "\"Teammate alice has shut down.\"", "\"alice left\""]
        {
            let text = format!(r#"{{"type":"teammate_terminated","message":{message}}}"#);
            assert!(unknown_because(&text, "does not name the teammate"), "{text}: {:?}", read(&text));
        }
        assert!(unknown_because(r#"{"type":"teammate_terminated"}"#, "does not name the teammate"));
        assert!(unknown_because(r#"{"type":"task_assignment","assignedBy":"team-lead"}"#, "names no task"));
    }

    #[test]
    fn an_answer_whose_id_cannot_be_read_is_unknown_not_an_answer_to_nothing() {
        for id in ["", r#","requestId":null"#, r#","requestId":{"n":1}"#, r#","requestId":"  ""#] {
            let text = format!(r#"{{"type":"shutdown_approved","from":"alice"{id}}}"#);
            assert!(unknown_because(&text, "no readable request id"), "{text}: {:?}", read(&text));
        }
        let plan = r#"{"type":"plan_approval_response","approved":true}"#;
        assert!(unknown_because(plan, "no readable request id"));
        // A request may come without one (the call's result gives it).
        assert!(matches!(read(r#"{"type":"shutdown_request"}"#), Said::Request { id: None, .. }));
    }

    #[test]
    fn json_cut_short_wrapped_or_encoded_twice_is_unknown_not_prose() {
        let answer = r#"{"type":"shutdown_approved","requestId":"shutdown-1@alice","from":"alice"}"#;
        assert!(unknown_because(&answer[..answer.len() - 1], "does not parse"));
        assert!(unknown_because(&format!("[{answer}]"), "a JSON array"));
        assert!(unknown_because(&serde_json::to_string(answer).unwrap(), "encoded twice"));
        assert!(unknown_because(&format!("{} and then prose", &answer[..20]), "does not parse"));
        // Prose that merely starts with a bracket or a quote stays prose.
        for prose in ["[WIP] parser", "\"done\", she said", "[1] first point", "\"quoted\""] {
            assert_eq!(read(prose), Said::Plain, "{prose}");
        }
    }
}
