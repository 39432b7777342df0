//! The lead: asks teammates to shut down, reviews their plans, and applies the
//! timeout policy when a request it made expires.

use super::{Answer, Answers, Command, Ctx, Input, Requests, Script, Timer};
use crate::protocol::{
    Address, AgentId, Defences, Effect, Kind, Message, RequestId, RequestTable, Status, Text, Verdict,
};
use crate::trace::Event;
use std::collections::BTreeMap;

/// A load generator for benchmarks: keep `per_teammate` requests of `kind`
/// (one the lead asks) in flight to each teammate until `total` handshakes
/// have completed.
#[derive(Clone, Debug)]
pub struct Load {
    pub kind: Kind,
    /// What each request says, where its protocol needs words.
    pub words: Option<Text>,
    pub teammates: Vec<AgentId>,
    pub per_teammate: u32,
    pub total: u64,
}

#[derive(Clone, Debug)]
struct LoadState {
    load: Load,
    sent: u64,
    done: u64,
}

/// What a rejection says when the scenario gives no feedback.
fn rejected() -> Text {
    "rejected".into()
}

#[derive(Clone, Debug)]
pub struct Lead {
    requests: Requests,
    on_plan: Answers,
    /// Sent with a rejection: the scenario's feedback, or "rejected". Made
    /// once, so each rejection shares it rather than allocating its own.
    rejection: Text,
    /// Sent with an approval; none unless the scenario gives one.
    approval_feedback: Option<Text>,
    load: Option<LoadState>,
    answered: super::Answered,
    /// How many rejections of one teammate are answered by asking again.
    ask_again_on_reject: u32,
    /// Requests still pending when their target was respawned: they were
    /// made of a process that is gone, so their kill default has nobody to
    /// kill (the new process was never asked). Sorted; almost always empty.
    superseded: Vec<RequestId>,
    /// What each pending request whose default asks the next teammate
    /// (`Effect::AskNext`) said, kept to ask it again
    /// when it expires unanswered (the request table keeps no words).
    /// By id, in the order the fingerprint walks them; a request's entry
    /// goes when it ends another way. A map: a file may hold tens of
    /// thousands of offers at once, and a sorted list's insertions moved
    /// the rest each time.
    offers: BTreeMap<RequestId, Offer>,
    /// How many of `offers` wait on each teammate: whom the lead has a
    /// request pending to, where the default asks the next (every such
    /// request is in `offers`). Derived from `offers`, so not hashed; kept
    /// so that passing an offer on does not read the whole table for each
    /// teammate it passes.
    offered_to: BTreeMap<AgentId, u32>,
    /// Teammates looked at to pass offers on, for the test that passing
    /// one round a team looks at each teammate a bounded number of times.
    #[cfg(test)]
    looked_at: u64,
}

/// A request that may be passed on, and the teammates whose turns at it
/// expired: it goes to each teammate once at most, so teammates that all
/// let it expire do not pass it round for ever.
#[derive(Clone, Debug)]
struct Offer {
    words: Option<Text>,
    /// Whom it is pending to (the request's own target: not hashed).
    target: AgentId,
    /// In the order asked, as the fingerprint hashes them.
    tried: smallvec::SmallVec<[AgentId; 2]>,
    /// The same teammates as one bit each, once `tried` is too long to
    /// search (derived, not hashed): an offer passed round a big team
    /// asked "tried before?" of a list as long as the team.
    tried_bits: Vec<u64>,
}

impl Offer {
    /// Past this many, `tried` is looked up in `tried_bits`.
    const SCAN: usize = 16;

    fn new(words: Option<Text>, target: AgentId) -> Offer {
        Offer { words, target, tried: smallvec::SmallVec::new(), tried_bits: Vec::new() }
    }

    fn has_tried(&self, t: AgentId) -> bool {
        if self.tried.len() <= Offer::SCAN {
            return self.tried.contains(&t);
        }
        let k = t.0 as usize;
        self.tried_bits.get(k / 64).is_some_and(|w| w & (1 << (k % 64)) != 0)
    }

    fn add_tried(&mut self, t: AgentId) {
        self.tried.push(t);
        if self.tried.len() <= Offer::SCAN {
            return;
        }
        let set = |bits: &mut Vec<u64>, a: AgentId| {
            let k = a.0 as usize;
            if bits.len() <= k / 64 {
                bits.resize(k / 64 + 1, 0);
            }
            bits[k / 64] |= 1 << (k % 64);
        };
        if self.tried.len() == Offer::SCAN + 1 {
            for &a in &self.tried[..Offer::SCAN] {
                set(&mut self.tried_bits, a);
            }
        }
        set(&mut self.tried_bits, t);
    }
}

impl Lead {
    /// Hashes the lead's state for the explorer (see `Agent::canon`).
    /// Every field is named, so one added is a compile error here until it
    /// is hashed or said not to be state.
    pub fn canon(&self, c: &mut crate::protocol::Canon) {
        let Lead {
            requests,
            on_plan: _,           // fixed for the run: the place read next is `answered`'s
            rejection: _,         // fixed for the run
            approval_feedback: _, // fixed for the run
            load: _,              // a benchmark's load: never explored
            answered,
            ask_again_on_reject: _, // fixed for the run
            superseded,
            offers,
            offered_to: _, // derived from `offers`
            #[cfg(test)]
                looked_at: _,
        } = self;
        requests.canon(c);
        answered.canon_place(Kind::Plan, c);
        answered.canon(c);
        let mut superseded: smallvec::SmallVec<[u32; 4]> = superseded.iter().map(|id| c.number(*id)).collect();
        superseded.sort_unstable();
        c.word(superseded.len() as u64);
        for n in superseded {
            c.word(n as u64);
        }
        c.word(offers.len() as u64);
        for (id, offer) in offers {
            c.id(*id);
            // The request's own target is in the request table, hashed with it;
            // the bits are `tried` again, for speed.
            let Offer { words, target: _, tried, tried_bits: _ } = offer;
            c.word(words.is_some() as u64);
            if let Some(words) = words {
                c.text(words);
            }
            c.word(tried.len() as u64);
            for t in tried {
                c.agent(*t);
            }
        }
    }

    pub fn new(defences: Defences, on_plan: Answers, feedback: Option<Text>) -> Lead {
        Lead {
            requests: Requests::new(RequestTable::new(defences)),
            on_plan,
            rejection: feedback.unwrap_or_else(rejected),
            approval_feedback: None,
            load: None,
            answered: super::Answered::default(),
            ask_again_on_reject: 0,
            superseded: Vec::new(),
            offers: BTreeMap::new(),
            offered_to: BTreeMap::new(),
            #[cfg(test)]
            looked_at: 0,
        }
    }

    /// The same lead, asking a teammate again at once when it rejects a
    /// shutdown request, up to `times` rejections of that teammate.
    pub fn asking_again(mut self, times: u32) -> Lead {
        self.ask_again_on_reject = times;
        self
    }

    /// The same lead, sending `feedback` with each approval.
    pub fn approving_with(mut self, feedback: Option<Text>) -> Lead {
        self.approval_feedback = feedback;
        self
    }

    /// A lead that generates load; it forgets ended requests so memory stays flat.
    pub fn with_load(defences: Defences, load: Load) -> Lead {
        // Never more outstanding than the whole load: 100,000 teammates × 100
        // for 1,000,000 handshakes must not reserve room for 10,000,000.
        let in_flight = load.teammates.len().saturating_mul(load.per_teammate as usize);
        let in_flight = in_flight.min(usize::try_from(load.total).unwrap_or(usize::MAX));
        Lead {
            requests: Requests::new(RequestTable::forgetful(defences, in_flight)),
            on_plan: Answers::always(Answer::Approve),
            rejection: rejected(),
            approval_feedback: None,
            load: Some(LoadState { load, sent: 0, done: 0 }),
            answered: super::Answered::default(),
            ask_again_on_reject: 0,
            superseded: Vec::new(),
            offers: BTreeMap::new(),
            offered_to: BTreeMap::new(),
            #[cfg(test)]
            looked_at: 0,
        }
    }

    pub fn table(&self) -> &RequestTable {
        &self.requests.table
    }

    pub fn handle(&mut self, input: &Input, ctx: &mut Ctx) {
        // Deadlines first: anything due by now expires before this input is
        // looked at, so a reply at the deadline always finds the request expired.
        self.expire(ctx);
        match input {
            Input::Start => self.start_load(ctx),
            Input::Deliver(d) => match &d.envelope.message {
                Message::Response { .. } => {
                    if let Some((id, Verdict::Applied { kind, from, to })) = self.requests.judge(d, ctx) {
                        if !self.offers.is_empty() {
                            self.forget_offer(id);
                        }
                        // A pending request just rejected: not a rejection
                        // applied again (the pending check off) or one
                        // arriving after its request expired. The count is
                        // tested first: almost always zero, it spares the
                        // handshake path the other two comparisons.
                        if self.ask_again_on_reject > 0
                            && kind == Kind::Shutdown
                            && (from, to) == (Status::Pending, Status::Rejected)
                        {
                            self.ask_again(id, ctx);
                        }
                        self.next_load(d.sender, ctx);
                    }
                }
                // What the lead itself asks (a shutdown, say) only a forgery
                // asks of it, or a teammate whose runtime checks no asker
                // (Claude Code's, claude-code#81464): the sender check turns
                // it away, and `admit` records it as such. Without that
                // check, a shutdown is obeyed as Claude Code's lead obeyed
                // one: approved, and the lead that approves it stops.
                Message::Request { kind, request_id, .. } if kind.spec().asker.is_lead() => {
                    if let Some(a) = super::admit(d, ctx) {
                        if *kind == Kind::Shutdown {
                            let yes =
                                Message::Response { kind: *kind, request_id: *request_id, approve: true, words: None };
                            ctx.send(Address::Agent(a.asker), yes);
                            ctx.out.push(Command::Status(crate::trace::RosterStatus::Shutdown));
                            ctx.out.push(Command::Stop);
                        }
                    }
                }
                Message::Request { kind, .. } => {
                    if let Some(a) = super::admit(d, ctx) {
                        self.review(*kind, a.asker, a.request_id, ctx);
                    }
                }
                Message::Message { .. } | Message::Broadcast { .. } | Message::PlanRequest { .. } => {}
            },
            Input::Wake(Timer::Deadline) => self.requests.timer_fired(ctx),
            // After a restart the old incarnation's timer is gone: arm a new one.
            Input::Restart { .. } => self.requests.timer_fired(ctx),
            // Nobody respawns the lead (the file check refuses it).
            Input::Respawn { .. } => {}
            Input::Wake(Timer::WorkStep) => {}
            // What the lead may not ask (a plan) the send rules refuse, and record as such.
            Input::Script(Script::Ask { kind, to, words, label }) => {
                let id = self.requests.ask(*kind, *to, words.clone(), label.clone(), ctx);
                if let Some(id) = id.filter(|_| ctx.policy.on_expiry(*kind).effect == Effect::AskNext) {
                    self.offered(id, Offer::new(words.clone(), *to));
                }
            }
            Input::Script(Script::Say { to, text }) => ctx.say(*to, text.clone()),
            Input::Script(Script::AskPlan { to, text }) => {
                ctx.send(Address::Agent(*to), Message::PlanRequest { text: text.clone() });
            }
            Input::Script(Script::Respawn { to }) => self.respawn(*to, ctx),
            Input::Script(s @ Script::Answer { .. }) => super::scripted_answer(s, ctx),
        }
    }

    /// Starts `to` again under its name, if it is down: the requests still
    /// pending to it were for the old process, which can no longer answer
    /// or be killed.
    fn respawn(&mut self, to: AgentId, ctx: &mut Ctx) {
        if to.is_lead() || crate::protocol::Directory::is_active(ctx.dir, to) {
            ctx.record(Event::Note { text: "respawn: that agent is running; nothing to respawn".into() });
            return;
        }
        let pending = self.requests.table.iter().filter(|r| r.target == to && r.status == Status::Pending);
        self.superseded.extend(pending.map(|r| r.id));
        self.superseded.sort_unstable();
        ctx.out.push(Command::Respawn(to));
    }

    /// Applies the timeout policy to every request due by now. Nearly every
    /// input finds none: that check is inlined, the work is not.
    #[inline(always)]
    fn expire(&mut self, ctx: &mut Ctx) {
        if self.requests.may_expire(ctx.now) {
            self.expire_due(ctx);
        }
    }

    #[inline(never)]
    fn expire_due(&mut self, ctx: &mut Ctx) {
        for e in self.requests.expire(ctx.now) {
            let default = ctx.policy.on_expiry(e.kind);
            ctx.record(Event::Expired { id: e.id, kind: e.kind, default });
            // What the lead does when a request it made expires: what the
            // default's effect says, whichever protocol chose it.
            match default.effect {
                Effect::KillTarget if self.superseded.binary_search(&e.id).is_ok() => {
                    ctx.record(Event::Note {
                        text: "its target was respawned since it was asked: the new process was never asked, \
                               and is not killed"
                            .into(),
                    });
                }
                Effect::KillTarget => ctx.out.push(Command::Kill(e.target)),
                Effect::AskNext => {
                    if let Some(offer) = self.forget_offer(e.id) {
                        self.ask_next(e.kind, offer, e.target, ctx);
                    }
                }
                // The lead gives up asking. A silence taken as an answer is
                // for an asker that waits on its answer (a plan's author);
                // the lead waits on none.
                Effect::KeepTarget | Effect::Nothing | Effect::Answer { .. } => {}
            }
        }
    }

    /// Request `id`, which may be passed on, was sent: remember what it said.
    fn offered(&mut self, id: RequestId, offer: Offer) {
        if let std::collections::btree_map::Entry::Vacant(e) = self.offers.entry(id) {
            *self.offered_to.entry(offer.target).or_default() += 1;
            e.insert(offer);
        }
    }

    fn forget_offer(&mut self, id: RequestId) -> Option<Offer> {
        let offer = self.offers.remove(&id)?;
        if let std::collections::btree_map::Entry::Occupied(mut e) = self.offered_to.entry(offer.target) {
            *e.get_mut() -= 1;
            if *e.get() == 0 {
                e.remove();
            }
        }
        Some(offer)
    }

    /// A request of `kind` to `from` expired unanswered: make it of the
    /// next idle teammate after `from` in the team's order, one not asked
    /// it before and with no request of this kind from the lead pending.
    /// None: the request is let go, and the trace says so. Each teammate
    /// looked at costs a constant (a bit for "asked before", a map for
    /// "pending"), and the walk starts where the last one chose, so an
    /// offer passed round a whole team looks at each teammate about once.
    #[cold]
    #[inline(never)]
    fn ask_next(&mut self, kind: Kind, mut offer: Offer, from: AgentId, ctx: &mut Ctx) {
        offer.add_tried(from);
        let n = ctx.dir.statuses.len() as u32;
        // Only requests whose default asks the next are in `offered_to`,
        // and this one's kind is such: pending of this kind is pending there.
        debug_assert_eq!(ctx.policy.on_expiry(kind).effect, Effect::AskNext);
        let busy = |t: AgentId| self.offered_to.contains_key(&t);
        let mut next = None;
        for k in 1..n {
            let t = AgentId((from.0 - 1 + k) % (n - 1) + 1);
            #[cfg(test)]
            {
                self.looked_at += 1;
            }
            if !offer.has_tried(t) && ctx.dir.statuses[t.index()] == crate::trace::RosterStatus::Idle && !busy(t) {
                next = Some(t);
                break;
            }
        }
        let Some(to) = next else {
            let what = offer.words.as_deref().map_or_else(|| format!("the {kind}"), |w| format!("\"{w}\""));
            ctx.record(Event::Note { text: format!("no idle teammate left to offer {what} to: it is dropped") });
            return;
        };
        if let Some(new) = self.requests.ask(kind, to, offer.words.clone(), None, ctx) {
            offer.target = to;
            self.offered(new, offer);
        }
    }

    /// A teammate rejected shutdown request `id`: ask it again, a new
    /// request, unless it has rejected more often than the lead asks again.
    // Out of line: the handshake path only asks whether to call it.
    #[cold]
    #[inline(never)]
    fn ask_again(&mut self, id: RequestId, ctx: &mut Ctx) {
        let table = &self.requests.table;
        let Some(teammate) = table.get(id).map(|r| r.teammate()) else { return };
        // Stopped meanwhile (a later request approved, or killed): asking
        // again would only be refused.
        if !crate::protocol::Directory::is_active(ctx.dir, teammate) {
            return;
        }
        // The table is the count: every rejection stays in it (the load's
        // forgetful table never asks again).
        let rejections = table
            .iter()
            .filter(|r| r.kind == Kind::Shutdown && r.status == Status::Rejected && r.teammate() == teammate)
            .count();
        if rejections <= self.ask_again_on_reject as usize {
            self.requests.ask(Kind::Shutdown, teammate, None, None, ctx);
        }
    }

    /// Answers a request of `kind` that a teammate asked it (a plan): as
    /// the scenario's `[lead]` says, in the request's own kind.
    fn review(&mut self, kind: Kind, author: AgentId, request_id: RequestId, ctx: &mut Ctx) {
        let (answer, repeat) = self.answered.answer(request_id, Kind::Plan, &self.on_plan);
        if repeat {
            ctx.record(Event::Note { text: "the same plan again: the same answer again".into() });
        }
        let (approve, feedback) = match answer {
            Answer::Approve => (true, self.approval_feedback.clone()),
            Answer::Reject => (false, Some(self.rejection.clone())),
            Answer::Ignore => {
                ctx.record(Event::NoAnswer { agent: ctx.me, request_id });
                return;
            }
        };
        ctx.send(Address::Agent(author), Message::Response { kind, request_id, approve, words: feedback });
    }

    fn start_load(&mut self, ctx: &mut Ctx) {
        let Some(state) = &self.load else { return };
        let (teammates, per) = (state.load.teammates.clone(), state.load.per_teammate);
        // With a mailroom the burst goes straight into the mailboxes (see
        // `Ctx::queue_send`). Without one, room for it at once: grown by
        // doubling, 100,000 requests in flight took room for 131,072
        // commands at the run's peak. One more for the deadline timer the
        // first request arms: one short, the last push doubled the room.
        if ctx.mailroom.is_none() {
            let burst = teammates.len().saturating_mul(per as usize);
            ctx.out.reserve(burst.min(usize::try_from(state.load.total).unwrap_or(usize::MAX)).saturating_add(1));
        }
        for _ in 0..per {
            for &t in &teammates {
                self.send_load(t, ctx);
            }
        }
    }

    fn next_load(&mut self, teammate: AgentId, ctx: &mut Ctx) {
        let Some(state) = &mut self.load else { return };
        state.done += 1;
        self.send_load(teammate, ctx);
    }

    fn send_load(&mut self, to: AgentId, ctx: &mut Ctx) {
        let Some(state) = &mut self.load else { return };
        if state.sent >= state.load.total {
            return;
        }
        state.sent += 1;
        let (kind, words) = (state.load.kind, state.load.words.clone());
        self.requests.ask(kind, to, words, None, ctx);
    }

    /// Handshakes completed by the load generator.
    pub fn load_done(&self) -> u64 {
        self.load.as_ref().map_or(0, |s| s.done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{ids::IdStreams, Roster};
    use crate::protocol::{Millis, Policy};
    use crate::trace::RosterStatus;

    /// One offer that every teammate lets expire, passed round a team of
    /// `team`: how many teammates the lead looked at to pass it on, and
    /// how many it asked.
    fn pass_round(team: usize) -> (u64, usize) {
        let policy = Policy::default();
        let mut roster = Roster { statuses: vec![RosterStatus::Idle; team + 1] };
        // The lead has no roster status of its own that matters here.
        roster.statuses[0] = RosterStatus::Working;
        let mut ids = IdStreams::new(1, team + 1);
        let mut lead = Lead::new(policy.defences, Answers::always(Answer::Approve), None);
        let mut out = Vec::new();
        let mut asked = 0;
        let mut now = Millis::ZERO;
        let mut input = Input::Script(Script::Ask {
            kind: Kind::Task,
            to: AgentId(1),
            words: Some("docs/a.md".into()),
            label: None,
        });
        loop {
            let mut ctx = Ctx::for_test(AgentId::LEAD, now, &mut ids, &roster, &policy, &mut out);
            lead.handle(&input, &mut ctx);
            let sent = out.iter().filter(|c| matches!(c, Command::Send(_))).count();
            out.clear();
            if sent == 0 {
                break;
            }
            asked += sent;
            // Nobody answers: the next input is the offer's deadline.
            now = now.after(policy.timeout(Kind::Task));
            input = Input::Wake(Timer::Deadline);
        }
        (lead.looked_at, asked)
    }

    #[test]
    fn an_offer_passed_round_a_team_looks_at_each_teammate_about_once() {
        // Issue 39, point 17: each pass looked at the whole request table
        // for each teammate it considered, and searched the list of those
        // already asked, so passing one offer round n teammates cost n².
        for team in [10, 1_000, 5_000] {
            let (looked_at, asked) = pass_round(team);
            assert_eq!(asked, team, "asked every teammate once");
            assert!(looked_at <= 2 * team as u64, "{team} teammates: {looked_at} looked at");
        }
    }
}
