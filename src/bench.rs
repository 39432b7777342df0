//! Throughput measurements shared by `handshake bench` and the criterion
//! benches. Real time is measured here, outside the simulation: it times a
//! run, it never steers one.

pub mod sweep;

use crate::agent::lead::Load;
use crate::agent::{Answer, Answers, Input, TeammateSpec};
use crate::protocol::{Address, AgentId, Delivery, Envelope, Kind, Message, Millis, RequestId, Verdict};
use crate::team::run;
use crate::trace::Event;
use crate::world::{Latency, TeamSpec};
use actix::{Actor, Addr, AsyncContext, Context, Handler};
use rand::SeedableRng;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The shape of a load: `teammates × in_flight` requests outstanding until
/// `handshakes` have completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub teammates: u32,
    pub in_flight: u32,
    pub handshakes: u64,
}

#[derive(Clone, Copy, Debug)]
pub struct Measured {
    pub handshakes: u64,
    pub elapsed: Duration,
}

impl Measured {
    pub fn per_second(&self) -> f64 {
        self.handshakes as f64 / self.elapsed.as_secs_f64()
    }

    pub fn nanos_each(&self) -> f64 {
        self.elapsed.as_nanos() as f64 / self.handshakes.max(1) as f64
    }
}

/// The protocol whose handshakes a load makes: any of them. One the lead
/// asks (a shutdown, say) is answered no by every teammate, to stay as it
/// is for the next round; one a teammate asks (a plan) is answered no
/// by the lead, and asked again at once.
pub type Protocol = Kind;

/// The load of `protocol` in the shape asked for.
fn load_of(protocol: Protocol, shape: Shape) -> TeamSpec {
    if protocol.spec().asker.is_lead() {
        load_spec(protocol, shape)
    } else {
        plan_load_spec(shape)
    }
}

/// Teammates that each submit their share of `shape.handshakes` plans, one
/// at a time (`in_flight` does not apply: a teammate waits for its answer),
/// to a lead that rejects every plan: each is a complete handshake through
/// the send rules, the teammate's request table and plan gate, the lead's
/// review, the verdict and the deadline queue.
fn plan_load_spec(shape: Shape) -> TeamSpec {
    let n = u64::from(shape.teammates.max(1));
    // Two behaviours, shared: the remainder goes to the first teammates, one
    // more plan each.
    let with_share = |plan_load| {
        Arc::new(TeammateSpec {
            require_plan: true,
            plan: "benchmark: a plan to reject".into(),
            plan_load,
            ..TeammateSpec::default()
        })
    };
    let (more, fewer) = (with_share(shape.handshakes / n + 1), with_share(shape.handshakes / n));
    let teammates = (1..=n)
        .map(|i| (format!("t{i}"), Arc::clone(if i <= shape.handshakes % n { &more } else { &fewer })))
        .filter(|(_, t)| t.plan_load > 0)
        .collect();
    let mut spec = TeamSpec::new(teammates);
    spec.trace = false;
    spec.latency = Latency::Fixed(Millis::ZERO);
    spec.lead.on_plan = Answers::always(Answer::Reject);
    spec
}

/// Teammates that answer every request of `kind` (a shutdown, say) with a
/// no, so they stay as they are for the next round: each answer is still a
/// complete handshake through the send rules, the request table, the verdict
/// and the deadline queue.
fn load_spec(kind: Kind, shape: Shape) -> TeamSpec {
    let why = Some(crate::protocol::Text::from("benchmark: staying as I am for the next round"));
    let teammate = Arc::new(TeammateSpec::default().answering(kind, Answers::always(Answer::Reject), why));
    let teammates = (1..=shape.teammates).map(|i| (format!("t{i}"), Arc::clone(&teammate))).collect();
    let mut spec = TeamSpec::new(teammates);
    spec.trace = false;
    spec.latency = Latency::Fixed(Millis::ZERO);
    let words = kind.spec().request_words.required.then(|| "benchmark: words to say no to".into());
    spec.load = Some(Load {
        kind,
        words,
        teammates: (1..=shape.teammates).map(AgentId).collect(),
        per_teammate: shape.in_flight,
        total: shape.handshakes,
    });
    spec
}

/// Where the load's messages wait for their receiver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mailbox {
    /// The actor's mailbox (the figures in docs/performance.md's suite table).
    #[default]
    Memory,
    /// File inboxes: every message appended to its receiver's JSON Lines
    /// file and read back at the receiver's next poll.
    File,
}

/// The load, with the mailbox asked for. File inboxes are polled every
/// millisecond with free reads and the reference's drain: the cost measured
/// is the files' own (a line formatted, appended, scanned, parsed, truncated),
/// not a read cost the scenario would choose. A free read begins and ends in
/// the same instant, before any sender runs, so this drain loses nothing here.
pub fn spec_in(protocol: Protocol, shape: Shape, mailbox: Mailbox) -> TeamSpec {
    let mut spec = load_of(protocol, shape);
    if mailbox == Mailbox::File {
        spec.mailbox = crate::world::MailboxWorld::File(crate::world::FileMailbox {
            poll: Millis(1),
            cost: crate::inbox::ReadCost::FREE,
            ..crate::world::FileMailbox::default()
        });
    }
    spec
}

/// The full protocol: send rules, request table, verdicts, one deadline timer.
pub fn protocol(shape: Shape) -> Measured {
    protocol_in(shape, Mailbox::Memory)
}

/// The full protocol with the mailbox asked for.
pub fn protocol_in(shape: Shape, mailbox: Mailbox) -> Measured {
    protocol_of(Protocol::Shutdown, shape, mailbox)
}

/// Handshakes of `protocol`, with the mailbox asked for.
pub fn protocol_of(protocol: Protocol, shape: Shape, mailbox: Mailbox) -> Measured {
    let spec = spec_in(protocol, shape, mailbox);
    let t = Instant::now();
    let out = run(spec);
    Measured { handshakes: out.load_done, elapsed: t.elapsed() }
}

/// Per-handshake latency (request opened → verdict applied), in real time.
/// A separate pass: timing every handshake costs enough to skew throughput.
pub fn latencies(shape: Shape) -> Vec<Duration> {
    latencies_in(shape, Mailbox::Memory)
}

/// [`latencies`] with the mailbox asked for.
pub fn latencies_in(shape: Shape, mailbox: Mailbox) -> Vec<Duration> {
    latencies_of(Protocol::Shutdown, shape, mailbox)
}

/// [`latencies`] of `protocol`'s handshakes, with the mailbox asked for.
pub fn latencies_of(protocol: Protocol, shape: Shape, mailbox: Mailbox) -> Vec<Duration> {
    let mut spec = spec_in(protocol, shape, mailbox);
    let started: Rc<RefCell<HashMap<RequestId, Instant>>> = Rc::default();
    let samples: Rc<RefCell<Vec<Duration>>> = Rc::default();
    let (s2, l2) = (Rc::clone(&started), Rc::clone(&samples));
    spec.probe = Some(Box::new(move |e: &Event| match e {
        Event::Opened { id, .. } => {
            s2.borrow_mut().insert(*id, Instant::now());
        }
        Event::Verdict { request_id, verdict: Verdict::Applied { .. }, .. } => {
            if let Some(t) = s2.borrow_mut().remove(request_id) {
                l2.borrow_mut().push(t.elapsed());
            }
        }
        _ => {}
    }));
    run(spec);
    let mut v = samples.take();
    v.sort();
    v
}

/// Percentile of sorted samples.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

// ---- the baseline: bare actix ping-pong, same messages, no protocol ----

struct Pinger {
    pongers: Vec<Addr<Ponger>>,
    total: u64,
    remaining: u64,
    done: u64,
    finished: Option<tokio::sync::oneshot::Sender<u64>>,
}

struct Ponger {
    pinger: Addr<Pinger>,
    reason: crate::protocol::Text,
}

impl Actor for Pinger {
    type Context = Context<Self>;
    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.set_mailbox_capacity(usize::MAX >> 1);
    }
}

impl Actor for Ponger {
    type Context = Context<Self>;
    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.set_mailbox_capacity(usize::MAX >> 1);
    }
}

fn ping(to: u32, rng: &mut rand_chacha::ChaCha8Rng) -> Input {
    let message = Message::Request {
        kind: Kind::Shutdown,
        request_id: RequestId::draw(rng),
        words: None,
        deadline: Millis::NEVER,
    };
    let envelope = Envelope { from: AgentId::LEAD, to: Address::Agent(AgentId(to)), sent_at: Millis::ZERO, message };
    Input::Deliver(Delivery {
        seq: 0,
        envelope,
        sender: AgentId::LEAD,
        to: AgentId(to),
        at: Millis::ZERO,
        incarnation: 0,
    })
}

struct Start(u32);
impl actix::Message for Start {
    type Result = ();
}

impl Handler<Start> for Pinger {
    type Result = ();
    fn handle(&mut self, Start(per): Start, _: &mut Context<Self>) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
        for _ in 0..per {
            for (i, p) in self.pongers.iter().enumerate() {
                if self.remaining > 0 {
                    self.remaining -= 1;
                    p.do_send(ping(i as u32 + 1, &mut rng));
                }
            }
        }
    }
}

impl Handler<Input> for Ponger {
    type Result = ();
    fn handle(&mut self, input: Input, _: &mut Context<Self>) {
        if let Input::Deliver(d) = input {
            let request_id = d.envelope.message.request_id().unwrap_or(RequestId::from_random_bytes([0; 16]));
            let words = Some(self.reason.clone());
            let message = Message::Response { kind: Kind::Shutdown, request_id, approve: false, words };
            let envelope = Envelope { from: d.to, to: Address::Agent(AgentId::LEAD), sent_at: d.at, message };
            self.pinger.do_send(Input::Deliver(Delivery {
                seq: 0,
                envelope,
                sender: d.to,
                to: AgentId::LEAD,
                at: d.at,
                incarnation: 0,
            }));
        }
    }
}

impl Handler<Input> for Pinger {
    type Result = ();
    fn handle(&mut self, input: Input, _: &mut Context<Self>) {
        if let Input::Deliver(d) = input {
            self.done += 1;
            if self.remaining > 0 {
                self.remaining -= 1;
                let i = d.sender.0;
                let request_id = RequestId::from_random_bytes([self.done as u8; 16]);
                let message =
                    Message::Request { kind: Kind::Shutdown, request_id, words: None, deadline: Millis::NEVER };
                let envelope = Envelope { from: AgentId::LEAD, to: Address::Agent(d.sender), sent_at: d.at, message };
                self.pongers[i as usize - 1].do_send(Input::Deliver(Delivery {
                    seq: 0,
                    envelope,
                    sender: AgentId::LEAD,
                    to: d.sender,
                    at: d.at,
                    incarnation: 0,
                }));
            } else if self.done == self.total {
                if let Some(tx) = self.finished.take() {
                    let _ = tx.send(self.done);
                }
            }
        }
    }
}

/// Bare actix `do_send` ping-pong with the same envelopes and no protocol
/// logic, on the same current-thread runtime: the ceiling to compare with.
pub fn baseline(shape: Shape) -> Measured {
    let system = crate::team::sim::system();
    let t = Instant::now();
    let done = system.block_on(async move {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let total = shape.handshakes;
        let pinger = Pinger::create(|ctx| {
            let me = ctx.address();
            let pongers =
                (0..shape.teammates).map(|_| Ponger { pinger: me.clone(), reason: "busy".into() }.start()).collect();
            Pinger { pongers, total, remaining: total, done: 0, finished: Some(tx) }
        });
        pinger.do_send(Start(shape.in_flight));
        rx.await.unwrap_or(0)
    });
    Measured { handshakes: done, elapsed: t.elapsed() }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bundled scenario played with the log off and no latency (so that
    /// messages may go straight to the mailboxes), in the shell asked for,
    /// with the mailroom on or off: what it ended with, and every event a
    /// probe heard.
    fn play(s: &crate::scenario::Scenario, seed: u64, probe: bool, off: bool, plain: bool) -> String {
        crate::world::turn::lend_no_mailroom(off);
        let mut spec = s.team_spec(seed, None);
        spec.trace = false;
        spec.latency = crate::world::Latency::Fixed(crate::protocol::Millis::ZERO);
        let heard = Rc::new(RefCell::new(Vec::new()));
        if probe {
            let heard = Rc::clone(&heard);
            spec.probe = Some(Box::new(move |e: &crate::trace::Event| heard.borrow_mut().push(format!("{e:?}"))));
        }
        let o = if plain { crate::team::plain::run_plain(spec) } else { crate::team::sim::run(spec) };
        crate::world::turn::lend_no_mailroom(false);
        let heard = heard.borrow().join("\n");
        format!(
            "roster {:?}\nrequests {:?}\nfiles {:?}\nstop {:?} at {:?} load {}\nprobe:\n{heard}",
            o.roster, o.requests, o.files, o.stop, o.ended_at, o.load_done
        )
    }

    /// Found sound by a review of the mailroom (issue 45): every bundled
    /// scenario, in both shells, with and without a probe, ends alike with
    /// the mailroom as without it.
    #[test]
    fn a_run_with_the_mailroom_ends_as_one_without() {
        let before = crate::agent::DIRECT_SENDS.with(|c| c.get());
        let mut differ = Vec::new();
        for s in &crate::bench::sweep::bundled() {
            for seed in 1..=3 {
                for (probe, plain) in [(false, true), (true, true), (false, false), (true, false)] {
                    if play(s, seed, probe, false, plain) != play(s, seed, probe, true, plain) {
                        differ.push(format!("{} seed {seed} probe {probe} plain {plain}", s.path));
                    }
                }
            }
        }
        let direct = crate::agent::DIRECT_SENDS.with(|c| c.get()) - before;
        assert!(direct > 1000, "only {direct} sends went through a mailroom: the comparison compares little");
        assert!(differ.is_empty(), "{} differ: {differ:#?}", differ.len());
    }

    #[test]
    fn a_load_carried_by_the_mailroom_ends_as_one_carried_by_commands() {
        // With the log off a benchmark's sends go straight to the mailboxes
        // (`agent::Mailroom`); with it on, through the command buffer and
        // the world's route. Both must end the same way.
        let shapes = [
            Shape { teammates: 1, in_flight: 1, handshakes: 50 },
            Shape { teammates: 7, in_flight: 3, handshakes: 100 },
            Shape { teammates: 70, in_flight: 1, handshakes: 500 },
        ];
        for protocol in [Protocol::Shutdown, Protocol::Plan, Protocol::Task] {
            for shape in shapes {
                let shape = if protocol == Protocol::Plan { Shape { in_flight: 1, ..shape } } else { shape };
                let direct = run(spec_in(protocol, shape, Mailbox::Memory));
                let mut logged = spec_in(protocol, shape, Mailbox::Memory);
                logged.trace = true;
                let logged = run(logged);
                let what = format!("{protocol:?} {shape:?}");
                assert_eq!(direct.load_done, shape.handshakes, "{what}");
                // Not the end time: a run's end is its last logged event's
                // time, and with the log off nothing is logged.
                assert_eq!(
                    (direct.load_done, &direct.roster, &direct.stop),
                    (logged.load_done, &logged.roster, &logged.stop),
                    "{what}"
                );
                assert!(direct.events.is_empty() && !logged.events.is_empty(), "{what}");
            }
        }
    }
}
