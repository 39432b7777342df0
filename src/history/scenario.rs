//! From an incident to a scenario (`audit PATH --to-scenario F`): a history
//! written back as a scenario file that plays the same lines, so `run`,
//! `explore` and `shrink` can work on what a real team did.
//!
//! The file is a literal replay, not a model of the team: every request is a
//! step at the time it was made, and every answer is an `answer` step at the
//! time it was sent, from whoever sent it (a wrong teammate, a flipped
//! answer, a review given twice are all just lines). Teammates and the lead
//! therefore answer nothing on their own (`ignore`). The delivery times the
//! history shows become `delay` faults (latency is 0 ms), a message it shows
//! dropped becomes a `drop`. How the runtime judged answers becomes
//! `[policy.defences]`: a tracker that applies an answer by its id alone is
//! `sender_check` and `pending_check` off. What a literal replay cannot
//! carry is said in the file's header: the teammates' work and lives
//! (statuses, crashes, files), forged messages.

use super::History;
use crate::protocol::{Address, AgentId, Kind, MessageType, Millis, RequestId};
use crate::scenario::file::toml_string;
use crate::trace::{Cause, Event};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Why a history cannot be written as a scenario.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot write a scenario: {0}")]
pub struct CannotWrite(pub String);

/// One step or fault of the file, at its time, in the order met.
struct Entry {
    t: Millis,
    text: String,
}

/// The scenario text for history `h`, read from `source`; `found` lists what
/// the audit of it reported, for the file's `about`.
pub fn to_scenario(h: &History, source: &str, found: &[String]) -> Result<String, CannotWrite> {
    let names = &h.names;
    let adversary = names.agents.iter().position(|n| n == "adversary").map(|i| AgentId(i as u32));
    let mut who: Vec<String> = Vec::with_capacity(names.agents.len());
    for (i, name) in names.agents.iter().enumerate() {
        if i == 0 {
            who.push(crate::protocol::LEAD_NAME.to_string());
            continue;
        }
        if Some(AgentId(i as u32)) != adversary {
            crate::protocol::check_teammate_name(name).map_err(|e| CannotWrite(format!("teammate {e}")))?;
        }
        who.push(name.clone());
    }
    let name_of = |a: AgentId| who.get(a.index()).map_or("?", String::as_str);

    // Each request's label: the team's own id, made a plain name.
    let mut labels: BTreeMap<RequestId, String> = BTreeMap::new();
    let mut taken = std::collections::BTreeSet::new();
    let mut kinds: BTreeMap<RequestId, Kind> = BTreeMap::new();
    for e in &h.events {
        if let Event::Opened { id, kind, .. } = &e.event {
            let mut label = plain(&names.label_or_short(*id));
            while !taken.insert(label.clone()) {
                label.push('_');
            }
            labels.insert(*id, label);
            kinds.insert(*id, *kind);
        }
    }
    let delivered: BTreeMap<u64, Millis> = h
        .events
        .iter()
        .filter_map(|e| match e.event {
            Event::Deliver { seq, .. } => Some((seq, e.t)),
            _ => None,
        })
        .collect();
    let dropped: std::collections::BTreeSet<u64> = h
        .events
        .iter()
        .filter_map(|e| match e.event {
            Event::Dropped { seq, cause: Cause::Drop, .. } => Some(seq),
            _ => None,
        })
        .collect();

    let claims: BTreeMap<u64, AgentId> = h
        .events
        .iter()
        .filter_map(|e| match e.event {
            Event::Forge { seq, claimed_from, .. } => Some((seq, claimed_from)),
            _ => None,
        })
        .collect();
    let mut entries: Vec<Entry> = Vec::new();
    let mut faults: Vec<Entry> = Vec::new();
    let mut left_out: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut requested = std::collections::BTreeSet::new();
    let mut unissued = std::collections::BTreeSet::new();
    for e in &h.events {
        let Event::Send { seq, from, to, message_type, request_id, approve, words } = &e.event else { continue };
        if Some(*from) == adversary {
            match (claims.get(seq), to) {
                (Some(claimed), Address::Agent(target)) => {
                    let quoted = request_id.map(|id| match labels.get(&id) {
                        Some(l) => format!("@{l}"),
                        None => id.to_string(),
                    });
                    let text = forged(
                        e.t,
                        name_of(*claimed),
                        name_of(*target),
                        message_type,
                        quoted,
                        *approve,
                        words.as_deref(),
                    );
                    faults.push(Entry { t: e.t, text });
                }
                _ => *left_out.entry("forged messages with no forge line").or_default() += 1,
            }
            continue;
        }
        let (from_name, t) = (name_of(*from), e.t);
        let to_name = match to {
            Address::Agent(a) => Some(name_of(*a)),
            Address::Everyone => None,
        };
        let words = words.as_deref();
        let mut s = format!("[[step]]\nat = \"{}ms\"\n", t.0);
        let label = request_id.and_then(|id| labels.get(&id));
        match (*message_type, request_id) {
            (MessageType::Request(_), Some(id)) if !requested.insert(*id) => {
                // The same request sent again (a duplicate, a replay): the
                // network's doing, not a step.
                *left_out.entry("requests sent again").or_default() += 1;
                continue;
            }
            // A request from one who may ask it: the step that asks it.
            (MessageType::Request(kind), Some(_)) if kind.spec().asker.is_lead() == from.is_lead() => {
                let spec = kind.spec();
                let _ = writeln!(s, "do = {}", q(spec.step));
                if !from.is_lead() {
                    let _ = writeln!(s, "from = {}", q(from_name));
                }
                let _ = writeln!(s, "to = {}", q(to_name.unwrap_or("?")));
                if let Some(l) = label {
                    let _ = writeln!(s, "label = {}", q(l));
                }
                let key = spec.request_words.key;
                let placeholder = format!("a {key}");
                match words {
                    Some(w) => {
                        let _ = writeln!(s, "{key} = {}", q(w));
                    }
                    None if spec.request_words.required => {
                        let _ = writeln!(s, "{key} = {}", q(&placeholder));
                    }
                    None => {}
                }
            }
            (MessageType::Response(_), Some(id)) => {
                let _ = writeln!(s, "do = \"answer\"\nfrom = {}", q(from_name));
                if let Some(to) = to_name {
                    let _ = writeln!(s, "to = {}", q(to));
                }
                let _ = writeln!(s, "type = {}", q(message_type.name()));
                match label {
                    Some(l) => {
                        let _ = writeln!(s, "request = {}", q(l));
                    }
                    None => {
                        let written = names.label_or_short(*id);
                        unissued.insert(written.clone());
                        let _ = writeln!(s, "request_id = {}", q(&written));
                    }
                }
                let _ = writeln!(s, "approve = {}", approve.unwrap_or(false));
                if let Some(w) = words {
                    let _ = writeln!(s, "reason = {}", q(w));
                }
            }
            (MessageType::Message, _) if to_name.is_some() => {
                let _ = writeln!(s, "do = \"message\"\nfrom = {}\nto = {}", q(from_name), q(to_name.unwrap_or("?")));
                let _ = writeln!(s, "text = {}", q(words.unwrap_or("")));
            }
            (MessageType::Broadcast, _) => {
                let _ = writeln!(s, "do = \"broadcast\"\nfrom = {}\ntext = {}", q(from_name), q(words.unwrap_or("")));
            }
            (MessageType::PlanRequest, _) if from.is_lead() && to_name.is_some() => {
                let _ = writeln!(s, "do = \"request_plan\"\nto = {}", q(to_name.unwrap_or("?")));
                if let Some(w) = words {
                    let _ = writeln!(s, "text = {}", q(w));
                }
            }
            _ => {
                *left_out.entry("messages no step can send").or_default() += 1;
                continue;
            }
        }
        entries.push(Entry { t, text: s });
        // How long it took, as the history shows: a delay on this one message.
        let link = |kind: &str| {
            let mut f = format!("[[fault]]\nkind = \"{kind}\"\nat = \"{}ms\"\nuntil = \"{}ms\"\n", t.0, t.0 + 1);
            let _ = writeln!(f, "from = {}", q(from_name));
            if let Some(to) = to_name {
                let _ = writeln!(f, "to = {}", q(to));
            }
            let _ = writeln!(f, "type = {}\ncount = 1", q(message_type.name()));
            f
        };
        if dropped.contains(seq) {
            faults.push(Entry { t, text: link("drop") });
        } else if let Some(&at) = delivered.get(seq).filter(|at| **at > t) {
            let mut f = link("delay");
            let _ = writeln!(f, "delay = \"{}ms\"", at.0 - t.0);
            faults.push(Entry { t, text: f });
        }
    }

    let mut out = String::new();
    let _ = writeln!(out, "# Written by `handshake audit {source} --to-scenario`: the history's lines, replayed.");
    let _ = writeln!(out, "# Every request is a step at the time it was made, every answer an `answer` step at");
    let _ = writeln!(out, "# the time it was sent, from whoever sent it; nobody answers on their own (ignore).");
    let _ = writeln!(out, "# Not carried: the teammates' work and lives (status, crash, file lines), which a literal");
    let _ = writeln!(out, "# replay does not reproduce; so gated-action, graceful-complete and final-roster");
    let _ = writeln!(out, "# judge this run only by what its own steps do.");
    for (what, n) in &left_out {
        let _ = writeln!(out, "# Left out: {n} {what}.");
    }
    if !unissued.is_empty() {
        let ids: Vec<&str> = unissued.iter().map(String::as_str).collect();
        let _ = writeln!(
            out,
            "# Answers quote ids no request here has ({}): the history shows what its lead did with",
            ids.join(", ")
        );
        let _ = writeln!(out, "# them; this lead has no such request to change, and ignores them (unknown_id).");
    }
    let stem = std::path::Path::new(source).file_name().map_or("incident".into(), |f| f.to_string_lossy().into_owned());
    let _ = writeln!(out, "name = {}", q(&format!("incident-{}", plain(stem.trim_end_matches(".jsonl")))));
    let mut about = format!(
        "What the history in {source} records, replayed: {}, {} in all, among {}.",
        crate::words::plural(labels.len() as u64, "request"),
        crate::words::plural(entries.len() as u64, "step"),
        crate::words::plural((who.len() - usize::from(adversary.is_some())) as u64, "agent")
    );
    if found.is_empty() {
        about += " Its audit found nothing wrong.";
    } else {
        about += &format!(" Its audit found: {}.", found.join("; "));
    }
    about += " Run it to watch the incident, explore its orderings, or shrink it.";
    let _ = writeln!(out, "about = {}", q(&about));
    if let Some(seed) = h.seed {
        let _ = writeln!(out, "seed = {seed}");
    }
    let from_trace = h.scenario.is_some();
    if from_trace && matches!(h.stop, crate::world::Stop::EndTime | crate::world::Stop::Cap) {
        let _ = writeln!(out, "end = \"{}ms\"", h.ended_at.0);
    }
    out.push_str("\n[policy]\nlatency = \"0ms\"\n");
    let p = &h.policy;
    if from_trace {
        for k in Kind::ALL {
            let _ = writeln!(out, "{} = {}", k.spec().timeout_key, duration(p.timeout(k)));
        }
        for k in Kind::ALL {
            let _ = writeln!(out, "{} = {}", k.spec().expiry_key, q(p.on_expiry(k).as_str()));
        }
        let _ = writeln!(out, "strict_hierarchy = {}", p.strict_hierarchy);
    } else {
        // Inbox files carry no deadlines: none is invented.
        for k in Kind::ALL {
            let _ = writeln!(out, "{} = \"never\"", k.spec().timeout_key);
        }
    }
    let d = &p.defences;
    let off: Vec<&str> = [
        ("kind_check", d.kind_check),
        ("sender_check", d.sender_check),
        ("sender_auth", d.sender_auth),
        ("pending_check", d.pending_check),
        ("deadline_check", d.deadline_check),
        ("incarnation_check", d.incarnation_check),
    ]
    .into_iter()
    .filter(|(_, on)| !on)
    .map(|(k, _)| k)
    .collect();
    if !off.is_empty() {
        out.push_str("\n[policy.defences]   # how the runtime that wrote the history judged answers\n");
        for k in off {
            let _ = writeln!(out, "{k} = false");
        }
    }
    // Nobody answers on their own: each agent's answers to every protocol
    // it may be asked (`on_<protocol>`) are "ignore"; the history's answers
    // are steps. The lead answers what teammates ask; a teammate anything.
    out.push_str("\n[lead]\n");
    for k in Kind::ALL.iter().filter(|k| !k.spec().asker.is_lead()) {
        let _ = writeln!(out, "on_{k} = \"ignore\"");
    }
    for (i, name) in who.iter().enumerate().skip(1) {
        if Some(AgentId(i as u32)) == adversary {
            continue;
        }
        let _ = write!(out, "\n[[teammate]]\nname = {}\n", q(name));
        for k in Kind::ALL {
            let _ = writeln!(out, "on_{k} = \"ignore\"");
        }
    }
    // Steps in time order (stable: the history's own order at equal times).
    entries.sort_by_key(|e| e.t);
    for e in entries.iter().chain(&faults) {
        out.push('\n');
        out.push_str(&e.text);
    }
    Ok(out)
}

/// A `forge` fault sending what the adversary sent, claiming `from`.
fn forged(
    t: Millis,
    from: &str,
    to: &str,
    message_type: &MessageType,
    request_id: Option<String>,
    approve: Option<bool>,
    words: Option<&str>,
) -> String {
    let mut fields = vec![format!("type = {}", q(message_type.name()))];
    if let Some(id) = request_id {
        fields.push(format!("request_id = {}", q(&id)));
    }
    // The protocol's fields under its spec's names.
    let (answer_key, key) = match message_type {
        MessageType::Message | MessageType::Broadcast | MessageType::PlanRequest => ("approve", "text"),
        MessageType::Request(k) => (k.spec().answer_key, k.spec().request_words.key),
        MessageType::Response(k) => (k.spec().answer_key, k.spec().answer_words),
    };
    if let Some(a) = approve {
        fields.push(format!("{answer_key} = {a}"));
    }
    if let (k, Some(w)) = (key, words) {
        fields.push(format!("{k} = {}", q(w)));
    }
    format!(
        "[[fault]]\nkind = \"forge\"\nat = \"{}ms\"\nfrom = {}\nto = {}\nmessage = {{ {} }}\n",
        t.0,
        q(from),
        q(to),
        fields.join(", ")
    )
}

fn q(s: &str) -> String {
    toml_string(s)
}

fn duration(m: Millis) -> String {
    if m.is_never() {
        "\"never\"".into()
    } else {
        format!("\"{}ms\"", m.0)
    }
}

/// A label or name the file accepts: letters, digits, `_` and `-`.
fn plain(s: &str) -> String {
    let mut out: String =
        s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '-' }).take(60).collect();
    if out.is_empty() {
        out.push('r');
    }
    out
}
