//! Request ids (issue 20, point 4): each agent draws from its own stream,
//! derived from the seed and the agent alone (`agent::agent_stream`), and the
//! stream outlives the agent's crashes. The explorer derives the same streams
//! (tests/conformance.rs compares its ids with the actors' as they are).

mod common;

use common::run_toml;
use handshake::agent::agent_stream;
use handshake::explore::{Action, Budgets, Model};
use handshake::protocol::{AgentId, RequestId};
use handshake::scenario::load_str;
use handshake::team::Outcome;
use handshake::trace::Event;

/// Alice plans twice, once in each life (a crash and restart between). The
/// lead asks her to shut down in each of her lives. Latency is drawn, so the network draws too.
const TWO_LIVES: &str = r#"
name = "two-lives"
about = "Alice plans, crashes, restarts and plans again; the lead asks twice."
[policy]
latency = "1ms..20ms"
[[teammate]]
name = "alice"
on_shutdown = "reject"
reject_reason = "busy"
work = [{ write = "a.rs", steps = 40, step_time = "500ms" }]
[lead]
on_plan = "reject"
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
[[step]]
at = "1500ms"
do = "submit_plan"
from = "alice"
to = "lead"
plan = "add a column"
[[step]]
at = "4s"
do = "submit_plan"
from = "alice"
to = "lead"
plan = "add an index"
[[step]]
at = "5s"
do = "shutdown"
to = "alice"
[[fault]]
kind = "crash"
agent = "alice"
at = "2s"
restart = "1s"
"#;

/// The ids `agent` opened, in order.
fn opened_by(o: &Outcome, agent: AgentId) -> Vec<RequestId> {
    o.events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Opened { id, requester, .. } if *requester == agent => Some(*id),
            _ => None,
        })
        .collect()
}

fn first_draws(seed: u64, agent: AgentId, n: usize) -> Vec<RequestId> {
    let mut rng = agent_stream(seed, agent);
    (0..n).map(|_| RequestId::draw(&mut rng)).collect()
}

#[test]
fn each_agent_draws_its_ids_from_its_own_stream_across_a_restart() {
    let alice = AgentId(1);
    for seed in [1, 2, 42] {
        let (_, o) = run_toml(TWO_LIVES, seed);
        assert!(o.events.iter().any(|e| matches!(e.event, Event::Restart { .. })), "alice restarts");
        let (lead_ids, alice_ids) = (opened_by(&o, AgentId::LEAD), opened_by(&o, alice));
        assert_eq!(lead_ids.len(), 2, "the lead asks twice");
        assert_eq!(alice_ids.len(), 2, "alice plans in each life");
        // Her second life goes on with her stream: it never draws the first
        // life's id again, and neither agent's ids depend on the other's.
        assert_eq!(alice_ids, first_draws(seed, alice, 2), "seed {seed}");
        assert_eq!(lead_ids, first_draws(seed, AgentId::LEAD, 2), "seed {seed}");
    }
}

/// `explore FILE` draws the ids `run FILE` draws: the explorer's streams
/// derive from the scenario's own seed.
#[test]
fn the_explorer_draws_with_the_scenarios_seed() {
    let file = "name = \"seeded\"\nabout = \"x\"\nseed = 9\n[[teammate]]\nname = \"alice\"\n[[step]]\nat = \"1s\"\n\
                do = \"shutdown\"\nto = \"alice\"\n";
    let s = load_str("seeded.toml", file).expect("valid");
    assert_eq!(s.default_seed(), 9);
    let model = Model::new(&s, Budgets::default(), false);
    let mut state = model.start();
    let mut log = Vec::new();
    // Start alice and the lead, then the lead's scripted shutdown.
    while !log.iter().any(|e: &handshake::trace::Stamped| matches!(e.event, Event::Opened { .. })) {
        let (_, agent) = state.next_timer().expect("a timer");
        let _ = model.apply(&mut state, &Action::Fire { owner: agent }, Some(&mut log));
    }
    let id = log.iter().find_map(|e| match &e.event {
        Event::Opened { id, .. } => Some(*id),
        _ => None,
    });
    assert_eq!(id, Some(first_draws(9, AgentId::LEAD, 1)[0]));
}
