//! The id that correlates a response with its request, and the hasher of
//! the tables keyed by it. Its own module: the explorer's hasher (`canon`)
//! and the messages both need it, and neither needs the other for it.

use serde::{Deserialize, Serialize};
use std::fmt;
use uuid::Uuid;

/// Correlates a response with its request. Drawn from the run's seeded RNG,
/// so the same seed gives the same ids.
// Aligned to 8: a `Uuid` alone is bytes, aligned to 1, and the compiler put
// it two bytes into a response (after the tag and `approve`). Its two 8-byte
// halves, read to hash and compare it, then each straddled two of the 16-byte
// stores that copied the message, and waited for both (perf: the largest
// stall in judging a response). Aligned, it sits at 8 and nothing grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
#[repr(align(8))]
pub struct RequestId(pub Uuid);

impl std::hash::Hash for RequestId {
    /// One word, not sixteen bytes: the id is random, so folding its halves
    /// loses nothing a hash table needs.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let (hi, lo) = self.0.as_u64_pair();
        state.write_u64(hi ^ lo.rotate_left(29));
    }
}

impl RequestId {
    /// Builds a version-4 id from 16 random bytes supplied by the caller's RNG.
    pub fn from_random_bytes(bytes: [u8; 16]) -> RequestId {
        RequestId(uuid::Builder::from_random_bytes(bytes).into_uuid())
    }

    #[inline]
    pub fn draw(rng: &mut impl rand::RngCore) -> RequestId {
        // Two words rather than `fill_bytes`: the same bytes from the same
        // stream (a block RNG hands out its 32-bit words in order either way),
        // without the generic byte-copying path.
        let lo = rng.next_u64();
        let hi = rng.next_u64();
        // The version (4, high nibble of byte 6) and the variant (RFC 4122,
        // top bits of byte 8) set on the words, as `from_random_bytes` sets
        // them on bytes: the id is then written out whole, not patched byte
        // by byte in memory just before it is copied (a stalled copy).
        let lo = (lo & !(0xF0 << 48)) | (0x40 << 48);
        let hi = (hi & !0xC0) | 0x80;
        RequestId(Uuid::from_bytes((u128::from(lo) | (u128::from(hi) << 64)).to_le_bytes()))
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A fast hasher for request ids. Ids are random (uuid v4 from the seeded
/// RNG), so folding their words is as good as SipHash here at a fraction of
/// the cost; a simulator has no hash-flooding adversary to fear.
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }
}

pub type IdHashBuilder = std::hash::BuildHasherDefault<IdHasher>;
