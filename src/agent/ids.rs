//! Where request ids come from, in every shell.
//!
//! Each agent draws its request ids from a stream of its own, derived from
//! the run's seed and the agent alone. An id then depends only on the seed
//! and on how many ids that agent drew before it: not on which agent ran
//! first, nor on how many latencies the network drew. The actor runtime and
//! the explorer derive the streams the same way, so for the same scenario
//! and seed they name every request alike, and their logs compare equal.
//!
//! The derivation is ChaCha8 keyed by `seed_from_u64(seed)` (rand_core 0.6
//! expands the `u64` into the 32-byte key with PCG32, a documented,
//! value-stable algorithm), with the agent on its own ChaCha stream (the
//! 64-bit nonce): stream `1 + agent index`. Stream 0 of the same key is the
//! network's (latency draws, a fault's odds), so no agent's ids are ever the
//! network's numbers. All of it is plain integer arithmetic: the same on
//! every platform.

use crate::protocol::{AgentId, RequestId};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The stream agent `agent` draws its request ids from in a run with `seed`.
pub fn agent_stream(seed: u64, agent: AgentId) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(1 + u64::from(agent.0));
    rng
}

/// The network's stream in a run with `seed` (latency draws, fault odds):
/// stream 0 of the key the agents' streams share, distinct from all of them.
pub fn network_stream(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// The request-id streams of a team, as a shell keeps them: one lane per
/// agent, its stream made on its first draw, so that teammates who never ask
/// anything (all of the bench's 100,000) cost one word each rather than a
/// 300-byte generator. A stream belongs to the agent, not to one of its
/// lives: it survives crashes and restarts, as the request table does, so a
/// restarted agent never draws an id it already used.
///
/// An agent's `Ctx` lends it the whole set (one pointer, as a single team
/// generator was), and its lane is looked up only when the agent draws: an
/// input that opens no request pays nothing for the streams.
#[derive(Clone, Default)]
pub struct IdStreams {
    seed: u64,
    /// Where a stream made now starts, in ChaCha words: 0 in the runtime,
    /// which keeps every stream; the explorer keeps only how far each agent
    /// has drawn, and remakes a stream there when the agent draws again.
    from: u64,
    /// By agent. The lead's too, though it draws for nearly every request:
    /// kept apart and unboxed it cost more, not less (docs/architecture.md).
    lanes: Vec<Option<Box<ChaCha8Rng>>>,
}

impl IdStreams {
    /// The streams of a team of `team` agents in a run with `seed`.
    pub fn new(seed: u64, team: usize) -> IdStreams {
        IdStreams { seed, from: 0, lanes: vec![None; team] }
    }

    /// Agent `agent`'s next request id.
    // Always inlined: it is the lead's work for every request it opens.
    #[inline(always)]
    pub fn draw(&mut self, agent: AgentId) -> RequestId {
        let (seed, from) = (self.seed, self.from);
        let rng = self.lanes[agent.index()].get_or_insert_with(|| make(seed, agent, from));
        RequestId::draw(&mut **rng)
    }

    /// A copy of `agent`'s stream as it stands (`None`: not drawn from yet),
    /// to put back with [`IdStreams::set_lane`]: a turn draws from its own
    /// agent's stream only.
    pub fn lane(&self, agent: AgentId) -> Option<Box<ChaCha8Rng>> {
        self.lanes.get(agent.index()).cloned().flatten()
    }

    pub fn set_lane(&mut self, agent: AgentId, lane: Option<Box<ChaCha8Rng>>) {
        if let Some(slot) = self.lanes.get_mut(agent.index()) {
            *slot = lane;
        }
    }

    /// Before `agent` steps in a run with `seed`, having drawn `words` of
    /// its stream so far: the explorer's way in (see `take_words`).
    pub fn resume(&mut self, seed: u64, agent: AgentId, words: u64) {
        self.seed = seed;
        self.from = words;
        if self.lanes.len() <= agent.index() {
            self.lanes.resize_with(agent.index() + 1, || None);
        }
        self.lanes[agent.index()] = None;
    }

    /// After `agent` stepped: how far into its stream it has drawn, if it
    /// drew, and its lane emptied for the next `resume`.
    pub fn take_words(&mut self, agent: AgentId) -> Option<u64> {
        let rng = self.lanes.get_mut(agent.index())?.take()?;
        // An invariant: 2^64 words is 2^66 bytes of ids, never drawn in a run.
        Some(u64::try_from(rng.get_word_pos()).expect("an RNG position within 64 bits"))
    }
}

// Out of line: once per agent that ever asks, never on the hot path.
#[cold]
#[inline(never)]
fn make(seed: u64, agent: AgentId, from: u64) -> Box<ChaCha8Rng> {
    let mut rng = agent_stream(seed, agent);
    if from != 0 {
        rng.set_word_pos(u128::from(from));
    }
    Box::new(rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngCore;

    fn first_ids(seed: u64, agent: u32, n: usize) -> Vec<String> {
        let mut ids = IdStreams::new(seed, agent as usize + 1);
        (0..n).map(|_| ids.draw(AgentId(agent)).to_string()).collect()
    }

    /// The derivation is part of what a trace says: a change to it changes
    /// every request id in every log, the docs' excerpts and golden files.
    /// Pinned here so that such a change is made on purpose.
    #[test]
    fn the_derivation_is_stable() {
        // The lead's first two ids with seed 42, alice's first, the lead's with seed 0.
        assert_eq!(
            first_ids(42, 0, 2),
            ["90e8c98d-61a8-4fb7-9d35-60a5d2a2ba2a", "97b20a12-608b-4f7b-8e52-1978b7e6a4d8"]
        );
        assert_eq!(first_ids(42, 1, 1), ["ff3fe714-9016-412f-aa53-914f5d215b4b"]);
        assert_eq!(first_ids(0, 0, 1), ["138fd4c8-0f7b-4ac1-a690-556f6238f5bc"]);
    }

    #[test]
    fn each_agent_and_each_seed_has_its_own_stream() {
        let lead = first_ids(7, 0, 50);
        let alice = first_ids(7, 1, 50);
        let bob = first_ids(7, 2, 50);
        let other_seed = first_ids(8, 0, 50);
        for (a, b) in [(&lead, &alice), (&alice, &bob), (&lead, &bob), (&lead, &other_seed)] {
            assert!(a.iter().all(|id| !b.contains(id)), "two streams share an id");
        }
    }

    #[test]
    fn the_network_draws_from_a_stream_no_agent_uses() {
        let mut net = network_stream(7);
        let words: Vec<u32> = (0..64).map(|_| net.next_u32()).collect();
        for agent in [0, 1, 2, 1000] {
            let mut a = agent_stream(7, AgentId(agent));
            let theirs: Vec<u32> = (0..64).map(|_| a.next_u32()).collect();
            assert_ne!(words, theirs, "agent {agent} draws the network's numbers");
        }
    }

    /// The explorer keeps only a word position between steps; remade there,
    /// the stream goes on with the ids the kept stream would have drawn.
    #[test]
    fn a_stream_resumed_where_it_stopped_goes_on_alike() {
        let (seed, agent) = (3, AgentId(4));
        let whole = first_ids(seed, 4, 5);
        let mut ids = IdStreams::default();
        ids.resume(seed, agent, 0);
        assert_eq!(ids.take_words(agent), None, "no draw, nothing to keep");
        ids.resume(seed, agent, 0);
        let mut drawn: Vec<String> = (0..2).map(|_| ids.draw(agent).to_string()).collect();
        let words = ids.take_words(agent).expect("it drew");
        ids.resume(seed, agent, words);
        drawn.extend((0..3).map(|_| ids.draw(agent).to_string()));
        assert_eq!(drawn, whole);
    }
}
