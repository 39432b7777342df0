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

use crate::protocol::{AgentId, Delivery, Message, Millis, RequestId, Text};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::Arc;

/// What the reference's lead writes as the content of a shutdown request.
pub const SHUTDOWN_CONTENT: &str = crate::protocol::kinds::SHUTDOWN_WORDS_WHEN_SILENT;

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
    /// A JSON object the reader cannot take for another reason (a key twice).
    #[error("not a message: {0}")]
    Shape(String),
}

impl LineError {
    /// A torn write shows up as bytes that are not JSON; a whole object with
    /// the wrong fields was written on purpose, by someone.
    pub fn is_torn(&self) -> bool {
        matches!(self, LineError::NotJson(_))
    }
}

/// Milliseconds as seconds: exact enough that `from_seconds` gives the same
/// millisecond back for any time a run can reach (tested up to 10^12 ms).
fn seconds(at: Millis) -> f64 {
    at.0 as f64 / 1000.0
}

fn from_seconds(s: f64) -> Option<Millis> {
    if !(s >= 0.0 && s.is_finite()) {
        return None;
    }
    Some(Millis((s * 1000.0).round() as u64))
}

/// Writes JSON values into a line being built. Written by hand rather than
/// through a `serde_json::Map`: a run appends a line per message, and a map
/// per line costs more than the rest of the append together.
struct Writer<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl Writer<'_> {
    fn key(&mut self, key: &str) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        self.str(key);
        self.out.push(b':');
    }

    fn value<T: serde::Serialize + ?Sized>(&mut self, value: &T) {
        // Strings, numbers and booleans into a Vec: serde_json cannot fail
        // here (no I/O, no maps with non-string keys, no non-finite floats
        // reach it), so there is no error to pass on.
        let _ = serde_json::to_writer(&mut *self.out, value);
    }

    /// A string as serde_json writes it. Most (every key, most names and
    /// texts) hold nothing it escapes, and are then copied between quotes
    /// by hand: serde_json's writer costs several times the copy.
    fn str(&mut self, s: &str) {
        if s.bytes().any(escaped_in_json) {
            return self.value(s);
        }
        self.out.reserve(s.len() + 2);
        self.out.push(b'"');
        self.out.extend_from_slice(s.as_bytes());
        self.out.push(b'"');
    }

    fn field<T: serde::Serialize + ?Sized>(&mut self, key: &str, value: &T) {
        self.key(key);
        self.value(value);
    }

    fn str_field(&mut self, key: &str, value: &str) {
        self.key(key);
        self.str(value);
    }
}

/// Whether serde_json escapes this byte in a string: a quote, a backslash,
/// or a control character. Every other byte, non-ASCII included, it copies
/// as it is.
fn escaped_in_json(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// The last message text written, escaped as a JSON string. The copies of
/// a broadcast share one text (`Arc`), so a line of the same text reuses it:
/// 100,000 copies of a 10 KB broadcast were 1 GB of escaping.
#[derive(Clone, Default)]
pub struct SharedText {
    text: Option<Text>,
    json: Vec<u8>,
}

impl SharedText {
    fn json(&mut self, text: &Text) -> &[u8] {
        // Held here, the text cannot be freed and its address reused by
        // another: the same address is the same text.
        if !self.text.as_ref().is_some_and(|t| Arc::ptr_eq(t, text)) {
            self.json.clear();
            let _ = serde_json::to_writer(&mut self.json, &**text);
            debug_assert!(self.json.iter().all(|&b| b != b'\n'));
            self.text = Some(Arc::clone(text));
        }
        &self.json
    }
}

impl Line {
    /// The line a routed message becomes in its receiver's file: the name it
    /// claims to come from (a forgery keeps its false `from`; the file cannot
    /// tell), its receiver, its send time and the router's number. `name`
    /// turns an agent id into its name.
    pub fn from_delivery<'n>(d: &Delivery, name: impl Fn(AgentId) -> &'n str) -> Line {
        Line {
            from: name(d.envelope.from).to_string(),
            to: name(d.to).to_string(),
            at: d.envelope.sent_at,
            message: d.envelope.message.clone(),
            seq: Some(d.seq),
            incarnation: Some(d.incarnation),
        }
    }

    /// The line as written to the file, ending with its newline. serde_json
    /// escapes newlines inside strings, so the only newline is the last byte.
    pub fn to_json_line(&self) -> String {
        let mut out = Vec::with_capacity(160);
        self.write_json_line(&mut out);
        // Built from `&str`s and JSON punctuation only.
        String::from_utf8(out).unwrap_or_default()
    }

    /// Appends the line, newline included, to `out`.
    pub fn write_json_line(&self, out: &mut Vec<u8>) {
        self.write_json_line_shared(out, &mut SharedText::default());
    }

    /// As [`Line::write_json_line`], with a message's text escaped once for
    /// every line that carries the same text (a broadcast's copies share one):
    /// the bytes are the same, the escaping is not done per copy.
    pub fn write_json_line_shared(&self, out: &mut Vec<u8>, shared: &mut SharedText) {
        let start = out.len();
        out.push(b'{');
        let mut w = Writer { out, first: true };
        w.str_field("type", self.message.type_name());
        w.str_field("from", self.from.as_str());
        let content: &str = match &self.message {
            Message::Message { text } | Message::Broadcast { text } | Message::PlanRequest { text } => text,
            Message::Request { kind, words, .. } => words.as_deref().unwrap_or(kind.spec().request_words.when_silent),
            Message::Response { words, .. } => words.as_deref().unwrap_or(""),
        };
        w.key("content");
        let content_at = w.out.len();
        match &self.message {
            Message::Message { text } | Message::Broadcast { text } => w.out.extend_from_slice(shared.json(text)),
            _ => w.str(content),
        }
        let content_end = w.out.len();
        debug_assert!(out[start..content_at].iter().all(|&b| b != b'\n'));
        let mut w = Writer { out, first: false };
        w.field("timestamp", &seconds(self.at));
        if let Some(id) = self.message.request_id() {
            w.field("request_id", &id);
        }
        match &self.message {
            Message::Message { .. } | Message::Broadcast { .. } | Message::PlanRequest { .. } => {}
            // The protocol's fields under its spec's names.
            Message::Request { kind, words, deadline, .. } => {
                if let Some(r) = words {
                    w.str_field(kind.spec().request_words.key, r);
                }
                if !deadline.is_never() {
                    w.field("deadline", &seconds(*deadline));
                }
            }
            Message::Response { kind, approve, words, .. } => {
                w.field(kind.spec().answer_key, approve);
                if let Some(r) = words {
                    w.str_field(kind.spec().answer_words, r);
                }
            }
        }
        w.str_field("to", self.to.as_str());
        if let Some(seq) = self.seq {
            w.field("seq", &seq);
        }
        if let Some(inc) = self.incarnation {
            w.field("incarnation", &inc);
        }
        debug_assert!(out[content_end..].iter().all(|&b| b != b'\n'));
        out.extend_from_slice(b"}\n");
    }

    /// Parses one line (without its newline). `owner` is the inbox's owner,
    /// the receiver of a line that does not name one. Never panics: whatever
    /// the bytes, the answer is a line or the reason it is not one.
    pub fn parse(bytes: &[u8], owner: &str) -> Result<Line, LineError> {
        let raw: Raw = match serde_json::from_slice(bytes) {
            Ok(raw) => raw,
            Err(e) if e.classify() == serde_json::error::Category::Data => return Err(wrong_kind(bytes, e)),
            Err(e) => return Err(LineError::NotJson(e.to_string())),
        };
        raw.into_line(owner)
    }
}

/// The keys a line may carry, as their JSON types: what `parse` reads. Other
/// keys are ignored, as the reference's reader ignores what it does not use.
/// A protocol's own keys (a `plan`, an answer's `approve`) are its spec's:
/// [`Raw::said`] and [`Raw::answered`] hold them by name.
#[derive(Default)]
struct Raw<'a> {
    kind: Option<Cow<'a, str>>,
    from: Option<Cow<'a, str>>,
    content: Option<Cow<'a, str>>,
    timestamp: Option<f64>,
    request_id: Option<Cow<'a, str>>,
    deadline: Option<f64>,
    to: Option<Cow<'a, str>>,
    seq: Option<u64>,
    incarnation: Option<u64>,
    /// Each protocol's words keys present (`reason`, `plan`, `feedback`).
    said: smallvec::SmallVec<[(&'static str, Cow<'a, str>); 2]>,
    /// Each protocol's yes-or-no keys present (`approve`).
    answered: smallvec::SmallVec<[(&'static str, bool); 1]>,
}

/// The keys of the protocols' words, and of their yes or no, in a line.
fn word_keys() -> &'static [&'static str] {
    static KEYS: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
        let mut keys: Vec<&str> = Vec::new();
        for k in crate::protocol::Kind::ALL {
            keys.extend([k.spec().request_words.key, k.spec().answer_words]);
        }
        keys.sort_unstable();
        keys.dedup();
        keys
    });
    &KEYS
}

fn answer_keys() -> &'static [&'static str] {
    static KEYS: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
        let mut keys: Vec<&str> = crate::protocol::Kind::ALL.iter().map(|k| k.spec().answer_key).collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    });
    &KEYS
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for Raw<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Raw<'a>, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = Raw<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object, one message")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Raw<'a>, A::Error> {
                use serde::de::Error;
                let mut r = Raw::default();
                // Each key once, as serde's derive holds it.
                fn once<T, E: Error>(slot: &mut Option<T>, v: Option<T>, key: &'static str) -> Result<(), E> {
                    if slot.is_some() {
                        return Err(E::duplicate_field(key));
                    }
                    *slot = v;
                    Ok(())
                }
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match &*key {
                        "type" => once(&mut r.kind, map.next_value::<Option<Cow<'de, str>>>()?, "type")?,
                        "from" => once(&mut r.from, map.next_value::<Option<Cow<'de, str>>>()?, "from")?,
                        "content" => once(&mut r.content, map.next_value::<Option<Cow<'de, str>>>()?, "content")?,
                        "timestamp" => once(&mut r.timestamp, map.next_value::<Option<f64>>()?, "timestamp")?,
                        "request_id" => {
                            once(&mut r.request_id, map.next_value::<Option<Cow<'de, str>>>()?, "request_id")?
                        }
                        "deadline" => once(&mut r.deadline, map.next_value::<Option<f64>>()?, "deadline")?,
                        "to" => once(&mut r.to, map.next_value::<Option<Cow<'de, str>>>()?, "to")?,
                        "seq" => once(&mut r.seq, map.next_value::<Option<u64>>()?, "seq")?,
                        "incarnation" => once(&mut r.incarnation, map.next_value::<Option<u64>>()?, "incarnation")?,
                        k => {
                            if let Some(&name) = word_keys().iter().find(|n| **n == k) {
                                if r.said.iter().any(|(n, _)| *n == name) {
                                    return Err(A::Error::duplicate_field(name));
                                }
                                if let Some(v) = map.next_value::<Option<Cow<'de, str>>>()? {
                                    r.said.push((name, v));
                                }
                            } else if let Some(&name) = answer_keys().iter().find(|n| **n == k) {
                                if r.answered.iter().any(|(n, _)| *n == name) {
                                    return Err(A::Error::duplicate_field(name));
                                }
                                if let Some(v) = map.next_value::<Option<bool>>()? {
                                    r.answered.push((name, v));
                                }
                            } else {
                                map.next_value::<serde::de::IgnoredAny>()?;
                            }
                        }
                    }
                }
                Ok(r)
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData))
    }
}

/// Which key of a JSON object has a value of the wrong kind. Run only for a
/// line already known to be bad, so it may take its time.
fn wrong_kind(bytes: &[u8], error: serde_json::Error) -> LineError {
    let Ok(map) = serde_json::from_slice::<Map<String, Value>>(bytes) else {
        // Valid JSON but not an object (an array, a number).
        return LineError::NotJson(error.to_string());
    };
    type RightKind = fn(&Value) -> bool;
    let text: RightKind = Value::is_string;
    let mut fields: Vec<(&'static str, RightKind)> =
        vec![("type", text), ("from", text), ("content", text), ("timestamp", Value::is_number), ("request_id", text)];
    fields.extend(answer_keys().iter().map(|k| (*k, Value::is_boolean as RightKind)));
    fields.extend(word_keys().iter().map(|k| (*k, text)));
    fields.extend([
        ("deadline", Value::is_number as RightKind),
        ("to", text),
        ("seq", Value::is_u64),
        ("incarnation", Value::is_u64),
    ]);
    for (key, right_kind) in fields {
        // `null` reads as absent, whatever the key.
        if map.get(key).is_some_and(|v| !v.is_null() && !right_kind(v)) {
            return LineError::Field(key);
        }
    }
    // Everything has the right kind, yet serde refused it: a key written twice.
    LineError::Shape(error.to_string())
}

impl Raw<'_> {
    fn into_line(self, owner: &str) -> Result<Line, LineError> {
        fn need<T>(v: Option<T>, key: &'static str) -> Result<T, LineError> {
            v.ok_or(LineError::Field(key))
        }
        let text = |v: Option<Cow<'_, str>>| -> Option<Text> { v.map(|s| Text::from(&*s)) };
        let id = |v: Option<Cow<'_, str>>| -> Result<RequestId, LineError> {
            // The reference draws 8-hex-digit ids; the simulator's are whole
            // UUIDs, and a line with anything else is refused rather than
            // given a made-up id.
            let s = need(v, "request_id")?;
            uuid::Uuid::parse_str(&s).map(RequestId).map_err(|_| LineError::Field("request_id"))
        };
        let deadline = |v: Option<f64>| -> Result<Millis, LineError> {
            match v {
                None => Ok(Millis::NEVER),
                Some(s) => from_seconds(s).ok_or(LineError::Field("deadline")),
            }
        };
        let kind = need(self.kind, "type")?;
        let message = match &*kind {
            "message" => Message::Message { text: need(text(self.content), "content")? },
            "broadcast" => Message::Broadcast { text: need(text(self.content), "content")? },
            "plan_request" => Message::PlanRequest { text: need(text(self.content), "content")? },
            t => {
                let types = crate::protocol::Kind::ALL.into_iter().find_map(|k| {
                    (k.spec().request == t).then_some((k, true)).or((k.spec().response == t).then_some((k, false)))
                });
                let Some((kind, asks)) = types else { return Err(LineError::UnknownType(t.to_string())) };
                let spec = kind.spec();
                let said = |key: &str| self.said.iter().find(|(n, _)| *n == key).map(|(_, v)| Text::from(&**v));
                if asks {
                    let words = said(spec.request_words.key);
                    if spec.request_words.required && words.is_none() {
                        return Err(LineError::Field(spec.request_words.key));
                    }
                    Message::Request {
                        kind,
                        request_id: id(self.request_id.clone())?,
                        words,
                        deadline: deadline(self.deadline)?,
                    }
                } else {
                    let approve = self.answered.iter().find(|(n, _)| *n == spec.answer_key).map(|(_, v)| *v);
                    Message::Response {
                        kind,
                        request_id: id(self.request_id.clone())?,
                        approve: need(approve, spec.answer_key)?,
                        words: said(spec.answer_words),
                    }
                }
            }
        };
        let at =
            need(self.timestamp, "timestamp").and_then(|s| from_seconds(s).ok_or(LineError::Field("timestamp")))?;
        let incarnation = match self.incarnation {
            None => None,
            Some(n) => Some(u32::try_from(n).map_err(|_| LineError::Field("incarnation"))?),
        };
        Ok(Line {
            from: need(self.from, "from")?.into_owned(),
            to: self.to.map_or_else(|| owner.to_string(), Cow::into_owned),
            at,
            message,
            seq: self.seq,
            incarnation,
        })
    }
}

/// A plain note from bob to alice, the lines the inbox's tests fill files with.
#[cfg(test)]
pub(crate) fn note(at: Millis, text: &str) -> Line {
    Line {
        from: "bob".into(),
        to: "alice".into(),
        at,
        message: Message::Message { text: text.into() },
        seq: None,
        incarnation: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id() -> RequestId {
        RequestId::from_random_bytes([9; 16])
    }

    #[test]
    fn a_string_copied_by_hand_is_what_serde_json_writes() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(45);
        let mut texts: Vec<String> =
            ["", "alice", "a \"quoted\" word", "back\\slash", "tab\there", "new\nline", "\u{7f}é✓ 日本", "\u{1}"]
                .map(str::to_string)
                .to_vec();
        // Every byte value alone, and random strings of every kind of char.
        texts.extend((0u8..128).map(|b| char::from(b).to_string()));
        for _ in 0..2000 {
            let len = rng.gen_range(0..12);
            texts.push((0..len).map(|_| char::from_u32(rng.gen_range(0..0x800)).unwrap_or('?')).collect());
        }
        for text in &texts {
            let mut out = Vec::new();
            Writer { out: &mut out, first: true }.str(text);
            assert_eq!(out, serde_json::to_vec(text).unwrap(), "{text:?}");
        }
    }

    #[test]
    fn a_shared_text_writes_the_same_bytes_as_escaping_each_line() {
        let text: Text = "all \"hands\"\n\u{1}é".into();
        let same_words: Text = "all \"hands\"\n\u{1}é".into();
        let mut messages = vec![Message::Broadcast { text: text.clone() }, Message::Broadcast { text: text.clone() }];
        messages.push(Message::Broadcast { text: same_words });
        messages.extend(every_kind());
        messages.push(Message::Broadcast { text });
        let mut shared = SharedText::default();
        for (i, message) in messages.into_iter().enumerate() {
            let line = Line {
                from: "lead".into(),
                to: format!("w-{i}"),
                at: Millis(5),
                message,
                seq: Some(i as u64),
                incarnation: Some(0),
            };
            let (mut plain, mut reused) = (Vec::new(), Vec::new());
            line.write_json_line(&mut plain);
            line.write_json_line_shared(&mut reused, &mut shared);
            assert_eq!(String::from_utf8(reused).unwrap(), String::from_utf8(plain).unwrap());
        }
    }

    pub(crate) fn every_kind() -> Vec<Message> {
        vec![
            Message::Message { text: "hi\nthere \"quoted\"".into() },
            Message::Broadcast { text: "all hands".into() },
            Message::Request {
                kind: crate::protocol::Kind::Shutdown,
                request_id: id(),
                words: None,
                deadline: Millis::NEVER,
            },
            Message::Request {
                kind: crate::protocol::Kind::Shutdown,
                request_id: id(),
                words: Some("release".into()),
                deadline: Millis(61_000),
            },
            Message::Response { kind: crate::protocol::Kind::Shutdown, request_id: id(), approve: true, words: None },
            Message::Response {
                kind: crate::protocol::Kind::Shutdown,
                request_id: id(),
                approve: false,
                words: Some("tests running".into()),
            },
            Message::Request {
                kind: crate::protocol::Kind::Plan,
                request_id: id(),
                words: Some("DROP TABLE x".into()),
                deadline: Millis(5),
            },
            Message::Response {
                kind: crate::protocol::Kind::Plan,
                request_id: id(),
                approve: false,
                words: Some("back up".into()),
            },
            Message::Response { kind: crate::protocol::Kind::Plan, request_id: id(), approve: true, words: None },
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
    fn a_delivery_becomes_a_line_with_its_claimed_sender() {
        use crate::protocol::{Address, Envelope};
        let names = ["lead", "alice", "bob"];
        let d = Delivery {
            seq: 12,
            envelope: Envelope {
                from: AgentId(0),
                to: Address::Agent(AgentId(1)),
                sent_at: Millis(2500),
                message: Message::Message { text: "hi".into() },
            },
            // bob forged it as the lead.
            sender: AgentId(2),
            to: AgentId(1),
            at: Millis(2501),
            incarnation: 4,
        };
        let l = Line::from_delivery(&d, |a| names[a.index()]);
        assert_eq!(
            (l.from.as_str(), l.to.as_str(), l.at, l.seq, l.incarnation),
            ("lead", "alice", Millis(2500), Some(12), Some(4))
        );
        assert_eq!(l.message, d.envelope.message);
    }

    #[test]
    fn the_example_in_docs_inboxes_md_is_what_is_written() {
        let id = RequestId::from_random_bytes([7; 16]);
        let request = Line {
            from: "lead".into(),
            to: "alice".into(),
            at: Millis(1000),
            message: Message::Request {
                kind: crate::protocol::Kind::Shutdown,
                request_id: id,
                words: None,
                deadline: Millis(61_000),
            },
            seq: Some(3),
            incarnation: Some(1),
        };
        let response = Line {
            from: "alice".into(),
            to: "lead".into(),
            at: Millis(1250),
            message: Message::Response {
                kind: crate::protocol::Kind::Shutdown,
                request_id: id,
                approve: false,
                words: Some("tests running".into()),
            },
            seq: Some(4),
            incarnation: None,
        };
        let docs = include_str!("../../docs/inboxes.md");
        for l in [request, response] {
            let text = l.to_json_line();
            assert!(docs.contains(text.trim_end()), "docs/inboxes.md should show {text}");
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
        assert_eq!(
            content(Message::Request {
                kind: crate::protocol::Kind::Shutdown,
                request_id: id(),
                words: None,
                deadline: Millis::NEVER
            }),
            SHUTDOWN_CONTENT
        );
        assert_eq!(
            content(Message::Request {
                kind: crate::protocol::Kind::Plan,
                request_id: id(),
                words: Some("p".into()),
                deadline: Millis(1)
            }),
            "p"
        );
        assert_eq!(
            content(Message::Response {
                kind: crate::protocol::Kind::Shutdown,
                request_id: id(),
                approve: true,
                words: None
            }),
            ""
        );
    }

    #[test]
    fn a_line_without_simulator_fields_is_addressed_to_the_owner() {
        let text = format!(
            r#"{{"type":"shutdown_request","from":"lead","content":"{SHUTDOWN_CONTENT}","timestamp":1732976400.25,"request_id":"{}"}}"#,
            id()
        );
        let l = Line::parse(text.as_bytes(), "alice").unwrap();
        assert_eq!(l.to, "alice");
        assert_eq!(l.at, Millis(1_732_976_400_250));
        assert_eq!((l.seq, l.incarnation), (None, None));
        assert_eq!(
            l.message,
            Message::Request {
                kind: crate::protocol::Kind::Shutdown,
                request_id: id(),
                words: None,
                deadline: Millis::NEVER
            }
        );
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
        // A key written twice is refused, and is not taken for a torn line.
        // Keys the reader does not know are ignored, as the reference's reader ignores them.
        let extra = br#"{"type":"message","from":"x","content":"c","timestamp":1,"note":[1,{"a":2}]}"#;
        assert_eq!(Line::parse(extra, "a").map(|l| l.message), Ok(Message::Message { text: "c".into() }));
        let twice = Line::parse(br#"{"type":"message","type":"message","from":"x","content":"c","timestamp":1}"#, "a");
        assert!(matches!(&twice, Err(LineError::Shape(_))), "{twice:?}");
        let cases = [
            (
                r#"{"type":"shutdown_now","from":"x","content":"","timestamp":1}"#,
                LineError::UnknownType("shutdown_now".into()),
            ),
            (r#"{"type":"message","from":"x","timestamp":1}"#, LineError::Field("content")),
            (r#"{"type":"message","from":"x","content":"c","timestamp":-1}"#, LineError::Field("timestamp")),
            (
                r#"{"type":"shutdown_response","from":"x","content":"","timestamp":1,"request_id":"abcd1234","approve":true}"#,
                LineError::Field("request_id"),
            ),
            (
                r#"{"type":"message","from":"x","content":"c","timestamp":1,"incarnation":5000000000}"#,
                LineError::Field("incarnation"),
            ),
            (r#"{"type":"message","from":"x","content":"c","timestamp":1,"seq":1.5}"#, LineError::Field("seq")),
            (r#"{"type":"message","from":7,"content":"c","timestamp":1}"#, LineError::Field("from")),
            (
                r#"{"type":"plan_approval_response","from":"x","content":"","timestamp":1,"approve":"yes"}"#,
                LineError::Field("approve"),
            ),
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
