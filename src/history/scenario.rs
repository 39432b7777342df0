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
use crate::format::file::toml_string;
use crate::format::write::{Fault, Step};
use crate::protocol::{Address, AgentId, Effect, Kind, MessageType, Millis, RequestId};
use crate::trace::{Cause, Event};
use crate::world::FaultKind;
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

/// How the written file makes the offers the history's lead passed on when
/// an earlier one expired (a task's `reassign`): a replay must make every
/// request once, as the history did, never once by a step and again by its
/// own lead.
struct PassedOn {
    /// Each offer the history's lead opened as the very next thing after an
    /// expiry that passes a request on, with the automatic label
    /// (`bob/task/1`) this program's lead gives it.
    ids: BTreeMap<RequestId, String>,
    /// The file's lead passes them on itself, as the history's did: they are
    /// no steps. Otherwise each is a step, and the lead's own passing on is
    /// switched off (`on_task_timeout = "drop"`).
    by_lead: bool,
}

/// The scenario text for history `h`, read from `source`; `found` lists what
/// the audit of it reported, for the file's `about`.
///
/// Where the history's policy passes an expired request on (a task's
/// `reassign`), the file's lead does so first, as the history's lead did, so
/// that the task witness still sees one task across its offers
/// (`single-holder`); the file is then run, and kept only if it makes the
/// same requests at the same times and expires the same ones. Otherwise (its
/// lead would pick another teammate: the replay's teammates do no work, so
/// all are idle) every offer is a step and the lead's own passing on is off,
/// and the header says what that cannot show.
pub fn to_scenario(h: &History, source: &str, found: &[String]) -> Result<String, CannotWrite> {
    // A scenario runs at most a year; a history spread wider (a stray old
    // entry in a folder) has no replay.
    let span = h.events.last().map_or(h.ended_at, |e| e.t.max(h.ended_at));
    if span > crate::format::build::MAX_RUN {
        return Err(CannotWrite(format!(
            "the history spans {}, longer than a scenario may run ({}): no replay can hold it (an entry far \
             older than the rest?)",
            crate::format::duration::human(span),
            crate::format::duration::human(crate::format::build::MAX_RUN)
        )));
    }
    let ids = passed_on(h);
    let passes = Kind::ALL.into_iter().any(|k| h.policy.on_expiry(k).effect == Effect::AskNext);
    if h.scenario.is_some() && passes {
        let lead = PassedOn { ids: ids.clone(), by_lead: true };
        let text = write(h, source, found, &lead)?;
        if same_requests(h, &text) {
            return Ok(text);
        }
    }
    write(h, source, found, &PassedOn { ids, by_lead: false })
}

/// The offers the history's lead passed on, each with the automatic label
/// this program's lead gives it: `<teammate>/<kind>/<n>`, `n` counting that
/// teammate's requests of the kind in the history's order.
fn passed_on(h: &History) -> BTreeMap<RequestId, String> {
    let mut counts: BTreeMap<(AgentId, Kind), u32> = BTreeMap::new();
    let mut out = BTreeMap::new();
    let mut after_expiry = false;
    for e in &h.events {
        let expiry_before = std::mem::take(&mut after_expiry);
        match &e.event {
            Event::Expired { default, .. } if default.effect == Effect::AskNext => after_expiry = true,
            Event::Opened { id, kind, requester, target, .. } => {
                let about = kind.spec().about.of(*requester, *target);
                let n = counts.entry((about, *kind)).or_default();
                *n += 1;
                if expiry_before && requester.is_lead() {
                    let name = h.names.agents.get(about.index()).map_or("?", String::as_str);
                    out.insert(*id, format!("{name}/{kind}/{n}"));
                }
            }
            _ => {}
        }
    }
    out
}

/// Whether the scenario `text` run opens the requests `h` shows, at the same
/// times, between the same agents, and expires the same ones: a literal
/// replay of its requests.
fn same_requests(h: &History, text: &str) -> bool {
    let Ok(s) = crate::scenario::load_str("incident.toml", text) else { return false };
    let opts = crate::scenario::RunOptions { keep_outcome: true, ..Default::default() };
    let Some(o) = crate::scenario::run_scenario(&s, s.default_seed(), opts).outcome else { return false };
    requests_of(&h.events, &h.names) == requests_of(&o.events, &o.names)
}

/// Each request opened (when, what, between whom by name, the lead as
/// itself) and each expiry (when, and which request in the order opened).
fn requests_of(events: &[crate::trace::Stamped], names: &crate::trace::Names) -> Vec<(Millis, String)> {
    let name = |a: AgentId| if a.is_lead() { "lead" } else { names.agents.get(a.index()).map_or("?", String::as_str) };
    let mut order: BTreeMap<RequestId, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for e in events {
        match &e.event {
            Event::Opened { id, kind, requester, target, .. } => {
                order.insert(*id, order.len());
                out.push((e.t, format!("{kind} {} -> {}", name(*requester), name(*target))));
            }
            Event::Expired { id, .. } => out.push((e.t, format!("expired {:?}", order.get(id)))),
            _ => {}
        }
    }
    out
}

/// The scenario text for `h`, its passed-on offers made as `passing` says.
fn write(h: &History, source: &str, found: &[String], passing: &PassedOn) -> Result<String, CannotWrite> {
    let names = &h.names;
    let (who, adversary) = cast(h)?;
    let name_of = |a: AgentId| who.get(a.index()).map_or("?", String::as_str);

    let labels = request_labels(h, passing);
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
    let mut asked = std::collections::BTreeSet::new();
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
        let label = request_id.and_then(|id| labels.get(&id));
        match (*message_type, request_id) {
            (MessageType::Request(_), Some(id)) if !requested.insert(*id) => {
                // The same request sent again (a duplicate, a replay): the
                // network's doing, not a step.
                *left_out.entry("requests sent again").or_default() += 1;
                continue;
            }
            // An offer the file's lead passes on itself: no step, but
            // its delivery time is the history's all the same.
            (MessageType::Request(_), Some(id)) if passing.by_lead && passing.ids.contains_key(id) => {
                // Its label is the one the file's lead gives it: answers quote it.
                asked.extend(label.cloned());
                faults.extend(link_fault(e.t, from_name, to_name, message_type, &dropped, &delivered, *seq));
                continue;
            }
            _ => {}
        }
        let said = Said {
            t,
            from: *from,
            from_name,
            to_name,
            message_type: *message_type,
            request_id: *request_id,
            approve: *approve,
            words,
            label,
        };
        let Some(s) = step_text(&said, names, &mut asked, &mut unissued) else {
            *left_out.entry("messages no step can send").or_default() += 1;
            continue;
        };
        entries.push(Entry { t, text: s });
        faults.extend(link_fault(t, from_name, to_name, message_type, &dropped, &delivered, *seq));
    }

    let mut out = header(h, source, &left_out, &unissued, passing);
    let stem = std::path::Path::new(source).file_name().map_or("incident".into(), |f| f.to_string_lossy().into_owned());
    let _ = writeln!(out, "name = {}", q(&format!("incident-{}", plain(stem.trim_end_matches(".jsonl")))));
    let count = who.len() - usize::from(adversary.is_some());
    let about = about(source, found, labels.len(), entries.len(), count);
    let _ = writeln!(out, "about = {}", q(&about));
    if let Some(seed) = h.seed {
        let _ = writeln!(out, "seed = {seed}");
    }
    let from_trace = h.scenario.is_some();
    let ends = from_trace && matches!(h.stop, crate::world::Stop::EndTime | crate::world::Stop::Cap);
    if ends {
        let _ = writeln!(out, "end = \"{}ms\"", h.ended_at.0);
    }
    // A file may not end, nor write a timeout, past its cap: where the
    // history's longest timeout or its end pass the default cap, that is
    // the file's cap.
    let longest_timeout = if from_trace {
        Kind::ALL.iter().map(|&k| h.policy.timeout(k)).filter(|t| !t.is_never()).max().unwrap_or_default()
    } else {
        Millis::ZERO
    };
    // The history's own end, too: its run lasted that long.
    let needed = longest_timeout.max(if from_trace { h.ended_at } else { Millis::ZERO });
    if needed > crate::format::build::DEFAULT_CAP {
        let _ = writeln!(out, "cap = \"{}ms\"", needed.0);
    }
    policy(&mut out, h, passing);
    agents(&mut out, &who, adversary);
    // Steps in time order (stable: the history's own order at equal times).
    entries.sort_by_key(|e| e.t);
    for e in entries.iter().chain(&faults) {
        out.push('\n');
        out.push_str(&e.text);
    }
    Ok(out)
}

/// The team as the file names it (the lead as `lead`), each name checked,
/// and which of them is the adversary, if one forged anything.
fn cast(h: &History) -> Result<(Vec<String>, Option<AgentId>), CannotWrite> {
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
    Ok((who, adversary))
}

/// Each request's label: the team's own id, made a plain name, or the one
/// the file's own lead gives it.
fn request_labels(h: &History, passing: &PassedOn) -> BTreeMap<RequestId, String> {
    let names = &h.names;
    let mut labels: BTreeMap<RequestId, String> = BTreeMap::new();
    let mut taken = std::collections::BTreeSet::new();
    for e in &h.events {
        if let Event::Opened { id, .. } = &e.event {
            if let Some(auto) = passing.ids.get(id).filter(|_| passing.by_lead) {
                // Made by the file's own lead, which labels it so.
                labels.insert(*id, auto.clone());
                continue;
            }
            let mut label = plain(&names.label_or_short(*id));
            while !taken.insert(label.clone()) {
                label.push('_');
            }
            labels.insert(*id, label);
        }
    }
    labels
}

/// A message the history shows sent, as a step needs it.
struct Said<'a> {
    t: Millis,
    from: AgentId,
    from_name: &'a str,
    to_name: Option<&'a str>,
    message_type: MessageType,
    request_id: Option<RequestId>,
    approve: Option<bool>,
    words: Option<&'a str>,
    /// The label of the request it makes or answers, if it has one.
    label: Option<&'a String>,
}

/// The step that sends what `m` says was sent, or `None` if no step can;
/// `asked` holds the labels of the requests steps have made so far, and an
/// answer to an id no step asked (none here has it, or no step can make
/// its request: a teammate's own shutdown request, claude-code#81464) is
/// noted in `unissued` and quotes the id as written.
fn step_text(
    m: &Said,
    names: &crate::trace::Names,
    asked: &mut std::collections::BTreeSet<String>,
    unissued: &mut std::collections::BTreeSet<String>,
) -> Option<String> {
    let Said { t, from, from_name, to_name, message_type, request_id, approve, words, label } = *m;
    let owned = |x: &str| Some(x.to_string());
    let step = match (message_type, request_id) {
        // A request from one who may ask it: the step that asks it.
        (MessageType::Request(kind), Some(_)) if kind.spec().asker.is_lead() == from.is_lead() => {
            let spec = kind.spec();
            let key = spec.request_words.key;
            let words = match words {
                Some(w) => Some((key, w.to_string())),
                None if spec.request_words.required => Some((key, format!("a {key}"))),
                None => None,
            };
            asked.extend(label.cloned());
            Step {
                from: if from.is_lead() { None } else { owned(from_name) },
                to: owned(to_name.unwrap_or("?")),
                label: label.cloned(),
                words,
                ..Step::new(t, spec.step)
            }
        }
        (MessageType::Response(_), Some(id)) => {
            let (request, request_id) = match label.filter(|l| asked.contains(*l)) {
                Some(l) => (Some(l.clone()), None),
                None => {
                    let written = names.label_or_short(id);
                    unissued.insert(written.clone());
                    (None, Some(written))
                }
            };
            Step {
                from: owned(from_name),
                to: to_name.map(str::to_string),
                message_type: owned(message_type.name()),
                request,
                request_id,
                approve: Some(approve.unwrap_or(false)),
                words: words.map(|w| ("reason", w.to_string())),
                ..Step::new(t, "answer")
            }
        }
        (MessageType::Message, _) if to_name.is_some() => Step {
            from: owned(from_name),
            to: owned(to_name.unwrap_or("?")),
            words: Some(("text", words.unwrap_or("").to_string())),
            ..Step::new(t, "message")
        },
        (MessageType::Broadcast, _) => Step {
            from: owned(from_name),
            words: Some(("text", words.unwrap_or("").to_string())),
            ..Step::new(t, "broadcast")
        },
        (MessageType::PlanRequest, _) if from.is_lead() && to_name.is_some() => Step {
            to: owned(to_name.unwrap_or("?")),
            words: words.map(|w| ("text", w.to_string())),
            ..Step::new(t, "request_plan")
        },
        _ => return None,
    };
    Some(step.to_toml())
}

/// The file's `about`: what it replays, and what the audit found.
fn about(source: &str, found: &[String], requests: usize, steps: usize, agents: usize) -> String {
    let mut about = format!(
        "What the history in {source} records, replayed: {}, {} in all, among {}.",
        crate::words::plural(requests as u64, "request"),
        crate::words::plural(steps as u64, "step"),
        crate::words::plural(agents as u64, "agent")
    );
    if found.is_empty() {
        about += " Its audit found nothing wrong.";
    } else {
        about += &format!(" Its audit found: {}.", found.join("; "));
    }
    about += " Run it to watch the incident, explore its orderings, or shrink it.";
    about
}

/// The `[lead]` and `[[teammate]]` tables. Nobody answers on their own:
/// each agent's answers to every protocol it may be asked (`on_<protocol>`)
/// are "ignore"; the history's answers are steps. The lead answers what
/// teammates ask; a teammate anything.
fn agents(out: &mut String, who: &[String], adversary: Option<AgentId>) {
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
}

/// The file's opening comment: what it replays, and what it cannot.
fn header(
    h: &History,
    source: &str,
    left_out: &BTreeMap<&'static str, usize>,
    unissued: &std::collections::BTreeSet<String>,
    passing: &PassedOn,
) -> String {
    let mut out = String::new();
    let source = crate::words::path_word(source);
    let _ = writeln!(out, "# Written by `handshake audit {source} --to-scenario`: the history's lines, replayed.");
    let _ = writeln!(out, "# Every request is a step at the time it was made, every answer an `answer` step at");
    let _ = writeln!(out, "# the time it was sent, from whoever sent it; nobody answers on their own (ignore).");
    let _ = writeln!(out, "# Not carried: the teammates' work and lives (status, crash, file lines), which a literal");
    let _ = writeln!(out, "# replay does not reproduce, nor an answer as its sender's own act (a scripted answer is");
    let _ = writeln!(out, "# the script's); so gated-action, graceful-complete, final-roster, current-incarnation");
    let _ = writeln!(out, "# and work-in-assignment judge this run only by what its own steps do.");
    for (what, n) in left_out {
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
    let n = crate::words::plural(passing.ids.len() as u64, "offer");
    if passing.by_lead && !passing.ids.is_empty() {
        let first = passing.ids.values().next().map_or("", String::as_str);
        let _ =
            writeln!(out, "# Offers the history's lead passed on when one expired (reassign; {n}) this lead passes");
        let _ =
            writeln!(out, "# on itself, as it did, not by steps (answers quote them by automatic label, as {first});");
        let _ =
            writeln!(out, "# this file was run: it makes the history's requests at their times, expiring the same.");
    }
    let passes = Kind::ALL.into_iter().any(|k| h.policy.on_expiry(k).effect == Effect::AskNext);
    if !passing.by_lead && passes && h.scenario.is_some() {
        let _ = writeln!(out, "# The lead's own reassignment is off (drop): run with it, this lead would pick other");
        let _ = writeln!(out, "# teammates than the history's (here nobody works, so all are idle). So the offers the");
        let _ = writeln!(out, "# history's lead passed on ({n}) are steps; an expired offer reads \"drop\" where the");
        let _ =
            writeln!(out, "# history's read \"reassign\"; and single-holder takes each offer for a task of its own:");
        let _ = writeln!(out, "# two teammates holding one task across its offers are not seen in this run.");
    }
    out
}

/// The `[policy]` and `[policy.defences]` tables: the history's own for a
/// trace (but for a lead's passing on, if the file's steps make those
/// offers), no deadlines for inbox files, which carry none.
fn policy(out: &mut String, h: &History, passing: &PassedOn) {
    out.push_str("\n[policy]\nlatency = \"0ms\"\n");
    if let crate::world::MailboxWorld::ClaudeCode(_) = h.mailbox {
        out.push_str("mailbox = \"claude-code\"   # replayed in the runtime it happened in: Claude Code's inboxes\n");
    }
    let p = &h.policy;
    if h.scenario.is_some() {
        for k in Kind::ALL {
            let _ = writeln!(out, "{} = {}", k.spec().timeout_key, duration(p.timeout(k)));
        }
        for k in Kind::ALL {
            let mut default = p.on_expiry(k);
            if default.effect == Effect::AskNext && !passing.by_lead {
                // The steps make the offers the history's lead passed on.
                let other = k.spec().on_expiry.iter().find(|d| d.effect != Effect::AskNext);
                default = other.copied().unwrap_or(default);
            }
            let _ = writeln!(out, "{} = {}", k.spec().expiry_key, q(default.as_str()));
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
}

/// The fault that gives the message sent at `t` as `seq` the fate the
/// history shows: dropped, or delivered later (a delay on this one message).
fn link_fault(
    t: Millis,
    from: &str,
    to: Option<&str>,
    message_type: &MessageType,
    dropped: &std::collections::BTreeSet<u64>,
    delivered: &BTreeMap<u64, Millis>,
    seq: u64,
) -> Option<Entry> {
    let link = |kind: FaultKind| Fault {
        at: Some(t),
        until: Some(Millis(t.0 + 1)),
        from: Some(from.to_string()),
        to: to.map(str::to_string),
        types: vec![message_type.name().to_string()],
        count: Some(1),
        ..Fault::new(kind)
    };
    if dropped.contains(&seq) {
        return Some(Entry { t, text: link(FaultKind::Drop).to_toml() });
    }
    let at = delivered.get(&seq).filter(|at| **at > t)?;
    let delay = Fault { delay: Some(format!("{}ms", at.0 - t.0)), ..link(FaultKind::Delay) };
    Some(Entry { t, text: delay.to_toml() })
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
    let mut message = vec![("type".to_string(), q(message_type.name()))];
    if let Some(id) = request_id {
        message.push(("request_id".into(), q(&id)));
    }
    // The protocol's fields under its spec's names.
    let (answer_key, key) = match message_type {
        MessageType::Message | MessageType::Broadcast | MessageType::PlanRequest => ("approve", "text"),
        MessageType::Request(k) => (k.spec().answer_key, k.spec().request_words.key),
        MessageType::Response(k) => (k.spec().answer_key, k.spec().answer_words),
    };
    if let Some(a) = approve {
        message.push((answer_key.into(), a.to_string()));
    }
    if let (k, Some(w)) = (key, words) {
        message.push((k.into(), q(w)));
    }
    Fault { at: Some(t), from: Some(from.into()), to: Some(to.into()), message, ..Fault::new(FaultKind::Forge) }
        .to_toml()
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
