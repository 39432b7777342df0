//! The invariants a protocol brings of its own, beyond those every protocol
//! is held to: one witness per such protocol, in a file named after it.
//!
//! A protocol's spec names its invariants; its witness here checks them.
//! The watcher starts a protocol's witness at the first event of that
//! protocol (most runs never meet most protocols, and the explorer clones
//! the watcher at every transition), and feeds it every event from then on.

use super::{At, Book, Violation};
use crate::protocol::{Canon, Kind, MessageType};
use crate::trace::Event;

mod task;

/// Each protocol with invariants of its own, and how its witness starts:
/// one line per protocol (a unit test holds this to the specs).
const WITNESSES: &[(Kind, Start)] = &[(Kind::Task, || Box::<task::TaskHolders>::default())];

/// How a protocol's witness starts: fresh, as at the protocol's first event.
type Start = fn() -> Box<dyn Witness>;

/// The witness of `kind`'s own invariants, if it brings any.
fn witness_of(kind: Kind) -> Option<Box<dyn Witness>> {
    WITNESSES.iter().find(|(k, _)| *k == kind).map(|(_, start)| start())
}

/// What a protocol's witness does: judge each event against the state
/// before it, and hash what decides its future verdicts for the explorer
/// (which searches on several threads, hence `Send + Sync`).
pub(super) trait Witness: std::fmt::Debug + Send + Sync {
    fn observe(&mut self, book: &Book, at: &At, e: &Event, out: &mut Vec<Violation>);
    fn canon(&self, c: &mut Canon);
    /// Whether it keeps nothing a fresh one would not: then it hashes as
    /// if never started, so a state where a protocol was met and left no
    /// trace (a forgery ignored) folds with one where it was never met.
    fn is_idle(&self) -> bool;
    /// A copy, for a watcher cloned at a branch of the explorer's search.
    fn boxed(&self) -> Box<dyn Witness>;
}

// `Witnesses::met` keeps one bit per protocol.
const _: () = assert!(Kind::COUNT <= 32, "more protocols than Witnesses::met has bits");

/// The protocols' witnesses started so far, in protocol order.
#[derive(Debug, Default)]
pub(super) struct Witnesses {
    running: Vec<(Kind, Box<dyn Witness>)>,
    /// The protocols met so far, one bit each: a protocol's first event starts its witness.
    met: u32,
}

impl Clone for Witnesses {
    fn clone(&self) -> Witnesses {
        Witnesses { running: self.running.iter().map(|(k, w)| (*k, w.boxed())).collect(), met: self.met }
    }
}

/// The protocol an event is of, if it names one.
fn kind_of(e: &Event) -> Option<Kind> {
    match e {
        Event::Opened { kind, .. } | Event::Expired { kind, .. } => Some(*kind),
        Event::Send { message_type, .. } | Event::Deliver { message_type, .. } => match message_type {
            MessageType::Request(kind) | MessageType::Response(kind) => Some(*kind),
            _ => None,
        },
        Event::Verdict { response_kind, .. } => Some(*response_kind),
        _ => None,
    }
}

impl Witnesses {
    pub(super) fn observe(&mut self, book: &Book, at: &At, e: &Event, out: &mut Vec<Violation>) {
        if let Some(kind) = kind_of(e) {
            let bit = 1 << kind.index();
            if self.met & bit == 0 {
                self.met |= bit;
                if let Some(w) = witness_of(kind) {
                    // In protocol order, whatever order they were met in:
                    // the order of the hash and of one event's violations.
                    let k = self.running.partition_point(|(other, _)| *other < kind);
                    self.running.insert(k, (kind, w));
                }
            }
        }
        for (_, w) in &mut self.running {
            w.observe(book, at, e, out);
        }
    }

    /// Hashes the witnesses that keep something (see `Watch::canon`): an
    /// idle one decides what a fresh one would, and hashes as none.
    pub(super) fn canon(&self, c: &mut Canon) {
        for (kind, w) in self.running.iter().filter(|(_, w)| !w.is_idle()) {
            c.word(kind.index() as u64);
            w.canon(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::Invariant;

    #[test]
    fn a_protocol_that_names_invariants_of_its_own_has_a_witness_of_them() {
        for kind in Kind::ALL {
            let names = kind.spec().invariants.len();
            assert_eq!(witness_of(kind).is_some(), names > 0, "{kind}: {names} invariants of its own");
        }
    }

    #[test]
    fn every_invariant_has_a_name_of_its_own() {
        let all = Invariant::all();
        for i in &all {
            assert_eq!(Invariant::parse(i.name()), Some(*i));
        }
        let mut names: Vec<&str> = all.iter().map(|i| i.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len());
    }
}
