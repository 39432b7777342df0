//! A teammate: works through its list of actions, answers shutdown requests,
//! plans first when it must, and waits (answering nothing) while a plan of its
//! own is pending.
//!
//! Its life is one state machine, [`Phase`], in the manner of Erlang's
//! `gen_statem`: every transition is a method here, each phase says which
//! inputs it accepts, and a combination nobody thought through (stopping
//! while waiting on a plan, a restart after the end) cannot be written down.
//!
//! ```text
//!   NotStarted ──start / restart──▶ Active ◀──────plan decided──────┐
//!                                     │  └──own plan submitted──▶ Waiting
//!                                     │      (reads go on; requests set aside)
//!          shutdown asked: could the item in hand be redone after a crash?
//!             yes: approve │                 no: reject with the reason,
//!                          ▼                     stay Active
//!                    Stopping (finish or redo the item) ──▶ Stopped (final)
//! ```
//!
//! Graceful is a promise, and one that must survive a crash (the approval is
//! durable; the step in progress is not): a shutdown is approved only if the
//! item in hand could be redone from its first step. A mutating item behind a
//! closed plan gate could not, so the shutdown is rejected with that reason,
//! and the teammate stays where it is (the lead may ask again once the item is
//! done).

pub use super::set_aside::SetAside;
use super::{admit, asker_of, still_current, Answer, Answers, Command, Ctx, Input, Requests, Script, Timer};
use crate::protocol::{
    Action, Address, AgentId, Defences, Delivery, Effect, GateChange, GateState, Kind, Message, Millis, PlanGate,
    RequestId, RequestTable, Text, Verdict,
};
use crate::trace::{Event, RosterStatus};
use std::sync::Arc;

/// One action of a teammate's work, taking `steps` steps of `step_time` each.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkItem {
    pub action: Action,
    /// The file a write or an edit changes.
    pub path: Option<Text>,
    pub steps: u32,
    pub step_time: Millis,
}

/// How a teammate behaves, as a scenario describes it.
#[derive(Clone, Debug)]
pub struct TeammateSpec {
    pub on_shutdown: Answers,
    pub reject_reason: Option<Text>,
    /// How it answers a peer's plan (only with the hierarchy rule off).
    pub on_plan: Answers,
    /// How it answers the lead's task offers, and why it declines one.
    pub on_task: Answers,
    pub decline_reason: Option<Text>,
    /// An accepted task is a write of the file the task names, in this
    /// many steps of `task_step_time`.
    pub task_steps: u32,
    pub task_step_time: Millis,
    pub require_plan: bool,
    pub plan: Text,
    pub work: Vec<WorkItem>,
    /// Rejected plans it revises before giving up.
    pub max_revisions: u32,
    /// A benchmark's teammate: it submits this many plans, the same text
    /// again the moment the last is rejected, and keeps no ended request
    /// (0: a scenario's teammate).
    pub plan_load: u64,
}

impl Default for TeammateSpec {
    fn default() -> Self {
        TeammateSpec {
            on_shutdown: Answers::always(Answer::Approve),
            reject_reason: None,
            on_plan: Answers::always(Answer::Approve),
            on_task: Answers::always(Answer::Approve),
            decline_reason: None,
            task_steps: 2,
            task_step_time: Millis(500),
            require_plan: false,
            plan: "do the work".into(),
            work: Vec::new(),
            max_revisions: 3,
            plan_load: 0,
        }
    }
}

impl TeammateSpec {
    /// The same teammate, answering every request of `kind` it is asked as
    /// `answers` says, with `no_words` when it says no (where the protocol
    /// lets a teammate choose its words).
    pub fn answering(mut self, kind: Kind, answers: Answers, no_words: Option<Text>) -> TeammateSpec {
        match kind {
            Kind::Shutdown => (self.on_shutdown, self.reject_reason) = (answers, no_words),
            Kind::Plan => self.on_plan = answers,
            Kind::Task => (self.on_task, self.decline_reason) = (answers, no_words),
        }
        self
    }
}

/// Where a teammate is in the item of work at `next_item`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Item {
    /// No item in progress: between items, held by the gate, or all done.
    None,
    /// `done` steps of the item are written.
    Doing { done: u32 },
    /// A crash interrupted the item; it starts again from its first step.
    Interrupted,
}

impl Item {
    fn unfinished(self) -> bool {
        self != Item::None
    }
}

/// Where a teammate is in its life.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Phase {
    /// Created; its start has not reached it yet (a crash at 0 ms can get
    /// there first, and then the restart is its start).
    NotStarted,
    /// Working through its list.
    Active { item: Item },
    /// A plan of its own is pending (which, and what it set aside
    /// meanwhile: [`Teammate::waiting_on`]): it answers nothing, and puts the
    /// requests that reach it aside until the plan is decided. An item begun
    /// before the plan went out goes on, and reads still start (as in the
    /// reference's runtime, the gate holds back only mutating actions); the
    /// first mutating action waits for the verdict.
    Waiting { item: Item },
    /// It approved a shutdown: it finishes the item (or redoes the one a crash
    /// interrupted), then stops. Never holds `Item::None`: with nothing to
    /// finish it stops at once.
    Stopping { item: Item },
    /// Shut down gracefully. Final: nothing reaches it any more.
    Stopped,
}

#[derive(Clone, Debug)]
pub struct Teammate {
    /// Shared by every teammate the scenario describes alike (a load's
    /// 100,000): only a task taken on changes it, and that teammate then
    /// gets a copy of its own.
    spec: Arc<TeammateSpec>,
    /// What only a teammate that does more than answer needs, made on first
    /// use (see [`More`]).
    more: Option<Box<More>>,
    /// The explorer's hash of this teammate as its own symmetry signature
    /// names agents (itself 1, the lead 0, the others 2), kept once made:
    /// a search step changes one or two agents and shares the rest with the
    /// state it came from, and each of them was hashed again for every
    /// state. Cleared when the teammate takes a turn.
    signature: Memo,
    phase: Phase,
    /// Index of the work item in progress or next to start.
    next_item: u32,
    /// The status last reported to the roster.
    status: RosterStatus,
    /// Set while it expires its requests at the start of a delivery's turn:
    /// work those expiries free starts only once the delivery is taken up
    /// too (a plan request delivered at that instant closes the gate first).
    /// Never set between turns.
    holding_work: bool,
}

/// What a teammate needs only once it does more than answer with a fixed
/// behaviour: the requests it made, its plan gate once in play, what it
/// waits on, the tasks it took up, the answers it must give again. Boxed
/// and made on first use: the 100,000 teammates of a load never need it,
/// and held inline it made every teammate's actor task a size class larger.
#[derive(Clone, Debug)]
struct More {
    requests: Option<Box<Requests>>,
    gate: PlanGate,
    /// While its phase is `Waiting`: the plan, and the requests set aside.
    waiting_on: Option<(RequestId, SetAside)>,
    revisions: u32,
    /// Plans of a benchmark's load that were decided.
    load_done: u64,
    /// The last gate state a blocked action was reported for, so a blocked
    /// action is recorded once per gate state, not on every input.
    reported_block: Option<(u32, GateState)>,
    answered: super::Answered,
    /// How many items of `spec.work` the scenario gave it: those after are
    /// tasks it accepted, which a respawned process does not inherit.
    own_work: u32,
    /// The offer each task after `own_work` came from, in the same order: an
    /// offer that arrives again (a duplicate, a replay) is answered as before
    /// and its work is never taken up twice.
    offers_taken: Vec<RequestId>,
}

/// A teammate's own request table, made when it first asks: a load's
/// million plans must not stay in memory, so its table keeps one in flight.
#[cold]
fn new_requests(load: bool, defences: Defences) -> Box<Requests> {
    let table = if load { RequestTable::forgetful(defences, 1) } else { RequestTable::new(defences) };
    Box::new(Requests::new(table))
}

impl More {
    /// Made on first use (see `Teammate::more`).
    #[cold]
    fn boxed(spec: &TeammateSpec) -> Box<More> {
        Box::new(More::new(spec))
    }

    /// As a teammate of `spec` starts: what it would be without one.
    fn new(spec: &TeammateSpec) -> More {
        More {
            requests: None,
            gate: PlanGate::new(spec.require_plan),
            waiting_on: None,
            revisions: 0,
            load_done: 0,
            reported_block: None,
            answered: super::Answered::default(),
            // A list of more items than a u32 counts could not be held in memory.
            own_work: spec.work.len() as u32,
            offers_taken: Vec::new(),
        }
    }
}

/// A hash kept beside what it hashes; 0 means not made. Atomic, since the
/// explorer's threads share an unchanged teammate between states; two
/// threads making it at once store the same value. A copy starts empty.
#[derive(Default)]
pub struct Memo(std::sync::atomic::AtomicU64);

impl Memo {
    /// The kept hash, or `make`'s, kept.
    pub fn get_or(&self, make: impl FnOnce() -> u64) -> u64 {
        use std::sync::atomic::Ordering::Relaxed;
        match self.0.load(Relaxed) {
            0 => {
                // 0 stands for "none": a hash that is 0 is made every time.
                let h = make();
                self.0.store(h, Relaxed);
                h
            }
            h => h,
        }
    }

    pub fn clear(&mut self) {
        *self.0.get_mut() = 0;
    }
}

impl Clone for Memo {
    fn clone(&self) -> Memo {
        Memo::default()
    }
}

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Memo")
    }
}

impl Teammate {
    /// Hashes the teammate's state for the explorer (see `Agent::canon`).
    /// Every field is named, so one added is a compile error here until it
    /// is hashed or said not to be state.
    pub fn canon(&self, c: &mut crate::protocol::Canon) {
        use std::hash::Hash;
        let Teammate {
            spec, // the tasks it took on; the rest is fixed
            more,
            signature: _, // a hash of this teammate, kept: not state
            phase,
            next_item,
            status,
            holding_work: _, // never set between turns
        } = self;
        // Without its `More`, hashed as the one it would make: the same
        // state hashes alike whether or not it was ever made.
        let fresh;
        let more = match more {
            Some(m) => &**m,
            None => {
                fresh = More::new(spec);
                &fresh
            }
        };
        let More {
            requests,
            gate,
            waiting_on,
            revisions,
            load_done: _, // a benchmark's count: history
            reported_block,
            answered,
            own_work, // fixed: where the tasks it took on begin
            offers_taken,
        } = more;
        match requests {
            Some(r) => r.canon(c),
            None => c.word(0),
        }
        gate.canon(c);
        match phase {
            Phase::NotStarted => c.word(1),
            Phase::Active { item } => {
                c.word(2);
                item.hash(c);
            }
            Phase::Waiting { item } => {
                c.word(3);
                let (plan, set_aside) = waiting_on.as_ref().expect("a waiting teammate knows its plan");
                c.id(*plan);
                item.hash(c);
                c.word(set_aside.len() as u64);
                for d in set_aside.iter() {
                    d.canon(c);
                }
            }
            Phase::Stopping { item } => {
                c.word(4);
                item.hash(c);
            }
            Phase::Stopped => c.word(5),
        }
        c.word(*next_item as u64);
        status.hash(c);
        c.word(*revisions as u64);
        match *reported_block {
            Some((i, g)) => c.word(1 | (i as u64) << 8 | (g as u64) << 40),
            None => c.word(0),
        }
        for kind in [Kind::Shutdown, Kind::Plan, Kind::Task] {
            answered.canon_place(kind, c);
        }
        c.word(spec.work.len() as u64);
        for (w, offer) in spec.work[*own_work as usize..].iter().zip(offers_taken) {
            c.opt_text(w.path.as_deref());
            c.id(*offer);
        }
        answered.canon(c);
    }

    pub fn new(spec: impl Into<Arc<TeammateSpec>>) -> Teammate {
        Teammate {
            spec: spec.into(),
            more: None,
            signature: Memo::default(),
            phase: Phase::NotStarted,
            next_item: 0,
            status: RosterStatus::Working,
            holding_work: false,
        }
    }

    /// What it needs once it does more than answer, made now if not yet.
    #[inline(always)]
    fn more(&mut self) -> &mut More {
        let spec = &self.spec;
        self.more.get_or_insert_with(|| More::boxed(spec))
    }

    /// Its hash under its own signature's naming (see `signature`), made
    /// by `make` the first time after each turn.
    pub fn signature_memo(&self, make: impl FnOnce() -> u64) -> u64 {
        self.signature.get_or(make)
    }

    /// It took a turn: what was kept of it no longer holds.
    pub fn forget_memos(&mut self) {
        self.signature.clear();
    }

    /// The plans this teammate asked about, if it ever asked.
    pub fn table(&self) -> Option<&RequestTable> {
        self.more.as_ref()?.requests.as_deref().map(|r| &r.table)
    }

    pub fn phase(&self) -> &Phase {
        &self.phase
    }

    pub fn gate(&self) -> PlanGate {
        match &self.more {
            Some(m) => m.gate.clone(),
            None => PlanGate::new(self.spec.require_plan),
        }
    }

    /// While it waits on a plan of its own: the requests it set aside.
    pub fn set_aside(&self) -> Option<&SetAside> {
        self.more.as_ref()?.waiting_on.as_ref().map(|(_, held)| held)
    }

    /// What it is doing, in a learner's words (the page that steps through
    /// a run shows it): its phase and the item of work in hand.
    pub fn doing(&self) -> String {
        let work = |i: usize| {
            self.spec.work.get(i).map(|w| match &w.path {
                Some(p) => format!("{} {p}", w.action.as_str()),
                None => w.action.as_str().to_string(),
            })
        };
        let on = |item: Item| {
            let what = work(self.next_item as usize).unwrap_or_else(|| "its work".to_string());
            let steps = self.work_in_hand().map_or(0, |w| w.steps);
            match item {
                Item::None => what,
                Item::Doing { done } => format!("{what} ({done}/{steps} steps)"),
                Item::Interrupted => format!("{what} (interrupted: redone from its first step)"),
            }
        };
        match &self.phase {
            Phase::NotStarted => "not started".to_string(),
            Phase::Active { item: Item::None } => match work(self.next_item as usize) {
                Some(next) => format!("between items; next: {next}"),
                None => "all its work done".to_string(),
            },
            Phase::Active { item } => format!("working: {}", on(*item)),
            Phase::Waiting { item } => {
                let mut s = "waiting for its plan's verdict".to_string();
                if item.unfinished() {
                    s += &format!("; {} goes on", on(*item));
                }
                if let Some(set_aside) = self.set_aside().filter(|held| !held.is_empty()) {
                    s += &format!("; {} request(s) set aside until then", set_aside.len());
                }
                s
            }
            Phase::Stopping { item } => format!("stopping once it finishes {}", on(*item)),
            Phase::Stopped => "stopped".to_string(),
        }
    }

    // Inlined, and the table made out of line: every answer to a plan of
    // ours comes here, and finds it made.
    #[inline(always)]
    fn requests(&mut self, defences: Defences) -> &mut Requests {
        let load = self.spec.plan_load > 0;
        self.more().requests.get_or_insert_with(|| new_requests(load, defences))
    }

    /// Plans of a benchmark's load that were decided.
    pub fn load_done(&self) -> u64 {
        self.more.as_ref().map_or(0, |m| m.load_done)
    }

    /// The item of work at `next_item`: in progress, or next to start.
    fn work_in_hand(&self) -> Option<&WorkItem> {
        self.spec.work.get(self.next_item as usize)
    }

    fn item(&self) -> Item {
        match &self.phase {
            Phase::Active { item } | Phase::Waiting { item, .. } | Phase::Stopping { item } => *item,
            Phase::NotStarted | Phase::Stopped => Item::None,
        }
    }

    fn set_item(&mut self, new: Item) {
        match &mut self.phase {
            Phase::Active { item } | Phase::Waiting { item, .. } | Phase::Stopping { item } => *item = new,
            Phase::NotStarted | Phase::Stopped => {}
        }
    }

    pub fn handle(&mut self, input: &Input, ctx: &mut Ctx) {
        if let Input::Respawn { .. } = input {
            self.respawned(ctx);
            return;
        }
        if matches!(self.phase, Phase::Stopped) {
            return;
        }
        if let Input::Restart { .. } = input {
            // Before anything else (even expiries, which may unblock and
            // answer what was set aside): what lived only in the process died.
            self.crashed();
        }
        // What reached it at this instant is taken up before any work its
        // expiries free starts: a plan request delivered now must close the
        // gate before a write begins (found by explore: the write started,
        // then the gate became required, in one turn).
        let delivery = matches!(input, Input::Deliver(_));
        self.holding_work = delivery;
        self.expire(ctx);
        self.holding_work = false;
        // Expiring its own plan can free a teammate to take up a shutdown it
        // had set aside, approve it and stop at once. Then this input finds
        // it stopped, as it would have a moment later: a stopped teammate
        // takes up nothing (found by fuzz: it judged, answered and sent).
        if matches!(self.phase, Phase::Stopped) {
            ctx.record(Event::Note { text: "stopped before taking this up: its plan expired first".into() });
            return;
        }
        match input {
            Input::Start => self.begin(ctx),
            Input::Deliver(d) => self.on_delivery(d, ctx),
            Input::Wake(Timer::Deadline) => self.requests(ctx.policy.defences).timer_fired(ctx),
            Input::Wake(Timer::WorkStep) => self.step_done(ctx),
            // A plan of its own puts the teammate to waiting on it.
            Input::Script(Script::Ask { kind: Kind::Plan, to, words, label }) => {
                let plan = words.clone().unwrap_or_else(|| self.spec.plan.clone());
                self.submit(*to, plan, label.clone(), ctx)
            }
            // What a teammate may not ask (a shutdown) the send rules refuse.
            Input::Script(Script::Ask { kind, to, words, label }) => {
                self.requests(ctx.policy.defences).ask(*kind, *to, words.clone(), label.clone(), ctx);
            }
            Input::Script(Script::Say { to, text }) => ctx.say(*to, text.clone()),
            Input::Script(Script::AskPlan { to, text }) => {
                // Refused by the send rules: only the lead asks for plans.
                ctx.send(Address::Agent(*to), Message::PlanRequest { text: text.clone() });
            }
            // Taken up before anything else, above.
            Input::Respawn { .. } => {}
            Input::Script(s @ Script::Answer { .. }) => super::scripted_answer(s, ctx),
            // The file check lets only the lead respawn.
            Input::Script(Script::Respawn { .. }) => {
                ctx.record(Event::Note { text: "only the lead respawns teammates".into() });
            }
            Input::Restart { .. } => {
                // The old incarnation's timer died with it.
                if let Some(r) = self.own_requests() {
                    r.timer_fired(ctx);
                }
                // A restarted agent starts again from its beginning: if its
                // start was lost, this is its start.
                if self.phase == Phase::NotStarted {
                    self.begin(ctx);
                } else {
                    self.start_next(ctx);
                }
            }
        }
        if delivery {
            self.start_next(ctx);
        }
        if !matches!(self.phase, Phase::Stopped) {
            self.update_status(ctx);
        }
    }

    /// A new process under the same name, from its first item: nothing of
    /// the old one survives (its answers, its gate, its place in the list)
    /// but the requests it made, which still reach their deadlines and may
    /// still get answers (judged, and moving no gate: the new gate follows
    /// only its own plans). Whatever the old one left in its inbox file is
    /// read as if it were new: the incarnation check is what tells it was not.
    fn respawned(&mut self, ctx: &mut Ctx) {
        self.reset_for_respawn();
        if let Some(r) = self.own_requests() {
            r.timer_fired(ctx);
        }
        self.begin(ctx);
        self.update_status(ctx);
    }

    /// The new process, not yet started: what a respawn leaves when a crash
    /// overtakes it before it runs (its restart is then its start).
    pub fn reset_for_respawn(&mut self) {
        // A new `answered`: its answer lists are read from the start again.
        let more = self.more.take();
        let mut spec = Arc::clone(&self.spec);
        let own_work = more.as_ref().map_or(spec.work.len(), |m| m.own_work as usize);
        if spec.work.len() > own_work {
            Arc::make_mut(&mut spec).work.truncate(own_work);
        }
        *self = Teammate::new(spec);
        if let Some(requests) = more.and_then(|m| m.requests) {
            self.more().requests = Some(requests);
        }
    }

    /// The requests it made, if it ever asked.
    fn own_requests(&mut self) -> Option<&mut Requests> {
        self.more.as_mut()?.requests.as_deref_mut()
    }

    /// Its answer to request `id` of `kind`, from its list for that
    /// protocol (see [`super::Answered`]), and whether it is a repeat.
    #[inline(always)]
    fn answer_from(&mut self, id: RequestId, kind: Kind) -> (Answer, bool) {
        let Teammate { spec, more, .. } = self;
        let answers = match kind {
            Kind::Shutdown => &spec.on_shutdown,
            Kind::Plan => &spec.on_plan,
            Kind::Task => &spec.on_task,
        };
        // A fixed behaviour with nothing remembered (a load's teammates):
        // the answer needs nothing made.
        if more.is_none() && answers.last() == 0 {
            return (answers.list[0], false);
        }
        let more = more.get_or_insert_with(|| More::boxed(spec));
        more.answered.answer(id, kind, answers)
    }

    /// A crash took what lived only in the process: the mailbox (and with it
    /// the requests set aside) and the step in progress. The request table,
    /// the gate, the list's position and an approved shutdown are durable.
    fn crashed(&mut self) {
        if let Some(m) = &mut self.more {
            if let Some((_, set_aside)) = &mut m.waiting_on {
                set_aside.clear();
            }
            m.reported_block = None;
        }
        if let Item::Doing { .. } = self.item() {
            self.set_item(Item::Interrupted);
        }
        // The roster shows a restarted agent as working; start from there so
        // the next status change is reported.
        self.status = RosterStatus::Working;
    }

    /// NotStarted → Active: submit the plan first if one is required, then work.
    fn begin(&mut self, ctx: &mut Ctx) {
        if self.phase != Phase::NotStarted {
            return;
        }
        self.phase = Phase::Active { item: Item::None };
        if self.spec.require_plan {
            let plan = self.spec.plan.clone();
            self.submit(AgentId::LEAD, plan, None, ctx);
        }
        self.start_next(ctx);
    }

    fn on_delivery(&mut self, d: &Delivery, ctx: &mut Ctx) {
        match &d.envelope.message {
            Message::Request { .. } => {
                let Some(admitted) = admit(d, ctx) else { return };
                if let Some((_, set_aside)) = self.more.as_mut().and_then(|m| m.waiting_on.as_mut()) {
                    ctx.record(Event::Deferred { agent: ctx.me, request_id: admitted.request_id });
                    // A copy: the runtime owns the input (its texts are
                    // shared, so this costs a reference count each).
                    set_aside.push_back(d.clone());
                } else {
                    self.answer(d, admitted.asker, ctx);
                }
            }
            Message::Response { .. } => {
                if let Some((id, Verdict::Applied { kind: Kind::Plan, to, .. })) =
                    self.requests(ctx.policy.defences).judge(d, ctx)
                {
                    self.plan_decided(id, to == crate::protocol::Status::Approved, false, ctx);
                }
            }
            Message::PlanRequest { .. } => self.asked_for_plan(d, ctx),
            Message::Message { .. } | Message::Broadcast { .. } => {}
        }
    }

    /// The lead asks for a plan: from now on a mutating item waits for an
    /// approved plan, and the plan goes out at once. The item in hand goes
    /// on (the gate is asked when an action starts, as the reference's
    /// runtime asks it before each tool call). Only the lead may ask: a
    /// teammate that could close another's gate could stall it at will.
    fn asked_for_plan(&mut self, d: &Delivery, ctx: &mut Ctx) {
        if ctx.policy.defences.sender_check && !asker_of(d, ctx).is_lead() {
            ctx.record(Event::Note { text: "a plan request not from the lead: ignored".into() });
            return;
        }
        if matches!(self.phase, Phase::Stopping { .. }) {
            // It has promised to stop once the item in hand is done, and to
            // redo it after a crash: closing the gate now would break that
            // promise (found by fuzz: a crash, then the redo blocked).
            ctx.record(Event::Note { text: "asked for a plan while stopping: nothing more to plan".into() });
            return;
        }
        if !self.more().gate.plan_asked() {
            ctx.record(Event::Note { text: "asked for a plan while one is waiting for approval".into() });
            return;
        }
        ctx.record(Event::Gate { agent: ctx.me, state: GateState::Required });
        self.submit_required_plan(ctx);
    }

    /// Submits the plan a required gate waits on, if it can now: not while
    /// it waits on another answer (it will once that comes), nor stopping.
    fn submit_required_plan(&mut self, ctx: &mut Ctx) {
        if self.gate().state() == GateState::Required && matches!(self.phase, Phase::Active { .. }) {
            let plan = self.spec.plan.clone();
            self.submit(AgentId::LEAD, plan, None, ctx);
        }
    }

    /// Answers an admitted request, to `asker`.
    fn answer(&mut self, d: &Delivery, asker: AgentId, ctx: &mut Ctx) {
        let Message::Request { kind, request_id, words, .. } = &d.envelope.message else { return };
        let (kind, request_id) = (*kind, *request_id);
        let answer = |approve: bool, words: Option<Text>| Message::Response { kind, request_id, approve, words };
        match kind {
            Kind::Shutdown => {
                let (answer_of, repeat) = self.answer_from(request_id, Kind::Shutdown);
                if repeat {
                    ctx.record(Event::Note { text: "the same request again: the same answer again".into() });
                }
                match answer_of {
                    Answer::Approve => {
                        if let Some(reason) = self.cannot_stop_gracefully() {
                            // Approving would promise a graceful stop it
                            // cannot keep: it would stop with the file
                            // half-written. A refusal must say why.
                            ctx.record(Event::Note {
                                text: "would approve, but cannot promise a graceful stop: rejects".into(),
                            });
                            ctx.send(Address::Agent(asker), answer(false, Some(reason.into())));
                            return;
                        }
                        let sent = ctx.send(Address::Agent(asker), answer(true, None));
                        if sent {
                            self.shutdown_approved(ctx);
                        }
                    }
                    Answer::Reject => {
                        let reason = self.spec.reject_reason.clone();
                        ctx.send(Address::Agent(asker), answer(false, reason));
                    }
                    Answer::Ignore => ctx.record(Event::NoAnswer { agent: ctx.me, request_id }),
                }
            }
            Kind::Plan => {
                let (answer_of, repeat) = self.answer_from(request_id, Kind::Plan);
                if repeat {
                    ctx.record(Event::Note { text: "the same request again: the same answer again".into() });
                }
                let approve = match answer_of {
                    Answer::Approve => true,
                    Answer::Reject => false,
                    Answer::Ignore => {
                        ctx.record(Event::NoAnswer { agent: ctx.me, request_id });
                        return;
                    }
                };
                let feedback = (!approve).then(|| Text::from("rejected by peer"));
                ctx.send(Address::Agent(asker), answer(approve, feedback));
            }
            Kind::Task => {
                let (answer_of, repeat) = self.answer_from(request_id, Kind::Task);
                if repeat {
                    ctx.record(Event::Note { text: "the same offer again: the same answer again".into() });
                }
                match answer_of {
                    // It has promised to stop once the item in hand is done:
                    // taking on more would break that promise.
                    Answer::Approve if matches!(self.phase, Phase::Stopping { .. }) => {
                        ctx.send(Address::Agent(asker), answer(false, Some("shutting down".into())));
                    }
                    // An offer it already took up, arriving again: the same
                    // answer again, and the work stays one piece of work.
                    Answer::Approve if self.more.as_ref().is_some_and(|m| m.offers_taken.contains(&request_id)) => {
                        ctx.record(Event::Note {
                            text: "an offer it already took up: accepts again, works once".into(),
                        });
                        ctx.send(Address::Agent(asker), answer(true, None));
                    }
                    Answer::Approve => {
                        let task = words.clone().unwrap_or_else(|| Text::from("task"));
                        if ctx.send(Address::Agent(asker), answer(true, None)) {
                            self.task_accepted(request_id, task, ctx);
                        }
                    }
                    Answer::Reject => {
                        let reason = self.spec.decline_reason.clone().unwrap_or_else(|| Text::from("declined"));
                        ctx.send(Address::Agent(asker), answer(false, Some(reason)));
                    }
                    Answer::Ignore => ctx.record(Event::NoAnswer { agent: ctx.me, request_id }),
                }
            }
        }
    }

    /// The task it accepted is now its work, after what it has. A plan
    /// approved earlier was for the work as it stood then (the reference's
    /// `test_plan_approval_cannot_cross_assignment_boundary`): a gate in play
    /// closes, and a plan for the new assignment goes out.
    fn task_accepted(&mut self, offer: RequestId, task: Text, ctx: &mut Ctx) {
        // Before the work grows: a new `More` counts the work it was given.
        self.more().offers_taken.push(offer);
        let (steps, step_time) = (self.spec.task_steps, self.spec.task_step_time);
        let item = WorkItem { action: Action::Write, path: Some(task), steps, step_time };
        Arc::make_mut(&mut self.spec).work.push(item);
        let gate = &mut self.more().gate;
        if gate.state() != GateState::NotRequired && gate.plan_asked() {
            ctx.record(Event::Gate { agent: ctx.me, state: GateState::Required });
            self.submit_required_plan(ctx);
        }
        self.start_next(ctx);
    }

    /// Why a graceful stop cannot be promised now, if it cannot. Graceful
    /// means the item in hand is finished first, and an approved shutdown
    /// outlives a crash, which makes the item start over: so the promise holds
    /// only if the item could be *redone*, and a mutating item behind a closed
    /// plan gate could not (the gate is asked when an action starts; one under
    /// way when the gate closed goes on, but would be blocked after a crash).
    fn cannot_stop_gracefully(&self) -> Option<String> {
        let item = self.item();
        if !item.unfinished() {
            return None;
        }
        let work = self.work_in_hand()?;
        let crate::protocol::GateError::Closed { action, state } = self.gate().check(work.action).err()? else {
            return None;
        };
        let what = match &work.path {
            Some(path) => format!("{} of {path}", action.as_str()),
            None => action.as_str().to_string(),
        };
        Some(match item {
            Item::Interrupted => {
                format!(
                    "cannot stop gracefully: the interrupted {what} cannot be redone while the plan gate is {state}"
                )
            }
            _ => format!(
                "cannot promise a graceful stop: the {what} under way could not be redone after a crash while the \
                 plan gate is {state}"
            ),
        })
    }

    /// Active → Stopping, or straight to Stopped with nothing to finish.
    /// Graceful means the work in hand is finished first, including an item
    /// a crash interrupted.
    fn shutdown_approved(&mut self, ctx: &mut Ctx) {
        let item = self.item();
        if !item.unfinished() {
            self.stop(ctx);
            return;
        }
        self.phase = Phase::Stopping { item };
        if item == Item::Interrupted {
            self.start_next(ctx);
        }
    }

    /// Applies the timeout policy to our requests due by now. Nearly every
    /// input finds none: that check is inlined, the work is not.
    #[inline(always)]
    fn expire(&mut self, ctx: &mut Ctx) {
        if self.more.as_ref().and_then(|m| m.requests.as_ref()).is_some_and(|r| r.may_expire(ctx.now)) {
            self.expire_due(ctx);
        }
    }

    #[inline(never)]
    fn expire_due(&mut self, ctx: &mut Ctx) {
        let due = match self.own_requests() {
            Some(r) => r.expire(ctx.now),
            None => return,
        };
        for e in due {
            let default = ctx.policy.on_expiry(e.kind);
            ctx.record(Event::Expired { id: e.id, kind: e.kind, default });
            // A teammate asks only what it waits on (its plans: the send
            // rules refuse the rest), so a silence taken as an answer is the
            // one effect it carries out.
            if let Effect::Answer { yes } = default.effect {
                self.plan_decided(e.id, yes, true, ctx);
            }
        }
    }

    /// A plan of ours was approved or rejected, by an answer or by the timeout
    /// policy. Waiting on it → Active (or Waiting on its revision).
    fn plan_decided(&mut self, id: RequestId, approved: bool, by_timeout: bool, ctx: &mut Ctx) {
        let phase = self.phase;
        let more = self.more();
        let change = more.gate.decided(id, approved);
        if matches!(change, GateChange::Opened | GateChange::StaysClosed) {
            ctx.record(Event::Gate { agent: ctx.me, state: more.gate.state() });
        }
        let mut set_aside = SetAside::default();
        if let Phase::Waiting { item } = phase {
            if more.waiting_on.as_ref().is_some_and(|(plan, _)| *plan == id) {
                set_aside = more.waiting_on.take().map(|(_, held)| held).unwrap_or_default();
                self.phase = Phase::Active { item };
            }
        }
        if self.spec.plan_load > 0 {
            let more = self.more();
            more.load_done += 1;
            if change == GateChange::StaysClosed && more.load_done < self.spec.plan_load {
                let plan = self.spec.plan.clone();
                self.submit(AgentId::LEAD, plan, None, ctx);
            }
        } else if change == GateChange::StaysClosed && !by_timeout {
            let revisions = self.more().revisions;
            if revisions < self.spec.max_revisions {
                self.more().revisions += 1;
                let plan: Text = format!("{} (revision {})", self.spec.plan, revisions + 1).into();
                self.submit(AgentId::LEAD, plan, None, ctx);
            } else {
                let times = match revisions + 1 {
                    1 => "once".to_string(),
                    n => format!("{n} times"),
                };
                ctx.record(Event::Note { text: format!("plan rejected {times}: giving up") });
            }
        }
        self.take_back(set_aside, ctx);
        self.submit_required_plan(ctx);
        self.start_next(ctx);
    }

    /// Answers the requests set aside while waiting, in arrival order, or sets
    /// them aside again if a revised plan put this teammate back to waiting.
    fn take_back(&mut self, mut set_aside: SetAside, ctx: &mut Ctx) {
        while let Some(d) = set_aside.pop_front() {
            match self.phase {
                Phase::Waiting { .. } => {
                    if let Some((_, held)) = self.more().waiting_on.as_mut() {
                        held.push_back(d);
                    }
                }
                Phase::Stopped => return,
                _ => {
                    if still_current(&d, ctx) {
                        self.answer(&d, asker_of(&d, ctx), ctx);
                    }
                }
            }
        }
    }

    /// Active → Waiting on a plan of our own.
    fn submit(&mut self, to: AgentId, plan: Text, label: Option<Text>, ctx: &mut Ctx) {
        let item = match &self.phase {
            Phase::Stopping { .. } | Phase::Stopped => {
                // A request made now would outlive its requester: nobody would
                // be left to expire it.
                ctx.record(Event::Note { text: "shutting down: not submitting a plan".into() });
                return;
            }
            Phase::Waiting { .. } => {
                ctx.record(Event::Note { text: "already waiting for a plan answer; not submitting another".into() });
                return;
            }
            Phase::NotStarted => Item::None,
            Phase::Active { item } => *item,
        };
        let Some(id) = self.requests(ctx.policy.defences).ask(Kind::Plan, to, Some(plan), label, ctx) else {
            return;
        };
        self.phase = Phase::Waiting { item };
        let more = self.more();
        more.waiting_on = Some((id, SetAside::default()));
        if to.is_lead() && more.gate.submitted(id).is_ok() && more.gate.state() == GateState::Pending {
            ctx.record(Event::Gate { agent: ctx.me, state: GateState::Pending });
        }
    }

    /// Starts the item at `next_item` if nothing is in progress and the gate
    /// lets it; a stopping teammate with nothing left to finish stops.
    // Inlined is only the check that there is nothing to start, which is
    // what every delivery to a teammate that only answers or only plans
    // finds: with no work in hand, only a stopping teammate has something
    // left to do here (to stop).
    #[inline(always)]
    fn start_next(&mut self, ctx: &mut Ctx) {
        if self.work_in_hand().is_none() && !matches!(self.phase, Phase::Stopping { .. }) {
            return;
        }
        self.start_item(ctx);
    }

    #[inline(never)]
    fn start_item(&mut self, ctx: &mut Ctx) {
        if self.holding_work {
            return;
        }
        let item = self.item();
        let stopping = matches!(self.phase, Phase::Stopping { .. });
        match self.phase {
            Phase::NotStarted | Phase::Stopped => return,
            _ if matches!(item, Item::Doing { .. }) => return,
            Phase::Stopping { .. } if item == Item::None => {
                self.stop(ctx);
                return;
            }
            _ => {}
        }
        let Some(work) = self.work_in_hand() else { return };
        let (action, step_time) = (work.action, work.step_time);
        let path = work.path.clone();
        // The gate is asked first, so a blocked action shows in the trace as
        // blocked by the runtime, not merely postponed by a waiting teammate.
        if let Err(crate::protocol::GateError::Closed { action, state }) = self.gate().check(action) {
            let next_item = self.next_item;
            let reported = &mut self.more().reported_block;
            if *reported != Some((next_item, state)) {
                *reported = Some((next_item, state));
                ctx.record(Event::Act { agent: ctx.me, action, path, blocked: Some(state) });
            }
            if stopping {
                // The interrupted item cannot be redone behind a closed gate,
                // and the shutdown was promised: stop, and let the trace and
                // the oracle show the half-written file.
                ctx.record(Event::Note { text: "cannot finish the interrupted work: its plan gate is closed".into() });
                self.stop(ctx);
            }
            return;
        }
        // Waiting on a plan, it still reads (the gate holds back only what
        // changes the world); a mutating action waits for the verdict.
        if matches!(self.phase, Phase::Waiting { .. }) && action.is_mutating() {
            return;
        }
        ctx.record(Event::Act { agent: ctx.me, action, path, blocked: None });
        self.set_item(Item::Doing { done: 0 });
        ctx.wake(ctx.now.after(step_time), Timer::WorkStep);
    }

    fn step_done(&mut self, ctx: &mut Ctx) {
        let Item::Doing { done } = self.item() else { return };
        let work = &self.spec.work[self.next_item as usize];
        let done = done + 1;
        if let (Some(path), Action::Write | Action::Edit) = (&work.path, work.action) {
            ctx.out.push(Command::FileStep { path: path.clone(), done, total: work.steps });
        }
        if done < work.steps {
            let step_time = work.step_time;
            self.set_item(Item::Doing { done });
            ctx.wake(ctx.now.after(step_time), Timer::WorkStep);
            return;
        }
        self.set_item(Item::None);
        self.next_item += 1;
        self.start_next(ctx);
    }

    /// → Stopped, for good.
    fn stop(&mut self, ctx: &mut Ctx) {
        self.phase = Phase::Stopped;
        self.status = RosterStatus::Shutdown;
        ctx.out.push(Command::Status(RosterStatus::Shutdown));
        ctx.out.push(Command::Stop);
    }

    fn update_status(&mut self, ctx: &mut Ctx) {
        let status = match (&self.phase, self.item()) {
            (Phase::NotStarted, _) => return,
            (Phase::Waiting { .. }, _) => RosterStatus::WaitingApproval,
            (_, Item::Doing { .. }) => RosterStatus::Working,
            _ => RosterStatus::Idle,
        };
        if status != self.status {
            self.status = status;
            ctx.out.push(Command::Status(status));
        }
    }
}

#[cfg(test)]
mod tests {
    //! The phases, driven input by input with no runtime: what each phase
    //! accepts and where each input takes it.
    use super::*;
    use crate::agent::Roster;
    use crate::protocol::{Envelope, Policy, Reason};
    const ALICE: AgentId = AgentId(1);
    const ADVERSARY: AgentId = AgentId(2);

    struct Bench {
        ids: crate::agent::IdStreams,
        roster: Roster,
        policy: Policy,
        now: Millis,
        /// The incarnation the runtime would run the teammate as.
        incarnation: u32,
    }

    impl Bench {
        fn new() -> Bench {
            Bench {
                ids: crate::agent::IdStreams::new(1, 2),
                roster: Roster { statuses: vec![RosterStatus::Working; 2] },
                policy: Policy::default(),
                now: Millis::ZERO,
                incarnation: 0,
            }
        }

        fn feed(&mut self, t: &mut Teammate, input: Input) -> Vec<Command> {
            let mut out = Vec::new();
            // The runtime takes up a restart's incarnation before the agent
            // sees the restart, and so does this bench.
            if let Input::Restart { incarnation } = input {
                self.incarnation = incarnation;
            }
            let mut ctx = Ctx {
                incarnation: self.incarnation,
                tracing: true,
                ..Ctx::for_test(ALICE, self.now, &mut self.ids, &self.roster, &self.policy, &mut out)
            };
            t.handle(&input, &mut ctx);
            out
        }
    }

    fn writer(steps: u32) -> Teammate {
        let spec = TeammateSpec {
            work: vec![WorkItem { action: Action::Write, path: Some("a.rs".into()), steps, step_time: Millis(10) }],
            ..TeammateSpec::default()
        };
        Teammate::new(spec)
    }

    fn shutdown_request(n: u8, sender: AgentId, claimed_from: AgentId) -> Input {
        let message = Message::Request {
            kind: Kind::Shutdown,
            request_id: RequestId::from_random_bytes([n; 16]),
            words: None,
            deadline: Millis(60_000),
        };
        let envelope = Envelope { from: claimed_from, to: Address::Agent(ALICE), sent_at: Millis::ZERO, message };
        Input::Deliver(Delivery { seq: n as u64, envelope, sender, to: ALICE, at: Millis::ZERO, incarnation: 0 })
    }

    /// A shutdown request the router stamped for alice's incarnation `incarnation`.
    fn shutdown_request_for(n: u8, incarnation: u32) -> Input {
        let Input::Deliver(d) = shutdown_request(n, AgentId::LEAD, AgentId::LEAD) else { unreachable!() };
        Input::Deliver(Delivery { incarnation, ..d })
    }

    fn ignored_as(out: &[Command], reason: Reason) -> bool {
        out.iter().any(|c| matches!(c, Command::Record(e) if matches!(**e, Event::RequestIgnored { reason: r, .. } if r == reason)))
    }

    fn approvals(out: &[Command]) -> usize {
        out.iter()
            .filter(|c| {
                matches!(c, Command::Send(e) if matches!(e.message, Message::Response { kind: Kind::Shutdown, approve: true, .. }))
            })
            .count()
    }

    /// The id of the plan request a teammate sent, if it sent one.
    fn plan_sent(out: &[Command]) -> Option<RequestId> {
        out.iter().find_map(|c| match c {
            Command::Send(e) => match &e.message {
                Message::Request { kind: Kind::Plan, request_id, .. } => Some(*request_id),
                _ => None,
            },
            _ => None,
        })
    }

    /// The lead's verdict on plan `id`, as the router delivers it.
    fn plan_verdict(id: RequestId, approve: bool) -> Input {
        let message = Message::Response { kind: Kind::Plan, request_id: id, approve, words: None };
        let envelope = Envelope { from: AgentId::LEAD, to: Address::Agent(ALICE), sent_at: Millis::ZERO, message };
        Input::Deliver(Delivery {
            seq: 99,
            envelope,
            sender: AgentId::LEAD,
            to: ALICE,
            at: Millis::ZERO,
            incarnation: 0,
        })
    }

    /// The actions it started, `(action, blocked)`, in order.
    fn acts(out: &[Command]) -> Vec<(Action, Option<GateState>)> {
        out.iter()
            .filter_map(|c| match c {
                Command::Record(e) => match &**e {
                    Event::Act { action, blocked, .. } => Some((*action, *blocked)),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    fn shutdown_answers(out: &[Command]) -> Vec<(bool, Option<Text>)> {
        out.iter()
            .filter_map(|c| match c {
                Command::Send(e) => match &e.message {
                    Message::Response { kind: Kind::Shutdown, approve, words: reason, .. } => {
                        Some((*approve, reason.clone()))
                    }
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_plan_request_delivered_as_its_own_plan_expires_closes_the_gate_before_a_write_starts() {
        // Issue 39, point 3: the expiry of its own plan frees the write it
        // held back; the lead's plan request, delivered in that same turn,
        // must close the gate first.
        let mut b = Bench::new();
        let spec = TeammateSpec {
            work: vec![
                WorkItem { action: Action::Read, path: Some("a.rs".into()), steps: 1, step_time: Millis(10) },
                WorkItem { action: Action::Write, path: Some("b.rs".into()), steps: 1, step_time: Millis(10) },
            ],
            ..TeammateSpec::default()
        };
        let mut t = Teammate::new(spec);
        b.feed(&mut t, Input::Start);
        let ask = Script::Ask { kind: Kind::Plan, to: AgentId::LEAD, words: None, label: None };
        plan_sent(&b.feed(&mut t, Input::Script(ask))).expect("its own plan goes out");
        b.now = Millis(10);
        let out = b.feed(&mut t, Input::Wake(Timer::WorkStep));
        assert_eq!(acts(&out), vec![], "the write waits for the plan's verdict: {out:?}");
        b.now = b.policy.timeout(Kind::Plan);
        let message = Message::PlanRequest { text: "plan first".into() };
        let envelope = Envelope { from: AgentId::LEAD, to: Address::Agent(ALICE), sent_at: b.now, message };
        let d = Delivery { seq: 7, envelope, sender: AgentId::LEAD, to: ALICE, at: b.now, incarnation: 0 };
        let out = b.feed(&mut t, Input::Deliver(d));
        assert!(plan_sent(&out).is_some(), "the plan asked for goes out: {out:?}");
        assert_eq!(acts(&out), vec![(Action::Write, Some(GateState::Pending))], "blocked, not begun: {out:?}");
    }

    #[test]
    fn a_gated_teammate_reads_while_its_plan_is_pending_and_its_first_write_is_blocked() {
        let mut b = Bench::new();
        let spec = TeammateSpec {
            require_plan: true,
            work: vec![
                WorkItem { action: Action::Read, path: Some("a.rs".into()), steps: 1, step_time: Millis(10) },
                WorkItem { action: Action::Write, path: Some("a.rs".into()), steps: 1, step_time: Millis(10) },
            ],
            ..TeammateSpec::default()
        };
        let mut t = Teammate::new(spec);
        let out = b.feed(&mut t, Input::Start);
        let plan = plan_sent(&out).expect("the plan goes out first");
        assert_eq!(acts(&out), vec![(Action::Read, None)], "the read starts with the plan pending: {out:?}");
        assert!(matches!(t.phase(), Phase::Waiting { item: Item::Doing { done: 0 }, .. }), "{:?}", t.phase());
        let out = b.feed(&mut t, Input::Wake(Timer::WorkStep));
        assert_eq!(acts(&out), vec![(Action::Write, Some(GateState::Pending))], "the runtime blocks it: {out:?}");
        assert!(matches!(t.phase(), Phase::Waiting { item: Item::None, .. }), "then it waits: {:?}", t.phase());
        let out = b.feed(&mut t, plan_verdict(plan, true));
        assert_eq!(acts(&out), vec![(Action::Write, None)], "approved: the write runs: {out:?}");
    }

    #[test]
    fn a_shutdown_it_cannot_honour_is_rejected_with_the_reason() {
        // The interrupted item must be redone before a graceful stop, and a
        // second plan, rejected, closed the gate in front of it.
        let mut b = Bench::new();
        let spec = TeammateSpec {
            require_plan: true,
            max_revisions: 0,
            on_shutdown: Answers::always(Answer::Approve),
            work: vec![WorkItem { action: Action::Write, path: Some("a.rs".into()), steps: 4, step_time: Millis(10) }],
            ..TeammateSpec::default()
        };
        let mut t = Teammate::new(spec);
        let first = plan_sent(&b.feed(&mut t, Input::Start)).expect("a plan");
        b.feed(&mut t, plan_verdict(first, true));
        b.feed(&mut t, Input::Wake(Timer::WorkStep));
        let out = b.feed(
            &mut t,
            Input::Script(Script::Ask { kind: Kind::Plan, to: AgentId::LEAD, words: Some("p2".into()), label: None }),
        );
        let second = plan_sent(&out).expect("a second plan");
        b.feed(&mut t, plan_verdict(second, false));
        assert_eq!(t.gate().state(), GateState::Rejected);
        b.feed(&mut t, Input::Restart { incarnation: 1 });
        assert_eq!(*t.phase(), Phase::Active { item: Item::Interrupted });
        let out = b.feed(&mut t, shutdown_request_for(1, 1));
        let answers = shutdown_answers(&out);
        assert_eq!(answers.len(), 1, "{out:?}");
        let (approve, reason) = &answers[0];
        assert!(!approve, "approving would stop it with a.rs half-written: {out:?}");
        let reason = reason.as_deref().unwrap_or_default();
        assert!(reason.contains("interrupted write of a.rs") && reason.contains("rejected"), "{reason}");
        assert_eq!(*t.phase(), Phase::Active { item: Item::Interrupted }, "it stays, and does not stop");
        assert!(!out.contains(&Command::Stop));
    }

    #[test]
    fn a_graceful_stop_is_not_promised_while_a_write_goes_on_behind_a_closed_gate() {
        // The write began before a second plan closed the gate, so it goes
        // on; but an approved shutdown outlives a crash, and after one the
        // gate would forbid redoing it (found by fuzz once it added steps).
        let mut b = Bench::new();
        let spec = TeammateSpec {
            require_plan: true,
            max_revisions: 0,
            work: vec![WorkItem { action: Action::Write, path: Some("a.rs".into()), steps: 4, step_time: Millis(10) }],
            ..TeammateSpec::default()
        };
        let mut t = Teammate::new(spec);
        let first = plan_sent(&b.feed(&mut t, Input::Start)).expect("a plan");
        b.feed(&mut t, plan_verdict(first, true));
        let out = b.feed(
            &mut t,
            Input::Script(Script::Ask { kind: Kind::Plan, to: AgentId::LEAD, words: Some("p2".into()), label: None }),
        );
        b.feed(&mut t, plan_verdict(plan_sent(&out).expect("a second plan"), false));
        assert_eq!(*t.phase(), Phase::Active { item: Item::Doing { done: 0 } });
        let out = b.feed(&mut t, shutdown_request(1, AgentId::LEAD, AgentId::LEAD));
        let answers = shutdown_answers(&out);
        assert_eq!(answers.len(), 1, "{out:?}");
        assert!(!answers[0].0, "rejected: {out:?}");
        assert!(answers[0].1.as_deref().unwrap_or_default().contains("could not be redone after a crash"), "{out:?}");
        // The write goes on and ends; asked again, it approves and stops.
        for _ in 0..4 {
            b.feed(&mut t, Input::Wake(Timer::WorkStep));
        }
        let out = b.feed(&mut t, shutdown_request(2, AgentId::LEAD, AgentId::LEAD));
        assert_eq!(approvals(&out), 1, "{out:?}");
        assert_eq!(*t.phase(), Phase::Stopped);
    }

    #[test]
    fn an_interrupted_item_behind_an_open_gate_is_redone_before_stopping() {
        let mut b = Bench::new();
        let mut t = writer(2);
        b.feed(&mut t, Input::Start);
        b.feed(&mut t, Input::Wake(Timer::WorkStep));
        // Crashed: the restart redoes it at once, so stop the redo from
        // starting by asking while it is still interrupted.
        t.crashed();
        let out = b.feed(&mut t, shutdown_request(1, AgentId::LEAD, AgentId::LEAD));
        assert_eq!(approvals(&out), 1, "{out:?}");
        assert_eq!(*t.phase(), Phase::Stopping { item: Item::Doing { done: 0 } }, "redone before the stop");
    }

    #[test]
    fn a_teammate_starts_only_when_started() {
        let mut b = Bench::new();
        let mut t = writer(2);
        assert_eq!(*t.phase(), Phase::NotStarted);
        b.feed(&mut t, Input::Start);
        assert_eq!(*t.phase(), Phase::Active { item: Item::Doing { done: 0 } });
    }

    #[test]
    fn a_restart_before_the_start_is_the_start() {
        let mut b = Bench::new();
        let mut t = writer(2);
        b.feed(&mut t, Input::Restart { incarnation: 1 });
        assert_eq!(*t.phase(), Phase::Active { item: Item::Doing { done: 0 } });
    }

    #[test]
    fn an_approved_shutdown_finishes_the_item_then_stops() {
        let mut b = Bench::new();
        let mut t = writer(2);
        b.feed(&mut t, Input::Start);
        let out = b.feed(&mut t, shutdown_request(1, AgentId::LEAD, AgentId::LEAD));
        assert_eq!(approvals(&out), 1);
        assert_eq!(*t.phase(), Phase::Stopping { item: Item::Doing { done: 0 } });
        b.feed(&mut t, Input::Wake(Timer::WorkStep));
        let out = b.feed(&mut t, Input::Wake(Timer::WorkStep));
        assert_eq!(*t.phase(), Phase::Stopped);
        assert!(out.contains(&Command::Stop));
        // Final: nothing reaches it any more.
        assert!(b.feed(&mut t, Input::Restart { incarnation: 2 }).is_empty());
        assert_eq!(*t.phase(), Phase::Stopped);
    }

    #[test]
    fn with_nothing_in_hand_an_approved_shutdown_stops_at_once() {
        let mut b = Bench::new();
        let mut t = writer(0);
        Arc::make_mut(&mut t.spec).work.clear();
        b.feed(&mut t, Input::Start);
        let out = b.feed(&mut t, shutdown_request(1, AgentId::LEAD, AgentId::LEAD));
        assert_eq!(*t.phase(), Phase::Stopped);
        assert!(out.contains(&Command::Stop));
    }

    #[test]
    fn a_crash_interrupts_the_item_and_a_shutdown_approved_later_redoes_it() {
        let mut b = Bench::new();
        let mut t = writer(3);
        b.feed(&mut t, Input::Start);
        b.feed(&mut t, Input::Wake(Timer::WorkStep));
        b.feed(&mut t, Input::Restart { incarnation: 1 });
        // Restarted while active: the interrupted item starts over at once.
        assert_eq!(*t.phase(), Phase::Active { item: Item::Doing { done: 0 } });
    }

    #[test]
    fn a_waiting_teammate_sets_requests_aside_and_a_crash_loses_them() {
        let mut b = Bench::new();
        b.policy.strict_hierarchy = false;
        let mut t = writer(1);
        Arc::make_mut(&mut t.spec).work.clear();
        b.feed(&mut t, Input::Start);
        b.feed(
            &mut t,
            Input::Script(Script::Ask { kind: Kind::Plan, to: AgentId::LEAD, words: Some("p".into()), label: None }),
        );
        assert!(matches!(t.phase(), Phase::Waiting { .. }));
        let out = b.feed(&mut t, shutdown_request(1, AgentId::LEAD, AgentId::LEAD));
        assert_eq!(approvals(&out), 0);
        assert!(matches!(t.phase(), Phase::Waiting { .. }));
        assert_eq!(t.set_aside().map(|held| held.len()), Some(1));
        b.feed(&mut t, Input::Restart { incarnation: 1 });
        assert!(matches!(t.phase(), Phase::Waiting { .. }));
        assert_eq!(t.set_aside().map(|held| held.len()), Some(0));
    }

    #[test]
    fn a_forged_request_is_ignored_and_spends_no_answer() {
        let mut b = Bench::new();
        let mut t = writer(1);
        Arc::make_mut(&mut t.spec).on_shutdown = Answers::new(vec![Answer::Reject, Answer::Approve]);
        Arc::make_mut(&mut t.spec).reject_reason = Some("busy".into());
        b.feed(&mut t, Input::Start);
        let out = b.feed(&mut t, shutdown_request(1, ADVERSARY, AgentId::LEAD));
        let ignored = out.iter().any(|c| {
            matches!(c, Command::Record(e) if matches!(**e, Event::RequestIgnored { reason: Reason::WrongSender, .. }))
        });
        assert!(ignored, "{out:?}");
        assert!(!out.iter().any(|c| matches!(c, Command::Send(_))), "no answer to a forgery: {out:?}");
        // The first real request still gets the first answer in the list.
        let out = b.feed(&mut t, shutdown_request(2, AgentId::LEAD, AgentId::LEAD));
        let rejected = out.iter().any(
            |c| matches!(c, Command::Send(e) if matches!(e.message, Message::Response { kind: Kind::Shutdown, approve: false, .. })),
        );
        assert!(rejected, "{out:?}");
    }

    #[test]
    fn a_request_past_its_deadline_is_ignored_as_expired() {
        let mut b = Bench::new();
        let mut t = writer(1);
        b.feed(&mut t, Input::Start);
        b.now = Millis(60_000);
        let out = b.feed(&mut t, shutdown_request(1, AgentId::LEAD, AgentId::LEAD));
        assert_eq!(approvals(&out), 0);
        assert!(matches!(t.phase(), Phase::Active { .. }));
        b.policy.defences.deadline_check = false;
        let out = b.feed(&mut t, shutdown_request(2, AgentId::LEAD, AgentId::LEAD));
        assert_eq!(approvals(&out), 1, "with the check off, an expired request is obeyed");
    }

    #[test]
    fn a_request_meant_for_the_incarnation_before_a_restart_is_ignored_as_stale() {
        let mut b = Bench::new();
        let mut t = writer(1);
        b.feed(&mut t, Input::Start);
        b.feed(&mut t, Input::Restart { incarnation: 1 });
        let out = b.feed(&mut t, shutdown_request_for(1, 0));
        assert_eq!(approvals(&out), 0, "{out:?}");
        assert!(ignored_as(&out, Reason::StaleIncarnation), "{out:?}");
        assert!(!out.iter().any(|c| matches!(c, Command::Send(_))), "no answer at all: {out:?}");
        assert!(matches!(t.phase(), Phase::Active { .. }));
        // One sent to the new incarnation is answered as usual.
        let out = b.feed(&mut t, shutdown_request_for(2, 1));
        assert_eq!(approvals(&out), 1, "{out:?}");
    }

    #[test]
    fn without_the_incarnation_check_a_restarted_teammate_answers_for_its_old_self() {
        let mut b = Bench::new();
        b.policy.defences.incarnation_check = false;
        let mut t = writer(1);
        b.feed(&mut t, Input::Start);
        b.feed(&mut t, Input::Restart { incarnation: 1 });
        let out = b.feed(&mut t, shutdown_request_for(1, 0));
        assert_eq!(approvals(&out), 1, "the respawn bug: {out:?}");
        assert!(!ignored_as(&out, Reason::StaleIncarnation), "{out:?}");
    }

    #[test]
    fn a_stale_request_past_its_deadline_is_named_stale_not_expired() {
        let mut b = Bench::new();
        let mut t = writer(1);
        b.feed(&mut t, Input::Start);
        b.feed(&mut t, Input::Restart { incarnation: 1 });
        b.now = Millis(60_000);
        let out = b.feed(&mut t, shutdown_request_for(1, 0));
        assert!(ignored_as(&out, Reason::StaleIncarnation), "{out:?}");
        assert!(!ignored_as(&out, Reason::Expired), "one reason per request: {out:?}");
    }
}
