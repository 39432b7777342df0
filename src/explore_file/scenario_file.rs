//! A counterexample written back as a scenario file that `handshake run`
//! replays: the original team and script, no latency, and one explicit fault
//! per thing the schedule did (a message held back, dropped, duplicated, a
//! crash, a forgery), at the times the schedule did it.
//!
//! The explorer has no latency model, so several of its actions can share a
//! millisecond in an order the runtime would not choose. Each action after
//! the first at the same time is moved one millisecond later; a timer keeps
//! its own time. Because that can change what happens, the file is only
//! offered after it has been run and has broken the same invariant; when it
//! does not, the refusal says where its run parted from the schedule.

use crate::explore::{Broke, Counterexample, Taken};
use crate::format::write::Fault;
use crate::protocol::{Message, Millis};
use crate::scenario::{load_str, run_scenario, RunOptions};
use crate::trace::{Event, Stamped};
use crate::world::network::InSearch;
use crate::world::{Choice, FaultKind};
use std::collections::BTreeMap;
use toml::{Table, Value};

/// The scenario file, checked: running it breaks what the schedule broke.
/// Where a defence is off (so a file may expect violations), it expects
/// every violation the replay shows, and then passes as a saved regression.
pub fn scenario_file(original: &str, path: &str, c: &Counterexample) -> Result<String, String> {
    let first = write(original, c, &[])?;
    let (broke, seen, events) = replay(path, &first, c)?;
    if !broke {
        return Err(format!(
            "this schedule could not be written as a scenario file that replays it: running the file does not break \
             {}, because {}",
            c.broke,
            parting(c, &events)
        ));
    }
    if seen.is_empty() || !defences_off(original) {
        return Ok(first);
    }
    let text = write(original, c, &seen)?;
    match replay(path, &text, c)? {
        (true, ..) => Ok(text),
        _ => Ok(first),
    }
}

/// Whether the original may expect violations: it switches a defence off
/// (`[policy.defences]`), or it expects one already (a defence switched off
/// another way, such as Claude Code's `lock = "off"` or `recipients = "any"`).
fn defences_off(original: &str) -> bool {
    let doc: Table = original.parse().unwrap_or_default();
    let switched_off = doc
        .get("policy")
        .and_then(|p| p.get("defences"))
        .and_then(Value::as_table)
        .is_some_and(|d| d.values().any(|v| v.as_bool() == Some(false)));
    let expects_one =
        doc.get("expect").and_then(Value::as_array).is_some_and(|e| e.iter().any(|x| x.get("violation").is_some()));
    switched_off || expects_one
}

/// Runs the written file: whether it breaks what the schedule broke, every
/// invariant it breaks, and what its run logged.
fn replay(path: &str, text: &str, c: &Counterexample) -> Result<(bool, Vec<String>, Vec<Stamped>), String> {
    let scenario = load_str(path, text).map_err(|e| {
        // Not the path's: nothing was written there, and the reader must not
        // go looking for a file that does not exist.
        let first = e.first().map_or_else(String::new, |e| {
            let at = if e.line > 0 { format!(" (its line {}, column {})", e.line, e.col) } else { String::new() };
            format!("{}{at}", e.message)
        });
        format!("the scenario made for this schedule does not load, so it was not written: {first}")
    })?;
    let options = RunOptions { keep_outcome: true, ..RunOptions::default() };
    let mut report = run_scenario(&scenario, scenario.default_seed(), options);
    let events = report.outcome.take().map(|o| o.events).unwrap_or_default();
    let mut seen: Vec<String> =
        report.violations.iter().filter_map(|v| v.split_once(':').map(|(name, _)| name.to_string())).collect();
    seen.sort();
    seen.dedup();
    let broke = match c.broke {
        Broke::Invariant(i) => seen.iter().any(|n| n == i.name()),
        Broke::Deadlock => report.counts.deadlocks > 0,
        // The file keeps its expectations then: the run must fail one.
        Broke::Expectation => !report.passed,
    };
    Ok((broke, seen, events))
}

/// Why the written file's run (`run`) did not do what the schedule did: the
/// first thing one logged and the other did not, with times left out (the
/// file moves same-millisecond actions apart, so times may differ while
/// what happens does not).
fn parting(c: &Counterexample, run: &[Stamped]) -> String {
    let schedule = comparable(c, &c.events);
    let run = comparable(c, run);
    let k = schedule.iter().zip(&run).take_while(|(a, b)| a.1 == b.1).count();
    let at = |lines: &[(Millis, String)]| lines.get(k).map(|(t, l)| format!("{l}` (at {t})"));
    match (at(&schedule), at(&run)) {
        (Some(want), Some(got)) => format!(
            "its run parts from the schedule after {k} events alike: the schedule has `{want}, the run has `{got}"
        ),
        (Some(want), None) => format!("its run stops after {k} events alike, before the schedule's `{want}"),
        (None, Some(got)) => format!(
            "its run does everything the schedule does and then more (`{got}), and that is not where the violation is"
        ),
        (None, None) => "its run logs what the schedule logs, yet the oracle does not find the violation in it: \
                         the explorer's watcher and the oracle disagree (a bug: please report it)"
            .to_string(),
    }
}

/// Events as two runs of the same team can be compared: each line without
/// its time and with every duration in it blanked, leaving out the
/// network's notes (the written file adds delays) and the runtime's own
/// narration, which the explorer does not write.
fn comparable(c: &Counterexample, events: &[Stamped]) -> Vec<(Millis, String)> {
    let mut names = c.names.clone();
    names.learn_labels(events);
    events
        .iter()
        .filter(|e| !matches!(e.event, Event::Fault { .. } | Event::Note { .. }))
        .map(|e| {
            // The schedule's crash leaves its restart's time to a choice;
            // the file times it. Either way a restart is due.
            let what = e.sentence(&names).replace(crate::trace::RESTART_CHOSEN, "(restart due at 0ms)");
            let words: Vec<String> = what.split(' ').map(blank_duration).collect();
            (e.t, words.join(" "))
        })
        .collect()
}

/// A word of a narrated event with the duration in it (`1s`, `2m1.500s`)
/// blanked, and the brackets or commas around it kept.
fn blank_duration(word: &str) -> String {
    let core = word.trim_matches(|ch: char| matches!(ch, '(' | ')' | ',' | ';' | ':'));
    let duration = core.starts_with(|ch: char| ch.is_ascii_digit())
        && core.ends_with(['s', 'm', 'h'])
        && core.chars().all(|ch| ch.is_ascii_digit() || matches!(ch, '.' | 'm' | 's' | 'h'));
    if duration {
        word.replacen(core, "…", 1)
    } else {
        word.to_string()
    }
}

/// The replay time of each action: its own time, or one millisecond after
/// the latest action before it when they shared a millisecond. Timers keep
/// theirs. The latest, not the one just before: a timer in between (a
/// restart taken up) keeps its earlier time, and an action after it must
/// still come after the actions already moved (or a delivery meant for the
/// restarted teammate would reach it while it is down).
fn replay_times(taken: &[Taken]) -> Vec<Millis> {
    let mut out: Vec<Millis> = Vec::with_capacity(taken.len());
    let mut latest = Millis::ZERO;
    for (i, t) in taken.iter().enumerate() {
        let at = t.at();
        let r = match t.choice {
            Choice::Fire { .. } => at,
            _ if i > 0 && taken[i - 1].at() == at => at.max(latest.after(Millis(1))),
            _ => at.max(latest),
        };
        latest = latest.max(r);
        out.push(r);
    }
    out
}

fn write(original: &str, c: &Counterexample, expect: &[String]) -> Result<String, String> {
    let mut doc: Table = original.parse().map_err(|e| format!("the original file does not parse: {e}"))?;
    let name = doc.get("name").and_then(Value::as_str).unwrap_or("scenario").to_string();
    doc.insert("name".into(), Value::String(format!("{name}-counterexample")));
    doc.insert(
        "about".into(),
        Value::String(format!(
            "Written by `handshake explore`: the shortest schedule it found that breaks {}. {}",
            c.broke, c.detail
        )),
    );
    // The file's faults the search played as a run plays them stay; the
    // others (budgets, delays) are written anew from what the schedule did.
    let kept: Vec<Value> = match doc.remove("fault") {
        Some(Value::Array(faults)) if c.file_faults => faults.into_iter().filter(played_by_the_search).collect(),
        _ => Vec::new(),
    };
    if c.broke != Broke::Expectation {
        doc.remove("expect");
    }
    let policy = doc.entry("policy").or_insert_with(|| Value::Table(Table::new()));
    let Value::Table(policy) = policy else { return Err("[policy] is not a table".into()) };
    policy.insert("latency".into(), Value::String("0ms".into()));

    let names = &c.names.agents;
    // Lead and teammates; past them the adversary, then any name not on the
    // team that a phantom send wrote to.
    let team = names.iter().position(|n| n == "adversary").unwrap_or(names.len());
    let mut labels = c.names.clone();
    labels.learn_labels(&c.events);
    // What each message was: who sent it, to whom, of which type.
    let mut sends: BTreeMap<u64, (usize, usize, crate::protocol::MessageType)> = BTreeMap::new();
    for e in &c.events {
        if let Event::Send { seq, from, to: crate::protocol::Address::Agent(to), message_type, .. } = &e.event {
            sends.insert(*seq, (from.index(), to.index(), *message_type));
        }
    }
    let r = replay_times(&c.taken);
    // A message no action sent went out as the run began, when the agents
    // took up their starts (before the schedule's first action).
    let sent_at = |seq: u64| Some(c.sent_in.get(&seq).map_or(Millis::ZERO, |i| r[*i]));
    let mut faults: Vec<Fault> = Vec::new();
    let link = |kind: FaultKind, seq: u64, delay: Option<Millis>| -> Option<Fault> {
        let (from, to, message_type) = *sends.get(&seq)?;
        if from >= team || to >= team {
            // The adversary's own messages are forged at their delivery time
            // instead; a send to a name not on the team is the kept phantom
            // send's, and no link fault can name that name.
            return None;
        }
        Some(Fault {
            at: Some(sent_at(seq)?),
            from: Some(names[from].clone()),
            to: Some(names[to].clone()),
            types: vec![message_type.name().into()],
            count: Some(1),
            delay: delay.map(crate::format::duration::human),
            ..Fault::new(kind)
        })
    };
    let after_all = r.last().copied().unwrap_or(Millis::ZERO).after(Millis(1));
    let mut restarts: BTreeMap<usize, Millis> = BTreeMap::new();
    for (i, t) in c.taken.iter().enumerate() {
        if let Choice::Restart { agent } = &t.choice {
            restarts.insert(agent.index(), r[i]);
        }
    }
    for (i, t) in c.taken.iter().enumerate() {
        match &t.choice {
            Choice::Deliver { msg: seq } => {
                let injected = c.taken.iter().find_map(|x| match &x.choice {
                    Choice::Inject { from, to, message } if x.injected == Some(*seq) => Some((*from, *to, message)),
                    _ => None,
                });
                if let Some((from, to, message)) = injected {
                    faults.push(Fault {
                        at: Some(r[i]),
                        from: Some(names[from.index()].clone()),
                        to: Some(names[to.index()].clone()),
                        message: forged(message, &labels)?,
                        ..Fault::new(FaultKind::Forge)
                    });
                    continue;
                }
                let Some(sent) = sent_at(*seq) else { continue };
                let delay = r[i].0.saturating_sub(sent.0);
                if delay > 0 {
                    faults.extend(link(FaultKind::Delay, *seq, Some(Millis(delay))));
                }
            }
            Choice::Drop { msg: seq } => faults.extend(link(FaultKind::Drop, *seq, None)),
            Choice::Duplicate { msg: seq } => faults.extend(link(FaultKind::Duplicate, *seq, None)),
            Choice::Crash { agent, restart } => {
                // A crash a restart may follow, whose restart the schedule
                // never reached, restarts after its last action.
                let back = restarts.get(&agent.index()).copied().or(restart.then_some(after_all));
                faults.push(Fault {
                    agent: Some(names[agent.index()].clone()),
                    at: Some(r[i]),
                    restart: back.map(|back| Millis(back.0.saturating_sub(r[i].0).max(1))),
                    ..Fault::new(FaultKind::Crash)
                });
            }
            Choice::Fire { .. } | Choice::Restart { .. } | Choice::Inject { .. } | Choice::Wait { .. } => {}
        }
    }
    // A message the schedule never delivered was still on its way when the
    // invariant broke: hold it until after the last action, or the runtime
    // would deliver it at once and change what happens.
    let settled: std::collections::BTreeSet<u64> = c
        .taken
        .iter()
        .filter_map(|t| match t.choice {
            Choice::Deliver { msg } | Choice::Drop { msg } => Some(msg),
            _ => None,
        })
        .collect();
    for seq in sends.keys().copied().filter(|s| !settled.contains(s)).collect::<Vec<_>>() {
        if let Some(sent) = sent_at(seq) {
            faults.extend(link(FaultKind::Delay, seq, Some(Millis(after_all.0.saturating_sub(sent.0).max(1)))));
        }
    }
    let expects = doc.remove("expect");
    assemble(&doc, kept, &faults, expects, expect)
}

/// Whether the search played the file's fault `f` as a run plays it (at
/// its time, or on every message it matches), so that the written file
/// keeps it as it is; the others are budgets or covered, and the schedule
/// says what became of them. Read from the file's text by the world's rule
/// ([`InSearch::of`]).
fn played_by_the_search(f: &Value) -> bool {
    let Some(kind) = f.get("kind").and_then(Value::as_str).and_then(FaultKind::named) else { return false };
    let probability = f.get("probability").and_then(|p| p.as_float().or_else(|| p.as_integer().map(|i| i as f64)));
    InSearch::of(kind, f.get("count").is_some(), probability.unwrap_or(1.0)) == InSearch::Played
}

/// The file written: the original's tables as changed, the faults it kept,
/// the faults the schedule did, then the expectations (`expect`, the
/// violations to expect, replaces the original's when there are any).
fn assemble(
    doc: &Table,
    kept: Vec<Value>,
    faults: &[Fault],
    mut expects: Option<Value>,
    expect: &[String],
) -> Result<String, String> {
    if !expect.is_empty() {
        let written = expect
            .iter()
            .map(|name| Value::Table(Table::from_iter([("violation".to_string(), Value::String(name.clone()))])))
            .collect();
        expects = Some(Value::Array(written));
    }
    let toml = |t: &Table| toml::to_string(t).map_err(|e| format!("cannot write the scenario: {e}"));
    let mut text = toml(doc)?;
    if !kept.is_empty() {
        text.push('\n');
        text.push_str(&toml(&Table::from_iter([("fault".to_string(), Value::Array(kept))]))?);
    }
    for f in faults {
        text.push('\n');
        text.push_str(&f.to_toml());
    }
    if let Some(expects) = expects {
        text.push('\n');
        text.push_str(&toml(&Table::from_iter([("expect".to_string(), expects)]))?);
    }
    Ok(text)
}

/// The forged message as a scenario file writes it, quoting the request by
/// label: its keys, and their values as TOML.
fn forged(m: &Message, labels: &crate::trace::Names) -> Result<Vec<(String, String)>, String> {
    let id = m.request_id().ok_or("a forgery without a request id")?;
    let label = labels.label(id).ok_or("a forgery quoting a request with no label")?;
    let q = crate::format::file::toml_string;
    let mut t = vec![("type".to_string(), q(m.type_name())), ("request_id".to_string(), q(&format!("@{label}")))];
    // The protocol's fields under its spec's names.
    match m {
        Message::Request { kind, words: Some(w), .. } => {
            t.push((kind.spec().request_words.key.into(), q(w)));
        }
        Message::Response { kind, approve, words, .. } => {
            t.push((kind.spec().answer_key.into(), approve.to_string()));
            if let Some(w) = words {
                t.push((kind.spec().answer_words.into(), q(w)));
            }
        }
        _ => {}
    }
    Ok(t)
}
