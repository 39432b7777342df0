//! The requests a teammate puts aside while it waits on a plan of its own.

use crate::protocol::Delivery;
use std::collections::VecDeque;

/// Requests set aside, oldest first. Empty, it is one word and holds no
/// memory: every teammate waiting on a plan has one, and few ever put
/// anything in it, while a teammate's size is paid 100,000 times over in a
/// large team.
// Boxed on purpose: the point is one word where a queue is four.
#[allow(clippy::box_collection)]
#[derive(Clone, Debug, Default)]
pub struct SetAside(Option<Box<VecDeque<Delivery>>>);

impl SetAside {
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |q| q.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn iter(&self) -> impl Iterator<Item = &Delivery> {
        self.0.iter().flat_map(|q| q.iter())
    }

    pub fn push_back(&mut self, d: Delivery) {
        self.0.get_or_insert_with(Box::default).push_back(d);
    }

    pub fn pop_front(&mut self) -> Option<Delivery> {
        self.0.as_mut()?.pop_front()
    }

    pub fn clear(&mut self) {
        self.0 = None;
    }
}

impl PartialEq for SetAside {
    /// By what is set aside: an emptied queue equals one never made.
    fn eq(&self, other: &SetAside) -> bool {
        self.iter().eq(other.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Address, AgentId, Envelope, Message, Millis};

    fn delivery(seq: u64) -> Delivery {
        let message = Message::Message { text: "hi".into() };
        let envelope = Envelope { from: AgentId::LEAD, to: Address::Agent(AgentId(1)), sent_at: Millis::ZERO, message };
        Delivery { seq, envelope, sender: AgentId::LEAD, to: AgentId(1), at: Millis::ZERO, incarnation: 0 }
    }

    #[test]
    fn first_in_first_out_and_an_emptied_queue_equals_a_new_one() {
        let mut q = SetAside::default();
        assert!(q.is_empty());
        q.push_back(delivery(1));
        q.push_back(delivery(2));
        assert_eq!(q.len(), 2);
        assert_ne!(q, SetAside::default());
        assert_eq!(q.pop_front().map(|d| d.seq), Some(1));
        assert_eq!(q.iter().map(|d| d.seq).collect::<Vec<_>>(), vec![2]);
        assert_eq!(q.pop_front().map(|d| d.seq), Some(2));
        assert_eq!(q.pop_front(), None);
        assert_eq!(q, SetAside::default());
        q.push_back(delivery(3));
        q.clear();
        assert!(q.is_empty());
    }

    #[test]
    fn it_is_one_word() {
        assert_eq!(std::mem::size_of::<SetAside>(), std::mem::size_of::<usize>());
    }
}
