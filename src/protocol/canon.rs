//! A state's fingerprint up to renaming, for the explorer: two states that
//! differ only in which identical teammate is which (symmetry), or in the
//! random values of their request ids, hash the same.
//!
//! Every part of a state hashes itself into a [`Canon`], naming agents and
//! request ids only through [`Canon::agent`] and [`Canon::id`]. `agent` maps
//! an agent through the permutation chosen for this state; `id` numbers ids
//! in the order the walk first meets them. Ids are only ever compared for
//! equality, so their values carry no behaviour, only which ones are equal.
//!
//! Sound whatever permutation is chosen: the hash is the hash of the state
//! renamed, and a renamed state of a symmetric team behaves as the original
//! renamed. Choosing the permutation well only decides how many states merge.

use super::names::AgentId;
use super::request_id::RequestId;
use super::time::Millis;
use smallvec::SmallVec;

/// A fingerprint in progress.
pub struct Canon<'a> {
    h: u64,
    /// New index of each agent (identity when empty).
    perm: &'a [u32],
    /// The ids met so far, numbered by position. Inline: a fingerprint
    /// walk meets a handful, and the explorer makes millions of walks.
    ids: SmallVec<[RequestId; 16]>,
    /// Old index of each agent by new index, when the walk was given it
    /// (see [`Canon::with_inverse`]); made on demand otherwise.
    inverse: &'a [u32],
    /// Whether a message in flight hashes when it was sent and when the
    /// network meant it to arrive (see `Delivery::canon_timed`).
    flight_times: bool,
}

/// A part of a simulated state, hashing itself into a fingerprint. The
/// world's state is declared with `world::state`'s `simulated_state!`, which
/// hashes every field through this trait, so a field added there is in the
/// fingerprint by being declared. A type implements it once, here or beside
/// the state: agents through [`Canon::agent`] (or [`Canon::in_new_order`]
/// for what is kept one per agent), ids through [`Canon::id`], what is
/// unordered as a set or a multiset.
pub trait Fingerprint {
    fn fingerprint(&self, c: &mut Canon);
}

impl Fingerprint for Millis {
    #[inline]
    fn fingerprint(&self, c: &mut Canon) {
        c.millis(*self);
    }
}

impl<T: Fingerprint + ?Sized> Fingerprint for std::sync::Arc<T> {
    #[inline]
    fn fingerprint(&self, c: &mut Canon) {
        T::fingerprint(self, c);
    }
}

impl<T: Fingerprint + ?Sized> Fingerprint for Box<T> {
    #[inline]
    fn fingerprint(&self, c: &mut Canon) {
        T::fingerprint(self, c);
    }
}

impl<T: Fingerprint> Fingerprint for Option<T> {
    #[inline]
    fn fingerprint(&self, c: &mut Canon) {
        match self {
            Some(x) => {
                c.word(1);
                x.fingerprint(c);
            }
            None => c.word(0),
        }
    }
}

/// Agents' indices in a permutation's order (see [`Canon::in_new_order`]):
/// without one, counted, with nothing built.
pub enum NewOrder<'a> {
    Same(std::ops::Range<usize>),
    Given(std::slice::Iter<'a, u32>),
    Permuted(smallvec::IntoIter<[u32; 16]>),
}

impl Iterator for NewOrder<'_> {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        match self {
            NewOrder::Same(r) => r.next(),
            NewOrder::Given(g) => g.next().map(|&i| i as usize),
            NewOrder::Permuted(p) => p.next().map(|i| i as usize),
        }
    }
}

/// The inverse of a permutation (`perm[old] = new`): `inverse[new] = old`.
pub fn inverse_of(perm: &[u32]) -> SmallVec<[u32; 16]> {
    let mut inverse: SmallVec<[u32; 16]> = SmallVec::new();
    inverse.extend(std::iter::repeat_n(0, perm.len()));
    for (old, &new) in perm.iter().enumerate() {
        inverse[new as usize] = old as u32;
    }
    inverse
}

const K0: u64 = 0xa076_1d64_78bd_642f;
const K1: u64 = 0xe703_7ed1_a0b4_28db;

/// wyhash's folded multiply: every input bit reaches every output bit, in
/// one multiply, which is what makes 64-bit fingerprints of ten million
/// states unlikely to collide (about 3 in a million).
#[inline(always)]
fn mix(a: u64, b: u64) -> u64 {
    let r = (a as u128).wrapping_mul(b as u128);
    (r as u64) ^ ((r >> 64) as u64)
}

impl<'a> Canon<'a> {
    /// A walk that renames agents by `perm` (`perm[old] = new`; empty for none).
    pub fn new(perm: &'a [u32]) -> Canon<'a> {
        Canon { h: K0, perm, inverse: &[], ids: SmallVec::new(), flight_times: true }
    }

    /// A walk of its own with this one's renaming (a part hashed apart, to
    /// be combined in an order that does not depend on where it was kept).
    pub fn fresh(&self) -> Canon<'a> {
        Canon { h: K0, perm: self.perm, inverse: self.inverse, ids: SmallVec::new(), flight_times: self.flight_times }
    }

    /// The same walk, given the permutation's inverse (`inverse[new] =
    /// old`) so that what is kept one per agent is not reordered each time.
    pub fn with_inverse(mut self, inverse: &'a [u32]) -> Canon<'a> {
        debug_assert_eq!(inverse.len(), self.perm.len());
        self.inverse = inverse;
        self
    }

    /// The same walk, saying whether messages in flight hash their times.
    pub fn timing_flight(mut self, times: bool) -> Canon<'a> {
        self.flight_times = times;
        self
    }

    pub fn flight_times(&self) -> bool {
        self.flight_times
    }

    /// The indices of `n` agents in the order the permutation puts them:
    /// the order in which what is kept one per agent is hashed.
    #[inline]
    pub fn in_new_order(&self, n: usize) -> NewOrder<'a> {
        if self.perm.is_empty() {
            return NewOrder::Same(0..n);
        }
        if self.inverse.len() == n {
            return NewOrder::Given(self.inverse.iter());
        }
        debug_assert_eq!(self.perm.len(), n, "one permutation entry per agent");
        NewOrder::Permuted(inverse_of(self.perm).into_iter())
    }

    #[inline(always)]
    pub fn word(&mut self, v: u64) {
        self.h = mix(self.h ^ v, K1);
    }

    /// An agent, under the permutation.
    #[inline]
    pub fn agent(&mut self, a: AgentId) {
        let n = self.agent_index(a);
        self.word(n as u64 | 0xa9 << 32);
    }

    /// Where the permutation puts `a`.
    #[inline]
    pub fn agent_index(&self, a: AgentId) -> u32 {
        self.perm.get(a.index()).copied().unwrap_or(a.0)
    }

    /// A request id, as the order in which the walk first met it.
    #[inline]
    pub fn id(&mut self, id: RequestId) {
        let n = self.number(id);
        self.word(n as u64 | 0x1d << 32);
    }

    /// The id's number, giving it the next one if it is new.
    pub fn number(&mut self, id: RequestId) -> u32 {
        match self.ids.iter().position(|x| *x == id) {
            Some(n) => n as u32,
            None => {
                self.ids.push(id);
                (self.ids.len() - 1) as u32
            }
        }
    }

    /// The id's number if the walk has met it, without numbering it.
    pub fn known(&self, id: RequestId) -> Option<u32> {
        self.ids.iter().position(|x| *x == id).map(|n| n as u32)
    }

    #[inline]
    pub fn millis(&mut self, m: Millis) {
        self.word(m.0);
    }

    pub fn text(&mut self, s: &str) {
        self.word(s.len() as u64);
        for chunk in s.as_bytes().chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.word(u64::from_le_bytes(w));
        }
    }

    pub fn opt_text(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                self.word(1);
                self.text(s);
            }
            None => self.word(0),
        }
    }

    pub fn finish(&self) -> u64 {
        mix(self.h, K0 ^ K1)
    }
}

/// Plain values (counts, statuses, flags) hash through the standard trait;
/// agents and ids never should, or they would escape the renaming.
impl std::hash::Hasher for Canon<'_> {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.word(u64::from_le_bytes(w));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.word(i as u64);
    }

    fn write_u32(&mut self, i: u32) {
        self.word(i as u64);
    }

    fn write_u64(&mut self, i: u64) {
        self.word(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.word(i as u64);
    }

    fn finish(&self) -> u64 {
        Canon::finish(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> RequestId {
        RequestId::from_random_bytes([n; 16])
    }

    #[test]
    fn ids_hash_by_the_order_they_are_met_not_by_value() {
        let walk = |a: RequestId, b: RequestId| {
            let mut c = Canon::new(&[]);
            c.id(a);
            c.id(b);
            c.id(a);
            c.finish()
        };
        assert_eq!(walk(id(1), id(2)), walk(id(7), id(9)));
        // Which ids are equal is what counts.
        let mut c = Canon::new(&[]);
        c.id(id(1));
        c.id(id(2));
        c.id(id(2));
        assert_ne!(walk(id(1), id(2)), c.finish());
    }

    #[test]
    fn agents_hash_through_the_permutation() {
        let walk = |perm: &[u32], a: u32| {
            let mut c = Canon::new(perm);
            c.agent(AgentId(a));
            c.finish()
        };
        assert_eq!(walk(&[0, 2, 1], 1), walk(&[], 2));
        assert_ne!(walk(&[0, 2, 1], 1), walk(&[], 1));
    }

    #[test]
    fn texts_of_different_lengths_differ() {
        let walk = |s: &str| {
            let mut c = Canon::new(&[]);
            c.text(s);
            c.finish()
        };
        assert_ne!(walk("ab"), walk("ab\0"));
        assert_ne!(walk(""), walk("\0"));
    }
}
