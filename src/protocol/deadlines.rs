//! One deadline queue per requester: a min-heap of (deadline, request). The
//! runtime arms a single timer for the earliest entry instead of one timer per
//! request, which actix would re-poll on every wake-up (0.13 M/s at 10,000 in
//! flight, measured). Entries for requests that already ended are skipped
//! lazily when they reach the top.

use super::message::RequestId;
use super::time::Millis;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Debug, Default, Clone)]
pub struct DeadlineQueue {
    /// `seq` keeps equal deadlines in the order they were armed, so expiries
    /// at the same millisecond come out in a reproducible order.
    heap: BinaryHeap<Reverse<(Millis, u64, RequestId)>>,
    seq: u64,
}

impl DeadlineQueue {
    pub fn arm(&mut self, deadline: Millis, id: RequestId) {
        self.seq += 1;
        self.heap.push(Reverse((deadline, self.seq, id)));
    }

    /// The earliest entry, stale or not.
    pub fn peek(&self) -> Option<(Millis, RequestId)> {
        self.heap.peek().map(|Reverse((t, _, id))| (*t, *id))
    }

    pub fn pop(&mut self) -> Option<(Millis, RequestId)> {
        self.heap.pop().map(|Reverse((t, _, id))| (t, id))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> RequestId {
        RequestId::from_random_bytes([n; 16])
    }

    #[test]
    fn pops_earliest_first_and_ties_in_arming_order() {
        let mut q = DeadlineQueue::default();
        q.arm(Millis(30), id(1));
        q.arm(Millis(10), id(2));
        q.arm(Millis(30), id(3));
        q.arm(Millis(10), id(4));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(Millis(10), id(2)), (Millis(10), id(4)), (Millis(30), id(1)), (Millis(30), id(3))]);
    }
}
