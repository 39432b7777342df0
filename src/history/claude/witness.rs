//! A violation's witness: the fewest entries that still show it. Found as
//! a delta debugger finds a failing input's core: start from the entries
//! that could matter (the one the violation is placed at, every entry that
//! names the same request id, the runtime's notices about the agents
//! involved), then drop each in turn while the same invariant still breaks
//! at the same entry. What is left is 1-minimal: without any one of its
//! entries the violation is gone.

use super::folder::{Entry, Reading};
use super::message::Said;
use crate::oracle::{check_log, Invariant, Log};
use std::collections::BTreeSet;

/// Past this many candidates a witness is not minimised (each try judges
/// the candidates again): the violation's own entry stands alone.
const MOST: usize = 48;

/// Finds witnesses among a reading's entries.
pub struct Witnesses<'a> {
    reading: &'a Reading,
    /// What the whole reading breaks, and where: a witness shows nothing else.
    broken: BTreeSet<(Invariant, String, String)>,
}

impl<'a> Witnesses<'a> {
    /// `whole`: what the whole reading breaks, as (invariant, the entry's
    /// place, the violation's words), which the caller has already judged;
    /// judging the reading a second time here would hold it twice.
    pub fn new<'v>(reading: &'a Reading, whole: impl IntoIterator<Item = (Invariant, &'v str, &'v str)>) -> Self {
        let broken = whole.into_iter().map(|(i, place, detail)| (i, place.to_string(), unnumbered(detail))).collect();
        Witnesses { reading, broken }
    }

    /// The witness of `invariant` broken at the entry `place`, as places
    /// (`inboxes/bob.json[2]`) in time order; `None` when no subset of the
    /// candidates shows it alone (it needs more of the history).
    pub fn of(&self, place: &str, v: &crate::oracle::Violation) -> Option<Vec<String>> {
        let invariant = v.invariant;
        let detail = unnumbered(&v.detail);
        let reading = self.reading;
        let at = reading.entries.iter().position(|e| e.origin == place)?;
        let mut keep = candidates(reading, at);
        if keep.len() > MOST {
            return Some(vec![place.to_string()]);
        }
        let shows = |keep: &[usize]| {
            let found = broken(reading, keep);
            found.contains(&(invariant, place.to_string(), detail.clone())) && found.is_subset(&self.broken)
        };
        if !shows(&keep) {
            return None;
        }
        let mut i = 0;
        while i < keep.len() {
            if keep[i] == at {
                i += 1;
                continue;
            }
            let mut fewer = keep.clone();
            fewer.remove(i);
            if shows(&fewer) {
                keep = fewer;
            } else {
                i += 1;
            }
        }
        let mut places: Vec<&Entry> = keep.iter().map(|&k| &reading.entries[k]).collect();
        places.sort_by_key(|e| e.at.ms);
        Some(places.into_iter().map(|e| e.origin.clone()).collect())
    }
}

/// `inboxes/bob.json[2]` as `inboxes/bob.json:2`, the way a report names a
/// file's entry.
pub fn shown(place: &str) -> String {
    match super::folder::entry_place(place) {
        Some((file, n)) => format!("{file}:{n}"),
        None => place.to_string(),
    }
}

/// The entries that could matter to a violation at entry `at`.
fn candidates(reading: &Reading, at: usize) -> Vec<usize> {
    let e = &reading.entries[at];
    let id = id_of(&e.said);
    let names = [e.from.as_str(), e.to.as_str()];
    (0..reading.entries.len())
        .filter(|&k| {
            let c = &reading.entries[k];
            k == at
                || (id.is_some() && id_of(&c.said) == id)
                || (c.from == super::events::SYSTEM && about(&c.said).is_some_and(|who| names.contains(&who)))
        })
        .collect()
}

fn id_of(said: &Said) -> Option<&str> {
    match said {
        Said::Request { id, .. } | Said::Answer { id, .. } => id.as_deref(),
        Said::Refused { what, .. } => id_of(what),
        _ => None,
    }
}

/// The teammate a runtime notice is about.
fn about(said: &Said) -> Option<&str> {
    match said {
        Said::Notice(super::message::Notice::Terminated { who }) => Some(who),
        _ => None,
    }
}

/// What the entries `keep` alone break, and at which entry.
fn broken(reading: &Reading, keep: &[usize]) -> BTreeSet<(Invariant, String, String)> {
    let part = Reading {
        team: reading.team.clone(),
        entries: keep.iter().map(|&k| reading.entries[k].clone()).collect(),
        ..Reading::default()
    };
    let judged = super::events::judge(&part);
    let ended_at = judged.events.last().map_or(crate::protocol::Millis::ZERO, |e| e.t);
    let log = Log { names: &judged.names, events: &judged.events, ended_at, stop: crate::world::Stop::Settled };
    check_log(&log, &super::policy(), &judged.require_plan)
        .into_iter()
        .filter_map(|v| Some((v.invariant, judged.origin.get(v.event?)?.clone(), unnumbered(&v.detail))))
        .collect()
}

/// A violation's words without its messages' numbers (`message #4`), which
/// count the sends of whatever entries were judged.
fn unnumbered(detail: &str) -> String {
    let mut out = String::with_capacity(detail.len());
    let mut after_hash = false;
    for c in detail.chars() {
        if after_hash && c.is_ascii_digit() {
            continue;
        }
        after_hash = c == '#' || (after_hash && c.is_ascii_digit());
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::claude::folder::Team;
    use crate::history::stamp::Stamp;

    fn entry(n: usize, from: &str, to: &str, text: &str) -> Entry {
        Entry {
            origin: format!("inboxes/{to}.json[{n}]"),
            at: Stamp { ms: 1000 * n as i64, no_zone: false },
            from: from.into(),
            to: to.into(),
            said: crate::history::claude::message::read(text),
            digest: crate::history::claude::message::digest(text),
            read: Some(true),
        }
    }

    #[test]
    fn an_answer_given_twice_is_witnessed_by_the_request_and_both_answers_alone() {
        let ask = r#"{"type":"shutdown_request","requestId":"shutdown-1@bob","from":"team-lead"}"#;
        let yes = r#"{"type":"shutdown_approved","requestId":"shutdown-1@bob","from":"bob"}"#;
        let other = r#"{"type":"shutdown_request","requestId":"shutdown-2@amy","from":"team-lead"}"#;
        let entries = vec![
            entry(1, "team-lead", "bob", ask),
            entry(2, "team-lead", "amy", other),
            entry(3, "bob", "team-lead", "hello"),
            entry(4, "bob", "team-lead", yes),
            entry(5, "bob", "team-lead", yes),
        ];
        let members = ["team-lead", "bob", "amy"].iter().map(|m| (m.to_string(), false)).collect();
        let team = Team { name: None, lead: Some("team-lead".into()), members, members_in_part: false };
        let reading = Reading { team, entries, ..Reading::default() };
        let h = crate::history::claude::history_of(&reading);
        let log = Log { names: &h.names, events: &h.events, ended_at: h.ended_at, stop: h.stop };
        let found = check_log(&log, &h.policy, &h.require_plan);
        let places: Vec<String> = found
            .iter()
            .map(|v| format!("{}[{}]", h.origin.get(v.event.unwrap()).unwrap(), h.lines[v.event.unwrap()]))
            .collect();
        let w = Witnesses::new(
            &reading,
            found.iter().zip(&places).map(|(v, p)| (v.invariant, p.as_str(), v.detail.as_str())),
        );
        // The same as judging the whole reading here.
        let all: Vec<usize> = (0..reading.entries.len()).collect();
        assert_eq!(w.broken, broken(&reading, &all));
        let v = |i| found.iter().find(|v| v.invariant == i).expect("broken").clone();
        let of = |i| w.of("inboxes/team-lead.json[5]", &v(i)).expect("a witness");
        // The request stays: an answer without it would break matching-response of its own.
        let both = ["inboxes/bob.json[1]", "inboxes/team-lead.json[4]", "inboxes/team-lead.json[5]"];
        assert_eq!(of(Invariant::TerminalFinal), both);
        assert_eq!(of(Invariant::MatchingResponse), both);
        // Not broken there: no witness.
        assert_eq!(w.of("inboxes/team-lead.json[3]", &v(Invariant::TerminalFinal)), None);
        assert_eq!(unnumbered("message #41 to bob, #7"), "message # to bob, #");
        assert_eq!(shown("inboxes/bob.json[1]"), "inboxes/bob.json:1");
    }
}
