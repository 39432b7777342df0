//! TEMPORARY: the oracle fed one event at a time by rereading the log, until
//! `oracle::Watch` lands. Hashes nothing (so it merges states it should not).
use crate::protocol::Millis;
use crate::protocol::{Canon, Policy};
use crate::scenario::oracle::{check_log, Log, Violation};
use crate::scenario::Invariant;
use crate::team::Stop;
use crate::trace::{Names, Stamped};

#[derive(Clone, Debug)]
pub struct Watch {
    events: Vec<Stamped>,
    require_plan: Vec<bool>,
}

impl Watch {
    pub fn new(require_plan: &[bool]) -> Watch {
        Watch { events: Vec::new(), require_plan: require_plan.to_vec() }
    }
    pub fn observe(&mut self, policy: &Policy, names: &Names, i: usize, e: &Stamped, out: &mut Vec<Violation>) {
        self.events.push(e.clone());
        let log = Log { names, events: &self.events, ended_at: e.t, stop: Stop::EndTime };
        out.extend(check_log(&log, policy, &self.require_plan).into_iter().filter(|v| {
            v.event == Some(i) && !matches!(v.invariant, Invariant::SingleTerminal | Invariant::NoSilentLoss)
        }));
    }
    pub fn finish(&self, policy: &Policy, names: &Names, ended_at: Millis, stop: Stop, out: &mut Vec<Violation>) {
        let log = Log { names, events: &self.events, ended_at, stop };
        out.extend(check_log(&log, policy, &self.require_plan));
    }
    pub fn canon(&self, _c: &mut Canon) {}
}
