//! What reading an inbox costs its reader: a fixed price per read plus a price
//! per KiB the read goes through. An inbox that is never pruned makes every
//! read slower, which is how a file mailbox degrades in practice: the reader
//! that re-reads the whole file on each poll spends its time on old lines.
//!
//! The simulator charges the cost to the reader as virtual time: while it
//! reads, it answers nothing, so a big enough inbox makes answers late.

use crate::protocol::Millis;

/// The price of a read, a scenario parameter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadCost {
    /// Paid by every read, even of an empty inbox.
    pub per_read: Millis,
    /// Paid per 1,024 bytes the read goes through, in proportion (half a KiB
    /// costs half, rounded down to the millisecond).
    pub per_kib: Millis,
}

impl ReadCost {
    /// Free reads: what a memory mailbox costs, and the default.
    pub const FREE: ReadCost = ReadCost { per_read: Millis::ZERO, per_kib: Millis::ZERO };

    /// The virtual time a read of `scanned` bytes takes. Never decreases as
    /// `scanned` grows; saturates instead of overflowing.
    pub fn of(&self, scanned: u64) -> Millis {
        let size = u128::from(scanned) * u128::from(self.per_kib.0) / 1024;
        let size = u64::try_from(size).unwrap_or(u64::MAX);
        Millis(self.per_read.0.saturating_add(size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_grows_with_size_and_never_shrinks() {
        let cost = ReadCost { per_read: Millis(2), per_kib: Millis(3) };
        assert_eq!(cost.of(0), Millis(2));
        assert_eq!(cost.of(1024), Millis(5));
        assert_eq!(cost.of(512), Millis(3));
        let mut last = Millis::ZERO;
        for size in (0..100_000).step_by(37) {
            let c = cost.of(size);
            assert!(c >= last, "{size}");
            last = c;
        }
        assert!(cost.of(1 << 30) > cost.of(1 << 20));
        assert_eq!(ReadCost { per_read: Millis(1), per_kib: Millis(u64::MAX) }.of(u64::MAX), Millis(u64::MAX));
        assert_eq!(ReadCost::FREE.of(u64::MAX), Millis::ZERO);
    }
}
