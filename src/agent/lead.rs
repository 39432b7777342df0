//! The lead: asks teammates to shut down, reviews their plans, and applies the
//! timeout policy when a request it made expires.

use super::{ask, judge, rearm, Answer, Answers, Command, Ctx, Input, Script, Timer};
use crate::protocol::{
    Address, AgentId, Defences, Expiry, Kind, Message, Millis, RequestTable, Text, TimeoutDefault, Verdict,
};
use crate::trace::Event;

/// A load generator for benchmarks: keep `per_teammate` shutdown requests in
/// flight to each teammate until `total` handshakes have completed.
#[derive(Clone, Debug)]
pub struct Load {
    pub teammates: Vec<AgentId>,
    pub per_teammate: u32,
    pub total: u64,
}

#[derive(Debug)]
pub struct Lead {
    table: RequestTable,
    on_plan: Answers,
    feedback: Option<Text>,
    armed: Option<Millis>,
    load: Option<(Load, u64)>,
    expired: Vec<Expiry>,
}

impl Lead {
    pub fn new(defences: Defences, on_plan: Answers, feedback: Option<Text>) -> Lead {
        Lead { table: RequestTable::new(defences), on_plan, feedback, armed: None, load: None, expired: Vec::new() }
    }

    /// A lead that generates load; it forgets ended requests so memory stays flat.
    pub fn with_load(defences: Defences, load: Load) -> Lead {
        Lead {
            table: RequestTable::forgetful(defences),
            load: Some((load, 0)),
            ..Lead::new(defences, Answers::always(Answer::Approve), None)
        }
    }

    pub fn table(&self) -> &RequestTable {
        &self.table
    }

    pub fn handle(&mut self, input: Input, ctx: &mut Ctx) {
        // Deadlines first: anything due by now expires before this input is
        // looked at, so a reply at the deadline always finds the request expired.
        self.expire(ctx);
        match input {
            Input::Start => self.start_load(ctx),
            Input::Deliver(d) => match &d.envelope.message {
                Message::ShutdownResponse { .. } | Message::PlanApprovalResponse { .. } => {
                    if let Some((_, Verdict::Applied { kind: Kind::Shutdown, .. })) = judge(&mut self.table, &d, ctx) {
                        self.next_load(d.sender, ctx);
                    }
                }
                Message::PlanApprovalRequest { request_id, .. } => self.review(d.sender, *request_id, ctx),
                // A shutdown request to the lead can only be forged; plain text changes nothing.
                Message::ShutdownRequest { .. } | Message::Message { .. } | Message::Broadcast { .. } => {}
            },
            Input::Wake(Timer::Deadline) => self.armed = None,
            Input::Wake(Timer::WorkStep) | Input::Restart => {}
            Input::Script(Script::Shutdown { to, reason, label }) => {
                ask(
                    &mut self.table,
                    Kind::Shutdown,
                    to,
                    label,
                    |request_id| Message::ShutdownRequest { request_id, reason },
                    ctx,
                );
            }
            Input::Script(Script::SubmitPlan { to, plan, label }) => {
                // Refused by the send rules (the lead does not submit plans), and recorded as such.
                ask(
                    &mut self.table,
                    Kind::Plan,
                    to,
                    label,
                    |request_id| Message::PlanApprovalRequest { request_id, plan },
                    ctx,
                );
            }
            Input::Script(Script::Say { to, text }) => {
                let message = match to {
                    Address::Everyone => Message::Broadcast { text },
                    Address::Agent(_) => Message::Message { text },
                };
                ctx.send(to, message);
            }
        }
        rearm(&mut self.table, &mut self.armed, ctx);
    }

    fn expire(&mut self, ctx: &mut Ctx) {
        self.table.expire_due(ctx.now, &mut self.expired);
        for e in self.expired.drain(..) {
            let default = ctx.policy.on_expiry(e.kind);
            ctx.record(Event::Expired { id: e.id, kind: e.kind, default });
            if default == TimeoutDefault::Kill {
                ctx.out.push(Command::Kill(e.target));
            }
        }
    }

    fn review(&mut self, author: AgentId, request_id: crate::protocol::RequestId, ctx: &mut Ctx) {
        let (approve, feedback) = match self.on_plan.next_answer() {
            Answer::Approve => (true, None),
            Answer::Reject => (false, self.feedback.clone().or_else(|| Some("rejected".into()))),
            Answer::Ignore => {
                ctx.record(Event::Ignores { agent: ctx.me, request_id });
                return;
            }
        };
        ctx.send(Address::Agent(author), Message::PlanApprovalResponse { request_id, approve, feedback });
    }

    fn start_load(&mut self, ctx: &mut Ctx) {
        let Some((load, _)) = &self.load else { return };
        let (teammates, per) = (load.teammates.clone(), load.per_teammate);
        for _ in 0..per {
            for &t in &teammates {
                self.send_load(t, ctx);
            }
        }
    }

    fn next_load(&mut self, teammate: AgentId, ctx: &mut Ctx) {
        let Some((load, done)) = &mut self.load else { return };
        *done += 1;
        let in_flight = self.table.len() as u64;
        if *done + in_flight < load.total {
            self.send_load(teammate, ctx);
        }
    }

    fn send_load(&mut self, to: AgentId, ctx: &mut Ctx) {
        ask(
            &mut self.table,
            Kind::Shutdown,
            to,
            None,
            |request_id| Message::ShutdownRequest { request_id, reason: None },
            ctx,
        );
    }

    /// Handshakes completed by the load generator.
    pub fn load_done(&self) -> u64 {
        self.load.as_ref().map_or(0, |(_, d)| *d)
    }
}
