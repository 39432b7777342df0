//! A teammate: works through its list of actions, answers shutdown requests,
//! plans first when it must, and waits (answering nothing) while a plan of its
//! own is pending.

use super::{Answer, Answers, Command, Ctx, Input, Requests, Script, Timer};
use crate::protocol::{
    Action, Address, AgentId, Defences, Delivery, GateChange, GateState, Kind, Message, Millis, PlanGate, RequestId,
    RequestTable, Text, TimeoutDefault, Verdict,
};
use crate::trace::{Event, RosterStatus};
use std::collections::VecDeque;

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
    pub require_plan: bool,
    pub plan: Text,
    pub work: Vec<WorkItem>,
    /// Rejected plans it revises before giving up.
    pub max_revisions: u32,
}

impl Default for TeammateSpec {
    fn default() -> Self {
        TeammateSpec {
            on_shutdown: Answers::always(Answer::Approve),
            reject_reason: None,
            on_plan: Answers::always(Answer::Approve),
            require_plan: false,
            plan: "do the work".into(),
            work: Vec::new(),
            max_revisions: 3,
        }
    }
}

#[derive(Debug)]
pub struct Teammate {
    spec: TeammateSpec,
    /// Made on first use: most teammates never ask anything, and at 100,000
    /// teammates an empty table each would cost 17 MB.
    requests: Option<Box<Requests>>,
    defences: Defences,
    gate: PlanGate,
    /// Index of the work item in progress or next to start.
    next_item: usize,
    /// Steps done of the item in progress; `None` when no item is in progress.
    progress: Option<u32>,
    /// The plan this teammate is blocked on.
    waiting_on: Option<RequestId>,
    /// Requests that arrived while blocked, answered once unblocked.
    deferred: VecDeque<Delivery>,
    /// An approved shutdown: finish the item in progress, then stop.
    stopping: bool,
    stopped: bool,
    status: RosterStatus,
    revisions: u32,
    /// The last gate state a blocked action was reported for, so a blocked
    /// action is recorded once per gate state, not on every input.
    reported_block: Option<(usize, GateState)>,
    /// A crash interrupted the item in progress: redo it before anything
    /// else, even before stopping, so a graceful shutdown never leaves it half-written.
    redo: bool,
    answered: super::Answered,
}

impl Teammate {
    pub fn new(spec: TeammateSpec, defences: Defences) -> Teammate {
        let gate = PlanGate::new(spec.require_plan);
        Teammate {
            spec,
            requests: None,
            defences,
            gate,
            next_item: 0,
            progress: None,
            waiting_on: None,
            deferred: VecDeque::new(),
            stopping: false,
            stopped: false,
            status: RosterStatus::Working,
            revisions: 0,
            reported_block: None,
            redo: false,
            answered: super::Answered::default(),
        }
    }

    /// The plans this teammate asked about, if it ever asked.
    pub fn table(&self) -> Option<&RequestTable> {
        self.requests.as_deref().map(|r| &r.table)
    }

    fn requests(&mut self) -> &mut Requests {
        let defences = self.defences;
        self.requests.get_or_insert_with(|| Box::new(Requests::new(RequestTable::new(defences))))
    }

    pub fn handle(&mut self, input: Input, ctx: &mut Ctx) {
        if self.stopped {
            return;
        }
        if let Input::Restart = input {
            // Before anything else (even expiries, which may unblock and
            // answer what was set aside): the mailbox, the requests set aside
            // and the step in progress died with the process; the request
            // table and the gate are durable.
            self.redo = self.progress.is_some();
            self.progress = None;
            self.deferred.clear();
            self.reported_block = None;
            // The roster shows a restarted agent as working; start from there
            // so the next status change is reported.
            self.status = RosterStatus::Working;
        }
        self.expire(ctx);
        match input {
            Input::Start => {
                if self.spec.require_plan {
                    let plan = self.spec.plan.clone();
                    self.submit(AgentId::LEAD, plan, None, ctx);
                }
                self.start_next(ctx);
            }
            Input::Deliver(d) => self.on_delivery(d, ctx),
            Input::Wake(Timer::Deadline) => self.requests().timer_fired(ctx),
            Input::Wake(Timer::WorkStep) => self.step_done(ctx),
            Input::Script(Script::SubmitPlan { to, plan, label }) => self.submit(to, plan, label, ctx),
            Input::Script(Script::Shutdown { to, reason, label }) => {
                // Refused by the send rules: only the lead asks for shutdowns.
                self.requests().ask_shutdown(to, reason, label, ctx);
            }
            Input::Script(Script::Say { to, text }) => ctx.say(to, text),
            Input::Restart => {
                // The old incarnation's timer died with it.
                if let Some(r) = &mut self.requests {
                    r.timer_fired(ctx);
                }
                self.start_next(ctx);
            }
        }
        if !self.stopped {
            self.update_status(ctx);
        }
    }

    fn on_delivery(&mut self, d: Delivery, ctx: &mut Ctx) {
        match &d.envelope.message {
            Message::ShutdownRequest { request_id, .. } | Message::PlanApprovalRequest { request_id, .. } => {
                if self.waiting_on.is_some() {
                    ctx.record(Event::Deferred { agent: ctx.me, request_id: *request_id });
                    self.deferred.push_back(d);
                } else {
                    self.answer(&d, ctx);
                }
            }
            Message::ShutdownResponse { .. } | Message::PlanApprovalResponse { .. } => {
                if let Some((id, Verdict::Applied { kind: Kind::Plan, to, .. })) = self.requests().judge(&d, ctx) {
                    self.plan_decided(id, to == crate::protocol::Status::Approved, false, ctx);
                }
            }
            Message::Message { .. } | Message::Broadcast { .. } => {}
        }
    }

    /// Answers a request addressed to this teammate. The answer goes to whoever
    /// really asked (or, without sender authentication, whoever claims to).
    fn answer(&mut self, d: &Delivery, ctx: &mut Ctx) {
        let asker = if ctx.policy.defences.sender_auth { d.sender } else { d.envelope.from };
        match &d.envelope.message {
            Message::ShutdownRequest { request_id, .. } => {
                let request_id = *request_id;
                let (answer, repeat) = self.answered.answer(request_id, &mut self.spec.on_shutdown);
                if repeat {
                    ctx.record(Event::Note { text: "the same request again: the same answer again".into() });
                }
                match answer {
                    Answer::Approve => {
                        let sent = ctx.send(
                            Address::Agent(asker),
                            Message::ShutdownResponse { request_id, approve: true, reason: None },
                        );
                        if sent {
                            self.stopping = true;
                            if self.progress.is_none() {
                                self.stop(ctx);
                            }
                        }
                    }
                    Answer::Reject => {
                        let reason = self.spec.reject_reason.clone();
                        ctx.send(
                            Address::Agent(asker),
                            Message::ShutdownResponse { request_id, approve: false, reason },
                        );
                    }
                    Answer::Ignore => ctx.record(Event::NoAnswer { agent: ctx.me, request_id }),
                }
            }
            Message::PlanApprovalRequest { request_id, .. } => {
                let request_id = *request_id;
                let (answer, repeat) = self.answered.answer(request_id, &mut self.spec.on_plan);
                if repeat {
                    ctx.record(Event::Note { text: "the same request again: the same answer again".into() });
                }
                let approve = match answer {
                    Answer::Approve => true,
                    Answer::Reject => false,
                    Answer::Ignore => {
                        ctx.record(Event::NoAnswer { agent: ctx.me, request_id });
                        return;
                    }
                };
                let feedback = (!approve).then(|| Text::from("rejected by peer"));
                ctx.send(Address::Agent(asker), Message::PlanApprovalResponse { request_id, approve, feedback });
            }
            _ => {}
        }
    }

    fn expire(&mut self, ctx: &mut Ctx) {
        let due = match &mut self.requests {
            Some(r) => r.expire(ctx.now),
            None => return,
        };
        for e in due {
            let default = ctx.policy.on_expiry(e.kind);
            ctx.record(Event::Expired { id: e.id, kind: e.kind, default });
            match default {
                TimeoutDefault::Approve => self.plan_decided(e.id, true, true, ctx),
                TimeoutDefault::Reject => self.plan_decided(e.id, false, true, ctx),
                // A teammate never holds shutdown requests: the send rules refuse them.
                TimeoutDefault::Kill | TimeoutDefault::Keep => {}
            }
        }
    }

    /// A plan of ours was approved or rejected, by an answer or by the timeout policy.
    fn plan_decided(&mut self, id: RequestId, approved: bool, by_timeout: bool, ctx: &mut Ctx) {
        let change = self.gate.decided(id, approved);
        if matches!(change, GateChange::Opened | GateChange::StaysClosed) {
            ctx.record(Event::Gate { agent: ctx.me, state: self.gate.state() });
        }
        if self.waiting_on == Some(id) {
            self.waiting_on = None;
        }
        if change == GateChange::StaysClosed && !by_timeout {
            if self.revisions < self.spec.max_revisions {
                self.revisions += 1;
                let plan: Text = format!("{} (revision {})", self.spec.plan, self.revisions).into();
                self.submit(AgentId::LEAD, plan, None, ctx);
            } else {
                ctx.record(Event::Note { text: format!("plan rejected {} times: giving up", self.revisions + 1) });
            }
        }
        self.drain_deferred(ctx);
        self.start_next(ctx);
    }

    fn drain_deferred(&mut self, ctx: &mut Ctx) {
        while self.waiting_on.is_none() && !self.stopped {
            let Some(d) = self.deferred.pop_front() else { break };
            self.answer(&d, ctx);
        }
    }

    fn submit(&mut self, to: AgentId, plan: Text, label: Option<Text>, ctx: &mut Ctx) {
        if self.stopping {
            // A request made now would outlive its requester: nobody would be
            // left to expire it.
            ctx.record(Event::Note { text: "shutting down: not submitting a plan".into() });
            return;
        }
        if self.waiting_on.is_some() {
            ctx.record(Event::Note { text: "already waiting for a plan answer; not submitting another".into() });
            return;
        }
        let Some(id) = self.requests().ask_plan(to, plan, label, ctx) else {
            return;
        };
        self.waiting_on = Some(id);
        if to.is_lead() && self.gate.submitted(id).is_ok() && self.gate.state() == GateState::Pending {
            ctx.record(Event::Gate { agent: ctx.me, state: GateState::Pending });
        }
    }

    fn start_next(&mut self, ctx: &mut Ctx) {
        if self.stopped || self.progress.is_some() {
            return;
        }
        if self.stopping && !self.redo {
            self.stop(ctx);
            return;
        }
        let Some(item) = self.spec.work.get(self.next_item) else { return };
        let path = item.path.as_ref().map(|p| p.to_string());
        // The gate is asked first, so a blocked action shows in the trace as
        // blocked by the runtime, not merely postponed by a waiting teammate.
        if let Err(crate::protocol::GateError::Closed { action, state }) = self.gate.check(item.action) {
            if self.reported_block != Some((self.next_item, state)) {
                self.reported_block = Some((self.next_item, state));
                ctx.record(Event::Act { agent: ctx.me, action, path, blocked: Some(state) });
            }
            return;
        }
        if self.waiting_on.is_some() {
            return;
        }
        ctx.record(Event::Act { agent: ctx.me, action: item.action, path, blocked: None });
        self.redo = false;
        self.progress = Some(0);
        ctx.wake(ctx.now.after(item.step_time), Timer::WorkStep);
    }

    fn step_done(&mut self, ctx: &mut Ctx) {
        let Some(done) = self.progress else { return };
        let item = &self.spec.work[self.next_item];
        let done = done + 1;
        if let (Some(path), Action::Write | Action::Edit) = (&item.path, item.action) {
            ctx.out.push(Command::FileStep { path: path.clone(), done, total: item.steps });
        }
        if done < item.steps {
            self.progress = Some(done);
            ctx.wake(ctx.now.after(item.step_time), Timer::WorkStep);
            return;
        }
        self.progress = None;
        self.next_item += 1;
        self.start_next(ctx);
    }

    fn stop(&mut self, ctx: &mut Ctx) {
        self.stopped = true;
        self.status = RosterStatus::Shutdown;
        ctx.out.push(Command::Status(RosterStatus::Shutdown));
        ctx.out.push(Command::Stop);
    }

    fn update_status(&mut self, ctx: &mut Ctx) {
        let status = if self.waiting_on.is_some() {
            RosterStatus::WaitingApproval
        } else if self.progress.is_some() {
            RosterStatus::Working
        } else {
            RosterStatus::Idle
        };
        if status != self.status {
            self.status = status;
            ctx.out.push(Command::Status(status));
        }
    }
}
