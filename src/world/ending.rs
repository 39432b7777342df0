//! How a run ends: one rule, the world's, that every shell follows, so that
//! the actors and the explorer judge the same end alike.
//!
//! A shell's driver stops for its own reason (nothing left to do, the time
//! limit, a guard, the end of a schedule); then [`World::begin_ending`]
//! turns that into how the run ends, and [`World::finish_ending`] settles
//! what only the agents' request tables could tell.

use super::{Shell, Stop, World};
use crate::protocol::Millis;

/// When a run must stop even with work left: its `end`, else its `cap`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    pub end: Option<Millis>,
    pub cap: Millis,
}

impl Limit {
    /// The time the run stops at.
    pub fn at(self) -> Millis {
        self.end.map_or(self.cap, |e| e.min(self.cap))
    }

    /// Which of the two it stops at.
    pub fn stop(self) -> Stop {
        if self.end.is_some_and(|e| e <= self.cap) {
            Stop::EndTime
        } else {
            Stop::Cap
        }
    }
}

/// A run's end half decided: waiting for the agents' tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ending {
    pub stop: Stop,
    /// Stopped at its limit with only deadline timers queued: settled in
    /// fact, unless a live agent's request is pending behind them.
    spare_timers: bool,
}

impl<S: Shell> World<S> {
    /// How the run ends, now that its driver stopped as `stop`.
    ///
    /// A team that settled only because it waits on itself (a wait-for
    /// cycle, no deadline to break it) would wait forever: the clock runs on
    /// to the limit, as a real team's would, and the run ends there. A run
    /// that settled settles its accounts ([`World::settle`]). `following`: the
    /// run takes a schedule's choices, and ends where the schedule ends.
    pub fn begin_ending(&mut self, stop: Stop, following: bool) -> Ending {
        // Deadline timers are never cancelled, so an answered request's
        // timer stays queued: if nothing else is left, the run has in fact
        // settled (known once the tables are in).
        let spare_timers = !following && matches!(stop, Stop::Cap | Stop::EndTime) && self.only_timers_left();
        let mut stop = stop;
        if stop == Stop::Settled && !self.sim.waits.cycles().is_empty() {
            self.advance_to(self.run.limit.at());
            stop = self.run.limit.stop();
        }
        if stop == Stop::Settled {
            self.settle();
        }
        Ending { stop, spare_timers }
    }

    /// How the run ended, given whether an agent still running has a
    /// request pending (its timer keeps the run alive).
    pub fn finish_ending(&mut self, ending: Ending, live_pending: bool) -> Stop {
        if ending.spare_timers && !live_pending {
            self.settle();
            return Stop::Settled;
        }
        ending.stop
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_stops_at_the_earlier_of_its_end_and_its_cap() {
        let cap = Millis(3_600_000);
        assert_eq!((Limit { end: None, cap }.at(), Limit { end: None, cap }.stop()), (cap, Stop::Cap));
        let end = Limit { end: Some(Millis(5_000)), cap };
        assert_eq!((end.at(), end.stop()), (Millis(5_000), Stop::EndTime));
        let past = Limit { end: Some(Millis(7_200_000)), cap };
        assert_eq!((past.at(), past.stop()), (cap, Stop::Cap));
    }
}
