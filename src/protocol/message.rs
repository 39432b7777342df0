//! The typed messages agents exchange, and the envelope that carries them.
//!
//! One enum, serialised as a union tagged on `"type"`: the same shape as a
//! production agent's message schema, so a trace line reads like the wire.

use super::kinds::YesMeans;
use super::names::AgentId;
use super::time::Millis;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// Shared, immutable text. Cloning a message must not copy its plan or reason.
pub type Text = Arc<str>;

pub use super::request_id::{IdHashBuilder, IdHasher, RequestId};

pub use super::kinds::Kind;

/// Every message an agent can send. Plain `message` and `broadcast` carry text
/// and never touch protocol state; a plan request asks for a plan; the rest
/// are the protocols' requests and answers, one shape for every protocol:
/// its spec names their types and fields on the wire (a shutdown request's
/// words are its `reason`, a plan approval request's its `plan`).
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    Message {
        text: Text,
    },
    Broadcast {
        text: Text,
    },
    /// The lead asks a teammate for a plan before it changes anything more
    /// (the reference's `request_plan`): the teammate's gate becomes
    /// required and it submits a plan. Not a request of its own: it carries
    /// no id and gets no answer; the plan that follows is the request.
    PlanRequest {
        text: Text,
    },
    /// A protocol's request.
    Request {
        kind: Kind,
        request_id: RequestId,
        /// What it says: a shutdown's reason, the plan. A protocol whose
        /// request must say something (a plan) always has some.
        words: Option<Text>,
        /// The asker's deadline, carried as RPC deadlines are: the receiver
        /// knows when an answer can no longer count. `Millis::NEVER` when
        /// unknown (a forgery that names none).
        deadline: Millis,
    },
    /// A protocol's answer: yes or no, and what it says (a reason, feedback).
    Response {
        kind: Kind,
        request_id: RequestId,
        approve: bool,
        words: Option<Text>,
    },
}

/// Which half of a handshake a protocol message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Request,
    Response,
}

/// Every message type as the wire spells it (`Message::type_name`): the
/// two plain ones, the lead's ask for a plan, then each protocol's request
/// and response, in [`Kind::ALL`]'s order.
pub fn message_types() -> &'static [&'static str] {
    &TYPES
}

/// The protocols' message types: each one's request, then its response.
pub fn protocol_types() -> &'static [&'static str] {
    &TYPES[PLAIN_TYPES.len()..]
}

const PLAIN_TYPES: [&str; 3] = ["message", "broadcast", "plan_request"];

static TYPES: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
    let protocols = Kind::ALL.iter().flat_map(|k| [k.spec().request, k.spec().response]);
    PLAIN_TYPES.into_iter().chain(protocols).collect()
});

/// A message's type, as the events of a run carry it: typed, so that the
/// oracle, the views and the readers match on a protocol's kind and half,
/// never on a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MessageType {
    Message,
    Broadcast,
    PlanRequest,
    Request(Kind),
    Response(Kind),
}

impl MessageType {
    /// As the wire spells it.
    pub fn name(self) -> &'static str {
        match self {
            MessageType::Message => "message",
            MessageType::Broadcast => "broadcast",
            MessageType::PlanRequest => "plan_request",
            MessageType::Request(k) => k.spec().request,
            MessageType::Response(k) => k.spec().response,
        }
    }

    /// Every type, in [`message_types`]'s order.
    pub fn all() -> impl Iterator<Item = MessageType> {
        [MessageType::Message, MessageType::Broadcast, MessageType::PlanRequest]
            .into_iter()
            .chain(Kind::ALL.into_iter().flat_map(|k| [MessageType::Request(k), MessageType::Response(k)]))
    }

    /// The type the wire calls `name`.
    pub fn parse(name: &str) -> Option<MessageType> {
        MessageType::all().find(|t| t.name() == name)
    }

    /// The protocol and half, for a protocol's request or answer.
    pub fn protocol(self) -> Option<(Kind, Role)> {
        match self {
            MessageType::Request(k) => Some((k, Role::Request)),
            MessageType::Response(k) => Some((k, Role::Response)),
            _ => None,
        }
    }

    pub fn is_request(self) -> bool {
        matches!(self, MessageType::Request(_))
    }

    pub fn is_response(self) -> bool {
        matches!(self, MessageType::Response(_))
    }

    /// What a yes of this type commits the teammate who sends it to: for a
    /// protocol's answer, its spec's; nothing for any other message.
    pub fn yes_means(self) -> YesMeans {
        match self {
            MessageType::Response(kind) => kind.spec().yes_means,
            _ => YesMeans::Nothing,
        }
    }

    /// How the trace and the pictures say a message of this type's yes or
    /// no: its protocol's words for an answer (`accept`, `decline`), else
    /// `approve` / `reject` (a forgery of another type that carries one).
    pub fn answer_word(self, yes: bool) -> &'static str {
        match self {
            MessageType::Response(kind) => kind.spec().yes_no[!yes as usize],
            _ if yes => "approve",
            _ => "reject",
        }
    }
}

impl fmt::Display for MessageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Message {
    /// Its type, for the events that carry it.
    #[inline(always)]
    pub fn message_type(&self) -> MessageType {
        match self {
            Message::Message { .. } => MessageType::Message,
            Message::Broadcast { .. } => MessageType::Broadcast,
            Message::PlanRequest { .. } => MessageType::PlanRequest,
            Message::Request { kind, .. } => MessageType::Request(*kind),
            Message::Response { kind, .. } => MessageType::Response(*kind),
        }
    }

    /// The `type` tag, as written on the wire.
    pub fn type_name(&self) -> &'static str {
        match self {
            Message::Message { .. } => "message",
            Message::Broadcast { .. } => "broadcast",
            Message::PlanRequest { .. } => "plan_request",
            Message::Request { kind, .. } => kind.spec().request,
            Message::Response { kind, .. } => kind.spec().response,
        }
    }

    /// The protocol and half this message belongs to; `None` for plain text.
    #[inline(always)]
    pub fn protocol(&self) -> Option<(Kind, Role)> {
        match self {
            Message::Message { .. } | Message::Broadcast { .. } | Message::PlanRequest { .. } => None,
            Message::Request { kind, .. } => Some((*kind, Role::Request)),
            Message::Response { kind, .. } => Some((*kind, Role::Response)),
        }
    }

    #[inline(always)]
    pub fn request_id(&self) -> Option<RequestId> {
        match self {
            Message::Message { .. } | Message::Broadcast { .. } | Message::PlanRequest { .. } => None,
            Message::Request { request_id, .. } | Message::Response { request_id, .. } => Some(*request_id),
        }
    }

    /// The deadline a request carries (`Millis::NEVER` if it names none);
    /// `None` for anything but a request.
    pub fn deadline(&self) -> Option<Millis> {
        match self {
            Message::Request { deadline, .. } => Some(*deadline),
            _ => None,
        }
    }

    /// `Some(approve)` for a response.
    pub fn approval(&self) -> Option<bool> {
        match self {
            Message::Response { approve, .. } => Some(*approve),
            _ => None,
        }
    }

    /// The words a message carries: its text, reason, plan or feedback.
    pub fn words(&self) -> Option<&Text> {
        match self {
            Message::Message { text } | Message::Broadcast { text } | Message::PlanRequest { text } => Some(text),
            Message::Request { words, .. } | Message::Response { words, .. } => words.as_ref(),
        }
    }

    /// Parses one message from JSON, with serde's error naming the unknown
    /// `type` or the missing field.
    pub fn from_json(text: &str) -> Result<Message, serde_json::Error> {
        serde_json::from_str(text)
    }
}

impl Serialize for Message {
    /// As the wire has it: `type`, then the id, then the protocol's fields
    /// under its spec's names (a plan's `plan`, an answer's `feedback`).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("type", self.type_name())?;
        match self {
            Message::Message { text } | Message::Broadcast { text } | Message::PlanRequest { text } => {
                m.serialize_entry("text", text)?;
            }
            Message::Request { kind, request_id, words, deadline } => {
                m.serialize_entry("request_id", request_id)?;
                if let Some(w) = words {
                    m.serialize_entry(kind.spec().request_words.key, w)?;
                }
                if !deadline.is_never() {
                    m.serialize_entry("deadline", deadline)?;
                }
            }
            Message::Response { kind, request_id, approve, words } => {
                m.serialize_entry("request_id", request_id)?;
                m.serialize_entry(kind.spec().answer_key, approve)?;
                if let Some(w) = words {
                    m.serialize_entry(kind.spec().answer_words, w)?;
                }
            }
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Message {
    /// A union tagged on `type`, each protocol's fields as its spec names
    /// them; an unknown type, a missing field or an unknown one is refused
    /// by name, as serde's own derive refuses them.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Message, D::Error> {
        use serde::de::Error;
        let mut fields = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
        let Some(t) = fields.remove("type") else { return Err(D::Error::missing_field("type")) };
        let t = t.as_str().ok_or_else(|| D::Error::custom("`type` must be a string"))?.to_string();
        let types = message_types();
        let Some(&t) = types.iter().find(|x| **x == t) else { return Err(D::Error::unknown_variant(&t, types)) };
        let mut take = |key: &'static str| fields.remove(key);
        let text = |v: Option<serde_json::Value>, key: &'static str| -> Result<Option<Text>, D::Error> {
            match v {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(serde_json::Value::String(s)) => Ok(Some(s.into())),
                Some(other) => Err(D::Error::custom(format!("`{key}` must be text, not {other}"))),
            }
        };
        let need = |v: Option<Text>, key: &'static str| v.ok_or_else(|| D::Error::missing_field(key));
        let id = |v: Option<serde_json::Value>| -> Result<RequestId, D::Error> {
            let v = v.ok_or_else(|| D::Error::missing_field("request_id"))?;
            serde_json::from_value(v).map_err(D::Error::custom)
        };
        let (message, allowed): (Message, Vec<&'static str>) = match t {
            "message" => (Message::Message { text: need(text(take("text"), "text")?, "text")? }, vec!["text"]),
            "broadcast" => (Message::Broadcast { text: need(text(take("text"), "text")?, "text")? }, vec!["text"]),
            "plan_request" => (Message::PlanRequest { text: need(text(take("text"), "text")?, "text")? }, vec!["text"]),
            _ => {
                let (kind, role) = Kind::ALL
                    .iter()
                    .find_map(|k| {
                        let s = k.spec();
                        (s.request == t)
                            .then_some((*k, Role::Request))
                            .or((s.response == t).then_some((*k, Role::Response)))
                    })
                    .ok_or_else(|| D::Error::unknown_variant(t, types))?;
                let spec = kind.spec();
                let request_id = id(take("request_id"))?;
                match role {
                    Role::Request => {
                        let key = spec.request_words.key;
                        let words = text(take(key), key)?;
                        if spec.request_words.required && words.is_none() {
                            return Err(D::Error::missing_field(key));
                        }
                        let deadline = match take("deadline") {
                            None | Some(serde_json::Value::Null) => Millis::NEVER,
                            Some(v) => serde_json::from_value(v).map_err(D::Error::custom)?,
                        };
                        (Message::Request { kind, request_id, words, deadline }, vec!["request_id", key, "deadline"])
                    }
                    Role::Response => {
                        let approve = match take(spec.answer_key) {
                            None => return Err(D::Error::missing_field(spec.answer_key)),
                            Some(v) => v.as_bool().ok_or_else(|| {
                                D::Error::custom(format!("`{}` must be true or false, not {v}", spec.answer_key))
                            })?,
                        };
                        let words = text(take(spec.answer_words), spec.answer_words)?;
                        let allowed = vec!["request_id", spec.answer_key, spec.answer_words];
                        (Message::Response { kind, request_id, approve, words }, allowed)
                    }
                }
            }
        };
        if let Some(unknown) = fields.keys().next() {
            let mut expected = vec!["type"];
            expected.extend(allowed);
            return Err(D::Error::custom(format!(
                "unknown field `{unknown}`, expected one of {}",
                expected.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
            )));
        }
        Ok(message)
    }
}

/// Where an envelope goes: one agent, or every active agent but the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Address {
    Agent(AgentId),
    Everyone,
}

/// A message in transit. `from` is who the message *claims* to come from; the
/// router separately records who really handed it over (see `Delivery`).
// Fields in this order on purpose (`repr(C)` keeps it), for the copy actix
// makes of every input. The input's variant is told by `to`'s tag, and the
// compiler copies around that tag: what precedes it, then what follows it, in
// 16-byte pieces. With the tag four bytes before a 16-byte boundary of the
// delivery (`to` last here, the envelope at 16 in `Delivery`), both runs of
// pieces start on such a boundary and every later read of a field lies within
// one piece; with the compiler's own order they started four bytes off, and a
// read straddling two pieces waits until both stores land (a stall on every
// input: docs/architecture.md). `tests::layout` pins the arithmetic.
#[derive(Clone, Debug, PartialEq)]
#[repr(C)]
pub struct Envelope {
    pub sent_at: Millis,
    pub message: Message,
    pub from: AgentId,
    pub to: Address,
}

/// An envelope as it arrives: with the sender the router authenticated and the
/// virtual time it was delivered.
// In this order on purpose: see `Envelope`.
#[derive(Clone, Debug, PartialEq)]
#[repr(C)]
pub struct Delivery {
    /// The router's number for this message: pairs a send with its delivery or loss.
    pub seq: u64,
    pub at: Millis,
    pub envelope: Envelope,
    /// Who really sent it. Differs from `envelope.from` only for a forgery.
    pub sender: AgentId,
    pub to: AgentId,
    /// The incarnation of `to` the router saw when it accepted the message (a
    /// crash and restart increments it): a copy still in flight across a
    /// restart arrives marked as meant for the process that is gone. Every
    /// message is stamped, but only requests are checked against it (see
    /// `agent::admit`): a response is judged by its asker's request table,
    /// which survives a restart, and plain text changes nothing.
    pub incarnation: u32,
}

impl Message {
    /// Quotes `id` instead (a forgery naming a request by its label).
    pub fn set_request_id(&mut self, id: RequestId) {
        match self {
            Message::Request { request_id, .. } | Message::Response { request_id, .. } => *request_id = id,
            Message::Message { .. } | Message::Broadcast { .. } | Message::PlanRequest { .. } => {}
        }
    }

    /// Hashes the message for the explorer's fingerprint (see [`Canon`](super::Canon)).
    pub fn canon(&self, c: &mut super::Canon) {
        match self {
            Message::Message { text } => {
                c.word(1);
                c.text(text);
            }
            Message::Broadcast { text } => {
                c.word(2);
                c.text(text);
            }
            Message::PlanRequest { text } => {
                c.word(7);
                c.text(text);
            }
            // Each kind its own pair of tags, past the plain ones.
            Message::Request { kind, request_id, words, deadline } => {
                c.word(16 + 2 * kind.index() as u64);
                c.id(*request_id);
                c.opt_text(words.as_deref());
                c.millis(*deadline);
            }
            Message::Response { kind, request_id, approve, words } => {
                c.word((17 + 2 * kind.index() as u64) | (*approve as u64) << 8);
                c.id(*request_id);
                c.opt_text(words.as_deref());
            }
        }
    }
}

impl Delivery {
    /// Hashes the delivery but not its number: message numbers say in which
    /// order things were sent, which is history, not state.
    pub fn canon(&self, c: &mut super::Canon) {
        self.canon_timed(c, true);
    }

    /// As [`Delivery::canon`], leaving out when it was sent and when the
    /// network meant it to arrive (a delivery overwrites that with the time
    /// it does) unless `times`. For a message still in flight those are
    /// history where nothing reads them: see `Model::fingerprint`.
    pub fn canon_timed(&self, c: &mut super::Canon, times: bool) {
        c.agent(self.sender);
        c.agent(self.to);
        c.agent(self.envelope.from);
        match self.envelope.to {
            Address::Agent(a) => c.agent(a),
            Address::Everyone => c.word(u64::MAX),
        }
        if times {
            c.millis(self.envelope.sent_at);
            c.millis(self.at);
        }
        c.word(self.incarnation as u64);
        self.envelope.message.canon(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        use std::mem::{align_of, offset_of, size_of};
        // Nothing grew: these are the bytes every message, input and command copies.
        assert_eq!((size_of::<Message>(), size_of::<Envelope>(), size_of::<Delivery>()), (48, 72, 104));
        // `to`'s tag (which tells an input's variant) ends on a 16-byte
        // boundary of the delivery, so the copy's pieces after it start on
        // one (see `Envelope`).
        let tag = offset_of!(Delivery, envelope) + offset_of!(Envelope, to);
        assert_eq!((tag + 4) % 16, 0, "the address tag at {tag}");
        // Ids are read as two words: each must lie within one piece of a
        // copy, so at a multiple of 8 in every message that carries one.
        assert_eq!(align_of::<RequestId>(), 8);
        let placed = |m: &Message, id: &RequestId| (id as *const RequestId as usize) - (m as *const Message as usize);
        for m in [
            Message::Request { kind: Kind::Shutdown, request_id: id(), words: None, deadline: Millis(1) },
            Message::Response { kind: Kind::Shutdown, request_id: id(), approve: true, words: None },
            Message::Request { kind: Kind::Plan, request_id: id(), words: Some("p".into()), deadline: Millis(1) },
            Message::Response { kind: Kind::Plan, request_id: id(), approve: false, words: None },
        ] {
            let at = match &m {
                Message::Request { kind: Kind::Shutdown, request_id, .. }
                | Message::Response { kind: Kind::Shutdown, request_id, .. }
                | Message::Request { kind: Kind::Plan, request_id, .. }
                | Message::Response { kind: Kind::Plan, request_id, .. } => placed(&m, request_id),
                _ => unreachable!("every message above carries an id"),
            };
            assert_eq!(at % 8, 0, "{} has its id at {at}", m.type_name());
        }
    }

    fn id() -> RequestId {
        RequestId::from_random_bytes([7; 16])
    }

    #[test]
    fn drawing_an_id_takes_the_same_bytes_as_fill_bytes() {
        // Ids in saved traces and docs must not change with how they are drawn.
        // 1,000 draws cross many block boundaries, at odd word offsets too.
        use rand::{RngCore, SeedableRng};
        let mut a = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut b = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for i in 0..1000 {
            if i % 7 == 3 {
                // Shift the stream by one word now and then.
                assert_eq!(a.next_u32(), b.next_u32());
            }
            let mut bytes = [0u8; 16];
            b.fill_bytes(&mut bytes);
            assert_eq!(RequestId::draw(&mut a), RequestId::from_random_bytes(bytes), "draw {i}");
        }
    }

    #[test]
    fn serialises_as_a_union_tagged_on_type() {
        let m = Message::Response {
            kind: Kind::Shutdown,
            request_id: id(),
            approve: false,
            words: Some("tests running".into()),
        };
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(
            json,
            format!(
                r#"{{"type":"shutdown_response","request_id":"{}","approve":false,"reason":"tests running"}}"#,
                id()
            )
        );
        assert_eq!(Message::from_json(&json).unwrap(), m);
    }

    #[test]
    fn every_type_round_trips() {
        let mut all = vec![
            Message::Message { text: "hi".into() },
            Message::Broadcast { text: "all hands".into() },
            Message::PlanRequest { text: "show me a plan first".into() },
        ];
        // Every protocol's request (with words and without) and answers.
        for kind in Kind::ALL {
            let words = Some(format!("the {kind}'s words").into());
            all.push(Message::Request { kind, request_id: id(), words, deadline: Millis(5) });
            all.push(Message::Response { kind, request_id: id(), approve: true, words: None });
        }
        // The same with the words left out where the protocol allows it, and a "no".
        let silent = |m: &Message| match m {
            Message::Request { kind, words, .. } => {
                let words = if kind.spec().request_words.required { words.clone() } else { None };
                Message::Request { kind: *kind, request_id: id(), words, deadline: Millis::NEVER }
            }
            Message::Response { kind, .. } => {
                Message::Response { kind: *kind, request_id: id(), approve: false, words: Some("no".into()) }
            }
            other => other.clone(),
        };
        // The list of type names is the variants' own, in order, and the
        // protocol ones are those with a protocol.
        let names: Vec<&str> = all.iter().map(Message::type_name).collect();
        assert_eq!(names, message_types());
        let protocol: Vec<&str> = all.iter().filter(|m| m.protocol().is_some()).map(Message::type_name).collect();
        assert_eq!(protocol, protocol_types());
        let variants: Vec<Message> = all.iter().map(silent).collect();
        for m in all.into_iter().chain(variants) {
            let back = Message::from_json(&serde_json::to_string(&m).unwrap()).unwrap();
            assert_eq!(back.type_name(), m.type_name());
            assert_eq!(back, m);
        }
    }

    #[test]
    fn unknown_type_is_refused_by_name() {
        let err = Message::from_json(r#"{"type":"shutdown_now","request_id":"x"}"#).unwrap_err().to_string();
        assert!(err.contains("shutdown_now"), "{err}");
    }

    #[test]
    fn missing_field_is_refused_by_name() {
        let err = Message::from_json(&format!(r#"{{"type":"shutdown_response","request_id":"{}"}}"#, id()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("approve"), "{err}");
    }

    #[test]
    fn unknown_field_is_refused() {
        let err = Message::from_json(r#"{"type":"message","text":"x","urgent":true}"#).unwrap_err().to_string();
        assert!(err.contains("urgent"), "{err}");
    }

    #[test]
    fn ids_come_from_the_rng_given() {
        use rand::SeedableRng;
        let a = RequestId::draw(&mut rand_chacha::ChaCha8Rng::seed_from_u64(1));
        let b = RequestId::draw(&mut rand_chacha::ChaCha8Rng::seed_from_u64(1));
        let c = RequestId::draw(&mut rand_chacha::ChaCha8Rng::seed_from_u64(2));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.0.get_version_num(), 4);
    }

    #[test]
    fn only_protocol_messages_have_ids() {
        assert_eq!(Message::Message { text: "x".into() }.request_id(), None);
        assert_eq!(
            Message::Request { kind: Kind::Shutdown, request_id: id(), words: None, deadline: Millis::NEVER }
                .protocol(),
            Some((Kind::Shutdown, Role::Request))
        );
        assert_eq!(
            Message::Response { kind: Kind::Plan, request_id: id(), approve: true, words: None }.protocol(),
            Some((Kind::Plan, Role::Response))
        );
    }
}
