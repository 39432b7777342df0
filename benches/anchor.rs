//! The explorer side by side with Stateright on the same work (issue 21):
//! a lead asks N identical teammates to shut down over an unordered network
//! that may lose any message any number of times; each teammate rejects the
//! first request and approves the second; the lead asks again at once when a
//! shutdown is rejected. Ours is the bundled scenario 41 (`count = N`),
//! explored with `--drop any`; Stateright's is the model below, written for
//! this bench with Stateright's own actor API. Both run on one thread, in
//! the same process, one after the other within each case.
//!
//! The two models are the same protocol, not the same state space: here a
//! request keeps its own deadline in virtual time and every request stays in
//! the lead's table, where Stateright's lead has one timer that may fire at
//! any moment and one entry per teammate that goes back to pending
//! (docs/explore.md, "The anchor"). Each case prints both sizes.
//!
//! Cases: N = 3 and 6 with symmetry (Stateright depth first, the only order
//! its symmetry supports; ours breadth first, its default, and depth first),
//! N = 4 without symmetry, each side in both orders.

use criterion::{criterion_group, criterion_main, Criterion};
use handshake::explore::{explore, Bounds, Budgets, Order};
use handshake::scenario::{load_str, Scenario};
use std::borrow::Cow;
use std::time::Duration;

#[path = "../tests/common/lossy.rs"]
mod lossy;

use stateright::actor::{model_timeout, Actor, ActorModel, Id, LossyNetwork, Network, Out};
use stateright::{Checker, Expectation, Model, Rewrite, RewritePlan};

// ------------------------------------------------- Stateright's side

#[derive(Clone, Debug, Eq, Hash, PartialEq, PartialOrd, Ord)]
enum Msg {
    /// Shut down, asked of the teammate it names.
    Ask(Id),
    /// The teammate's answer: approve or reject.
    Answer(Id, bool),
}

impl Rewrite<Id> for Msg {
    fn rewrite<S>(&self, plan: &RewritePlan<Id, S>) -> Self {
        match self {
            Msg::Ask(t) => Msg::Ask(t.rewrite(plan)),
            Msg::Answer(t, yes) => Msg::Answer(t.rewrite(plan), *yes),
        }
    }
}

#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq, PartialOrd, Ord)]
enum Status {
    Pending,
    Approved,
    Expired,
}

#[derive(Clone, Debug, Eq, Hash, PartialEq, PartialOrd, Ord)]
enum Deadline {
    Every,
}

#[derive(Clone, Debug, Eq, Hash, PartialEq, PartialOrd, Ord)]
enum State {
    /// The lead: each teammate's request, sorted (so a renaming reorders it).
    Lead(Vec<(Id, Status)>),
    /// A teammate: requests answered so far (at most 2 count), and whether it stopped.
    Teammate { answered: u8, stopped: bool },
}

impl Rewrite<Id> for State {
    fn rewrite<S>(&self, plan: &RewritePlan<Id, S>) -> Self {
        match self {
            State::Lead(rows) => {
                let mut rows: Vec<(Id, Status)> = rows.iter().map(|(t, s)| (t.rewrite(plan), *s)).collect();
                rows.sort();
                State::Lead(rows)
            }
            t => t.clone(),
        }
    }
}

#[derive(Clone)]
enum Agent {
    Lead { team: Vec<Id> },
    Teammate,
}

impl Actor for Agent {
    type Msg = Msg;
    type State = State;
    type Timer = Deadline;
    type Random = ();
    type Storage = ();

    fn on_start(&self, _id: Id, _storage: &Option<()>, o: &mut Out<Self>) -> State {
        match self {
            Agent::Lead { team } => {
                for &t in team {
                    o.send(t, Msg::Ask(t));
                }
                o.set_timer(Deadline::Every, model_timeout());
                State::Lead(team.iter().map(|&t| (t, Status::Pending)).collect())
            }
            Agent::Teammate => State::Teammate { answered: 0, stopped: false },
        }
    }

    fn on_msg(&self, _id: Id, state: &mut Cow<State>, src: Id, msg: Msg, o: &mut Out<Self>) {
        match (self, msg) {
            (Agent::Teammate, Msg::Ask(me)) => {
                if let State::Teammate { answered, stopped } = state.to_mut() {
                    if *stopped {
                        return;
                    }
                    *answered = (*answered + 1).min(2);
                    // Rejects the first request, approves every later one.
                    let approve = *answered == 2;
                    *stopped = approve;
                    o.send(src, Msg::Answer(me, approve));
                }
            }
            (Agent::Lead { .. }, Msg::Answer(t, approve)) => {
                let State::Lead(rows) = &**state else { return };
                if !rows.iter().any(|(r, s)| *r == t && *s == Status::Pending) {
                    return;
                }
                if approve {
                    if let State::Lead(rows) = state.to_mut() {
                        rows.iter_mut().filter(|(r, _)| *r == t).for_each(|row| row.1 = Status::Approved);
                    }
                } else {
                    // Rejected: asked again at once, the entry pending again.
                    o.send(t, Msg::Ask(t));
                }
            }
            _ => {}
        }
    }

    fn on_timeout(&self, _id: Id, state: &mut Cow<State>, _timer: &Deadline, _o: &mut Out<Self>) {
        if let State::Lead(rows) = state.to_mut() {
            rows.iter_mut().filter(|(_, s)| *s == Status::Pending).for_each(|row| row.1 = Status::Expired);
        }
    }
}

fn stateright_model(n: usize) -> ActorModel<Agent, (), ()> {
    let team: Vec<Id> = (1..=n).map(Id::from).collect();
    ActorModel::new((), ())
        .actor(Agent::Lead { team })
        .actors((0..n).map(|_| Agent::Teammate))
        .init_network(Network::new_unordered_nonduplicating([]))
        .lossy_network(LossyNetwork::Yes)
        .property(Expectation::Always, "approved implies stopped", |_, s| match &*s.actor_states[0] {
            State::Lead(rows) => rows.iter().all(|(t, st)| {
                *st != Status::Approved
                    || matches!(&*s.actor_states[usize::from(*t)], State::Teammate { stopped: true, .. })
            }),
            _ => true,
        })
}

/// (states, unique) of one whole Stateright search on one thread, depth
/// first (`dfs`) or breadth first. Its symmetry works depth first only.
fn stateright(n: usize, symmetry: bool, dfs: bool) -> (usize, usize) {
    let checker = stateright_model(n).checker().threads(1);
    fn counts(done: impl Checker<ActorModel<Agent, (), ()>>) -> (usize, usize) {
        assert!(done.discovery("approved implies stopped").is_none());
        (done.state_count(), done.unique_state_count())
    }
    match (symmetry, dfs) {
        (true, _) => counts(checker.symmetry().spawn_dfs().join()),
        (false, true) => counts(checker.spawn_dfs().join()),
        (false, false) => counts(checker.spawn_bfs().join()),
    }
}

// ------------------------------------------------- ours

/// Scenario 41 with `n` teammates, each asked once at 1 s.
fn ours_model(n: usize) -> Scenario {
    load_str("41-lossy-re-ask.toml", &lossy::lossy_re_ask(n)).expect("a valid scenario")
}

fn ours(scenario: &Scenario, symmetry: bool, order: Order) -> (u64, u64) {
    let any = Budgets { drop: Budgets::ANY, ..Budgets::default() };
    let bounds = Bounds { symmetry, max_states: 100_000_000, max_depth: 1_000, jobs: 1, order, ..Bounds::default() };
    let x = explore(scenario, any, bounds);
    assert!(x.stopped_by.is_none() && x.counterexample.is_none());
    (x.states, x.unique)
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("anchor_lossy_re_ask");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    for (n, symmetry) in [(3, true), (6, true), (4, false)] {
        let name = if symmetry { "sym" } else { "nosym" };
        let scenario = ours_model(n);
        for (order, o) in [(Order::Breadth, "bfs"), (Order::Depth, "dfs")] {
            let (s, u) = ours(&scenario, symmetry, order);
            eprintln!("N = {n} {name}: handshake {o} {s} states, {u} unique");
            g.bench_function(format!("{n}-teammates-{name}/handshake-{o}"), |b| {
                b.iter(|| ours(&scenario, symmetry, order))
            });
        }
        // Stateright's symmetry works depth first only; without it, both orders.
        for dfs in if symmetry { vec![true] } else { vec![false, true] } {
            let o = if dfs { "dfs" } else { "bfs" };
            let (rs, ru) = stateright(n, symmetry, dfs);
            eprintln!("N = {n} {name}: Stateright {o} {rs} states, {ru} unique");
            g.bench_function(format!("{n}-teammates-{name}/stateright-{o}"), |b| {
                b.iter(|| stateright(n, symmetry, dfs))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
