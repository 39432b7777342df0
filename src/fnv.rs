//! FNV-1a, 64 bits: the one hash the program writes down or keys a seed
//! with (a fuzz salt, a trace's hash, a scenario file's contents in a
//! sweep's report). Unlike the standard hasher it is the same on every
//! machine, build and Rust version, and on short keys it costs a few
//! instructions a byte. Not for keys an adversary picks: nothing here
//! resists collisions made on purpose.

use std::hash::Hasher;

const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// A scenario file's text as a sweep's report and a schedule record it:
/// FNV-1a, 16 hex digits.
pub fn contents_hash(text: &str) -> String {
    format!("{:016x}", fnv1a(text.as_bytes()))
}

/// The hash of `bytes`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h = Fnv1a::default();
    h.write(bytes);
    h.finish()
}

/// The hasher, for maps keyed by short names of the user's own and for
/// text written in pieces (`io::Write`).
#[derive(Clone, Copy, Debug)]
pub struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(OFFSET)
    }
}

impl Hasher for Fnv1a {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(PRIME);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl std::io::Write for Fnv1a {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        Hasher::write(self, bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_gives_the_published_values() {
        // From the FNV authors' test vectors.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn written_in_pieces_it_hashes_as_whole() {
        let mut h = Fnv1a::default();
        std::io::Write::write_all(&mut h, b"foo").unwrap();
        std::io::Write::write_all(&mut h, b"bar").unwrap();
        assert_eq!(h.finish(), fnv1a(b"foobar"));
    }
}
