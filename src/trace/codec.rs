//! The event log's one codec. The table at [`events!`]'s call declares each
//! kind of event once: its `event` name, and each field with the codec that
//! writes it into the line (names for ids, a label with its request) and
//! reads it back. [`Stamped::to_json`] and [`Reading::event`] both come from
//! that table, and the compiler holds it to the enum: a variant or a field
//! left out of it does not build.

use super::{Cause, Event, Names, RosterStatus, Stamped};
use crate::fault_kind::FaultKind;
use crate::protocol::{
    Action, Address, AgentId, GateState, Kind, Label, MessageType, Millis, Reason, RequestId, SendError, Status, Text,
    TimeoutDefault, Verdict,
};
use serde_json::{json, Map, Value};
use std::borrow::Borrow;
use std::collections::BTreeMap;

/// Declares the events, each `Variant "name" { field: codec, ... }`, the
/// fields in the order the line holds their keys. A codec may take a field
/// declared before it (`claimed_from: Claimed(sender)`): writing, it sees
/// the field's value; reading, the value already read.
macro_rules! events {
    ($($variant:ident $name:literal { $($field:ident: $codec:expr),+ $(,)? })+) => {
        impl Event {
            /// The `event` field of a trace line.
            pub fn kind(&self) -> &'static str {
                match self {
                    $(Event::$variant { .. } => $name,)+
                }
            }
        }

        fn put(e: &Event, w: &mut Writer) {
            match e {
                $(Event::$variant { $($field),+ } => { $(Field::put(&$codec, $field, w);)+ })+
            }
        }

        fn get(kind: &str, r: &mut Reader) -> Result<Event, String> {
            match kind {
                $($name => {
                    $(let $field = Field::get(&$codec, r)?;)+
                    Ok(Event::$variant { $($field),+ })
                })+
                other => Err(format!("{other:?} is not an event this program knows")),
            }
        }
    };
}

events! {
    Send "send" {
        seq: Key("seq"), from: Key("from"), to: Key("to"), message_type: Key("type"), request_id: Request,
        approve: Key("approve"), words: Key("words"),
    }
    Refuse "refuse" { from: Key("from"), to: Key("to"), message_type: Key("type"), error: Rule(message_type) }
    Deliver "deliver" {
        seq: Key("seq"), sender: Key("from"), claimed_from: Claimed(sender), to: Key("to"), message_type: Key("type"),
        request_id: Request,
    }
    Dropped "drop" { seq: Key("seq"), to: Key("to"), message_type: Key("type"), cause: Key("cause") }
    Fault "fault" { seq: Key("seq"), fault: Key("fault"), detail: Key("detail") }
    Scripted "scripted" { agent: Key("agent") }
    Forge "forge" { seq: Key("seq"), claimed_from: Key("claimed_from"), to: Key("to"), message_type: Key("type") }
    Opened "request" {
        id: Request, label: LabelOf(id), kind: Key("kind"), requester: Key("from"), target: Key("to"),
        deadline: Deadline,
    }
    Verdict "verdict" {
        at: Key("at"), request_id: Request, response_kind: Key("kind"), approve: Key("approve"), sender: Key("from"),
        claimed_from: Claimed(sender), verdict: VerdictOf(response_kind),
    }
    Expired "expiry" { id: Request, kind: Key("kind"), default: DefaultOf(kind) }
    Gate "gate" { agent: Key("agent"), state: Key("state") }
    Act "action" { agent: Key("agent"), action: Key("action"), path: Key("path"), blocked: Blocked }
    FileStep "file" { agent: Key("agent"), path: Key("path"), done: Key("done"), total: Key("total") }
    Status "status" { agent: Key("agent"), status: Key("status") }
    Deferred "deferred" { agent: Key("agent"), request_id: Request }
    NoAnswer "no_answer" { agent: Key("agent"), request_id: Request }
    RequestIgnored "request_ignored" {
        agent: Key("agent"), request_id: Request, message_type: Key("type"), sender: Key("from"),
        claimed_from: Claimed(sender), reason: Key("reason"),
    }
    Crash "crash" { agent: Key("agent"), restart_at: Key("restart_at") }
    Restart "restart" { agent: Key("agent") }
    Respawn "respawn" { agent: Key("agent") }
    Stall "stall" { agent: Key("agent"), until: Key("until") }
    Partition "partition" {
        index: Ordinal("partition"), a: Between, b: BetweenAnd(a), one_way: Flag("direction", "one_way", "both"),
        drop: Flag("mode", "drop", "hold"), until: Key("until"),
    }
    Heal "heal" { index: Ordinal("partition") }
    Alert "alert" { agent: Key("agent"), text: Key("text") }
    Read "read" { agent: Key("agent"), path: Key("path"), lines: Key("lines"), bytes: Key("bytes"), busy: Key("busy_ms") }
    Deadlock "deadlock" { members: Key("members"), requests: Key("requests") }
    DeadlockBroken "deadlock_broken" { members: Key("members"), by: Request, default: Key("default") }
    Note "note" { text: Key("text") }
}

impl Stamped {
    /// One trace line as a JSON object; keys in a fixed order (`t`, `event`,
    /// then the event's fields as its kind declares them).
    pub fn to_json(&self, n: &Names) -> Value {
        let mut w = Writer { n, m: Map::new() };
        w.put("t", json!(self.t.0));
        w.put("event", json!(self.event.kind()));
        put(&self.event, &mut w);
        Value::Object(w.m)
    }
}

/// What reading a log keeps from one line to the next: the team, each name
/// an id in the order met, and the labels its requests were written with.
#[derive(Default)]
pub struct Reading {
    pub team: Team,
    /// The requests' labels (the agents are the team's).
    pub names: Names,
    /// Each request's status as the lines so far leave it: a verdict line
    /// writes only the status it applied, and the one it moved from is
    /// this (a replay's `expired → approved`, not `pending → approved`).
    statuses: BTreeMap<RequestId, Status>,
}

impl Reading {
    pub fn new() -> Reading {
        Reading::default()
    }

    /// One line read back into the event it was written from, or why not.
    pub fn event(&mut self, line: &Map<String, Value>) -> Result<Stamped, String> {
        let mut r = Reader { line, state: self };
        let t = Key("t").get(&mut r)?;
        let kind = r.text("event")?;
        let mut event = get(kind, &mut r)?;
        self.follow(&mut event);
        Ok(Stamped { t, event })
    }

    /// Keeps each request's status, and gives a verdict the one it moved from.
    fn follow(&mut self, event: &mut Event) {
        match event {
            Event::Opened { id, .. } => {
                self.statuses.insert(*id, Status::Pending);
            }
            Event::Expired { id, .. } => {
                self.statuses.insert(*id, Status::Expired);
            }
            Event::Verdict { request_id, verdict: Verdict::Applied { from, to, .. }, .. } => {
                *from = self.statuses.insert(*request_id, *to).unwrap_or(Status::Pending);
            }
            _ => {}
        }
    }

    /// The names the log used: the team's, and the requests' labels.
    pub fn into_names(self) -> Names {
        Names { agents: self.team.names, labels: self.names.labels }
    }
}

/// The team as a log names it: each name an id, in the order met.
#[derive(Default)]
pub struct Team {
    ids: BTreeMap<String, AgentId>,
    pub names: Vec<String>,
}

impl Team {
    pub fn agent(&mut self, name: &str) -> AgentId {
        if let Some(&a) = self.ids.get(name) {
            return a;
        }
        let a = AgentId(self.names.len() as u32);
        self.ids.insert(name.to_string(), a);
        self.names.push(name.to_string());
        a
    }
}

/// A line being written: its keys in order, and the names of the ids.
struct Writer<'a> {
    n: &'a Names,
    m: Map<String, Value>,
}

impl Writer<'_> {
    fn put(&mut self, key: &str, v: Value) {
        self.m.insert(key.to_string(), v);
    }
}

/// A line being read, and what reading keeps.
struct Reader<'a> {
    line: &'a Map<String, Value>,
    state: &'a mut Reading,
}

impl<'a> Reader<'a> {
    /// The value under `key`, unless it is missing or `null`.
    fn present(&self, key: &str) -> Option<&'a Value> {
        self.line.get(key).filter(|v| !v.is_null())
    }

    fn text(&self, key: &str) -> Result<&'a str, String> {
        self.line.get(key).and_then(Value::as_str).ok_or_else(|| needs(key, "a string"))
    }
}

fn needs(key: &str, what: &str) -> String {
    format!("needs \"{key}\", {what}")
}

/// `s` as one of `all`, each known by its `name`; else a sentence listing them.
fn one_of<T: Copy>(all: &[T], name: impl Fn(T) -> &'static str, s: &str, what: &str) -> Result<T, String> {
    all.iter().copied().find(|&x| name(x) == s).ok_or_else(|| {
        let known: Vec<&str> = all.iter().map(|&x| name(x)).collect();
        format!("{s:?} is not a {what} (one of {})", known.join(", "))
    })
}

/// A request's label, or its id when it has none.
fn label_or_id(n: &Names, id: RequestId) -> String {
    n.label(id).map_or_else(|| id.to_string(), str::to_string)
}

/// The request `s` names: its id, or its label.
fn named(n: &Names, s: &str) -> Option<RequestId> {
    let by_label = || n.labels.iter().find(|(_, l)| *l == s).map(|(id, _)| *id);
    uuid::Uuid::parse_str(s).ok().map(RequestId).or_else(by_label)
}

/// How one field of an event goes into its line, and comes back out.
trait Field<T> {
    fn put(&self, v: &T, w: &mut Writer);
    fn get(&self, r: &mut Reader) -> Result<T, String>;
}

/// A field under its key, as its type writes and reads itself ([`Plain`]).
/// An `Option` is left out of the line when `None`, and is `None` when the
/// key is missing or `null`.
struct Key(&'static str);

impl<T: Plain> Field<T> for Key {
    fn put(&self, v: &T, w: &mut Writer) {
        let v = v.to(w.n);
        w.put(self.0, v);
    }
    fn get(&self, r: &mut Reader) -> Result<T, String> {
        let v = r.line.get(self.0);
        v.and_then(|v| T::from(v, r)).unwrap_or_else(|| Err(needs(self.0, T::WHAT)))
    }
}

impl<T: Plain> Field<Option<T>> for Key {
    fn put(&self, v: &Option<T>, w: &mut Writer) {
        if let Some(v) = v {
            Key(self.0).put(v, w);
        }
    }
    fn get(&self, r: &mut Reader) -> Result<Option<T>, String> {
        r.present(self.0).map(|_| Field::<T>::get(self, r)).transpose()
    }
}

/// A value written as itself under its key.
trait Plain: Sized {
    /// What the key needs, said when it is missing or of another JSON type.
    const WHAT: &'static str;
    fn to(&self, n: &Names) -> Value;
    /// `None` when `v` is of another JSON type; an error when it is of the
    /// right one but no `Self` (a word outside its set).
    fn from(v: &Value, r: &mut Reader) -> Option<Result<Self, String>>;
}

/// `Type, WHAT: |value, names| written, |json, reader| read;`
macro_rules! plain {
    ($($t:ty, $what:literal: |$x:ident, $n:ident| $to:expr, |$v:ident, $r:ident| $from:expr;)+) => {$(
        impl Plain for $t {
            const WHAT: &'static str = $what;
            fn to(&self, $n: &Names) -> Value {
                let $x = self;
                $to
            }
            fn from($v: &Value, $r: &mut Reader) -> Option<Result<Self, String>> {
                $from
            }
        }
    )+};
}

plain! {
    u64, "a whole number": |x, _n| json!(x), |v, _r| v.as_u64().map(Ok);
    u32, "a whole number": |x, _n| json!(x), |v, _r| v.as_u64().and_then(|x| u32::try_from(x).ok()).map(Ok);
    Millis, "a whole number": |x, _n| json!(x.0), |v, _r| v.as_u64().map(|x| Ok(Millis(x)));
    bool, "true or false": |x, _n| json!(x), |v, _r| v.as_bool().map(Ok);
    String, "a string": |x, _n| json!(x), |v, _r| v.as_str().map(|s| Ok(s.into()));
    Text, "a string": |x, _n| json!(x.as_ref()), |v, _r| v.as_str().map(|s| Ok(s.into()));
    // A cause of a loss, under its name or the spelling older logs used.
    Cause, "a string": |x, _n| json!(x.as_str()), |v, _r| v.as_str().map(|s| {
        let known = || Cause::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", ");
        Cause::named(s).ok_or_else(|| format!("{s:?} is not a cause of a loss (one of {})", known()))
    });
    // Agents by name; an address may be `*`, everyone.
    AgentId, "a string": |x, n| json!(n.agent(*x)), |v, r| v.as_str().map(|s| Ok(r.state.team.agent(s)));
    Address, "a string": |x, n| json!(n.address(*x)), |v, r| v.as_str().map(|s| match s {
        "*" => Ok(Address::Everyone),
        name => Ok(Address::Agent(r.state.team.agent(name))),
    });
    Vec<AgentId>, "a list of names": |x, n| json!(x.iter().map(|a| n.agent(*a)).collect::<Vec<_>>()), |v, r| {
        let names = v.as_array()?.iter().map(Value::as_str);
        names.map(|s| s.map(|s| r.state.team.agent(s))).collect::<Option<_>>().map(Ok)
    };
    // Requests by label, or by id when they have none.
    Vec<RequestId>, "a list of requests": |x, n| json!(x.iter().map(|id| label_or_id(n, *id)).collect::<Vec<_>>()),
    |v, r| {
        let names = v.as_array()?.iter().map(Value::as_str).collect::<Option<Vec<_>>>()?;
        let known = |s: &str| named(&r.state.names, s).ok_or(format!("{s:?} is no request of this history"));
        Some(names.into_iter().map(known).collect())
    };
}

/// Words of a closed set, written by name: `Type: every value, its name, what one is called;`
macro_rules! words {
    ($($t:ty: $all:expr, $name:expr, $what:literal;)+) => {
        plain! { $($t, "a string": |x, _n| json!($name(*x)), |v, _r| v.as_str().map(|s| one_of(&$all, $name, s, $what));)+ }
    };
}

words! {
    MessageType: MessageType::all().collect::<Vec<_>>(), MessageType::name, "message type";
    Kind: Kind::ALL, Kind::as_str, "kind";
    GateState: [GateState::NotRequired, GateState::Required, GateState::Pending, GateState::Approved,
        GateState::Rejected], GateState::as_str, "gate state";
    Action: [Action::Read, Action::Write, Action::Edit, Action::Shell, Action::SubmitPlan], Action::as_str, "action";
    RosterStatus: [RosterStatus::Working, RosterStatus::WaitingApproval, RosterStatus::Idle, RosterStatus::Shutdown,
        RosterStatus::Killed, RosterStatus::Crashed], RosterStatus::as_str, "roster status";
    FaultKind: FaultKind::ALL, FaultKind::name, "fault kind";
    Reason: Reason::ALL, Reason::as_str, "reason";
    TimeoutDefault: TimeoutDefault::all().collect::<Vec<_>>(), TimeoutDefault::as_str, "timeout default";
}

/// A request: its `request_id`, then its `label` when the names know one,
/// learned back as read.
struct Request;

const A_REQUEST_ID: &str = "a request id (a UUID)";

impl Field<Option<RequestId>> for Request {
    fn put(&self, v: &Option<RequestId>, w: &mut Writer) {
        let Some(id) = v else { return };
        w.put("request_id", json!(id.to_string()));
        if let Some(l) = w.n.label(*id) {
            w.put("label", json!(l));
        }
    }
    fn get(&self, r: &mut Reader) -> Result<Option<RequestId>, String> {
        let Some(v) = r.present("request_id") else { return Ok(None) };
        let text = v.as_str().ok_or_else(|| needs("request_id", A_REQUEST_ID))?;
        let id = uuid::Uuid::parse_str(text).map_err(|_| format!("{text:?} is not a request id (a UUID)"))?;
        if let Some(label) = r.line.get("label").and_then(Value::as_str) {
            r.state.names.labels.entry(RequestId(id)).or_insert_with(|| label.to_string());
        }
        Ok(Some(RequestId(id)))
    }
}

impl Field<RequestId> for Request {
    fn put(&self, v: &RequestId, w: &mut Writer) {
        self.put(&Some(*v), w);
    }
    fn get(&self, r: &mut Reader) -> Result<RequestId, String> {
        Field::<Option<_>>::get(self, r)?.ok_or_else(|| needs("request_id", A_REQUEST_ID))
    }
}

/// Whom a message claims to be from: written only when that is not its
/// sender, the field before it.
struct Claimed<S>(S);

impl<S: Borrow<AgentId>> Field<AgentId> for Claimed<S> {
    fn put(&self, v: &AgentId, w: &mut Writer) {
        if v != self.0.borrow() {
            Key("claimed_from").put(v, w);
        }
    }
    fn get(&self, r: &mut Reader) -> Result<AgentId, String> {
        Ok(Field::<Option<_>>::get(&Key("claimed_from"), r)?.unwrap_or(*self.0.borrow()))
    }
}

/// A request's label as it was opened: written with its id (the field
/// before it, by [`Request`]), read back from the labels learned.
struct LabelOf<S>(S);

impl<S: Borrow<RequestId>> Field<Label> for LabelOf<S> {
    fn put(&self, _: &Label, _: &mut Writer) {}
    fn get(&self, r: &mut Reader) -> Result<Label, String> {
        Ok(Label::Named(label_or_id(&r.state.names, *self.0.borrow()).into()))
    }
}

/// The send rule a refusal broke, by name, and what it says; a refused
/// broadcast names the message's type (the field before it).
struct Rule<S>(S);

impl<S: Borrow<MessageType>> Field<SendError> for Rule<S> {
    fn put(&self, v: &SendError, w: &mut Writer) {
        w.put("rule", json!(v.rule()));
        w.put("reason", json!(v.to_string()));
    }
    fn get(&self, r: &mut Reader) -> Result<SendError, String> {
        match one_of(&SendError::all(), SendError::rule, r.text("rule")?, "send rule")? {
            SendError::ProtocolBroadcast(_) => Ok(SendError::ProtocolBroadcast(self.0.borrow().name())),
            error => Ok(error),
        }
    }
}

/// A request's deadline, `null` for none.
struct Deadline;

impl Field<Millis> for Deadline {
    fn put(&self, v: &Millis, w: &mut Writer) {
        w.put("deadline", if v.is_never() { Value::Null } else { json!(v.0) });
    }
    fn get(&self, r: &mut Reader) -> Result<Millis, String> {
        Ok(Field::<Option<_>>::get(&Key("deadline"), r)?.unwrap_or(Millis::NEVER))
    }
}

/// A verdict, `applied:STATUS` or `ignored:REASON`; an applied one moved a
/// request of the response's kind (the field before it) from pending.
struct VerdictOf<K>(K);

impl<K: Borrow<Kind>> Field<Verdict> for VerdictOf<K> {
    fn put(&self, v: &Verdict, w: &mut Writer) {
        let text = match v {
            Verdict::Applied { to, .. } => format!("applied:{to}"),
            Verdict::Ignored(r) => format!("ignored:{r}"),
        };
        w.put("verdict", json!(text));
    }
    fn get(&self, r: &mut Reader) -> Result<Verdict, String> {
        const STATUSES: [Status; 4] = [Status::Pending, Status::Approved, Status::Rejected, Status::Expired];
        match r.text("verdict")?.split_once(':') {
            Some(("applied", to)) => {
                let to = one_of(&STATUSES, Status::as_str, to, "status")?;
                Ok(Verdict::Applied { kind: *self.0.borrow(), from: Status::Pending, to })
            }
            Some(("ignored", why)) => Ok(Verdict::Ignored(one_of(&Reason::ALL, Reason::as_str, why, "reason")?)),
            _ => Err("a verdict is \"applied:STATUS\" or \"ignored:REASON\"".into()),
        }
    }
}

/// The default an expiry applied: one its request's protocol (the field
/// before it) may choose, as a shutdown that expired cannot be reassigned.
struct DefaultOf<K>(K);

impl<K: Borrow<Kind>> Field<TimeoutDefault> for DefaultOf<K> {
    fn put(&self, v: &TimeoutDefault, w: &mut Writer) {
        Key("default").put(v, w);
    }
    fn get(&self, r: &mut Reader) -> Result<TimeoutDefault, String> {
        let kind = *self.0.borrow();
        one_of(kind.spec().on_expiry, TimeoutDefault::as_str, r.text("default")?, &format!("{kind} timeout default"))
    }
}

/// Whether an action was `allowed`, and when not, the `gate` that held it.
struct Blocked;

impl Field<Option<GateState>> for Blocked {
    fn put(&self, v: &Option<GateState>, w: &mut Writer) {
        w.put("allowed", json!(v.is_none()));
        Key("gate").put(v, w);
    }
    fn get(&self, r: &mut Reader) -> Result<Option<GateState>, String> {
        match r.line.get("allowed") {
            Some(Value::Bool(false)) => Key("gate").get(r),
            _ => Ok(None),
        }
    }
}

/// A partition's number: from 1 in the line, from 0 in the event.
struct Ordinal(&'static str);

impl Field<u32> for Ordinal {
    fn put(&self, v: &u32, w: &mut Writer) {
        w.put(self.0, json!(v + 1));
    }
    fn get(&self, r: &mut Reader) -> Result<u32, String> {
        Key(self.0).get(r).map(|n: u32| n.max(1) - 1)
    }
}

/// A yes or no written as one of two words: `Flag(key, yes, no)`.
struct Flag(&'static str, &'static str, &'static str);

impl Field<bool> for Flag {
    fn put(&self, v: &bool, w: &mut Writer) {
        w.put(self.0, json!(if *v { self.1 } else { self.2 }));
    }
    fn get(&self, r: &mut Reader) -> Result<bool, String> {
        let Flag(key, yes, no) = *self;
        one_of(&[true, false], |b| if b { yes } else { no }, r.text(key)?, key)
    }
}

/// The first of a partition's two sides, written with the second as
/// `"between": [a, b]` by [`BetweenAnd`], which names the first (the field
/// before it).
struct Between;
struct BetweenAnd<S>(S);

fn side(r: &mut Reader, i: usize) -> Result<AgentId, String> {
    let name = r.line.get("between").and_then(|b| b.get(i)).and_then(Value::as_str);
    Ok(r.state.team.agent(name.ok_or_else(|| needs("between", "two names"))?))
}

impl Field<AgentId> for Between {
    fn put(&self, _: &AgentId, _: &mut Writer) {}
    fn get(&self, r: &mut Reader) -> Result<AgentId, String> {
        side(r, 0)
    }
}

impl<S: Borrow<AgentId>> Field<AgentId> for BetweenAnd<S> {
    fn put(&self, v: &AgentId, w: &mut Writer) {
        w.put("between", json!([w.n.agent(*self.0.borrow()), w.n.agent(*v)]));
    }
    fn get(&self, r: &mut Reader) -> Result<AgentId, String> {
        side(r, 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(line: &str) -> Result<Event, String> {
        let mut r = Reading::new();
        r.team.agent("lead");
        r.team.agent("alice");
        r.event(serde_json::from_str::<Value>(line).unwrap().as_object().unwrap()).map(|s| s.event)
    }

    /// Lines no bundled run writes read back to the event that wrote them.
    #[test]
    fn a_broadcast_refused_and_a_one_way_partition_read_back_as_written() {
        let names = Names { agents: vec!["lead".into(), "alice".into()], labels: BTreeMap::new() };
        let t = MessageType::Request(Kind::Shutdown);
        let error = SendError::ProtocolBroadcast(t.name());
        for event in [
            Event::Refuse { from: AgentId(0), to: Address::Everyone, message_type: t, error },
            Event::Partition { index: 1, a: AgentId(1), b: AgentId(0), one_way: true, drop: true, until: None },
        ] {
            let line = Stamped { t: Millis(5), event: event.clone() }.to_json(&names).to_string();
            assert_eq!(read(&line), Ok(event), "{line}");
        }
    }

    /// An optional key is missing or `null`; one of another type is refused,
    /// not read as missing (a `claimed_from` that is no name is no sign that
    /// the message was not forged).
    #[test]
    fn an_optional_key_is_missing_or_null_never_of_another_type() {
        let with = |more: &str| {
            read(&format!(r#"{{"t":1,"event":"deliver","seq":1,"from":"alice","to":"lead","type":"message"{more}}}"#))
        };
        let (alice, lead) = (AgentId(1), AgentId(0));
        let plain = Event::Deliver {
            seq: 1,
            sender: alice,
            claimed_from: alice,
            to: lead,
            message_type: MessageType::Message,
            request_id: None,
        };
        assert_eq!(with(""), Ok(plain.clone()));
        assert_eq!(with(r#","claimed_from":null,"request_id":null"#), Ok(plain));
        assert_eq!(with(r#","claimed_from":7"#), Err("needs \"claimed_from\", a string".into()));
        assert_eq!(with(r#","request_id":7"#), Err("needs \"request_id\", a request id (a UUID)".into()));
        let e = read(r#"{"t":1,"event":"partition","partition":1,"between":["lead","alice"],"direction":"sideways"}"#);
        assert_eq!(e, Err("\"sideways\" is not a direction (one of one_way, both)".into()));
    }

    /// A loss's cause and a fault's kind are spelled as a scenario file
    /// spells the fault; a log written before that still reads.
    #[test]
    fn causes_and_fault_kinds_read_by_the_files_spelling_and_the_older_one() {
        let lost = |cause: &str| {
            read(&format!(r#"{{"t":1,"event":"drop","seq":1,"to":"alice","type":"message","cause":"{cause}"}}"#))
        };
        let torn =
            Event::Dropped { seq: 1, to: AgentId(1), message_type: MessageType::Message, cause: Cause::TornWrite };
        assert_eq!(lost("torn_write"), Ok(torn.clone()));
        assert_eq!(lost("torn-write"), Ok(torn));
        assert!(matches!(lost("drain-loss"), Ok(Event::Dropped { cause: Cause::DrainLoss, .. })));
        assert!(lost("torn write").is_err_and(|e| e.contains("not a cause of a loss") && e.contains("torn_write")));
        let fault = read(r#"{"t":1,"event":"fault","seq":1,"fault":"replay","detail":"again"}"#);
        assert_eq!(fault, Ok(Event::Fault { seq: 1, fault: FaultKind::Replay, detail: "again".into() }));
        // A loss a fault caused is named as the file names the fault.
        for (cause, fault) in [
            (Cause::Drop, FaultKind::Drop),
            (Cause::Partition, FaultKind::Partition),
            (Cause::Crash, FaultKind::Crash),
            (Cause::TornWrite, FaultKind::TornWrite),
        ] {
            assert_eq!(cause.as_str(), fault.name());
        }
        let names = Names { agents: vec!["lead".into(), "alice".into()], labels: BTreeMap::new() };
        for &cause in Cause::ALL {
            let e = Event::Dropped { seq: 1, to: AgentId(1), message_type: MessageType::Message, cause };
            let line = Stamped { t: Millis(1), event: e.clone() }.to_json(&names).to_string();
            assert!(!line.contains('-'), "{line}");
            assert_eq!(read(&line), Ok(e), "{line}");
        }
    }
}
