//! Which teammates a picture can draw as one: a hundred workers made by
//! `count = 100` that all did the same thing are one lane, `worker-* ×100`,
//! and whoever did something different keeps a lane of its own.
//!
//! "The same thing" is judged on the log alone: each teammate's events, in
//! order, told as the `-v` sentence with its own name written `*` (so
//! `worker-7/shutdown/1` and `worker-9/shutdown/1` read alike) and without
//! their times (latency spreads identical lives over different
//! milliseconds). Two teammates alike by this measure differ in nothing a
//! picture shows but when, so drawing one of them loses no kind of event.

use crate::protocol::{AgentId, RequestId};
use crate::trace::{Event, Names, Stamped};
use std::collections::BTreeMap;

/// Fewer alike than this are drawn one by one: three lanes fit any screen,
/// and a learner comparing two workers wants to see both.
pub const AT_LEAST: usize = 4;

/// What the picture draws for each agent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Folding {
    /// Per agent: `Some(rep)` when it is drawn as `rep`'s lane, not its own.
    pub drawn_as: Vec<Option<AgentId>>,
    /// Per agent: how many agents its lane stands for (1 when unfolded).
    pub stands_for: Vec<usize>,
    /// Per agent: the name a folded group is drawn under (`worker-*`).
    pub group_name: Vec<Option<String>>,
}

impl Folding {
    /// Nothing folded: every agent its own lane.
    pub fn none(agents: usize) -> Folding {
        Folding { drawn_as: vec![None; agents], stands_for: vec![1; agents], group_name: vec![None; agents] }
    }

    pub fn is_hidden(&self, a: AgentId) -> bool {
        self.drawn_as.get(a.index()).copied().flatten().is_some()
    }

    /// How many agents the lanes touched by an event stand for, at most.
    pub fn times(&self, parties: &[AgentId]) -> usize {
        parties.iter().map(|a| self.stands_for.get(a.index()).copied().unwrap_or(1)).max().unwrap_or(1)
    }
}

/// The base of a name made by `count = N` (`worker` of `worker-17`).
fn base(name: &str) -> Option<&str> {
    let (head, tail) = name.rsplit_once('-')?;
    (!head.is_empty() && !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit())).then_some(head)
}

/// `text` with every whole occurrence of `name` written `with`: `worker-1`
/// in `worker-1/shutdown/1` but not in `worker-10`.
/// A sentence of a life as the comparison keeps it: whole if short, else
/// its start, its length and a hash of the whole. Lives are compared for
/// equality only, and a long message's words (a 1 MiB broadcast to a
/// thousand teammates) were held once per recipient.
fn held_briefly(sentence: String) -> String {
    const WHOLE: usize = 256;
    if sentence.len() <= WHOLE {
        return sentence;
    }
    let hash = crate::fnv::fnv1a(sentence.as_bytes());
    format!("{}… ({} bytes, {hash:016x})", crate::words::cut_bytes(&sentence, WHOLE), sentence.len())
}

pub fn replace_name(text: &str, name: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(name) {
        let before = rest[..i].chars().next_back();
        let after = rest[i + name.len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_');
        out.push_str(&rest[..i]);
        if word(before) || word(after) {
            out.push_str(name);
        } else {
            out.push_str(with);
        }
        rest = &rest[i + name.len()..];
    }
    out.push_str(rest);
    out
}

/// The agents an event is about: whoever acts, is acted on, or is named.
pub fn parties(
    e: &Event,
    sends: &BTreeMap<u64, (AgentId, AgentId)>,
    requests: &BTreeMap<RequestId, (AgentId, AgentId)>,
) -> Vec<AgentId> {
    use crate::protocol::Address;
    let of_request = |id: &RequestId| requests.get(id).map(|&(a, b)| vec![a, b]).unwrap_or_default();
    let of_send = |seq: &u64| sends.get(seq).map(|&(a, b)| vec![a, b]).unwrap_or_default();
    let mut v = match e {
        Event::Send { from, to, .. } | Event::Refuse { from, to, .. } => {
            let mut v = vec![*from];
            if let Address::Agent(a) = to {
                v.push(*a);
            }
            v
        }
        Event::Deliver { sender, claimed_from, to, .. } => vec![*sender, *claimed_from, *to],
        Event::Dropped { seq, to, .. } => {
            let mut v = of_send(seq);
            v.push(*to);
            v
        }
        Event::Fault { seq, .. } => of_send(seq),
        Event::Forge { claimed_from, to, .. } => vec![*claimed_from, *to],
        Event::Scripted { agent } => vec![*agent],
        Event::Opened { requester, target, .. } => vec![*requester, *target],
        Event::Verdict { at, sender, claimed_from, request_id, .. } => {
            let mut v = vec![*at, *sender, *claimed_from];
            v.extend(of_request(request_id));
            v
        }
        Event::Expired { id, .. } => of_request(id),
        Event::Deferred { agent, request_id } | Event::NoAnswer { agent, request_id } => {
            let mut v = vec![*agent];
            v.extend(of_request(request_id));
            v
        }
        Event::RequestIgnored { agent, sender, claimed_from, request_id, .. } => {
            let mut v = vec![*agent, *sender, *claimed_from];
            v.extend(of_request(request_id));
            v
        }
        Event::Gate { agent, .. }
        | Event::Act { agent, .. }
        | Event::FileStep { agent, .. }
        | Event::Status { agent, .. }
        | Event::Crash { agent, .. }
        | Event::Restart { agent }
        | Event::Respawn { agent }
        | Event::Stall { agent, .. }
        | Event::Alert { agent, .. }
        | Event::Read { agent, .. } => vec![*agent],
        Event::Partition { a, b, .. } => vec![*a, *b],
        Event::Deadlock { members, .. } | Event::DeadlockBroken { members, .. } => members.clone(),
        // A heal names only its partition; the partition's own event named the two sides.
        Event::Heal { .. } | Event::Note { .. } => Vec::new(),
    };
    v.sort();
    v.dedup();
    v
}

/// Who sent each message and to whom, and who asked whom each request:
/// what `parties` needs to place events that name only a number.
pub struct Index {
    pub sends: BTreeMap<u64, (AgentId, AgentId)>,
    pub requests: BTreeMap<RequestId, (AgentId, AgentId)>,
}

impl Index {
    pub fn of(events: &[Stamped]) -> Index {
        let mut sends = BTreeMap::new();
        let mut requests = BTreeMap::new();
        for e in events {
            match &e.event {
                Event::Send { seq, from, to: crate::protocol::Address::Agent(to), .. } => {
                    sends.insert(*seq, (*from, *to));
                }
                Event::Opened { id, requester, target, .. } => {
                    requests.insert(*id, (*requester, *target));
                }
                _ => {}
            }
        }
        Index { sends, requests }
    }

    pub fn parties(&self, e: &Event) -> Vec<AgentId> {
        parties(e, &self.sends, &self.requests)
    }
}

/// Groups the alike teammates of a run. `teammate(i)` says whether agent
/// `i` is a teammate (the lead and the adversary are never folded).
pub fn alike(events: &[Stamped], names: &Names, index: &Index, teammate: impl Fn(usize) -> bool) -> Folding {
    let count = names.agents.len();
    let mut folding = Folding::none(count);
    // Candidates by base name, in team order.
    let mut by_base: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, name) in names.agents.iter().enumerate() {
        if let Some(b) = base(name).filter(|_| teammate(i)) {
            by_base.entry(b).or_default().push(i);
        }
    }
    by_base.retain(|_, members| members.len() >= AT_LEAST);
    if by_base.is_empty() {
        return folding;
    }
    let candidate: Vec<bool> = (0..count).map(|i| by_base.values().any(|m| m.contains(&i))).collect();
    // Each candidate's life, as sentences without times, its name written `*`.
    let mut lives: Vec<Vec<String>> = vec![Vec::new(); count];
    for e in events {
        let parties = index.parties(&e.event);
        if !parties.iter().any(|a| candidate.get(a.index()).copied().unwrap_or(false)) {
            continue;
        }
        let sentence = e.sentence(names);
        for a in parties {
            if candidate.get(a.index()).copied().unwrap_or(false) {
                lives[a.index()].push(held_briefly(replace_name(&sentence, names.agent(a), "*")));
            }
        }
    }
    for (b, members) in by_base {
        // The life most members share (the first member's on a tie) is the group.
        let mut alike: BTreeMap<&Vec<String>, Vec<usize>> = BTreeMap::new();
        for &m in &members {
            alike.entry(&lives[m]).or_default().push(m);
        }
        let Some(group) = alike.into_values().max_by_key(|g| (g.len(), std::cmp::Reverse(g[0]))) else { continue };
        if group.len() < AT_LEAST {
            continue;
        }
        let rep = group[0];
        folding.stands_for[rep] = group.len();
        folding.group_name[rep] = Some(format!("{b}-*"));
        for &m in &group[1..] {
            folding.drawn_as[m] = Some(AgentId(rep as u32));
        }
    }
    folding
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_replaced_only_where_it_is_whole() {
        assert_eq!(
            replace_name("worker-1 → worker-10 [worker-1/shutdown/1]", "worker-1", "*"),
            "* → worker-10 [*/shutdown/1]"
        );
        assert_eq!(replace_name("alice", "alice", "*"), "*");
        assert_eq!(replace_name("malice alice-2", "alice", "*"), "malice alice-2");
    }

    #[test]
    fn only_names_made_by_count_have_a_base() {
        assert_eq!(base("worker-17"), Some("worker"));
        assert_eq!(base("db-admin-3"), Some("db-admin"));
        assert_eq!(base("alice"), None);
        assert_eq!(base("worker-"), None);
        assert_eq!(base("-3"), None);
    }
}
