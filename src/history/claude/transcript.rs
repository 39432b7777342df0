//! The lead's session transcript, `~/.claude/projects/<project>/<session>.jsonl`:
//! one JSON object a line, which outlives the team folder. What the lead
//! sent is in its `SendMessage` tool calls (three generations of input:
//! docs/claude-code.md), with the request id the runtime gave a request in
//! the call's result; what reached the lead is in its user turns, each
//! message wrapped in `<teammate-message teammate_id="bob" …>…</teammate-message>`.
//!
//! Read into the same entries as a team folder's, so one judge serves both.

use super::folder::{Entry, Reading};
use super::message::{self, Said};
use crate::history::stamp::{self, Stamp};
use crate::protocol::Kind;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// How many lines [`looks_like`] reads before it decides.
pub const LOOKED_AT: usize = 64;

/// Whether `text` begins as a Claude Code transcript: one JSON object a
/// line, each with a `type`, the first `user` / `assistant` / `system` one
/// with a `sessionId`, `message` or `uuid`. The lines the runtime writes
/// before the conversation (a resumed session's `summary`, a
/// `file-history-snapshot`) are passed over; a history of ours (its header
/// names `history`) is not one.
///
/// A session resumed many times may open with more than [`LOOKED_AT`] such
/// lines (a hostile review's transcript had 70 `summary` lines first, and
/// was refused as a history "needing t"): [`LOOKED_AT`] lines that are all
/// typed, with the runtime's pre-conversation kinds among them, are a
/// transcript whose conversation starts further on.
pub fn looks_like(text: &str) -> bool {
    let (mut before_the_conversation, mut looked) = (false, 0);
    for line in text.lines().filter(|l| !l.trim().is_empty()).take(LOOKED_AT) {
        looked += 1;
        // A line cut short (a copy taken from the middle of a file, a first
        // line garbled) decides nothing: the reader says it could not read
        // it. The lines around it decide.
        let Ok(Value::Object(m)) = serde_json::from_str::<Value>(line) else { continue };
        if m.contains_key("history") {
            return false;
        }
        match m.get("type").and_then(Value::as_str) {
            Some("user" | "assistant" | "system") => {
                return m.contains_key("sessionId") || m.contains_key("message") || m.contains_key("uuid")
            }
            Some("summary" | "file-history-snapshot") => before_the_conversation = true,
            Some(_) => continue,
            None => return false,
        }
    }
    // A file that ends before its conversation starts is none.
    before_the_conversation && looked == LOOKED_AT
}

/// Whether `text` is the start of a session that has not begun its
/// conversation yet: every line that is not blank (at least one) a JSON
/// object of a type the runtime writes before it (a history snapshot, a
/// summary, a queued prompt), none the conversation's own. What follows
/// decides: [`looks_like`] is asked of a whole file; this, of a file a
/// watch follows from its first moments.
pub fn begins_like(text: &str) -> bool {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty()).peekable();
    lines.peek().is_some()
        && lines.all(|line| match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(m)) => {
                !m.contains_key("history")
                    && matches!(m.get("type").and_then(Value::as_str), Some(t) if BEFORE_THE_CONVERSATION.contains(&t))
            }
            _ => false,
        })
}

/// The kinds of line besides the conversation's the runtime writes in a
/// transcript, which may come before its first message (docs/claude-code.md
/// says where each was seen).
const BEFORE_THE_CONVERSATION: &[&str] = &[
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "custom-title",
    "agent-name",
    "permission-mode",
    "last-prompt",
    "pr-link",
    "attachment",
];

/// A SendMessage call waiting for its result, which gives a request its id.
#[derive(Clone)]
struct Call {
    entry: Entry,
}

/// Reads the transcript `text` of the lead `lead`.
pub fn read(text: &str, lead: &str) -> Reading {
    // Reading from memory cannot fail.
    read_from(text.as_bytes(), lead).unwrap_or_else(|_| Reader::new(lead).into_reading())
}

/// Reads the transcript in `file` a line at a time: memory holds one line
/// and what was read from those before, however long the file (a whole
/// 500 MB transcript held as text, and parsed, took several gigabytes). A
/// line longer than [`crate::history::tail::LINE_BOUND`], or not UTF-8, is
/// said and passed over.
pub fn read_from(file: impl std::io::Read, lead: &str) -> std::io::Result<Reading> {
    use crate::history::tail::{each_line, Line};
    let mut r = Reader::new(lead);
    let read = each_line(&mut std::io::BufReader::with_capacity(64 << 10, file), true, |line| match line {
        Line::Text(text) => r.line(text),
        Line::Unreadable(why) => r.skip_line(why),
        Line::NewFile => {}
    });
    match read.error {
        Some(e) => Err(e),
        None => Ok(r.into_reading()),
    }
}

/// A transcript read a line at a time, as it grows: what a `watch` keeps
/// between its looks, so each look reads only the lines written since.
/// The lead's calls still waiting for their results are kept here, since a
/// call and its result may come in different looks.
pub struct Reader {
    lead: String,
    /// The team, the problems and the shapes so far, and the entries made
    /// since the last [`Reader::take_new`].
    reading: Reading,
    calls: BTreeMap<String, Call>,
    /// The lines read so far, blank ones included: the next line's number.
    lines: usize,
    /// Problems past the first [`PROBLEMS_LISTED`], counted, not kept: a
    /// file of ten million lines of junk took 2 GB to list them.
    past: usize,
    /// Whether a line said it was written by a Claude Code outside the
    /// versions this reader was written against (said once).
    other_version: bool,
}

/// The Claude Code versions this reader was written against (docs/claude-code.md).
const KNOWN_VERSIONS: ((u32, u32, u32), (u32, u32, u32)) = ((2, 1, 20), (2, 1, 260));

/// `2.1.97` as numbers; `None` for another spelling.
fn version(v: &str) -> Option<(u32, u32, u32)> {
    let mut parts = v.split('.').map(|p| p.parse::<u32>().ok());
    let v = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then_some(v)
}

/// The most problems a transcript's reading lists one by one.
pub const PROBLEMS_LISTED: usize = 10_000;

impl Reader {
    pub fn new(lead: &str) -> Reader {
        let mut reading = Reading::default();
        reading.team.lead = Some(lead.to_string());
        Reader { lead: lead.to_string(), reading, calls: BTreeMap::new(), lines: 0, past: 0, other_version: false }
    }

    /// Reads the next line (its newline, if given, is not part of it).
    pub fn line(&mut self, raw: &str) {
        self.read_line(raw);
        self.count_past();
    }

    /// Keeps the first [`PROBLEMS_LISTED`] problems; counts the rest.
    fn count_past(&mut self) {
        let u = &mut self.reading.unjudged;
        if u.len() > PROBLEMS_LISTED {
            self.past += u.len() - PROBLEMS_LISTED;
            u.truncate(PROBLEMS_LISTED);
        }
    }

    fn read_line(&mut self, raw: &str) {
        self.lines += 1;
        let raw = raw.strip_suffix('\n').map_or(raw, |r| r.strip_suffix('\r').unwrap_or(r));
        if raw.trim().is_empty() {
            return;
        }
        let r = &mut self.reading;
        let place = format!("line {}", self.lines);
        let Ok(Value::Object(line)) = serde_json::from_str::<Value>(raw) else {
            r.unjudged.push((place, "not a JSON object".into()));
            return;
        };
        if !self.other_version {
            let written = line.get("version").and_then(Value::as_str);
            let (first, last) = KNOWN_VERSIONS;
            if let Some(w) = written.filter(|w| version(w).is_some_and(|v| v < first || v > last)) {
                self.other_version = true;
                let why = format!(
                    "written by Claude Code {w}, outside the {}.{}.{} – {}.{}.{} this reader knows: read as those \
                     write, which may not be all it says",
                    first.0, first.1, first.2, last.0, last.1, last.2
                );
                // Placed on the whole file: a line's place would read as a
                // line not read, where a request may be.
                r.unjudged.push((super::kept::TRANSCRIPT.to_string(), format!("{place}: {why}")));
            }
        }
        // Most lines are the session's own talk and are passed over; one
        // that holds a call or a teammate's message in a shape not read is
        // said, never passed over (its send or answer would go unseen).
        let team_talk =
            raw.contains("\"SendMessage\"") || raw.contains("\"Teammate\"") || raw.contains("<teammate-message");
        let mut unread = |why: String| {
            if team_talk {
                r.unjudged
                    .push((place.clone(), format!("{why}, yet it holds a SendMessage call or a teammate's message")))
            }
        };
        let kind = line.get("type").and_then(Value::as_str);
        if !matches!(kind, Some("assistant" | "user")) {
            // The runtime's other lines (system, attachment, …) record no
            // turn (docs/claude-code.md); a turn written another way, or
            // with no type, may. One that quotes a teammate's message may
            // be its only record: a message that came while the lead was
            // busy is queued (iloom-cli#492), and a queued prompt is
            // written as an `attachment` line (agentsview#406).
            let a_turn = kind.is_none_or(|k| k.eq_ignore_ascii_case("assistant") || k.eq_ignore_ascii_case("user"));
            if a_turn && line.get("message").and_then(|m| m.get("content")).is_some() {
                unread(format!("a line of type {kind:?}: only \"assistant\" and \"user\" lines are read"));
            } else if !a_turn && raw.contains("<teammate-message") {
                r.unjudged.push((
                    place,
                    format!(
                        "a line of type \"{}\" quotes a teammate's message: a message queued while the lead was \
                         busy may be recorded only here, and such lines are not read",
                        kind.unwrap_or_default()
                    ),
                ));
            }
            return;
        }
        let Some(content) = line.get("message").and_then(|m| m.get("content")) else { return };
        if !(content.is_array() || content.is_string()) {
            return unread("its message.content is neither text nor a list".into());
        }
        let at = match line.get("timestamp").map(stamp::read) {
            Some(Ok(s)) => s,
            Some(Err(why)) => {
                r.unjudged.push((place, why));
                return;
            }
            None => return unread("a line with no timestamp".into()),
        };
        let (calls, lead) = (&mut self.calls, self.lead.as_str());
        match kind {
            Some("assistant") => sends(r, calls, content, at, lead, &place),
            _ => received(r, calls, content, at, lead, &place),
        }
    }

    /// Counts the next line as read but not interpreted, saying why.
    pub fn skip_line(&mut self, why: &str) {
        self.lines += 1;
        self.reading.unjudged.push((format!("line {}", self.lines), why.to_string()));
        self.count_past();
    }

    /// Everything read, in time order; a call whose result never came is
    /// what it sent, as the call said it.
    pub fn into_reading(mut self) -> Reading {
        self.take_new()
    }

    /// What is new since the last time, to be kept: the entries read since
    /// (a call answered since among them, with the id its result gave it),
    /// every call still waiting for its result, and the problems and shapes
    /// of all the lines so far.
    pub fn take_new(&mut self) -> Reading {
        let r = &mut self.reading;
        let mut unjudged = r.unjudged.clone();
        if self.past > 0 {
            let why =
                format!("{} more lines that could not be read, past the first {PROBLEMS_LISTED} listed", self.past);
            unjudged.push(("the transcript".to_string(), why));
        }
        let mut new = Reading {
            team: r.team.clone(),
            entries: std::mem::take(&mut r.entries),
            unjudged,
            unused_fields: r.unused_fields.clone(),
            shapes: r.shapes.clone(),
            not_parsed: Vec::new(),
            bounded: false,
            lost: Vec::new(),
        };
        new.entries.extend(self.calls.values().map(|c| c.entry.clone()));
        new.entries.sort_by_key(|e| e.at.ms);
        new
    }
}

/// The lead's SendMessage calls in an assistant turn.
fn sends(r: &mut Reading, calls: &mut BTreeMap<String, Call>, content: &Value, at: Stamp, lead: &str, place: &str) {
    for item in content.as_array().into_iter().flatten() {
        if item.get("type").and_then(Value::as_str) != Some("tool_use") {
            continue;
        }
        match item.get("name").and_then(Value::as_str) {
            Some("SendMessage") => {}
            Some(name) if name.eq_ignore_ascii_case("SendMessage") => {
                let why = format!("a tool named {name:?}: the runtime's is \"SendMessage\", and no other is read");
                r.unjudged.push((place.to_string(), why));
                continue;
            }
            // The generation before SendMessage (2.0.60 – 2.1.16): the lead
            // approved plans and asked for shutdowns through it. Passed over,
            // a teammate's answer to such a call was judged "an id never
            // issued", and the plan it approved "never answered".
            Some(name @ ("Teammate" | "TeammateTool")) => {
                let operation = item.pointer("/input/operation").and_then(Value::as_str).unwrap_or("none given");
                let why = format!(
                    "a {name} call (operation {operation:?}), as Claude Code 2.0.60 – 2.1.16 made them: that \
                     generation's calls are not read"
                );
                r.unjudged.push((place.to_string(), why));
                continue;
            }
            _ => continue,
        }
        let Some(input) = item.get("input").and_then(Value::as_object) else {
            r.unjudged.push((place.to_string(), "a SendMessage whose input is not a JSON object".into()));
            continue;
        };
        let id = item.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
        if let Some(form) = form(input) {
            *r.shapes.entry(form).or_default() += 1;
        }
        match call(input) {
            Ok((to, said)) => {
                // Made, in a shape not read: said, and the answers that
                // may quote its id are not judged as answering nothing.
                if let Said::Unknown { reason } = &said {
                    r.unjudged.push((place.to_string(), reason.clone()));
                }
                let digest = message::digest(&serde_json::to_string(input).unwrap_or_default());
                let entry =
                    Entry { origin: place.to_string(), at, from: lead.to_string(), to, said, digest, read: None };
                calls.insert(id, Call { entry });
            }
            Err(why) => r.unjudged.push((place.to_string(), why)),
        }
    }
}

/// Which generation of SendMessage input this is (docs/claude-code.md), if
/// any: one with neither `message` nor `type` is none of them.
fn form(input: &Map<String, Value>) -> Option<&'static str> {
    if input.contains_key("message") {
        Some(FORMS[0])
    } else if input.contains_key("subtype") {
        Some(FORMS[2])
    } else if input.contains_key("type") {
        Some(FORMS[1])
    } else {
        None
    }
}

/// The SendMessage forms, newest first, as `shapes` names them.
pub const FORMS: [&str; 3] = [
    "SendMessage {to, message}",
    "SendMessage {type, recipient, content}",
    "SendMessage {type, subtype, recipient, content}",
];

/// A SendMessage input, any generation: its recipient and what it says.
fn call(input: &Map<String, Value>) -> Result<(String, Said), String> {
    let to = ["to", "recipient"]
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
        .ok_or("a SendMessage with no \"to\" or \"recipient\"")?
        .to_string();
    // 2.1.75 on: `message` is the text, or the protocol message itself.
    if let Some(m) = input.get("message") {
        return Ok((
            to,
            match m {
                Value::String(s) => message::read(s),
                Value::Object(o) => message::read_object(o),
                _ => Said::Unknown { reason: "a SendMessage whose message is neither text nor an object".into() },
            },
        ));
    }
    // Before: the type at the top level (2.1.30), or type and subtype (2.1.20).
    let Some(kind) = input.get("type").and_then(Value::as_str) else {
        let why = "a SendMessage input in no shape read: neither \"message\" (2.1.75 on) nor a \"type\" (before)";
        return Ok((to, Said::Unknown { reason: why.into() }));
    };
    let subtype = input.get("subtype").and_then(Value::as_str);
    let written = match (kind, subtype) {
        ("request", Some("shutdown")) => "shutdown_request",
        ("response", Some("shutdown")) => "shutdown_response",
        ("response", Some("plan_approval")) => "plan_approval_response",
        ("message" | "broadcast", _) => {
            return Ok((to, Said::Plain));
        }
        (t, _) => t,
    };
    let mut o = input.clone();
    o.insert("type".into(), Value::String(written.to_string()));
    if let Some(c) = input.get("content") {
        o.entry("reason").or_insert_with(|| c.clone());
        o.entry("feedback").or_insert_with(|| c.clone());
    }
    Ok((to, message::read_object(&o)))
}

/// A user turn: tool results (which give a request its id, or say the send
/// was refused) and the teammates' messages delivered to the lead.
fn received(r: &mut Reading, calls: &mut BTreeMap<String, Call>, content: &Value, at: Stamp, lead: &str, place: &str) {
    let texts: Vec<&str> = match content {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => {
            for item in items.iter().filter(|i| i.get("type").and_then(Value::as_str) == Some("tool_result")) {
                let id = item.get("tool_use_id").and_then(Value::as_str).unwrap_or_default();
                if let Some(c) = calls.remove(id) {
                    result(r, c, item);
                }
            }
            items.iter().filter_map(|i| i.get("text").and_then(Value::as_str)).collect()
        }
        _ => Vec::new(),
    };
    for text in texts {
        let (blocks, problem) = teammate_messages(text);
        if let Some(why) = problem {
            r.unjudged.push((place.to_string(), why.into()));
        }
        for (who, body) in blocks {
            let Some(who) = who else {
                let why = "a <teammate-message> with no teammate_id: who sent it is unknown";
                r.unjudged.push((place.to_string(), why.into()));
                continue;
            };
            let (said, shape) = message::read_named(&body);
            if let Some(shape) = shape {
                *r.shapes.entry(shape).or_default() += 1;
            }
            if let Said::Unknown { reason } = &said {
                r.unjudged.push((place.to_string(), reason.clone()));
            }
            let digest = message::digest(&body);
            let entry = Entry {
                origin: place.to_string(),
                at,
                from: who,
                to: lead.to_string(),
                said,
                digest,
                read: Some(true),
            };
            r.entries.push(entry);
        }
    }
}

/// A SendMessage's result: the request id the runtime gave it, or its
/// refusal (a defence that fired is news: said, and the send not made).
fn result(r: &mut Reading, mut c: Call, item: &Value) {
    let text = match item.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect(),
        _ => String::new(),
    };
    let parsed = message::leading_object(&text);
    let refused = item.get("is_error").and_then(Value::as_bool) == Some(true)
        || parsed.as_ref().and_then(|m| m.get("success")).and_then(Value::as_bool) == Some(false);
    if refused {
        let why = parsed.as_ref().and_then(|m| m.get("message")).and_then(Value::as_str).unwrap_or(&text);
        let what = Box::new(std::mem::replace(&mut c.entry.said, Said::Plain));
        c.entry.said = Said::Refused { what, why: why.to_string() };
        r.entries.push(c.entry);
        return;
    }
    if let Said::Request { kind: Kind::Shutdown, id: id @ None, .. } = &mut c.entry.said {
        *id = parsed.as_ref().and_then(|m| m.get("request_id")).and_then(Value::as_str).map(str::to_string);
        if id.is_none() {
            // Made, but under no id an answer can quote: said. An answer from
            // its target quoting an id never seen is then taken as its own,
            // and said so (`events.rs`, `Builder::answer`).
            let why = "a shutdown request whose result gives no request id in a shape read (JSON with \
                       \"request_id\"): its id is known only if its teammate's answer quotes one";
            r.unjudged.push((c.entry.origin.clone(), why.to_string()));
        }
    }
    r.entries.push(c.entry);
}

/// Each `<teammate-message teammate_id="bob" …>body</teammate-message>` in
/// `text`: who sent it (if the tag says) and its body; and why the rest
/// of `text` could not be read, if a block is left open.
fn teammate_messages(text: &str) -> (Vec<(Option<String>, String)>, Option<&'static str>) {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("<teammate-message") {
        let after = &rest[open..];
        let Some(head_end) = tag_end(after) else { return (out, Some("a <teammate-message> tag left open")) };
        let head = &after[..head_end];
        let body_and_more = &after[head_end + 1..];
        let Some(close) = body_and_more.find("</teammate-message>") else {
            return (out, Some("a <teammate-message> with no </teammate-message>: its message cannot be told apart"));
        };
        let body = body_and_more[..close].trim().to_string();
        out.push((attribute(head, "teammate_id"), body));
        rest = &body_and_more[close + "</teammate-message>".len()..];
    }
    (out, None)
}

/// Where the tag `text` starts with ends: its first `>` outside a quoted
/// attribute (`summary="ok -> done"` holds one).
fn tag_end(text: &str) -> Option<usize> {
    let mut quoted = false;
    for (i, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '>' if !quoted => return Some(i),
            _ => {}
        }
    }
    None
}

fn attribute(head: &str, name: &str) -> Option<String> {
    let start = head.find(&format!("{name}=\""))? + name.len() + 2;
    let end = head[start..].find('"')? + start;
    Some(head[start..end].to_string())
}

#[cfg(test)]
mod problems_bounded {
    use super::*;

    /// A hostile review: ten million lines of junk listed one problem each,
    /// 2 GB for a 20 MB file. The first PROBLEMS_LISTED, then a count.
    #[test]
    fn problems_past_the_listed_are_counted_not_kept() {
        let mut r = Reader::new("team-lead");
        for _ in 0..PROBLEMS_LISTED + 25 {
            r.line("x");
        }
        r.skip_line("not UTF-8 text");
        let reading = r.into_reading();
        assert_eq!(reading.unjudged.len(), PROBLEMS_LISTED + 1);
        let (place, why) = reading.unjudged.last().expect("the count");
        assert_eq!(place, "the transcript");
        assert!(why.starts_with("26 more lines"), "{why}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(v: Value) -> String {
        v.to_string()
    }

    /// A hostile review: a `>` inside an attribute (`summary="ok -> done"`)
    /// ended the tag there, and the answer after it was read as prose: a
    /// bare PASS that a second, conflicting answer could hide in.
    #[test]
    fn a_tag_ends_at_its_first_angle_bracket_outside_quotes() {
        let text = "<teammate-message teammate_id=\"bob\" summary=\"ok -> shutting down\">\n{\"type\":\"shutdown_approved\"}\n</teammate-message>";
        let (blocks, problem) = teammate_messages(text);
        assert_eq!(problem, None);
        assert_eq!(blocks, vec![(Some("bob".to_string()), "{\"type\":\"shutdown_approved\"}".to_string())]);
        assert_eq!(tag_end("<a b=\">\">"), Some(8));
        assert_eq!(tag_end("<a b=\">"), None);
    }

    /// A review from real reports: a transcript every line of which said
    /// it came from Claude Code 2.3.5 got a bare PASS, the reader's
    /// generation claimed for it. A version outside those known is said,
    /// once, on the whole file.
    #[test]
    fn a_version_outside_those_known_is_said_once() {
        let line = |v: &str| {
            format!(
                r#"{{"type":"user","sessionId":"s","version":"{v}","timestamp":"2026-09-05T10:00:01.000Z","message":{{"role":"user","content":"hi"}}}}"#
            )
        };
        let r = read(&format!("{}\n{}\n", line("2.3.5"), line("2.3.5")), "team-lead");
        assert_eq!(r.unjudged.len(), 1, "{:?}", r.unjudged);
        assert_eq!(r.unjudged[0].0, "transcript");
        assert!(r.unjudged[0].1.starts_with("line 1: written by Claude Code 2.3.5, outside the 2.1.20 – 2.1.260"));
        for known in ["2.1.20", "2.1.97", "2.1.260", "2.1.x"] {
            assert!(read(&line(known), "team-lead").unjudged.is_empty(), "{known}");
        }
        assert_eq!(read(&line("2.0.60"), "team-lead").unjudged.len(), 1, "before the first known");
    }

    #[test]
    fn a_transcript_gives_the_leads_sends_with_their_ids_and_what_reached_it() {
        let send = serde_json::json!({"type":"assistant","sessionId":"s","timestamp":"2026-04-09T17:27:03.068Z",
            "message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"SendMessage",
            "input":{"to":"bob","message":{"type":"shutdown_request","reason":"done"}}}]}});
        let result = serde_json::json!({"type":"user","sessionId":"s","timestamp":"2026-04-09T17:27:03.200Z",
            "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1",
            "content":"{\"success\":true,\"request_id\":\"shutdown-1775755623068@bob\",\"target\":\"bob\"}"}]}});
        let arrived = serde_json::json!({"type":"user","sessionId":"s","timestamp":"2026-04-09T17:27:05.000Z",
            "message":{"role":"user","content":"<teammate-message teammate_id=\"bob\" color=\"green\">\n{\"type\":\"shutdown_approved\",\"requestId\":\"shutdown-1775755623068@bob\",\"from\":\"bob\"}\n</teammate-message>\n\n<teammate-message teammate_id=\"system\">\n{\"type\":\"teammate_terminated\",\"message\":\"bob has shut down.\"}\n</teammate-message>"}});
        let old = serde_json::json!({"type":"assistant","sessionId":"s","timestamp":"2026-04-09T17:27:06.000Z",
            "message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"SendMessage",
            "input":{"type":"message","recipient":"alice","content":"hi","summary":"hi"}}]}});
        let text = [line(send), line(result), line(arrived), line(old)].join("\n");
        assert!(looks_like(&text));
        // A resumed session's summary, or a snapshot, comes first.
        let summary = r#"{"type":"summary","summary":"Shutting the team down","leafUuid":"u1"}"#;
        let snapshot = r#"{"type":"file-history-snapshot","messageId":"m1","snapshot":{},"isSnapshotUpdate":false}"#;
        assert!(looks_like(&format!("{summary}\n{snapshot}\n\n{text}")));
        assert!(!looks_like(&format!("{summary}\n{snapshot}\n")), "no conversation");
        // Yet the start of one, to a watch (a hostile review: a watch begun
        // with the session was refused).
        assert!(begins_like(&format!("{snapshot}\n")) && begins_like(&format!("{summary}\n{snapshot}\n")));
        let queued = r#"{"type":"queue-operation","operation":"enqueue","timestamp":"2026-04-09T17:27:00.000Z"}"#;
        assert!(begins_like(queued));
        assert!(!begins_like("") && !begins_like("{}") && !begins_like(&format!("{snapshot}\nnot json")));
        assert!(!begins_like(r#"{"type":"send","history":1}"#), "one of our histories");
        // A line that is not JSON is passed over (this asserted the
        // opposite: a transcript whose first line was cut short, as a copy
        // of a file's last part has it, was refused as no transcript, though
        // the reader says such a line and reads the rest).
        assert!(looks_like(&format!("{summary}\nnot json\n{text}")));
        assert!(looks_like(&format!("{{\"type\":\"assistant\",\"mess\n{text}")), "a first line cut short");
        assert!(!looks_like("not json\nnor this\n"), "no line of a transcript");
        let r = read(&format!("ant\",\"sessionId\":\"s\"}}\n{text}"), "team-lead");
        assert_eq!(r.unjudged, [("line 1".to_string(), "not a JSON object".to_string())]);
        assert!(!looks_like(r#"{"history":1,"type":"user","message":{}}"#));
        let r = read(&text, "team-lead");
        assert!(r.unjudged.is_empty(), "{:?}", r.unjudged);
        let said: Vec<(&str, &str, &Said)> =
            r.entries.iter().map(|e| (e.from.as_str(), e.to.as_str(), &e.said)).collect();
        assert_eq!(said.len(), 4, "{said:?}");
        assert!(
            matches!(said[0], ("team-lead", "bob", Said::Request { kind: Kind::Shutdown, id: Some(id), .. }) if id == "shutdown-1775755623068@bob")
        );
        assert!(matches!(said[1], ("bob", "team-lead", Said::Answer { kind: Kind::Shutdown, yes: true, .. })));
        assert!(matches!(said[2], ("system", "team-lead", Said::Notice(_))));
        assert_eq!(said[3], ("team-lead", "alice", &Said::Plain));
    }

    /// A hostile review: a result that gives the request id only in prose
    /// left the request under no id, and the teammate's answer quoting the
    /// id was judged "an id never issued", a FAIL the transcript does not
    /// show. The request is said; its teammate's answer gives its id, said.
    #[test]
    fn a_request_whose_result_gives_its_id_only_in_prose_takes_the_id_its_answer_quotes_and_says_so() {
        let send = serde_json::json!({"type":"assistant","sessionId":"s","timestamp":"2026-04-09T17:27:03.068Z",
            "message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"SendMessage",
            "input":{"to":"bob","message":{"type":"shutdown_request","reason":"done"}}}]}});
        let result = serde_json::json!({"type":"user","sessionId":"s","timestamp":"2026-04-09T17:27:03.200Z",
            "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1",
            "content":"Shutdown request sent to bob. Request ID: shutdown-1775755623068@bob"}]}});
        let arrived = serde_json::json!({"type":"user","sessionId":"s","timestamp":"2026-04-09T17:27:05.000Z",
            "message":{"role":"user","content":"<teammate-message teammate_id=\"bob\" color=\"green\">\n{\"type\":\"shutdown_approved\",\"requestId\":\"shutdown-1775755623068@bob\",\"from\":\"bob\"}\n</teammate-message>"}});
        let r = read(&[line(send.clone()), line(result.clone()), line(arrived.clone())].join("\n"), "team-lead");
        assert_eq!(r.unjudged.len(), 1, "{:?}", r.unjudged);
        assert!(r.unjudged[0].1.contains("gives no request id"), "{:?}", r.unjudged);
        let h = crate::history::claude::transcript_of(&r);
        let said = |h: &crate::history::History| -> Vec<String> {
            h.events
                .iter()
                .filter_map(|e| match &e.event {
                    crate::trace::Event::Alert { text, .. } => Some(text.clone()),
                    _ => None,
                })
                .collect()
        };
        let alerts = said(&h);
        assert!(alerts.iter().any(|a| a.contains("taken as the id of the shutdown request at line 1")), "{alerts:?}");
        let judged = |h: &crate::history::History| {
            let log = crate::oracle::Log { names: &h.names, events: &h.events, ended_at: h.ended_at, stop: h.stop };
            crate::oracle::check_log(&log, &h.policy, &h.require_plan)
        };
        assert!(judged(&h).is_empty(), "no violation the transcript does not show: {:?}", judged(&h));
        // The same id answered both ways breaks an invariant whatever it
        // answers (a review: this passed while such answers went unjudged).
        let rejected = serde_json::json!({"type":"user","sessionId":"s","timestamp":"2026-04-09T17:27:06.000Z",
            "message":{"role":"user","content":"<teammate-message teammate_id=\"bob\" color=\"green\">\n{\"type\":\"shutdown_rejected\",\"requestId\":\"shutdown-1775755623068@bob\",\"from\":\"bob\",\"reason\":\"busy\"}\n</teammate-message>"}});
        let both = [line(send), line(result), line(arrived), line(rejected)].join("\n");
        let h = crate::history::claude::transcript_of(&read(&both, "team-lead"));
        assert!(!judged(&h).is_empty(), "approved then rejected is judged: {:?}", said(&h));
    }

    /// A Claude Code user's review: a SendMessage whose message had a type
    /// not read (`shutdown_request_v2`) was dropped without a word: a bare
    /// PASS, and the teammate's answer quoting its id was judged "an id
    /// never issued". An input with neither `message` nor `type` was read
    /// as prose, and counted as the 2.1.30 generation.
    #[test]
    fn a_send_in_a_shape_not_read_is_unjudged_and_its_answer_not_judged_as_answering_nothing() {
        let send = serde_json::json!({"type":"assistant","sessionId":"s","timestamp":"2026-04-09T17:27:03.068Z",
            "message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"SendMessage",
            "input":{"to":"bob","message":{"type":"shutdown_request_v2","reason":"done"}}}]}});
        let result = serde_json::json!({"type":"user","sessionId":"s","timestamp":"2026-04-09T17:27:03.200Z",
            "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1",
            "content":"{\"success\":true,\"request_id\":\"shutdown-1775755623068@bob\",\"target\":\"bob\"}"}]}});
        let arrived = serde_json::json!({"type":"user","sessionId":"s","timestamp":"2026-04-09T17:27:05.000Z",
            "message":{"role":"user","content":"<teammate-message teammate_id=\"bob\" color=\"green\">\n{\"type\":\"shutdown_approved\",\"requestId\":\"shutdown-1775755623068@bob\",\"from\":\"bob\"}\n</teammate-message>"}});
        let r = read(&[line(send), line(result), line(arrived)].join("\n"), "team-lead");
        assert_eq!(r.unjudged.len(), 1, "{:?}", r.unjudged);
        assert_eq!(r.unjudged[0].0, "line 1");
        assert!(r.unjudged[0].1.contains("shutdown_request_v2"), "{:?}", r.unjudged);
        let h = crate::history::claude::transcript_of(&r);
        let log = crate::oracle::Log { names: &h.names, events: &h.events, ended_at: h.ended_at, stop: h.stop };
        let broken = crate::oracle::check_log(&log, &h.policy, &h.require_plan);
        assert!(broken.is_empty(), "the answer may answer the request not read: {broken:?}");

        let bare = serde_json::json!({"type":"assistant","sessionId":"s","timestamp":"2026-04-09T17:27:03.068Z",
            "message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"SendMessage",
            "input":{"recipient":"bob","kind":"shutdown","body":"stop"}}]}});
        let r = read(&line(bare), "team-lead");
        assert_eq!(r.unjudged.len(), 1, "{:?}", r.unjudged);
        assert!(r.unjudged[0].1.contains("in no shape read"), "{:?}", r.unjudged);
        assert!(r.shapes.keys().all(|s| !s.starts_with("SendMessage")), "no generation: {:?}", r.shapes);
    }

    #[test]
    fn a_send_the_runtime_refused_is_said_and_not_made() {
        let send = serde_json::json!({"type":"assistant","sessionId":"s","timestamp":"2026-04-09T17:27:03.068Z",
            "message":{"content":[{"type":"tool_use","id":"t1","name":"SendMessage",
            "input":{"to":"alice","message":{"type":"shutdown_response","request_id":"shutdown-1@team-lead","approve":true}}}]}});
        let refused = serde_json::json!({"type":"user","sessionId":"s","timestamp":"2026-04-09T17:27:03.100Z",
            "message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,
            "content":"shutdown_response must be sent to \"team-lead\""}]}});
        let r = read(&[line(send), line(refused)].join("\n"), "team-lead");
        assert!(r.unjudged.is_empty(), "{:?}", r.unjudged);
        assert!(
            matches!(&r.entries[0].said, Said::Refused { why, .. } if why.contains("shutdown_response must be sent to")),
            "{:?}",
            r.entries
        );
    }

    #[test]
    fn a_long_transcript_is_not_said_to_be_a_large_inbox() {
        // More messages reach the lead than an inbox is trusted to hold, but a
        // transcript is what the lead was shown: nothing was hidden from it.
        let arrived = |n: usize| {
            line(
                serde_json::json!({"type":"user","sessionId":"s","timestamp":format!("2026-04-09T17:{:02}:{:02}Z", n / 60, n % 60),
                "message":{"role":"user","content":format!("<teammate-message teammate_id=\"bob\">\nnote {n}\n</teammate-message>")}}),
            )
        };
        let many = super::super::events::LARGE_INBOX + 5;
        let text: Vec<String> = (0..many).map(arrived).collect();
        let r = read(&text.join("\n"), "team-lead");
        assert_eq!(r.entries.len(), many);
        let h = crate::history::claude::transcript_of(&r);
        let alerts: Vec<_> = h.events.iter().filter(|e| matches!(e.event, crate::trace::Event::Alert { .. })).collect();
        assert!(alerts.is_empty(), "{alerts:?}");
    }

    #[test]
    fn team_talk_in_a_shape_not_read_is_said_and_other_talk_passed_over() {
        let at = "\"timestamp\":\"2026-04-09T17:27:03.068Z\"";
        let send = |name: &str, input: &str| {
            format!(
                r#"{{"type":"assistant",{at},"message":{{"role":"assistant","content":[{{"type":"tool_use","id":"t1","name":"{name}","input":{input}}}]}}}}"#
            )
        };
        let user = |kind: &str, content: &str, stamp: &str| {
            format!(r#"{{"type":"{kind}",{stamp}"message":{{"role":"user","content":{content}}}}}"#)
        };
        let block = |attrs: &str, close: &str| {
            serde_json::to_string(&format!("<teammate-message{attrs}>\nhello\n{close}")).unwrap()
        };
        let cases = [
            (send("sendMessage", r#"{"to":"bob","message":"hi"}"#), "a tool named \"sendMessage\""),
            (send("SendMessage", r#""to bob: hi""#), "input is not a JSON object"),
            (user("user", &block(" teammate_id=\"bob\"", ""), &format!("{at},")), "no </teammate-message>"),
            (user("user", &block("", "</teammate-message>"), &format!("{at},")), "no teammate_id"),
            (
                user("Assistant", &block(" teammate_id=\"bob\"", "</teammate-message>"), &format!("{at},")),
                "a line of type",
            ),
            (
                user(
                    "user",
                    &format!(r#"{{"text":{}}}"#, block(" teammate_id=\"bob\"", "</teammate-message>")),
                    &format!("{at},"),
                ),
                "neither text nor a list",
            ),
            (user("user", &block(" teammate_id=\"bob\"", "</teammate-message>"), ""), "no timestamp"),
            // A hostile review: a teammate's message queued while the lead
            // was busy, recorded in an attachment line, was passed over.
            (
                user("attachment", &block(" teammate_id=\"bob\"", "</teammate-message>"), &format!("{at},")),
                "quotes a teammate's message",
            ),
            (
                user("progress", &block(" teammate_id=\"bob\"", "</teammate-message>"), &format!("{at},")),
                "quotes a teammate's message",
            ),
        ];
        for (text, why) in cases {
            let r = read(&text, "team-lead");
            assert!(r.entries.is_empty(), "{text}: {:?}", r.entries);
            assert!(
                r.unjudged.iter().any(|(place, w)| place == "line 1" && w.contains(why)),
                "{text}: {:?}",
                r.unjudged
            );
        }
        // The session's own talk, however shaped, is passed over without a word.
        for text in [
            user("system", "\"compacted\"", ""),
            user("attachment", r#""a reminder""#, &format!("{at},")),
            user("user", r#"{"text":"hi"}"#, ""),
            user("Assistant", "\"ok\"", &format!("{at},")),
        ] {
            let r = read(&text, "team-lead");
            assert!(r.unjudged.is_empty() && r.entries.is_empty(), "{text}: {:?}", r.unjudged);
        }
    }
}
