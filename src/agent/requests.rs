//! The requester's side of every handshake, shared by the lead and the
//! teammates: open a request (or record why it was refused), judge the
//! responses, expire what is due, and keep one timer on the earliest deadline.

use super::{Ctx, Timer};
use crate::protocol::{
    check_send, Address, AgentId, Delivery, Envelope, Expiry, Kind, Message, Millis, NewRequest, RequestId,
    RequestTable, Response, Text, Verdict,
};
use crate::trace::Event;

#[derive(Clone, Debug)]
pub(crate) struct Requests {
    pub table: RequestTable,
    /// When the deadline timer fires next, if one is armed. Timers are never
    /// cancelled: one that fires for an answered request finds nothing due.
    armed: Option<Millis>,
}

impl Requests {
    pub fn canon(&self, c: &mut crate::protocol::Canon) {
        self.table.canon(c);
        c.millis(self.armed.unwrap_or(Millis::NEVER));
    }
}

impl Requests {
    pub fn new(table: RequestTable) -> Requests {
        Requests { table, armed: None }
    }

    /// Asks `to` this protocol's question, saying `words` (a reason, a
    /// plan). Opens a request and sends it, or records the refusal and opens
    /// nothing: a refused request must never pend, expire and apply a default.
    pub fn ask(
        &mut self,
        kind: Kind,
        to: AgentId,
        words: Option<Text>,
        label: Option<Text>,
        ctx: &mut Ctx,
    ) -> Option<RequestId> {
        if ctx.sends_left == 0 {
            // It died in this turn, before this request.
            return None;
        }
        let id = ctx.ids.draw(ctx.me);
        let timeout = ctx.policy.timeout(kind);
        // The request carries its deadline, so the receiver can tell when an
        // answer would come too late to count.
        let deadline = ctx.now.after(timeout);
        let env = Envelope {
            from: ctx.me,
            to: Address::Agent(to),
            sent_at: ctx.now,
            message: Message::Request { kind, request_id: id, words, deadline },
        };
        if let Err(error) = check_send(&env, ctx.dir, ctx.policy) {
            ctx.record(Event::Refuse { from: ctx.me, to: env.to, message_type: env.message.message_type(), error });
            return None;
        }
        let r =
            self.table.open(id, NewRequest { kind, requester: ctx.me, target: to, sent_at: ctx.now, timeout, label });
        let deadline = r.deadline;
        if ctx.tracing {
            let label = r.label.clone();
            ctx.record(Event::Opened { id, label, kind, requester: ctx.me, target: to, deadline });
        }
        ctx.queue_send(env);
        ctx.sends_left -= 1;
        // Arm only if this deadline comes before the armed one: with a fixed
        // timeout, deadlines only grow, so this is a comparison, not a timer.
        // A request with no deadline (timeouts off) needs no timer at all.
        if !deadline.is_never() && self.armed.is_none_or(|a| deadline < a) {
            self.armed = Some(deadline);
            ctx.wake(deadline, Timer::Deadline);
        }
        Some(id)
    }

    /// Judges a delivered response against the table and records the verdict.
    pub fn judge(&mut self, d: &Delivery, ctx: &mut Ctx) -> Option<(RequestId, Verdict)> {
        let r = response_of(d)?;
        let verdict = self.table.apply(&r);
        if !ctx.tracing {
            return Some((r.request_id, verdict));
        }
        ctx.record(Event::Verdict {
            at: ctx.me,
            request_id: r.request_id,
            response_kind: r.kind,
            approve: r.approve,
            sender: r.sender,
            claimed_from: r.claimed_from,
            verdict,
        });
        Some((r.request_id, verdict))
    }

    /// Whether a request may be due by `now`. The armed time is never later
    /// than the earliest pending deadline (a new request arms an earlier one;
    /// answers only remove deadlines), so before it nothing can be due and
    /// the queue need not be looked at. Every input asks this first.
    #[inline(always)]
    pub fn may_expire(&self, now: Millis) -> bool {
        self.armed.is_some_and(|a| now >= a)
    }

    /// Expires every request due by now, earliest first; the caller applies
    /// each default. Allocates only when something expires, which is rare.
    pub fn expire(&mut self, now: Millis) -> Vec<Expiry> {
        let mut due = Vec::new();
        if self.may_expire(now) {
            self.table.expire_due(now, &mut due);
        }
        due
    }

    /// The deadline timer fired (or the agent restarted): arm the next one.
    pub fn timer_fired(&mut self, ctx: &mut Ctx) {
        self.armed = None;
        if let Some(next) = self.table.next_deadline().filter(|d| !d.is_never()) {
            self.armed = Some(next);
            ctx.wake(next, Timer::Deadline);
        }
    }
}

/// The response view of a delivered protocol response, for the request table.
fn response_of(d: &Delivery) -> Option<Response> {
    let Message::Response { kind, request_id, approve, .. } = &d.envelope.message else { return None };
    let (request_id, kind, approve) = (*request_id, *kind, *approve);
    Some(Response {
        request_id,
        kind,
        approve,
        sender: d.sender,
        claimed_from: d.envelope.from,
        recipient: d.to,
        at: d.at,
    })
}
