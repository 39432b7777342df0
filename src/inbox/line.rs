//! One inbox line: a message in the reference course's JSON Lines format.
//!
//! The reference's `MessageBus.send` writes one JSON object per line with
//! `type`, `from`, `content` and `timestamp` (Unix seconds, a float), then the
//! protocol's own fields (`request_id`, `approve`, `plan`, `feedback`, ...)
//! beside them, not nested. A line written here has the same keys in the same
//! order, so the reference's reader (and `jq`) reads it, plus the few fields
//! the simulator needs to route and account for it (`to`, `seq`,
//! `incarnation`), which a reader that does not know them ignores.
//!
//! `content` is what a person reading the file would want to see, as the
//! reference fills it: the text of a message, the reason of a shutdown request
//! (or the reference's "Please shut down gracefully."), the plan of a plan
//! request, the reason or feedback of a response (or empty). The protocol
//! fields, not `content`, are what a message is parsed back from.

use crate::protocol::{Message, Millis, RequestId, Text};
use serde_json::{Map, Value};

/// What the reference's lead writes as the content of a shutdown request.
pub const SHUTDOWN_CONTENT: &str = "Please shut down gracefully.";

/// A message as it sits in its receiver's inbox file.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// The name the sender put on it. Anyone who can write the file can put
    /// any name here: a file has no router to authenticate senders.
    pub from: String,
    /// The receiver's name. The reference leaves it out (the file name says
    /// it); a line without it is read as addressed to the file's owner.
    pub to: String,
    /// When it was sent, on the virtual clock; written as seconds, like the
    /// reference's `time.time()`, but counted from the start of the run.
    pub at: Millis,
    pub message: Message,
    /// The router's number for the message, so that a line lost from a file
    /// can be named in the trace (`no-silent-loss`).
    pub seq: Option<u64>,
    /// Which incarnation of the receiver it was addressed to; a restart
    /// increments it.
    pub incarnation: Option<u32>,
}

/// Why a line is not a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// Not one JSON object: what a writer that died halfway leaves behind.
    #[error("not a JSON object: {0}")]
    NotJson(String),
    #[error("unknown message type {0:?}")]
    UnknownType(String),
    #[error("field `{0}` is missing or of the wrong kind")]
    Field(&'static str),
}

impl LineError {
    /// A torn write shows up as bytes that are not JSON; a whole object with
    /// the wrong fields was written on purpose, by someone.
    pub fn is_torn(&self) -> bool {
        matches!(self, LineError::NotJson(_))
    }
}

fn seconds(at: Millis) -> Value {
    // Milliseconds as seconds: exact enough that `from_seconds` gives the same
    // millisecond back for any time a run can reach (tested up to 10^12 ms).
    serde_json::Number::from_f64(at.0 as f64 / 1000.0).map_or(Value::Null, Value::Number)
}

fn from_seconds(v: &Value) -> Option<Millis> {
    let s = v.as_f64()?;
    if !(s >= 0.0 && s.is_finite()) {
        return None;
    }
    Some(Millis((s * 1000.0).round() as u64))
}

fn text(t: &Text) -> Value {
    Value::String(t.to_string())
}

impl Line {
    /// The line as written to the file, ending with its newline. serde_json
    /// escapes newlines inside strings, so the only newline is the last byte.
    pub fn to_json_line(&self) -> String {
        let mut map = Map::new();
        map.insert("type".into(), Value::from(self.message.type_name()));
        map.insert("from".into(), Value::from(self.from.as_str()));
        let content = match &self.message {
            Message::Message { text } | Message::Broadcast { text } => text.to_string(),
            Message::ShutdownRequest { reason, .. } => reason.as_deref().unwrap_or(SHUTDOWN_CONTENT).to_string(),
            Message::ShutdownResponse { reason, .. } => reason.as_deref().unwrap_or("").to_string(),
            Message::PlanApprovalRequest { plan, .. } => plan.to_string(),
            Message::PlanApprovalResponse { feedback, .. } => feedback.as_deref().unwrap_or("").to_string(),
        };
        map.insert("content".into(), Value::String(content));
        map.insert("timestamp".into(), seconds(self.at));
        if let Some(id) = self.message.request_id() {
            map.insert("request_id".into(), Value::String(id.to_string()));
        }
        match &self.message {
            Message::Message { .. } | Message::Broadcast { .. } => {}
            Message::ShutdownRequest { reason, deadline, .. } => {
                if let Some(r) = reason {
                    map.insert("reason".into(), text(r));
                }
                if !deadline.is_never() {
                    map.insert("deadline".into(), seconds(*deadline));
                }
            }
            Message::ShutdownResponse { approve, reason, .. } => {
                map.insert("approve".into(), Value::Bool(*approve));
                if let Some(r) = reason {
                    map.insert("reason".into(), text(r));
                }
            }
            Message::PlanApprovalRequest { plan, deadline, .. } => {
                map.insert("plan".into(), text(plan));
                if !deadline.is_never() {
                    map.insert("deadline".into(), seconds(*deadline));
                }
            }
            Message::PlanApprovalResponse { approve, feedback, .. } => {
                map.insert("approve".into(), Value::Bool(*approve));
                if let Some(f) = feedback {
                    map.insert("feedback".into(), text(f));
                }
            }
        }
        map.insert("to".into(), Value::from(self.to.as_str()));
        if let Some(seq) = self.seq {
            map.insert("seq".into(), Value::from(seq));
        }
        if let Some(inc) = self.incarnation {
            map.insert("incarnation".into(), Value::from(inc));
        }
        // A map of strings, numbers and booleans always serialises.
        let mut out = Value::Object(map).to_string();
        out.push('\n');
        out
    }

    /// Parses one line (without its newline). `owner` is the inbox's owner,
    /// the receiver of a line that does not name one. Never panics: whatever
    /// the bytes, the answer is a line or the reason it is not one.
    pub fn parse(bytes: &[u8], owner: &str) -> Result<Line, LineError> {
        let map: Map<String, Value> =
            serde_json::from_slice(bytes).map_err(|e| LineError::NotJson(e.to_string()))?;
        let kind = str_field(&map, "type")?;
        let message = match kind {
            "message" => Message::Message { text: str_field(&map, "content")?.into() },
            "broadcast" => Message::Broadcast { text: str_field(&map, "content")?.into() },
            "shutdown_request" => Message::ShutdownRequest {
                request_id: id_field(&map)?,
                reason: opt_text(&map, "reason")?,
                deadline: opt_time(&map, "deadline")?.unwrap_or(Millis::NEVER),
            },
            "shutdown_response" => Message::ShutdownResponse {
                request_id: id_field(&map)?,
                approve: bool_field(&map, "approve")?,
                reason: opt_text(&map, "reason")?,
            },
            "plan_approval_request" => Message::PlanApprovalRequest {
                request_id: id_field(&map)?,
                plan: str_field(&map, "plan")?.into(),
                deadline: opt_time(&map, "deadline")?.unwrap_or(Millis::NEVER),
            },
            "plan_approval_response" => Message::PlanApprovalResponse {
                request_id: id_field(&map)?,
                approve: bool_field(&map, "approve")?,
                feedback: opt_text(&map, "feedback")?,
            },
            other => return Err(LineError::UnknownType(other.to_string())),
        };
        let at = map.get("timestamp").and_then(from_seconds).ok_or(LineError::Field("timestamp"))?;
        let to = match map.get("to") {
            None => owner.to_string(),
            Some(v) => v.as_str().ok_or(LineError::Field("to"))?.to_string(),
        };
        let seq = match map.get("seq") {
            None => None,
            Some(v) => Some(v.as_u64().ok_or(LineError::Field("seq"))?),
        };
        let incarnation = match map.get("incarnation") {
            None => None,
            Some(v) => Some(v.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or(LineError::Field("incarnation"))?),
        };
        Ok(Line { from: str_field(&map, "from")?.to_string(), to, at, message, seq, incarnation })
    }
}

fn str_field<'a>(map: &'a Map<String, Value>, key: &'static str) -> Result<&'a str, LineError> {
    map.get(key).and_then(Value::as_str).ok_or(LineError::Field(key))
}

fn bool_field(map: &Map<String, Value>, key: &'static str) -> Result<bool, LineError> {
    map.get(key).and_then(Value::as_bool).ok_or(LineError::Field(key))
}

/// Absent and `null` both mean "none": a hand-written line may say either.
fn opt_text(map: &Map<String, Value>, key: &'static str) -> Result<Option<Text>, LineError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str().into())),
        Some(_) => Err(LineError::Field(key)),
    }
}

fn opt_time(map: &Map<String, Value>, key: &'static str) -> Result<Option<Millis>, LineError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => from_seconds(v).map(Some).ok_or(LineError::Field(key)),
    }
}

/// The reference draws 8-hex-digit ids; the simulator's are whole UUIDs, and
/// a line with anything else is refused rather than given a made-up id.
fn id_field(map: &Map<String, Value>) -> Result<RequestId, LineError> {
    let s = str_field(map, "request_id")?;
    uuid::Uuid::parse_str(s).map(RequestId).map_err(|_| LineError::Field("request_id"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id() -> RequestId {
        RequestId::from_random_bytes([9; 16])
    }

    pub(crate) fn every_kind() -> Vec<Message> {
        vec![
            Message::Message { text: "hi\nthere \"quoted\"".into() },
            Message::Broadcast { text: "all hands".into() },
            Message::ShutdownRequest { request_id: id(), reason: None, deadline: Millis::NEVER },
            Message::ShutdownRequest { request_id: id(), reason: Some("release".into()), deadline: Millis(61_000) },
            Message::ShutdownResponse { request_id: id(), approve: true, reason: None },
            Message::ShutdownResponse { request_id: id(), approve: false, reason: Some("tests running".into()) },
            Message::PlanApprovalRequest { request_id: id(), plan: "DROP TABLE x".into(), deadline: Millis(5) },
            Message::PlanApprovalResponse { request_id: id(), approve: false, feedback: Some("back up".into()) },
            Message::PlanApprovalResponse { request_id: id(), approve: true, feedback: None },
        ]
    }

    fn line(message: Message) -> Line {
        Line { from: "lead".into(), to: "alice".into(), at: Millis(1500), message, seq: Some(3), incarnation: Some(2) }
    }

    #[test]
    fn every_kind_round_trips() {
        for m in every_kind() {
            let l = line(m);
            let text = l.to_json_line();
            assert_eq!(text.matches('\n').count(), 1, "one newline, at the end: {text}");
            assert!(text.ends_with('\n'));
            let back = Line::parse(text.trim_end().as_bytes(), "someone-else").unwrap();
            assert_eq!(back, l, "{text}");
        }
    }

    #[test]
    fn lines_carry_the_reference_keys_first() {
        for m in every_kind() {
            let text = line(m.clone()).to_json_line();
            let v: Value = serde_json::from_str(&text).unwrap();
            let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(&keys[..4], ["type", "from", "content", "timestamp"], "{text}");
            assert_eq!(v["type"], m.type_name());
            assert_eq!(v["from"], "lead");
            assert!(v["content"].is_string());
            assert_eq!(v["timestamp"].as_f64(), Some(1.5));
            if let Some(id) = m.request_id() {
                assert_eq!(v["request_id"], id.to_string());
            }
            if let Some(approve) = m.approval() {
                assert_eq!(v["approve"], approve);
            }
        }
    }

    #[test]
    fn content_is_what_the_reference_would_write() {
        let content = |m: Message| serde_json::from_str::<Value>(&line(m).to_json_line()).unwrap()["content"].clone();
        assert_eq!(content(Message::ShutdownRequest { request_id: id(), reason: None, deadline: Millis::NEVER }), SHUTDOWN_CONTENT);
        assert_eq!(content(Message::PlanApprovalRequest { request_id: id(), plan: "p".into(), deadline: Millis(1) }), "p");
        assert_eq!(content(Message::ShutdownResponse { request_id: id(), approve: true, reason: None }), "");
    }

    #[test]
    fn a_line_without_simulator_fields_is_addressed_to_the_owner() {
        let text = format!(r#"{{"type":"shutdown_request","from":"lead","content":"{SHUTDOWN_CONTENT}","timestamp":1732976400.25,"request_id":"{}"}}"#, id());
        let l = Line::parse(text.as_bytes(), "alice").unwrap();
        assert_eq!(l.to, "alice");
        assert_eq!(l.at, Millis(1_732_976_400_250));
        assert_eq!((l.seq, l.incarnation), (None, None));
        assert_eq!(l.message, Message::ShutdownRequest { request_id: id(), reason: None, deadline: Millis::NEVER });
    }

    #[test]
    fn timestamps_keep_their_millisecond() {
        let mut ms = 0u64;
        while ms < 1_000_000_000_000 {
            for at in [ms, ms + 1, ms + 999] {
                let l = Line { at: Millis(at), ..line(Message::Message { text: "x".into() }) };
                assert_eq!(Line::parse(l.to_json_line().trim_end().as_bytes(), "a").unwrap().at, Millis(at));
            }
            ms = ms * 3 + 7;
        }
    }

    #[test]
    fn every_prefix_of_a_line_is_torn_never_a_panic() {
        for m in every_kind() {
            let text = line(m).to_json_line();
            let body = text.trim_end().as_bytes();
            for cut in 0..body.len() {
                let err = Line::parse(&body[..cut], "alice").unwrap_err();
                assert!(err.is_torn(), "cut {cut}: {err}");
            }
        }
    }

    #[test]
    fn whole_objects_with_wrong_fields_are_refused_by_name() {
        let cases = [
            (r#"{"type":"shutdown_now","from":"x","content":"","timestamp":1}"#, LineError::UnknownType("shutdown_now".into())),
            (r#"{"type":"message","from":"x","timestamp":1}"#, LineError::Field("content")),
            (r#"{"type":"message","from":"x","content":"c","timestamp":-1}"#, LineError::Field("timestamp")),
            (r#"{"type":"shutdown_response","from":"x","content":"","timestamp":1,"request_id":"abcd1234","approve":true}"#, LineError::Field("request_id")),
            (r#"{"type":"message","from":"x","content":"c","timestamp":1,"incarnation":5000000000}"#, LineError::Field("incarnation")),
            (r#"[1,2]"#, LineError::NotJson(String::new())),
        ];
        for (text, want) in cases {
            let got = Line::parse(text.as_bytes(), "alice").unwrap_err();
            match want {
                LineError::NotJson(_) => assert!(got.is_torn(), "{text}: {got}"),
                want => assert_eq!(got, want, "{text}"),
            }
        }
    }
}
