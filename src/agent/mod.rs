//! What the lead and the teammates decide, as pure state machines.
//!
//! Each agent gets an `Input` and a `Ctx` (the time, its request ids, a view of the
//! team) and answers with `Command`s in `ctx.out`; the actor runtime in
//! `team` performs them. Nothing here touches actix, a clock or I/O, which is
//! what lets the same logic run in actors, in tests and in an explorer.

pub mod ids;
pub mod lead;
mod requests;
pub mod set_aside;
pub mod teammate;

use crate::protocol::Canon;
use crate::protocol::{
    check_send, Address, AgentId, Delivery, Directory, Envelope, Kind, Message, Millis, Policy, Reason, RequestId, Text,
};
use crate::trace::{Event, RosterStatus};
use serde::Deserialize;

pub use ids::{agent_stream, network_stream, IdStreams};
pub use lead::Lead;
pub(crate) use requests::Requests;
pub use teammate::{Teammate, TeammateSpec, WorkItem};

/// How an agent answers a request: fixed, or a list used in order whose last
/// answer repeats (`["reject", "approve"]` rejects once, then approves).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    Approve,
    Reject,
    Ignore,
}

/// An answer list, as a scenario gives it: the responder's place in it is
/// its own (an [`Answered`]), so a hundred identical teammates share one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answers {
    list: std::sync::Arc<[Answer]>,
}

impl Answers {
    pub fn new(list: Vec<Answer>) -> Answers {
        assert!(!list.is_empty(), "an answer list needs at least one answer");
        Answers { list: list.into() }
    }

    pub fn always(a: Answer) -> Answers {
        Answers::new(vec![a])
    }

    /// The place of the list's last answer, which repeats.
    fn last(&self) -> u32 {
        (self.list.len() - 1) as u32
    }
}

/// What a responder has answered: how far along each protocol's answer list
/// it is, and the answers it gave that it must give again to a duplicated or
/// replayed request (instead of the next one in its list: a responder must be
/// idempotent, or a copy of a rejected request could make a teammate stop
/// after the lead recorded "rejected"). Only answers given before the list
/// settled are kept (after that, answering again gives the same answer
/// anyway), so a fixed behaviour costs nothing. Bounded: the oldest answers
/// are forgotten past `CAPACITY`.
#[derive(Clone, Debug, Default)]
pub struct Answered {
    /// Made on first use: a responder whose every list is one answer
    /// (a fixed behaviour, every teammate of a load) never needs it, and
    /// at 100,000 teammates its room inline would cost memory nobody used.
    memory: Option<Box<Memory>>,
}

/// Where the lists are read and the answers given, oldest first. A list, not
/// a map: an answer is kept only while the responder's list is unsettled,
/// so there are at most as many as its lists have entries before their last
/// (one, for `["reject", "approve"]`: the rejection), and a search copies,
/// walks and drops this in every state a teammate moves in (as a map and a
/// queue it was three blocks and a hash-table walk each time).
#[derive(Clone, Debug, Default)]
struct Memory {
    /// Where each protocol's list is next read, by [`Kind::index`]; it stops
    /// at the list's last answer, which repeats.
    next: [u32; Kind::COUNT],
    given: smallvec::SmallVec<[(crate::protocol::RequestId, Answer); 2]>,
}

impl Answered {
    pub const CAPACITY: usize = 1024;

    /// The answer to request `id` of `kind`: the one given before, or the
    /// next from `answers`. The flag says whether it is a known repeat.
    #[inline]
    pub fn answer(&mut self, id: crate::protocol::RequestId, kind: Kind, answers: &Answers) -> (Answer, bool) {
        // Most responders never remember anything: no hashing for them.
        // With no memory every list is read at its first answer.
        if self.memory.is_none() && answers.last() == 0 {
            return (answers.list[0], false);
        }
        self.answer_remembering(id, kind, answers)
    }

    fn answer_remembering(&mut self, id: crate::protocol::RequestId, kind: Kind, answers: &Answers) -> (Answer, bool) {
        if let Some(a) = self.memory.as_ref().and_then(|m| m.given.iter().find(|g| g.0 == id)) {
            return (a.1, true);
        }
        let next = self.memory.as_ref().map_or(0, |m| m.next[kind.index()]);
        let a = answers.list[next.min(answers.last()) as usize];
        if next >= answers.last() {
            return (a, false);
        }
        let m = self.memory.get_or_insert_with(Box::default);
        m.next[kind.index()] = next + 1;
        m.given.push((id, a));
        if m.given.len() > Self::CAPACITY {
            m.given.remove(0);
        }
        (a, false)
    }

    /// Hashes where `kind`'s list is next read: past its end every answer
    /// is the last.
    pub fn canon_place(&self, kind: Kind, c: &mut Canon) {
        c.word(u64::from(self.memory.as_ref().map_or(0, |m| m.next[kind.index()])));
    }
}

/// A request that passed its receiver's checks, with whom to answer.
pub(crate) struct Admitted {
    pub request_id: RequestId,
    /// Who asked: the sender the router saw, or without sender
    /// authentication, whoever the message claims.
    pub asker: AgentId,
}

/// Checks an incoming request as strictly as a requester checks a response:
/// the asker must be allowed to ask this kind, the request must have been
/// sent to this incarnation of the receiver (not to the one a crash ended),
/// and it must not have reached its deadline. A request that fails is
/// recorded and changes nothing: no answer is spent on it, so a forgery
/// cannot use up a teammate's "reject".
// Inlined, with one match on the message and the refusal out of line: every
// delivered request comes here, and as a call it matched the message three
// times and returned its verdict through memory; the refusal is rare.
#[inline(always)]
pub(crate) fn admit(d: &Delivery, ctx: &mut Ctx) -> Option<Admitted> {
    let Message::Request { request_id, deadline, .. } = &d.envelope.message else { return None };
    let (request_id, deadline) = (*request_id, *deadline);
    let defences = ctx.policy.defences;
    let asker = asker_of(d, ctx);
    let allowed = !defences.sender_check || may_ask(&d.envelope.message, asker, ctx);
    let current = !defences.incarnation_check || d.incarnation >= ctx.incarnation;
    if allowed && current && !(defences.deadline_check && ctx.now >= deadline) {
        return Some(Admitted { request_id, asker });
    }
    refuse(d, allowed, current, ctx);
    None
}

/// Who asked: the sender the router saw, or without sender authentication,
/// whoever the message claims.
#[inline]
pub(crate) fn asker_of(d: &Delivery, ctx: &Ctx) -> AgentId {
    if ctx.policy.defences.sender_auth {
        d.sender
    } else {
        d.envelope.from
    }
}

/// Records why `admit` turned a request away: the sender first, then the
/// incarnation, then the deadline. A stale request is named as such even when
/// its deadline has also passed: the crash is what made it unanswerable.
#[cold]
#[inline(never)]
fn refuse(d: &Delivery, allowed: bool, current: bool, ctx: &mut Ctx) {
    let reason = if !allowed {
        Reason::WrongSender
    } else if !current {
        Reason::StaleIncarnation
    } else {
        Reason::Expired
    };
    ignore_request(d, reason, ctx);
}

/// Whether a request taken from aside may still be answered: time has passed
/// since it was admitted, and its deadline may have come meanwhile.
pub(crate) fn still_current(d: &Delivery, ctx: &mut Ctx) -> bool {
    let expired = d.envelope.message.deadline().is_some_and(|deadline| ctx.now >= deadline);
    if ctx.policy.defences.deadline_check && expired {
        ignore_request(d, Reason::Expired, ctx);
        return false;
    }
    true
}

fn ignore_request(d: &Delivery, reason: Reason, ctx: &mut Ctx) {
    let m = &d.envelope.message;
    if let Some(request_id) = m.request_id() {
        ctx.record(Event::RequestIgnored {
            agent: ctx.me,
            request_id,
            message_type: m.message_type(),
            sender: d.sender,
            claimed_from: d.envelope.from,
            reason,
        });
    }
}

/// Whether `asker` may ask this of us: the send rules' own answer (one
/// [`rules::may_ask`](crate::protocol::rules::may_ask) for both), and a
/// teammate asker must be one of the team other than us.
#[inline(always)]
fn may_ask(m: &Message, asker: AgentId, ctx: &Ctx) -> bool {
    let Some((kind, crate::protocol::Role::Request)) = m.protocol() else { return false };
    let member = asker.is_lead() || (ctx.dir.exists(asker) && asker != ctx.me);
    member && crate::protocol::rules::may_ask(kind, asker, ctx.me, ctx.policy.strict_hierarchy).is_ok()
}

/// A timer an agent asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// The earliest deadline in the agent's request table.
    Deadline,
    /// The step of work in progress is done.
    WorkStep,
}

/// A scripted action, from a scenario's `[[step]]`.
#[derive(Clone, Debug, PartialEq)]
pub enum Script {
    /// Asks `to` a protocol's question, saying `words`: the lead asks a
    /// teammate to shut down (a reason), a teammate submits a plan to the
    /// lead or, with the hierarchy off, a peer (the plan). The send rules
    /// refuse whoever may not ask it.
    Ask { kind: crate::protocol::Kind, to: AgentId, words: Option<Text>, label: Option<Text> },
    /// The lead asks `to` for a plan: its gate becomes required (s13's
    /// `request_plan`).
    AskPlan { to: AgentId, text: Text },
    /// The lead starts `to` again under the same name, a new process: it
    /// must be down for good (shut down, killed, crashed). What the old one
    /// left in its inbox file is still there for the new one to read.
    Respawn { to: AgentId },
    /// A response sent as written, whoever sends it and whatever it
    /// quotes: a real team's line replayed (`audit --to-scenario`), a wrong
    /// teammate answering, an answer flipped. It is only a message: the
    /// sender's own state does not follow it (a scripted approval does not
    /// stop the teammate that sends it).
    Answer { to: AgentId, kind: crate::protocol::Kind, quote: Quote, approve: bool, words: Option<Text> },
    /// Plain text, to one agent or to everyone.
    Say { to: Address, text: Text },
}

/// The request a scripted answer quotes.
#[derive(Clone, Debug, PartialEq)]
pub enum Quote {
    /// The request a step of the file labelled so; the world finds its id
    /// when the step runs.
    Label(Text),
    Id(RequestId),
}

/// Sends a scripted answer (see [`Script::Answer`]); an answer whose label
/// names no request made by then is not sent, and the log says so.
pub(crate) fn scripted_answer(s: &Script, ctx: &mut Ctx) {
    let Script::Answer { to, kind, quote, approve, words } = s else { return };
    let request_id = match quote {
        Quote::Id(id) => *id,
        Quote::Label(l) => {
            ctx.record(Event::Note {
                text: format!("answer: no request labelled {l} has been made yet; nothing sent"),
            });
            return;
        }
    };
    let (approve, words) = (*approve, words.clone());
    // Said first, so the oracle judges the send as the script's, not as
    // what the sender did (a scripted acceptance is no task taken up).
    ctx.record(Event::Scripted { agent: ctx.me });
    ctx.send(Address::Agent(*to), Message::Response { kind: *kind, request_id, approve, words });
}

/// Everything that can reach an agent.
#[derive(Clone, Debug)]
pub enum Input {
    /// The run begins.
    Start,
    Deliver(Delivery),
    Wake(Timer),
    Script(Script),
    /// The agent comes back after a crash as incarnation `incarnation`: its
    /// mailbox and the step in progress are gone; its request table survives.
    /// The runtime hands it over only if no later crash or kill overtook it.
    Restart {
        incarnation: u32,
    },
    /// The agent starts over as a new process, incarnation `incarnation`,
    /// after it was down for good: nothing of the old one's state survives
    /// but the requests it made (which still expire on their deadlines).
    Respawn {
        incarnation: u32,
    },
}

/// What an agent asks the runtime to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Deliver this envelope (already checked against the send rules).
    Send(Envelope),
    /// Wake me with `timer` at `at`. Timers are never cancelled: a spare
    /// wake-up finds nothing due and costs one no-op.
    Wake { at: Millis, timer: Timer },
    /// Boxed, so that `Send`, the command on every message's path, is the
    /// largest variant and sits at the start of the command, with no tag in
    /// front of it to write and copy around.
    Record(Box<Event>),
    /// My roster status is now this.
    Status(RosterStatus),
    /// One more step of `path` is written.
    FileStep { path: Text, done: u32, total: u32 },
    /// The timeout policy says: force-stop this teammate.
    Kill(AgentId),
    /// Start this teammate again as a new process (`Script::Respawn`).
    Respawn(AgentId),
    /// I am done: stop my actor (status already reported).
    Stop,
}

/// Who is in the team and whether each can receive: the agents' view of the
/// roster the runtime keeps.
#[derive(Debug, Clone, Default)]
pub struct Roster {
    pub statuses: Vec<RosterStatus>,
}

impl Directory for Roster {
    #[inline]
    fn exists(&self, id: AgentId) -> bool {
        id.index() < self.statuses.len()
    }
    #[inline]
    fn is_active(&self, id: AgentId) -> bool {
        self.statuses.get(id.index()).is_some_and(|s| s.is_active())
    }
}

#[cfg(test)]
thread_local! {
    /// Sends a mailroom took on this thread, for the test that compares a
    /// run with a mailroom to one without (`world::turn`).
    pub static DIRECT_SENDS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The agents' mailboxes, as the world lends them to a turn (see [`Mailroom`]).
pub trait Mailboxes {
    fn put(&mut self, to: AgentId, input: Input);
}

/// Where a message goes when the world needs nothing of it but a mailbox
/// (no log, no latency, no fault can touch it: a benchmark's run): straight
/// into the receiver's mailbox while the turn goes on, numbered and stamped
/// as the world's own path would, instead of through the command buffer and
/// back. The world lends it only then (`world::turn`).
pub struct Mailroom<'a> {
    pub mailboxes: &'a mut dyn Mailboxes,
    /// The world's count of messages sent: the next is numbered one more.
    pub sent: &'a mut u64,
    /// Which life of each agent a message sent now is meant for.
    pub epochs: &'a [u32],
    /// How many timers for later the turn has queued with nothing else
    /// queued before them: a send may pass those (see [`Ctx::queue_send`]).
    pub timers: usize,
}

/// What an agent sees of the world while it handles one input.
pub struct Ctx<'a> {
    pub me: AgentId,
    /// Which life of `me` this is: a crash and restart increments it. A
    /// request the router stamped with an earlier one was meant for a
    /// process that is gone.
    pub incarnation: u32,
    pub now: Millis,
    /// The agent's own request-id stream (see `ids`).
    pub ids: &'a mut ids::IdStreams,
    /// A concrete type, not `dyn Directory`: the send rules run twice per
    /// handshake and inline better without a virtual call.
    pub dir: &'a Roster,
    pub policy: &'a Policy,
    pub out: &'a mut Vec<Command>,
    /// Whether anyone reads the events: with the log off (benchmarks), the
    /// hot path skips building them.
    pub tracing: bool,
    /// How many more messages the agent sends this turn before it dies
    /// (`u32::MAX`: it does not). A torn append that lands inside the
    /// writer's own turn kills it there; the world then plays the turn
    /// again with this set, so that the send is its last act (see
    /// `world::turn`). The last send returns false: nothing follows it.
    pub sends_left: u32,
    /// The mailboxes, when a message needs nothing else of the world.
    pub mailroom: Option<Mailroom<'a>>,
}

/// A turn for unit tests: `me`'s first life at `now`, the log off, no
/// death and no mailroom; a test sets what it needs otherwise.
#[cfg(test)]
impl<'a> Ctx<'a> {
    pub(crate) fn for_test(
        me: AgentId,
        now: Millis,
        ids: &'a mut ids::IdStreams,
        dir: &'a Roster,
        policy: &'a Policy,
        out: &'a mut Vec<Command>,
    ) -> Ctx<'a> {
        Ctx { me, incarnation: 0, now, ids, dir, policy, out, tracing: false, sends_left: u32::MAX, mailroom: None }
    }
}

impl Ctx<'_> {
    /// Sends `message` if the send rules allow it; records the refusal otherwise.
    #[inline(always)]
    pub fn send(&mut self, to: Address, message: Message) -> bool {
        let env = Envelope { from: self.me, to, sent_at: self.now, message };
        if self.sends_left == 0 {
            return false;
        }
        match check_send(&env, self.dir, self.policy) {
            Ok(()) => {
                self.queue_send(env);
                self.sends_left -= 1;
                self.sends_left != 0
            }
            Err(error) => {
                self.record(Event::Refuse { from: self.me, to, message_type: env.message.message_type(), error });
                false
            }
        }
    }

    /// A message that passed the send rules, for the world to carry. With
    /// a mailroom lent and nothing queued before it, it goes now: it would
    /// be the first command the world carries out after this turn, and
    /// nothing the turn does before it ends sees the difference (the roster
    /// and the lives it is stamped with do not change during a turn).
    ///
    /// Nor does a timer set for later queued before it: the timer goes into
    /// the world's queue, which nobody reads before this turn ends, and it
    /// cannot fire before every mailbox is empty. So a lead's burst (its
    /// first request arms the deadline timer, then one request for each
    /// teammate) goes straight into the mailboxes, and no buffer holds a
    /// command for each teammate. A timer due now may fire while mail is
    /// waiting (`team::sim::drive`): a send queued behind one waits.
    #[inline(always)]
    pub(crate) fn queue_send(&mut self, env: Envelope) {
        if let (Some(room), Address::Agent(to)) = (&mut self.mailroom, env.to) {
            if self.out.len() == room.timers && self.dir.is_active(to) {
                *room.sent += 1;
                let (seq, incarnation) = (*room.sent, room.epochs[to.index()]);
                let delivery = Delivery { seq, envelope: env, sender: self.me, to, at: self.now, incarnation };
                room.mailboxes.put(to, Input::Deliver(delivery));
                #[cfg(test)]
                DIRECT_SENDS.with(|c| c.set(c.get() + 1));
                return;
            }
        }
        self.out.push(Command::Send(env));
    }

    /// Plain text: a `message` to one agent, a `broadcast` to everyone.
    pub fn say(&mut self, to: Address, text: Text) {
        let message = match to {
            Address::Everyone => Message::Broadcast { text },
            Address::Agent(_) => Message::Message { text },
        };
        self.send(to, message);
    }

    // Inlined, so an event nobody reads (the log off: the bench) is never
    // built; the push is out of line.
    #[inline(always)]
    pub fn record(&mut self, e: Event) {
        if self.tracing {
            self.keep_record(e);
        }
    }

    #[inline(never)]
    fn keep_record(&mut self, e: Event) {
        self.out.push(Command::Record(Box::new(e)));
    }

    pub fn wake(&mut self, at: Millis, timer: Timer) {
        if let Some(room) = &mut self.mailroom {
            // Still only timers for later queued: a send may pass them.
            if self.out.len() == room.timers && at > self.now {
                room.timers += 1;
            }
        }
        self.out.push(Command::Wake { at, timer });
    }
}

/// Either role, so the runtime has one actor type and one mechanism.
// The size difference is the point: the teammate is stored inline because
// there are many of them, the single lead is boxed.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Agent {
    /// Boxed: there is one lead and there may be 100,000 teammates, so the
    /// enum should be the teammate's size.
    Lead(Box<Lead>),
    Teammate(Teammate),
}

impl Agent {
    pub fn handle(&mut self, input: &Input, ctx: &mut Ctx) {
        match self {
            Agent::Lead(l) => l.handle(input, ctx),
            Agent::Teammate(t) => t.handle(input, ctx),
        }
    }

    /// A respawn a crash overtook before the new process ran: the new
    /// process is there all the same, not yet started (see `world::turn`).
    pub fn reset_for_respawn(&mut self) {
        if let Agent::Teammate(t) = self {
            t.reset_for_respawn();
        }
    }

    /// The request table this agent owns (as requester).
    pub fn table(&self) -> Option<&crate::protocol::RequestTable> {
        match self {
            Agent::Lead(l) => Some(l.table()),
            Agent::Teammate(t) => t.table(),
        }
    }

    /// Handshakes a benchmark's load completed here: the lead's shutdown
    /// requests, or a teammate's plans.
    pub fn load_done(&self) -> u64 {
        match self {
            Agent::Lead(l) => l.load_done(),
            Agent::Teammate(t) => t.load_done(),
        }
    }
}

impl Answered {
    /// Hashes the answers remembered, as a set: the order they were given in
    /// only decides which is forgotten past `CAPACITY`.
    pub fn canon(&self, c: &mut Canon) {
        let Some(m) = &self.memory else { return c.word(0) };
        let mut given: smallvec::SmallVec<[(u32, Answer); 8]> = smallvec::SmallVec::new();
        given.extend(m.given.iter().map(|&(id, a)| (c.number(id), a)));
        given.sort_unstable_by_key(|g| g.0);
        for &(n, a) in given.iter() {
            c.word(n as u64 | (a as u64) << 32);
        }
    }
}

impl Agent {
    /// Hashes what decides the agent's future (not its fixed behaviour, which
    /// every state of a run shares) for the explorer's fingerprint.
    pub fn canon(&self, c: &mut Canon) {
        match self {
            Agent::Lead(l) => l.canon(c),
            Agent::Teammate(t) => t.canon(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u128) -> RequestId {
        RequestId(uuid::Uuid::from_u128(n))
    }

    #[test]
    fn a_repeated_request_gets_the_answer_it_got_before_and_a_new_one_the_next() {
        let answers = Answers::new(vec![Answer::Reject, Answer::Ignore, Answer::Approve]);
        let mut memory = Answered::default();
        assert_eq!(memory.answer(id(1), Kind::Shutdown, &answers), (Answer::Reject, false));
        assert_eq!(memory.answer(id(1), Kind::Shutdown, &answers), (Answer::Reject, true), "a copy, answered alike");
        assert_eq!(memory.answer(id(2), Kind::Shutdown, &answers), (Answer::Ignore, false));
        assert_eq!(memory.answer(id(1), Kind::Shutdown, &answers), (Answer::Reject, true));
        assert_eq!(memory.answer(id(2), Kind::Shutdown, &answers), (Answer::Ignore, true));
        // Settled: the last answer repeats, remembered or not.
        assert_eq!(memory.answer(id(3), Kind::Shutdown, &answers), (Answer::Approve, false));
        assert_eq!(memory.answer(id(3), Kind::Shutdown, &answers), (Answer::Approve, false));
    }

    #[test]
    fn past_its_capacity_a_responder_forgets_its_oldest_answer_first() {
        let n = Answered::CAPACITY + 2;
        let list: Vec<Answer> = (0..n).map(|i| if i % 2 == 0 { Answer::Reject } else { Answer::Ignore }).collect();
        let answers = Answers::new(list);
        let mut memory = Answered::default();
        for i in 0..=Answered::CAPACITY as u128 {
            memory.answer(id(i), Kind::Shutdown, &answers);
        }
        // Id 0 is forgotten: it gets the next answer (the list's last, now
        // settled), as a new request would. Id 1 is still known.
        assert_eq!(memory.answer(id(1), Kind::Shutdown, &answers), (Answer::Ignore, true));
        assert_eq!(memory.answer(id(0), Kind::Shutdown, &answers), (Answer::Ignore, false));
        assert_eq!(memory.answer(id(2), Kind::Shutdown, &answers), (Answer::Reject, true));
    }

    impl Mailboxes for Vec<(AgentId, Input)> {
        fn put(&mut self, to: AgentId, input: Input) {
            self.push((to, input));
        }
    }

    #[test]
    fn a_lent_mailroom_takes_a_send_unless_something_but_a_later_timer_is_queued_before_it() {
        let roster = Roster { statuses: vec![RosterStatus::Working, RosterStatus::Idle, RosterStatus::Shutdown] };
        let (policy, mut ids, mut out) = (Policy::default(), ids::IdStreams::new(1, 3), Vec::new());
        let (mut posted, mut sent, epochs): (Vec<(AgentId, Input)>, u64, [u32; 3]) = (Vec::new(), 41, [0, 7, 0]);
        let mut ctx = Ctx {
            mailroom: Some(Mailroom { mailboxes: &mut posted, sent: &mut sent, epochs: &epochs, timers: 0 }),
            ..Ctx::for_test(AgentId::LEAD, Millis(5), &mut ids, &roster, &policy, &mut out)
        };
        let hello = || Message::Message { text: "hello".into() };
        // Nothing queued: straight into the mailbox, numbered and stamped
        // as the world's own path numbers and stamps it.
        ctx.send(Address::Agent(AgentId(1)), hello());
        // To a stopped agent, the send rules refuse it before any mailbox.
        assert!(!ctx.send(Address::Agent(AgentId(2)), hello()));
        // A timer for later cannot fire before the mail is read: a send
        // passes it.
        ctx.wake(Millis(9), Timer::Deadline);
        ctx.send(Address::Agent(AgentId(1)), hello());
        assert_eq!(ctx.out.len(), 1);
        // A timer due now may fire before the mail is read: a send behind it
        // waits its turn in the buffer, and so does every send after it,
        // even behind a later timer.
        ctx.wake(Millis(5), Timer::Deadline);
        ctx.send(Address::Agent(AgentId(1)), hello());
        ctx.wake(Millis(9), Timer::Deadline);
        ctx.send(Address::Agent(AgentId(1)), hello());
        assert_eq!(ctx.out.len(), 5);
        assert!(matches!(ctx.out[0], Command::Wake { at: Millis(9), timer: Timer::Deadline }));
        assert!(matches!(ctx.out[1], Command::Wake { at: Millis(5), timer: Timer::Deadline }));
        assert!(matches!(ctx.out[2], Command::Send(Envelope { to: Address::Agent(AgentId(1)), .. })));
        assert!(matches!(ctx.out[4], Command::Send(Envelope { to: Address::Agent(AgentId(1)), .. })));
        assert_eq!(sent, 43);
        let [(to, Input::Deliver(d)), (_, Input::Deliver(e))] = posted.as_slice() else {
            panic!("two deliveries: {posted:?}")
        };
        assert_eq!(
            (*to, d.seq, d.sender, d.to, d.at, d.incarnation),
            (AgentId(1), 42, AgentId::LEAD, AgentId(1), Millis(5), 7)
        );
        assert_eq!(e.seq, 43);
        // Behind anything else (a status, a record), a send waits too.
        let (mut posted, mut sent, mut out) = (Vec::<(AgentId, Input)>::new(), 0, Vec::new());
        let mut ctx = Ctx {
            mailroom: Some(Mailroom { mailboxes: &mut posted, sent: &mut sent, epochs: &epochs, timers: 0 }),
            ..Ctx::for_test(AgentId::LEAD, Millis(5), &mut ids, &roster, &policy, &mut out)
        };
        ctx.out.push(Command::Status(RosterStatus::Working));
        ctx.wake(Millis(9), Timer::Deadline);
        ctx.send(Address::Agent(AgentId(1)), hello());
        assert_eq!(ctx.out.len(), 3);
        assert!(posted.is_empty());
    }

    #[test]
    fn a_send_command_is_its_envelope_and_nothing_more() {
        // Every message is queued as a command. With no variant larger than
        // `Send`, its tag hides in the envelope and queuing a send is one
        // aligned copy; a large unboxed variant would put a tag in front and
        // slow every message down (see `Command::Record`).
        assert_eq!(std::mem::size_of::<Command>(), std::mem::size_of::<Envelope>());
    }

    #[test]
    fn an_input_is_its_delivery_and_nothing_more() {
        // The variant hides in the delivery's address tag (the largest
        // niche), so actix copies exactly the delivery's bytes; the layout
        // of `Envelope` and `Delivery` is chosen for that copy.
        assert_eq!(std::mem::size_of::<Input>(), std::mem::size_of::<crate::protocol::Delivery>());
    }
}
