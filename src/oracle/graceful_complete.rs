//! graceful-complete: a graceful shutdown leaves no partial write.
//!
//! Observes each file step (which files each agent has started and not
//! finished) and each shutdown, which must find none of its agent's.
//! Checks nothing at the end: a kill or a crash may leave a file half
//! written; only a graceful stop promises not to.

use super::{At, Book, Invariant, Violation};
use crate::protocol::{AgentId, Canon, Text};
use crate::trace::{Event, RosterStatus};

/// What it keeps: the files left half-written.
#[derive(Clone, Debug, Default)]
pub(super) struct GracefulComplete {
    /// By agent, then path, the order it reports them in. A map: a team of
    /// thousands each halfway through a file made a sorted list move the
    /// rest at each file started and finished. Each agent's files (a few)
    /// are a list sorted by path, found by the step's path as it is: keyed
    /// by agent and path together, each step made the path a shared text
    /// to look it up, an allocation per step.
    half_written: std::collections::BTreeMap<AgentId, Vec<HalfWritten>>,
}

/// A file an agent has started but not finished writing. Finished files are
/// dropped: only a half-written one can break graceful-complete, and a later
/// step brings a file back. The path is shared text, so cloning a watcher
/// does not copy it.
#[derive(Clone, Debug)]
struct HalfWritten {
    agent: AgentId,
    path: Text,
    done: u32,
    total: u32,
}

impl GracefulComplete {
    pub(super) fn observe(&mut self, _book: &Book, at: &At, e: &Event, out: &mut Vec<Violation>) {
        match e {
            Event::FileStep { agent, path, done, total } => {
                let by_path = |f: &HalfWritten| (*f.path).cmp(&**path);
                if done < total {
                    let files = self.half_written.entry(*agent).or_default();
                    match files.binary_search_by(by_path) {
                        Ok(k) => (files[k].done, files[k].total) = (*done, *total),
                        Err(k) => files
                            .insert(k, HalfWritten { agent: *agent, path: path.clone(), done: *done, total: *total }),
                    }
                } else if let Some(files) = self.half_written.get_mut(agent) {
                    if let Ok(k) = files.binary_search_by(by_path) {
                        files.remove(k);
                        if files.is_empty() {
                            self.half_written.remove(agent);
                        }
                    }
                }
            }
            // A new process: what the old one left half-written (a kill or a
            // crash did) is not the new one's to finish, unless it writes it
            // again, which makes it its own.
            Event::Respawn { agent } => {
                self.half_written.remove(agent);
            }
            Event::Status { agent, status: RosterStatus::Shutdown } => {
                for f in self.half_written.get(agent).into_iter().flatten() {
                    let detail = format!(
                        "{} shut down gracefully with {} half-written ({}/{})",
                        at.who(*agent),
                        f.path,
                        f.done,
                        f.total
                    );
                    out.push(at.violation(Invariant::GracefulComplete, detail));
                }
            }
            _ => {}
        }
    }

    /// Hashes the half-written files.
    pub(super) fn canon(&self, c: &mut Canon) {
        let mut files: Vec<(u32, &HalfWritten)> =
            self.half_written.values().flatten().map(|f| (c.agent_index(f.agent), f)).collect();
        files.sort_by(|a, b| (a.0, &*a.1.path).cmp(&(b.0, &*b.1.path)));
        c.word(files.len() as u64);
        for (agent, f) in files {
            c.word(agent as u64 | (f.done as u64) << 32);
            c.text(&f.path);
            c.word(f.total as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use crate::oracle::Invariant;
    use crate::trace::RosterStatus;

    #[test]
    fn shutting_down_with_a_file_half_written_breaks_graceful_complete() {
        let shut_down_after = |steps: u32| {
            let mut log: Vec<(u64, _)> = vec![(0, write_starts())];
            log.extend((1..=steps).map(|k| (k as u64 * 500, write_step(k))));
            log.push((3_000, status(ALICE, RosterStatus::Shutdown)));
            violations(log, false)
        };
        assert_eq!(shut_down_after(4), vec![], "the file was finished (4/4)");
        let v = shut_down_after(2);
        assert_eq!(v.iter().map(|v| v.invariant).collect::<Vec<_>>(), vec![Invariant::GracefulComplete]);
        assert!(v[0].detail.contains("alice shut down gracefully with a.rs half-written (2/4)"), "{}", v[0].detail);
    }
}
