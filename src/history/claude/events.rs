//! A Claude Code team's entries as the oracle's events: what each entry
//! says becomes a send and its delivery at the entry's time (the recipient
//! is its file's owner); a request opens a request; an answer is applied by
//! its receiver as the runtime applies it, by its id alone; the runtime's
//! notices move the roster (`teammate_terminated` ends a teammate, and a
//! message from one that ended means a new process under its name).

use super::folder::{Entry, Reading};
use super::message::{Notice, Said};
use crate::protocol::{Address, AgentId, Kind, Label, MessageType, Millis, RequestId, Status, Verdict};
use crate::trace::{Event, Names, RosterStatus, Stamped};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The runtime's own notices come from this name; it is no agent.
pub const SYSTEM: &str = "system";

/// The events a reading shows, each with the entry it came from.
#[derive(Debug, Default)]
pub struct Judged<Place = String> {
    pub names: Names,
    pub events: Vec<Stamped>,
    /// For each event, the entry it came from (`inboxes/alice.json[3]`).
    pub origin: Vec<Place>,
    /// Who must have a plan approved first, by agent.
    pub require_plan: Vec<bool>,
    /// The first entry's time, in milliseconds since the epoch: event times
    /// are counted from it.
    pub start_ms: i64,
    /// Entries whose time named no zone (read as UTC).
    pub no_zone: usize,
    /// Entries not yet read by a teammate still running: in flight, not
    /// judged (`inboxes/alice.json[4]`).
    pub in_flight: Vec<(String, Millis)>,
    /// Entries read but not judged, with why (a runtime notice this reader
    /// does not know).
    pub not_judged: Vec<(String, String)>,
}

/// Who asks whom, of which kind.
type Asking = (AgentId, AgentId, Kind);

#[derive(Default)]
struct Builder<'a> {
    team: crate::trace::Team,
    names: Names,
    ids: BTreeMap<String, RequestId>,
    requests: BTreeMap<RequestId, Status>,
    /// Agents the runtime said had ended, until they speak again.
    ended: HashSet<AgentId>,
    events: Vec<Stamped>,
    origin: Vec<Cow<'a, str>>,
    seq: u64,
    /// The names the team's config lists (with the lead); empty when there
    /// is no config, and then every name is taken as a member.
    members: HashSet<String>,
    lead: String,
    in_flight: Vec<(String, Millis)>,
    not_judged: Vec<(String, String)>,
    /// The first entry seen of each (owner, from, what it says, time): a
    /// repeat is the runtime delivering one message again.
    seen: HashSet<Repeat<'a>>,
    /// Repeats met, of which the first [`SAID_REPEATS`] are said one by one.
    repeats: usize,
    /// Whether the entry in hand repeats one seen (the runtime delivering
    /// it again, which it then applies again: claude-code#92244).
    a_repeat: bool,
    /// Requests the files show with no id, by (asker, target, kind), with
    /// where each is: an answer from that target quoting an id never seen
    /// may be to one of them.
    idless: HashMap<Asking, Vec<(RequestId, &'a str)>>,
    /// Whether the entry in hand reached its owner.
    delivered: bool,
    /// Teammates that approved their own shutdown, with where: the runtime
    /// ends such a teammate, and writes that it did only in memory
    /// (docs/claude-code-runtime.md), so what one sends after is news.
    /// With each, the idle notices it has sent since.
    approved_own_shutdown: HashMap<AgentId, (&'a str, u32)>,
    /// Entries a watch saw unread and then gone from their file (see
    /// `Reading::lost`): sent, never delivered.
    lost: HashSet<(&'a str, &'a str, u64, i64)>,
    /// Answers sent and never delivered (lost, or to an asker gone), by
    /// the request they answer: where each is. Such a request was
    /// answered; the answer did not arrive.
    answers_undelivered: HashMap<RequestId, &'a str>,
    /// The ids quoted by answers queued unread for their asker: such a
    /// request is answered, the answer not yet read.
    answers_in_flight: HashSet<&'a str>,
    /// Where requests lost to a rewrite were (see `lost`): no answer
    /// could come.
    requests_lost: HashSet<&'a str>,
    /// How many times each agent was seen to speak again after the runtime
    /// said it had ended: its incarnation, as the files show it.
    respawns: HashMap<AgentId, u32>,
    /// Each request delivered, by id: its kind, asker and target, and the
    /// target's incarnation when it was delivered. A later incarnation that
    /// answers it read the entry left in its inbox.
    handed: HashMap<RequestId, Handed>,
    /// What the files cannot show of a request, for an answer quoting an id
    /// none of them has: see [`Unseen`].
    unseen: Unseen<'a>,
}

/// A request delivered: see [`Builder::handed`].
#[derive(Clone, Copy)]
struct Handed {
    kind: Kind,
    asker: AgentId,
    target: AgentId,
    incarnation: u32,
}

/// Why an answer quoting an id no file shows may still answer a request
/// that was made: the request would be in its answerer's inbox, and the
/// files cannot always show it. Judged "an id never issued" only when they
/// could.
#[derive(Default)]
struct Unseen<'a> {
    /// Inbox files not read whole (not JSON, too big, a link), by owner.
    unread: HashSet<&'a str>,
    /// Inboxes read with some of their entries not (`inboxes/bob.json[3]`), by owner.
    entries_unread: HashSet<&'a str>,
    /// The read stopped at the folder's bound: any file may be cut.
    bounded: bool,
    /// Entries carry `msg_id`, as Claude Code 2.1.220 and later write them:
    /// that generation deletes an entry once it is delivered.
    drains: bool,
    /// (owner, sender) of every entry read: an inbox that holds nothing
    /// from the asker was drained or rewritten, or never written.
    heard: HashSet<(&'a str, &'a str)>,
    /// A transcript's lines that could not be read (`line 3`), for a
    /// transcript: it has no inboxes, and a request is in one of its lines.
    lines_unread: Option<Vec<&'a str>>,
}

impl<'a> Unseen<'a> {
    fn of(r: &'a Reading) -> Self {
        let unread =
            r.unjudged.iter().filter_map(|(place, _)| place.strip_prefix("inboxes/")?.strip_suffix(".json")).collect();
        let entries_unread = r
            .unjudged
            .iter()
            .filter_map(|(place, _)| place.strip_prefix("inboxes/")?.split_once(".json[").map(|(owner, _)| owner))
            .collect();
        let heard = r.entries.iter().map(|e| (e.to.as_str(), e.from.as_str())).collect();
        let drains = r.shapes.contains_key(super::folder::MSG_ID);
        let transcript = !r.entries.is_empty() && r.entries.iter().all(|e| e.origin.starts_with("line "));
        let lines_unread = transcript
            .then(|| r.unjudged.iter().map(|(place, _)| place.as_str()).filter(|p| p.starts_with("line ")).collect());
        Unseen { unread, entries_unread, bounded: r.bounded, drains, heard, lines_unread }
    }

    /// Why an answer to `asker` may be in its inbox though the files do not
    /// show it, if it may: what could not be read.
    fn answer_unread(&self, asker: &str) -> Option<String> {
        if self.unread.contains(asker) {
            Some(format!("inboxes/{asker}.json, where its answer would be, could not be read"))
        } else if self.entries_unread.contains(asker) {
            Some(format!("inboxes/{asker}.json, where its answer would be, holds entries that could not be read"))
        } else if self.bounded {
            Some("the read stopped at the folder's bound, and its answer may be past it".into())
        } else {
            None
        }
    }

    /// Why `answerer`'s inbox may hold a request from `asker` that the
    /// files do not show, if it may.
    fn why(&self, answerer: &str, asker: &str) -> Option<String> {
        if let Some(lines) = &self.lines_unread {
            // A transcript: the request would be in one of its lines.
            return match lines.as_slice() {
                [] => None,
                [one] => Some(format!("{one} of the transcript could not be read, and the request may be there")),
                [first, ..] => Some(format!(
                    "{} lines of the transcript could not be read ({first}, …), and the request may be in one",
                    lines.len()
                )),
            };
        }
        if self.unread.contains(answerer) {
            Some(format!("inboxes/{answerer}.json, where its request would be, could not be read"))
        } else if self.entries_unread.contains(answerer) {
            // An entry in a shape not read (a time in another format, a
            // type renamed) may be the request itself.
            Some(format!(
                "inboxes/{answerer}.json, where its request would be, holds entries that could not be read, and the \
                 request may be one"
            ))
        } else if self.bounded {
            Some("the read stopped at the folder's bound, and its request may be past it".into())
        } else if self.drains {
            Some(
                "the entries carry msg_id, as Claude Code 2.1.220 and later write them, and that generation deletes \
                 an entry once it is delivered"
                    .into(),
            )
        } else if !self.heard.contains(&(answerer, asker)) {
            Some(format!(
                "inboxes/{answerer}.json holds nothing from {asker}: an inbox drained (Claude Code deletes delivered \
                 entries by 2.1.220) or rewritten whole (claude-code#53896) keeps no trace of the request"
            ))
        } else {
            None
        }
    }
}

/// The reading's entries in time order (a file's own order for equal
/// times, files in name order), as events.
pub fn judge(r: &Reading) -> Judged {
    let j = judge_in_place(r);
    Judged {
        names: j.names,
        events: j.events,
        origin: j.origin.into_iter().map(Cow::into_owned).collect(),
        require_plan: j.require_plan,
        start_ms: j.start_ms,
        no_zone: j.no_zone,
        in_flight: j.in_flight,
        not_judged: j.not_judged,
    }
}

/// [`judge`], each event's place borrowed from the reading: a large
/// folder's events then cost no copy of their places.
pub fn judge_in_place(r: &Reading) -> Judged<Cow<'_, str>> {
    let mut b = Builder { unseen: Unseen::of(r), ..Builder::default() };
    b.lost = r.lost.iter().map(|(place, from, digest, at)| (place.as_str(), from.as_str(), *digest, *at)).collect();
    let lead = r.team.lead.clone().unwrap_or_else(|| "team-lead".to_string());
    b.team.agent(&lead);
    for (m, _) in &r.team.members {
        b.team.agent(m);
    }
    if !r.team.members.is_empty() && !r.team.members_in_part {
        b.members = std::iter::once(lead.clone()).chain(r.team.members.iter().map(|(m, _)| m.clone())).collect();
    }
    b.lead = lead;
    let asked = asked_at(r);
    let mut entries: Vec<(i64, Option<&str>, &Entry)> = r
        .entries
        .iter()
        .map(|e| {
            let (ms, request) = judged_at(e, &asked);
            (ms, request, e)
        })
        .collect();
    entries.sort_by_key(|(ms, _, e)| (*ms, tie_rank(&e.said)));
    let start_ms = entries.first().map_or(0, |(ms, ..)| *ms);
    let since_start = |ms: i64| Millis(ms.saturating_sub(start_ms).max(0) as u64);
    for &(ms, request, e) in &entries {
        let t = since_start(ms);
        if let Some(request) = request {
            b.answered_before_asked(e, ms - e.at.ms, request, t);
        }
        b.entry(e, t);
    }
    b.more_repeats(entries.last().map(|(.., e)| *e));
    b.large_inboxes(r);
    // The last entry as judged: an answer moved after its request ends
    // the history there, not at the earlier time it was stamped with.
    let last = entries.last().map_or(Millis::ZERO, |(ms, ..)| since_start(*ms));
    b.never_answered(last);
    let mut names = b.names;
    names.agents = b.team.names;
    // A set, not a search of the roster for each agent: a roster of 100,000.
    let planned: std::collections::HashSet<&str> =
        r.team.members.iter().filter(|(_, plan)| *plan).map(|(m, _)| m.as_str()).collect();
    let require_plan = names.agents.iter().map(|n| planned.contains(n.as_str())).collect();
    Judged {
        names,
        events: b.events,
        origin: b.origin,
        require_plan,
        start_ms,
        no_zone: entries.iter().filter(|(.., e)| e.at.no_zone).count(),
        in_flight: b.in_flight,
        not_judged: b.not_judged,
    }
}

/// Each request's id as written, with the time and place of its earliest
/// entry.
fn asked_at(r: &Reading) -> HashMap<&str, (i64, &str)> {
    let mut asked: HashMap<&str, (i64, &str)> = HashMap::new();
    for e in &r.entries {
        if let Said::Request { id: Some(id), .. } = &e.said {
            let at = asked.entry(id.as_str()).or_insert((e.at.ms, e.origin.as_str()));
            if e.at.ms < at.0 {
                *at = (e.at.ms, e.origin.as_str());
            }
        }
    }
    asked
}

/// When an entry is judged: its own time, but for an answer timed before
/// the request it names, which is judged just after that request (whose
/// place is then given). No answer comes before its question: the files'
/// clocks disagree (a timestamp written by hand, another zone, 0), and the
/// answer is not "an id never issued". It is said
/// (`Builder::answered_before_asked`).
fn judged_at<'r>(e: &Entry, asked: &HashMap<&str, (i64, &'r str)>) -> (i64, Option<&'r str>) {
    let request = match &e.said {
        Said::Answer { id: Some(id), .. } => asked.get(id.as_str()).filter(|(ms, _)| *ms > e.at.ms),
        _ => None,
    };
    request.map_or((e.at.ms, None), |&(ms, place)| (ms, Some(place)))
}

/// Where an entry goes among those of the same millisecond: a request
/// first, an answer last. The files cannot say which of them came first
/// (whole-second stamps tie often), and an answer never comes before its
/// question: read in the files' order, an answer in `team-lead.json` would
/// be judged before the request in `zed.json` it answers. The runtime's
/// notice that a teammate ended comes after even that: the runtime writes
/// it once the teammate's last turn (its approval) is done, and judged
/// first it made the approval a new process speaking (a review: a healthy
/// shutdown failed current-incarnation when both shared a millisecond).
fn tie_rank(said: &Said) -> u8 {
    match said {
        Said::Request { .. } => 0,
        Said::Answer { .. } => 2,
        Said::Notice(Notice::Terminated { .. }) => 3,
        _ => 1,
    }
}

/// An entry as what makes another its repeat: the same owner, sender,
/// message and time. The entry itself and a flag a key, in a large folder.
/// `timeless`: its time is when it was handed over, not when it was sent
/// (a protocol message in a lead's transcript: each delivery is a turn of
/// its own, claude-code#92244), so the same message is a repeat whatever
/// the time; its own words carry its id or its time.
struct Repeat<'a>(&'a Entry, bool);

impl Repeat<'_> {
    fn key(&self) -> (&str, &str, &Said, u64, i64) {
        (&self.0.to, &self.0.from, &self.0.said, self.0.digest, self.when())
    }

    fn when(&self) -> i64 {
        if self.1 {
            0
        } else {
            self.0.at.ms
        }
    }
}

impl PartialEq for Repeat<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Repeat<'_> {}

impl std::hash::Hash for Repeat<'_> {
    /// The message's digest and time, its sender and receiver: two equal
    /// keys have them equal, without hashing the words again. Not the digest
    /// and time alone: a folder of one short message sent by thousands at
    /// one instant put every entry in one bucket, and the set compared
    /// each with all before it (60,000 entries took 44 s).
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (self.0.digest, self.when(), &self.0.from, &self.0.to).hash(h)
    }
}

/// An inbox past this many entries: the runtime has been seen to stop
/// surfacing new entries to its owner there (anthropics/claude-code#63684,
/// 1,065 entries).
pub const LARGE_INBOX: usize = 1000;

/// Repeated entries said one by one; past them, counted in one alert.
const SAID_REPEATS: usize = 20;

impl<'a> Builder<'a> {
    fn push(&mut self, t: Millis, event: Event, e: &'a Entry) {
        self.events.push(Stamped { t, event });
        self.origin.push(Cow::Borrowed(&e.origin));
    }

    /// The id a written id stands for, labelled with what was written.
    fn id(&mut self, written: &str) -> RequestId {
        if let Some(&id) = self.ids.get(written) {
            return id;
        }
        let id = RequestId(uuid::Uuid::from_u128(self.ids.len() as u128 + 1));
        self.ids.insert(written.to_string(), id);
        self.names.labels.insert(id, written.to_string());
        id
    }

    /// `name` acts: if the runtime had said it ended, this is a new process.
    fn speaks(&mut self, name: &str, t: Millis, e: &'a Entry) -> AgentId {
        let a = self.team.agent(name);
        if self.ended.remove(&a) {
            *self.respawns.entry(a).or_default() += 1;
            self.push(t, Event::Respawn { agent: a }, e);
            self.push(t, Event::Status { agent: a, status: RosterStatus::Working }, e);
        }
        a
    }

    fn entry(&mut self, e: &'a Entry, t: Millis) {
        if e.from == SYSTEM {
            self.notice_from_the_runtime(e, t);
            return;
        }
        self.repeated(e, t);
        self.acts_after_approving_its_shutdown(e, t);
        let to = self.team.agent(&e.to);
        let lost = self.lost.contains(&(e.origin.as_str(), e.from.as_str(), e.digest, e.at.ms));
        if lost {
            let text = format!(
                "{}: the watch saw this entry unread, and a later look found it gone from the file: a whole-file \
                 rewrite lost it, and {} never had it (claude-code#53896)",
                e.origin, e.to
            );
            self.push(t, Event::Alert { agent: to, text }, e);
            if matches!(e.said, Said::Request { .. }) {
                self.requests_lost.insert(e.origin.as_str());
            }
        }
        let gone = lost || self.ended.contains(&to) || (!self.members.is_empty() && !self.members.contains(&e.to));
        if e.read == Some(false) && !gone {
            // Queued for a teammate still running, not yet picked up: its
            // delivery is not judged. A request in it was still made: its
            // asker's table holds it, so an answer that came (a flag the
            // runtime failed to set, #92244) answers an id it issued.
            if let Said::Request { kind, id, .. } = &e.said {
                let from = self.speaks(&e.from, t, e);
                self.open(*kind, id.as_deref(), (from, to), t, e);
            }
            if let Said::Answer { id: Some(id), .. } = &e.said {
                self.answers_in_flight.insert(id.as_str());
            }
            self.in_flight.push((e.origin.clone(), t));
            return;
        }
        // A repeat is the runtime handing over one message again, not its
        // sender speaking: no new process under its name (a review: an
        // approval redelivered after the end notice read as a respawn).
        let from = if self.a_repeat { self.team.agent(&e.from) } else { self.speaks(&e.from, t, e) };
        // Never read, by a recipient that has ended or never was: it was
        // sent and never delivered (no-silent-loss judges it at the end).
        self.delivered = e.read != Some(false);
        // One read was reached: the runtime drops a member from the
        // config once it has shut down, and what it read before stands.
        if !self.members.is_empty() && !self.members.contains(&e.to) && e.read != Some(true) {
            let text =
                format!("{}: {} is not in the team (config.json): a message to it reaches nobody", e.origin, e.to);
            self.push(t, Event::Alert { agent: from, text }, e);
        }
        match &e.said {
            Said::Plain => self.message(from, to, MessageType::Message, None, None, t, e),
            Said::Request { kind, id, words } => {
                if let (crate::protocol::kinds::Asker::Lead { rule }, false) = (kind.spec().asker, e.from == self.lead)
                {
                    let text = format!(
                        "{}: {} sent a {}, which only the lead sends ({}): the runtime let it through \
                         (claude-code#81464)",
                        e.origin,
                        e.from,
                        kind.spec().request,
                        rule.name
                    );
                    self.push(t, Event::Alert { agent: from, text }, e);
                }
                let id = self.open(*kind, id.as_deref(), (from, to), t, e);
                let mt = MessageType::Request(*kind);
                self.message(from, to, mt, Some(id), words.as_deref().map(Into::into), t, e);
                if self.delivered {
                    // Read while its target had ended: by the next process
                    // under the name, which it was meant for (a review: a
                    // respawn answering a request sent after the runtime
                    // ended the old one failed current-incarnation).
                    let next = self.ended.contains(&to) as u32;
                    let incarnation = self.respawns.get(&to).copied().unwrap_or(0) + next;
                    self.handed.insert(id, Handed { kind: *kind, asker: from, target: to, incarnation });
                }
            }
            Said::Answer { kind, id, yes, words } => self.answer(from, to, (*kind, id.as_deref(), *yes), words, t, e),
            Said::Notice(n) => self.notice(from, n, t, e),
            Said::Refused { what, why } => {
                let sent = match &**what {
                    Said::Request { kind, .. } => kind.spec().request,
                    Said::Answer { kind, .. } => kind.spec().response,
                    _ => "message",
                };
                let text = format!(
                    "{}: the runtime refused {}'s {sent} to {}: {why} (a defence that fired: the send was not made)",
                    e.origin, e.from, e.to
                );
                self.push(t, Event::Alert { agent: from, text }, e);
            }
            Said::Unknown { reason } => {
                self.push(t, Event::Note { text: format!("unjudged: {} ({reason})", e.origin) }, e);
            }
        }
    }

    /// The request written `id` (or, with none, named by its place),
    /// opened by `from` of `to` if it is not open already: its id.
    fn open(
        &mut self,
        kind: Kind,
        id: Option<&str>,
        (from, to): (AgentId, AgentId),
        t: Millis,
        e: &'a Entry,
    ) -> RequestId {
        let written = id.map_or_else(|| e.origin.clone(), str::to_string);
        let shown = id.is_some();
        let id = self.id(&written);
        if !shown {
            self.idless.entry((from, to, kind)).or_default().push((id, &e.origin));
        }
        if let std::collections::btree_map::Entry::Vacant(slot) = self.requests.entry(id) {
            slot.insert(Status::Pending);
            let label = Label::Named(written.as_str().into());
            let opened = Event::Opened { id, label, kind, requester: from, target: to, deadline: Millis::NEVER };
            self.push(t, opened, e);
        }
        id
    }

    #[allow(clippy::too_many_arguments)]
    fn message(
        &mut self,
        from: AgentId,
        to: AgentId,
        message_type: MessageType,
        request_id: Option<RequestId>,
        words: Option<crate::protocol::Text>,
        t: Millis,
        e: &'a Entry,
    ) {
        self.seq += 1;
        let seq = self.seq;
        let approve = None;
        self.push(t, Event::Send { seq, from, to: Address::Agent(to), message_type, request_id, approve, words }, e);
        if self.delivered {
            self.push(t, Event::Deliver { seq, sender: from, claimed_from: from, to, message_type, request_id }, e);
        }
    }

    /// An answer, applied by its receiver by id alone, as the runtime does.
    fn answer(
        &mut self,
        from: AgentId,
        to: AgentId,
        (kind, id, yes): (Kind, Option<&str>, bool),
        words: &Option<String>,
        t: Millis,
        e: &'a Entry,
    ) {
        let written = id.unwrap_or("(no id)");
        if !self.ids.contains_key(written) {
            match self.idless.get_mut(&(to, from, kind)).map(std::mem::take).unwrap_or_default().as_slice() {
                [] => {
                    let (answerer, asker) = (&self.team.names[from.index()], &self.team.names[to.index()]);
                    if let Some(why) = self.unseen.why(answerer, asker) {
                        let why = format!(
                            "a {kind} answer quoting {written:?}, an id no request in the files shows: {why}; not judged"
                        );
                        self.not_judged.push((e.origin.clone(), why));
                        return;
                    }
                }
                // One request to this teammate shows no id, and its answer
                // quotes one never seen: the id is that request's (its result
                // gave it in no shape read), said, and then judged, so that a
                // second answer to it is judged against the first (a review:
                // approve then reject of one id passed unjudged).
                [(request, at)] => {
                    self.ids.insert(written.to_string(), *request);
                    let who = &self.team.names[from.index()];
                    let text = format!(
                        "{}: {who}'s {kind} answer quotes {written:?}, an id no result showed: taken as the id of the \
                         {kind} request at {at}, the only one to {who} whose id was not shown",
                        e.origin
                    );
                    self.push(t, Event::Alert { agent: to, text }, e);
                }
                // Several: which it answers cannot be told.
                many => {
                    let why = format!(
                        "a {kind} answer quoting {written:?}, an id no request shows, while {} {kind} requests from {} \
                         to {} show no id: which one it answers cannot be told, not judged",
                        many.len(),
                        self.team.names[to.index()],
                        self.team.names[from.index()]
                    );
                    self.idless.insert((to, from, kind), many.to_vec());
                    self.not_judged.push((e.origin.clone(), why));
                    return;
                }
            }
        }
        let id = self.id(written);
        self.left_in_its_inbox((id, written), from, t, e);
        self.seq += 1;
        let seq = self.seq;
        let message_type = MessageType::Response(kind);
        let words = words.as_deref().map(Into::into);
        let send = Event::Send {
            seq,
            from,
            to: Address::Agent(to),
            message_type,
            request_id: Some(id),
            approve: Some(yes),
            words,
        };
        if self.a_repeat {
            // The runtime handing the answer over again, not its sender
            // answering again: a sender the runtime has since ended did
            // not act (a review: final-roster blamed it).
            let detail = format!("{}: the runtime handed the same answer over again (claude-code#92244)", e.origin);
            self.push(t, Event::Fault { seq, fault: crate::fault_kind::FaultKind::Replay, detail }, e);
        }
        self.push(t, send, e);
        if kind == Kind::Shutdown && yes && e.from != self.lead && !self.a_repeat {
            self.approved_own_shutdown.insert(from, (e.origin.as_str(), 0));
        }
        if !self.delivered {
            self.answers_undelivered.entry(id).or_insert(e.origin.as_str());
            return;
        }
        let delivered =
            Event::Deliver { seq, sender: from, claimed_from: from, to, message_type, request_id: Some(id) };
        self.push(t, delivered, e);
        let to_status = if yes { Status::Approved } else { Status::Rejected };
        let was = self.requests.get(&id).copied().unwrap_or(Status::Pending);
        let verdict = if (kind == Kind::Plan || !yes) && was == to_status && !self.a_repeat {
            // A plan's answer again, in other words or at another time,
            // changes nothing: the runtime approves every plan at once, then
            // the lead approves it too (docs/claude-code-runtime.md;
            // claude-code#27265, #29064). Nor does a rejection again of any
            // kind: a request handed over twice is answered twice, and the
            // second "no" leaves it as it was (a review: a shutdown refused
            // twice failed where a plan refused twice passed). One
            // delivered again whole is the runtime applying one message
            // twice (#92244), judged so; and a shutdown approved twice is
            // the runtime ending one twice.
            let text = format!(
                "{}: {}'s {kind} answer to [{written}] says again what it already was ({}): it changes nothing",
                e.origin,
                e.from,
                to_status.as_str()
            );
            self.push(t, Event::Note { text }, e);
            Verdict::Ignored(crate::protocol::Reason::NotPending)
        } else {
            self.requests.insert(id, to_status);
            Verdict::Applied { kind, from: was, to: to_status }
        };
        let judged = Event::Verdict {
            at: to,
            request_id: id,
            response_kind: kind,
            approve: yes,
            sender: from,
            claimed_from: from,
            verdict,
        };
        self.push(t, judged, e);
    }

    /// Before `answerer` answers request `id`: if it was delivered to an
    /// earlier incarnation of it, the one answering read the entry left in
    /// its inbox (the runtime keeps an inbox across a respawn:
    /// claude-code#45874), which reaches it as a copy of the request sent
    /// to the one that is gone.
    fn left_in_its_inbox(&mut self, (id, written): (RequestId, &str), answerer: AgentId, t: Millis, e: &'a Entry) {
        let now = self.respawns.get(&answerer).copied().unwrap_or(0);
        let Some(h) = self.handed.get_mut(&id).filter(|h| h.target == answerer && h.incarnation < now) else {
            return;
        };
        h.incarnation = now;
        let Handed { kind, asker, target, .. } = *h;
        self.seq += 1;
        let seq = self.seq;
        let detail = format!(
            "{} was ended and spoke again since it was handed [{written}]: the entry left in its inbox reaches the \
             new process (claude-code#45874)",
            e.from
        );
        self.push(t, Event::Fault { seq, fault: crate::fault_kind::FaultKind::Replay, detail }, e);
        let mt = MessageType::Request(kind);
        let to = Address::Agent(target);
        let send =
            Event::Send { seq, from: asker, to, message_type: mt, request_id: Some(id), approve: None, words: None };
        self.push(t, send, e);
        let delivered = Event::Deliver {
            seq,
            sender: asker,
            claimed_from: asker,
            to: target,
            message_type: mt,
            request_id: Some(id),
        };
        self.push(t, delivered, e);
    }

    fn notice(&mut self, from: AgentId, n: &Notice, t: Millis, e: &'a Entry) {
        let text = match n {
            Notice::Idle => return,
            Notice::TaskAssigned { task } => format!("{} is assigned the task {task:?}", e.to),
            Notice::Terminated { .. } => return self.notice_from_the_runtime(e, t),
            Notice::Other(what) => format!("{what} from {}", self.names_of(from)),
        };
        self.push(t, Event::Note { text }, e);
    }

    /// Says that answer `e` is timed `early` ms before the request it
    /// names, at `request`.
    fn answered_before_asked(&mut self, e: &'a Entry, early: i64, request: &str, t: Millis) {
        let text = format!(
            "{}: an answer timed {} before its request ({request}): the files' clocks disagree; judged as if it came \
             just after the request",
            e.origin,
            Millis(early.max(0) as u64)
        );
        let agent = self.team.agent(&e.from);
        self.push(t, Event::Alert { agent, text }, e);
    }

    /// Names each request no answer reached, with how long it had been
    /// open when the history ends: a lost answer (an entry a concurrent
    /// rewrite lost, claude-code#53896) leaves no other trace in the folder.
    fn never_answered(&mut self, end: Millis) {
        let mut open: Vec<(RequestId, Millis, AgentId, AgentId, Cow<'a, str>)> = Vec::new();
        for (e, place) in self.events.iter().zip(&self.origin) {
            match &e.event {
                Event::Opened { id, requester, target, .. } => {
                    open.push((*id, e.t, *requester, *target, place.clone()))
                }
                Event::Verdict { request_id, .. } => open.retain(|o| o.0 != *request_id),
                _ => {}
            }
        }
        for (id, t, requester, target, place) in open {
            let (asker, asked) = (self.names_of(requester), self.names_of(target));
            let label = self.names.labels.get(&id).cloned().unwrap_or_default();
            // A folder's places name an entry (`inboxes/bob.json[3]`), a
            // transcript's a line.
            let open = Millis(end.0 - t.0);
            let folder = super::folder::entry_place(&place).is_some();
            // Answered, the answer queued: in flight, said as such.
            if self.answers_in_flight.contains(label.as_str()) {
                continue;
            }
            // The request itself lost to a rewrite: no answer could come.
            if self.requests_lost.contains(&*place) {
                let text = format!(
                    "{place}: [{label}], asked of {asked} by {asker}, never reached {asked} (lost, above), so no \
                     answer came: open {open} when the folder ends"
                );
                self.events.push(Stamped { t: end, event: Event::Alert { agent: requester, text } });
                self.origin.push(place);
                continue;
            }
            let undelivered = self.answers_undelivered.get(&id).copied();
            let unread = self.unseen.answer_unread(&asker).filter(|_| folder);
            let text = match (undelivered, unread) {
                // Answered: the answer is in the files, and never arrived
                // (no-silent-loss says how).
                (Some(answer), _) => format!(
                    "{place}: [{label}], asked of {asked} by {asker}, was answered ({answer}), but the answer never \
                     reached {asker}: open {open} when the {} ends",
                    if folder { "folder" } else { "transcript" }
                ),
                // Not "never": the answer may be in what was not read.
                (None, Some(unread)) => format!(
                    "{place}: [{label}], asked of {asked} by {asker}, was not seen answered: {unread}; open {open} \
                     when the folder ends"
                ),
                (None, None) => {
                    let why = if folder {
                        "when the folder ends (an answer a whole-file rewrite lost leaves no trace here, \
                         claude-code#53896)"
                    } else {
                        "when the transcript ends (an answer still queued, or recorded in a line not read, is not seen)"
                    };
                    format!("{place}: [{label}], asked of {asked} by {asker}, was never answered: open {open} {why}")
                }
            };
            self.events.push(Stamped { t: end, event: Event::Alert { agent: requester, text } });
            self.origin.push(place);
        }
    }

    /// Says so when an entry repeats an earlier one of the same inbox (the
    /// first [`SAID_REPEATS`] one by one; the rest are counted).
    fn repeated(&mut self, e: &'a Entry, t: Millis) {
        let timeless = e.origin.starts_with("line ") && e.to == self.lead && !matches!(e.said, Said::Plain);
        let this = Repeat(e, timeless);
        self.a_repeat = self.seen.contains(&this);
        match self.seen.get(&this) {
            Some(_) if self.repeats >= SAID_REPEATS => self.repeats += 1,
            Some(Repeat(first, _)) => {
                self.repeats += 1;
                let same = if timeless { "the same sender and message" } else { "the same sender, message and time" };
                let text =
                    format!("{} repeats {}: {same}, delivered again (claude-code#92244)", e.origin, first.origin);
                let lead = self.team.agent(&self.lead.clone());
                self.push(t, Event::Alert { agent: lead, text }, e);
            }
            None => {
                self.seen.insert(this);
            }
        }
    }

    /// The repeats past the first [`SAID_REPEATS`], as one alert at the
    /// last entry: a runtime stuck redelivering an inbox makes one a read,
    /// and each said alone flooded the report (a review: 200,000 lines).
    fn more_repeats(&mut self, last: Option<&'a Entry>) {
        let (Some(e), more) = (last, self.repeats.saturating_sub(SAID_REPEATS)) else { return };
        if more == 0 {
            return;
        }
        let text = format!(
            "and {} more repeated {} (the first {SAID_REPEATS} are said one by one): the runtime delivered \
             the same entries again (claude-code#92244)",
            more,
            if more == 1 { "entry" } else { "entries" }
        );
        let lead = self.team.agent(&self.lead.clone());
        let t = self.events.last().map_or(Millis::ZERO, |s| s.t);
        self.push(t, Event::Alert { agent: lead, text }, e);
    }

    /// Says which inboxes are past the size where the runtime has been seen
    /// to stop surfacing new entries.
    fn large_inboxes(&mut self, r: &Reading) {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        // A transcript's entries (`line 12`) are not an inbox's.
        for e in r.entries.iter().filter(|e| e.origin.starts_with("inboxes/")) {
            *counts.entry(e.to.as_str()).or_default() += 1;
        }
        let t = self.events.last().map_or(Millis::ZERO, |e| e.t);
        for (owner, n) in counts.into_iter().filter(|(_, n)| *n > LARGE_INBOX) {
            let agent = self.team.agent(owner);
            let text = format!(
                "inboxes/{owner}.json holds {n} entries: past {LARGE_INBOX}, the runtime has been seen to mark new \
                 ones read without showing them (claude-code#63684); only the lead's transcript can tell"
            );
            self.events.push(Stamped { t, event: Event::Alert { agent, text } });
            self.origin.push(Cow::Owned(format!("inboxes/{owner}.json[{n}]")));
        }
    }

    fn names_of(&self, a: AgentId) -> String {
        self.team.names.get(a.index()).cloned().unwrap_or_default()
    }

    /// `e`'s sender approved its own shutdown before, and the runtime has
    /// not said it ended (which would make this a new process): said once,
    /// as news. The files cannot tell a teammate that went on running from
    /// one started again under its name. An idle notice is the runtime's
    /// own, not an act.
    fn acts_after_approving_its_shutdown(&mut self, e: &'a Entry, t: Millis) {
        // Another answer to a shutdown is judged by the invariants (the
        // same approval delivered twice, a change of mind).
        if matches!(e.said, Said::Answer { kind: Kind::Shutdown, .. }) || self.a_repeat {
            return;
        }
        let a = self.team.agent(&e.from);
        if self.ended.contains(&a) {
            return;
        }
        // One idle notice as its last turn ends is how a teammate stops; a
        // second is one still running, idle, as #60199 reports ("idle
        // notifications continue to arrive from the teammate indefinitely").
        if matches!(e.said, Said::Notice(Notice::Idle)) {
            let Some((approval, idles)) = self.approved_own_shutdown.get_mut(&a) else { return };
            *idles += 1;
            if *idles < 2 {
                return;
            }
            let approval = *approval;
            self.approved_own_shutdown.remove(&a);
            let text = format!(
                "{}: {} is still idling after approving its own shutdown ({approval}), with no teammate_terminated \
                 between: the runtime ends a teammate that approves, and this one went on running \
                 (claude-code#60199)",
                e.origin, e.from
            );
            self.push(t, Event::Alert { agent: a, text }, e);
            return;
        }
        if let Some((approval, _)) = self.approved_own_shutdown.remove(&a) {
            let text = format!(
                "{}: {} sent this after approving its own shutdown ({approval}), and the files hold no \
                 teammate_terminated between: the runtime ends a teammate that approves, so either it went on \
                 running or it was started again under its name",
                e.origin, e.from
            );
            self.push(t, Event::Alert { agent: a, text }, e);
        }
    }

    /// What the runtime itself says: a teammate has ended.
    fn notice_from_the_runtime(&mut self, e: &'a Entry, t: Millis) {
        match &e.said {
            Said::Notice(Notice::Terminated { who }) => {
                let a = self.team.agent(who);
                self.approved_own_shutdown.remove(&a);
                if self.ended.insert(a) {
                    self.push(t, Event::Status { agent: a, status: RosterStatus::Shutdown }, e);
                }
            }
            // Said unjudged when it was read, with its reason.
            Said::Unknown { .. } => {}
            // The runtime writes only its `teammate_terminated` notices as
            // "system": anything else under that name (a request, an
            // answer, prose) is not something this reader knows how to
            // judge, and is said so rather than passed over.
            other => {
                let what = match other {
                    Said::Plain => "a plain message".to_string(),
                    Said::Request { kind, .. } => format!("a {kind} request"),
                    Said::Answer { kind, .. } => format!("a {kind} answer"),
                    _ => "a notice other than teammate_terminated".to_string(),
                };
                let why = format!(
                    "{what} from \"system\", which the runtime writes only for teammate_terminated notices: not judged"
                );
                self.not_judged.push((e.origin.clone(), why));
            }
        }
    }
}
