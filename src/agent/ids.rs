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

/// An agent's stream as a shell keeps it: made on its first draw, so that
/// teammates who never ask anything (all of the bench's 100,000) cost one
/// word each rather than a 300-byte generator. It belongs to the agent, not
/// to one of its lives: it survives crashes and restarts, as the request
/// table does, so a restarted agent never draws an id it already used.
pub type Stream = Option<Box<ChaCha8Rng>>;

/// What an agent draws its ids through while it handles one input.
pub struct Ids<'a> {
    seed: u64,
    agent: AgentId,
    /// Where a stream made here starts, in ChaCha words: a shell that keeps
    /// only how far the agent has drawn (the explorer) remakes it there.
    from: u64,
    stream: &'a mut Stream,
}

impl<'a> Ids<'a> {
    /// The ids of `agent`, from the stream the shell keeps for it.
    #[inline(always)]
    pub fn new(seed: u64, agent: AgentId, stream: &'a mut Stream) -> Ids<'a> {
        Ids { seed, agent, from: 0, stream }
    }

    /// The ids of `agent`, which has drawn up to word `from` of its stream;
    /// `stream` is `None` and is made there if the agent draws.
    pub fn resume(seed: u64, agent: AgentId, from: u64, stream: &'a mut Stream) -> Ids<'a> {
        Ids { seed, agent, from, stream }
    }

    /// The agent's next request id.
    #[inline]
    pub fn draw(&mut self) -> RequestId {
        let (seed, agent, from) = (self.seed, self.agent, self.from);
        let rng = self.stream.get_or_insert_with(|| make(seed, agent, from));
        RequestId::draw(&mut **rng)
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

/// How far into its stream an agent has drawn, in ChaCha words (0 if it
/// never drew): all the explorer keeps of a stream between steps.
pub fn words_drawn(stream: &Stream) -> u64 {
    // An invariant: 2^64 words is 2^66 bytes of ids, never drawn in a run.
    stream.as_ref().map_or(0, |rng| u64::try_from(rng.get_word_pos()).expect("an RNG position within 64 bits"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngCore;

    fn first_ids(seed: u64, agent: u32, n: usize) -> Vec<String> {
        let mut stream = None;
        let mut ids = Ids::new(seed, AgentId(agent), &mut stream);
        (0..n).map(|_| ids.draw().to_string()).collect()
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
        let whole = first_ids(3, 4, 5);
        let mut kept = None;
        let mut ids = Ids::new(3, AgentId(4), &mut kept);
        let mut drawn: Vec<String> = (0..2).map(|_| ids.draw().to_string()).collect();
        let from = words_drawn(&kept);
        let mut remade = None;
        let mut ids = Ids::resume(3, AgentId(4), from, &mut remade);
        drawn.extend((0..3).map(|_| ids.draw().to_string()));
        assert_eq!(drawn, whole);
        assert_eq!(words_drawn(&None), 0);
    }
}
