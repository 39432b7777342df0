//! Exploring by hand (`explore FILE --serve`): the world a path of choices
//! leads to, told as a page shows it. A path is the index of the choice
//! taken at each step among the choices enabled there, in the order the
//! explorer lists them, so a path written in a URL leads to the same state
//! whenever the same file is read with the same budgets.
//!
//! Pure: the explorer's model steps the world; this module only walks it
//! and describes where the walk stands (the choices in words, the path, the
//! agents, each invariant's status). The server is the command line's.

use super::{Action, Budgets, Model, State, Subject};
use crate::oracle::{check_log, Invariant, Log};
use crate::protocol::Millis;
use crate::trace::{Names, Stamped};
use crate::world::{Choice, Stop};
use serde_json::{json, Value};

/// States a search of risks makes between two looks at memory: a look
/// costs about what a few states do, and a state of a big team holds some
/// kilobytes, so a search passes its bound by little.
pub const LOOK_EVERY: usize = 64;

/// A walk may be this long at most: a URL is a person's, not a search's.
pub const MAX_STEPS: usize = 2_000;

/// A scenario to walk by hand.
pub struct ByHand {
    model: Model,
    names: Vec<String>,
    policy: crate::protocol::Policy,
    require_plan: Vec<bool>,
    title: String,
    budgets: Budgets,
}

/// What the checker knows of one choice: whether some schedule through it
/// breaks an invariant, and the shortest it found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Risk {
    /// The invariant broken first (or "a deadlock"), and the path that
    /// breaks it, from the state the choice is taken in: the choice first.
    pub broken: Option<(String, Vec<usize>)>,
    /// What stopped the search before it had seen every state reachable
    /// through the choice and found nothing; `None` when it found something
    /// or saw them all (within the budgets).
    pub stopped_by: Option<Bound>,
}

impl Risk {
    /// Every state reachable through the choice was searched (within the
    /// budgets), or a violation found: nothing found means nothing can break.
    pub fn complete(&self) -> bool {
        self.stopped_by.is_none()
    }
}

/// What a search of risks stops at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// Its share of the states it may look at.
    States,
    /// The memory it may bring the process to (`room()` said no).
    Memory,
}

/// Where a path leads.
pub struct Walk {
    state: State,
    log: Vec<Stamped>,
    /// Each step taken: its choice in words and when it happened.
    taken: Vec<(String, Millis)>,
    /// The events logged before each step (the first step's start is 0).
    starts: Vec<usize>,
    enabled: Vec<Action>,
    /// Each step as the world's choice, which the actors can follow.
    choices: Vec<Choice>,
    /// The team's names and the labels of the requests opened so far,
    /// learned as the walk goes (once each, not once a step).
    names: Names,
}

impl ByHand {
    pub fn new(scenario: &dyn Subject, title: &str, budgets: Budgets) -> ByHand {
        let model = Model::playing_file_faults(scenario, budgets, false);
        let names = model.names().to_vec();
        let policy = scenario.team().policy.clone();
        ByHand { model, names, policy, require_plan: scenario.require_plan(), title: title.to_string(), budgets }
    }

    /// What may go wrong beside the file's own faults (the command line's budgets).
    pub fn budgets(&self) -> Budgets {
        self.budgets
    }

    /// The state `path` leads to, or why it leads nowhere (an index with no
    /// choice behind it: the file or the budgets changed since it was written).
    pub fn walk(&self, path: &[usize]) -> Result<Walk, String> {
        if path.len() > MAX_STEPS {
            return Err(format!("a path of {} steps is longer than the {MAX_STEPS} a page walks", path.len()));
        }
        let mut state = self.model.start();
        let mut log = self.model.start_log().to_vec();
        let mut enabled = Vec::new();
        let mut taken = Vec::with_capacity(path.len());
        let mut starts = Vec::with_capacity(path.len());
        let mut choices = Vec::with_capacity(path.len());
        let mut names = Names { agents: self.names.clone(), ..Names::default() };
        names.learn_labels(&log);
        for (step, &i) in path.iter().enumerate() {
            self.model.actions(&state, &mut enabled);
            let Some(a) = enabled.get(i).cloned() else {
                let there = match enabled.len() {
                    0 => "nothing more can happen there".to_string(),
                    1 => "only 1 is enabled there".to_string(),
                    n => format!("only {n} are enabled there"),
                };
                return Err(format!(
                    "step {} takes choice {i}, but {there} (was the file or a budget changed since this path was \
                     taken?)",
                    step + 1
                ));
            };
            let words = self.words(&state, &a, &names);
            starts.push(log.len());
            choices.push(self.model.choice_of(&state, &a));
            self.model.apply(&mut state, &a, Some(&mut log));
            names.learn_labels(&log[starts[step]..]);
            // When it happened: a fired event moves the clock to its time.
            taken.push((words, state.now()));
        }
        self.model.actions(&state, &mut enabled);
        Ok(Walk { state, log, taken, starts, enabled, choices, names })
    }

    /// For each choice enabled where `path` leads, what a breadth-first
    /// search from it finds within `budget` states in all (shared evenly).
    pub fn risks(&self, path: &[usize], budget: usize) -> Result<Vec<Risk>, String> {
        self.risks_within(path, budget, &|| true)
    }

    /// [`risks`](Self::risks), asking `room()` every [`LOOK_EVERY`] states
    /// whether there is memory for more: a search told no stops there, as
    /// one out of states does (its risks are not complete).
    pub fn risks_within(&self, path: &[usize], budget: usize, room: &dyn Fn() -> bool) -> Result<Vec<Risk>, String> {
        let w = self.walk(path)?;
        let each = (budget / w.enabled.len().max(1)).max(1);
        Ok((0..w.enabled.len()).map(|i| self.risk_through(&w.state, &w.enabled, i, each, room)).collect())
    }

    /// The shortest schedule through choice `i` of `enabled` (at `s`) that
    /// breaks something, searched breadth first over at most `budget` states.
    fn risk_through(&self, s: &State, enabled: &[Action], i: usize, budget: usize, room: &dyn Fn() -> bool) -> Risk {
        use std::collections::{HashSet, VecDeque};
        let what = |f: &super::Finding| match f {
            super::Finding::Broken(v) => v.invariant.name().to_string(),
            super::Finding::Deadlock(_) => "a deadlock".to_string(),
        };
        let mut first = s.clone();
        if let Some(f) = self.model.apply(&mut first, &enabled[i], None) {
            return Risk { broken: Some((what(&f), vec![i])), stopped_by: None };
        }
        // Sized for the whole budget at once: memory is touched only as
        // states come, and never doubles in one step between two looks.
        let mut seen = HashSet::with_capacity(budget + 1);
        seen.insert(self.model.fingerprint(&first));
        let mut frontier = VecDeque::with_capacity(budget + 1);
        frontier.push_back((first, vec![i]));
        if !room() {
            return Risk { broken: None, stopped_by: Some(Bound::Memory) };
        }
        let mut actions = Vec::new();
        while let Some((state, path)) = frontier.pop_front() {
            self.model.actions(&state, &mut actions);
            if actions.is_empty() {
                if let Some(f) = self.model.at_end(&state) {
                    return Risk { broken: Some((what(&f), path)), stopped_by: None };
                }
                continue;
            }
            for (k, a) in actions.iter().enumerate() {
                if seen.len() >= budget {
                    return Risk { broken: None, stopped_by: Some(Bound::States) };
                }
                if seen.len() % LOOK_EVERY == 0 && !room() {
                    return Risk { broken: None, stopped_by: Some(Bound::Memory) };
                }
                let mut next = state.clone();
                let mut longer = path.clone();
                longer.push(k);
                if let Some(f) = self.model.apply(&mut next, a, None) {
                    return Risk { broken: Some((what(&f), longer)), stopped_by: None };
                }
                if seen.insert(self.model.fingerprint(&next)) {
                    frontier.push_back((next, longer));
                }
            }
        }
        Risk { broken: None, stopped_by: None }
    }

    /// The same choices as `schedule` (another world's path), taken here as
    /// far as they can be: the path they are here, and the step (from 0)
    /// where this world parts from them, if it does (a choice that is not
    /// enabled here: a message not sent, an event not due).
    pub fn follow(&self, schedule: &[Choice]) -> (Vec<usize>, Option<usize>) {
        let mut state = self.model.start();
        let mut enabled = Vec::new();
        let mut path = Vec::with_capacity(schedule.len());
        for (step, c) in schedule.iter().enumerate() {
            self.model.actions(&state, &mut enabled);
            let Some(k) = enabled.iter().position(|a| self.model.choice_of(&state, a) == *c) else {
                return (path, Some(step));
            };
            path.push(k);
            self.model.apply(&mut state, &enabled[k], None);
        }
        (path, None)
    }

    /// The schedule `path` is, which the actors follow (`run --schedule`):
    /// what the stepping page of the path so far is drawn from.
    pub fn schedule(&self, path: &[usize]) -> Result<crate::world::Schedule, String> {
        let w = self.walk(path)?;
        // A path taken by hand is judged by the invariants, as the page judges it.
        Ok(crate::world::Schedule {
            seed: self.model.seed(),
            file_faults: true,
            expectations: false,
            file: None,
            choices: w.choices,
        })
    }

    /// A choice in words: a message by its type and request, not its number.
    fn words(&self, s: &State, a: &Action, labels: &Names) -> String {
        let name = |id: &crate::protocol::AgentId| self.names.get(id.index()).map_or("?", String::as_str);
        let message = |place: usize| {
            s.flight().get(place).map_or_else(
                || "a message".to_string(),
                |d| format!("{} to {}", super::Moved::of(d).words(labels), name(&d.to)),
            )
        };
        match a {
            Choice::Deliver { msg } => format!("deliver {}", message(*msg)),
            Choice::Drop { msg } => format!("drop {}", message(*msg)),
            Choice::Duplicate { msg } => format!("duplicate {}", message(*msg)),
            Choice::Fire { owner } => self.event_words(s, *owner),
            Choice::Crash { agent, restart: true } => format!("crash {} (it may restart)", name(agent)),
            Choice::Crash { agent, restart: false } => format!("crash {} for good", name(agent)),
            Choice::Restart { agent } => format!("restart {}", name(agent)),
            Choice::Inject { from, to, message } => {
                let what = super::forged_words(message, labels);
                format!("the adversary sends {what} to {}, claiming to be {}", name(to), name(from))
            }
            Choice::Wait { .. } => "let the clock move on".to_string(),
        }
    }

    /// What firing `owner`'s next event does, in words.
    fn event_words(&self, s: &State, owner: crate::protocol::AgentId) -> String {
        let who = self.names.get(owner.index()).map_or("?", String::as_str);
        let Some((at, due)) = s.world().first_event_of(owner) else { return format!("{who}'s next event") };
        format!("{} (at {at})", super::Fires::in_state(due, s).words(who))
    }

    /// Where `path` stands, as the page shows it.
    pub fn view(&self, path: &[usize]) -> Result<Value, String> {
        let w = self.walk(path)?;
        let names = &w.names;
        let choices: Vec<Value> = w
            .enabled
            .iter()
            .enumerate()
            .map(|(i, a)| json!({ "index": i, "words": self.words(&w.state, a, names) }))
            .collect();
        let steps: Vec<Value> = w
            .taken
            .iter()
            .enumerate()
            .map(|(i, (words, at))| json!({ "index": path[i], "words": words, "at": at.to_string() }))
            .collect();
        let events: Vec<String> = w.log.iter().map(|e| e.describe(names)).collect();
        let roster = w.state.roster();
        let agents: Vec<Value> = roster
            .iter()
            .enumerate()
            .map(|(i, status)| json!({ "name": self.names[i], "status": status.as_str() }))
            .collect();
        Ok(json!({
            "scenario": self.title,
            "now": w.state.now().to_string(),
            "path": steps,
            "choices": choices,
            "ended": w.enabled.is_empty(),
            "invariants": self.standings(&w),
            "events": events,
            "agents": agents,
        }))
    }

    /// Each invariant where the walk stands: it holds, it broke at the last
    /// step, or it broke earlier on the path.
    fn standings(&self, w: &Walk) -> Vec<Value> {
        let log = Log { names: &w.names, events: &w.log, ended_at: w.state.now(), stop: Stop::ScheduleEnd };
        let found = check_log(&log, &self.policy, &self.require_plan);
        let last_step_from = w.starts.last().copied();
        Invariant::all()
            .into_iter()
            .map(|i| {
                let broken: Vec<_> = found.iter().filter(|v| v.invariant == i).collect();
                let status = match broken.first() {
                    None => "holds",
                    Some(v) if v.event.zip(last_step_from).is_some_and(|(e, from)| e >= from) => "broken here",
                    Some(_) => "broken earlier",
                };
                let detail = broken.first().map(|v| v.detail.clone());
                json!({ "name": i.name(), "status": status, "detail": detail })
            })
            .collect()
    }
}

/// A path as a URL writes it: indices joined by dots (`0.2.1`); empty for
/// the start.
pub fn parse_path(text: &str) -> Result<Vec<usize>, String> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let parts: Vec<&str> = text.split('.').collect();
    if parts.len() > MAX_STEPS {
        return Err(format!("a path of {} steps is longer than the {MAX_STEPS} a page walks", parts.len()));
    }
    parts
        .iter()
        .map(|p| p.parse::<usize>().map_err(|_| format!("{p:?} in the path is not a choice's number")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_reads_back_from_its_url_form_and_bad_ones_say_why() {
        assert_eq!(parse_path(""), Ok(vec![]));
        assert_eq!(parse_path("0.2.1"), Ok(vec![0, 2, 1]));
        assert!(parse_path("0.x").unwrap_err().contains("\"x\""));
        assert!(parse_path(&vec!["0"; MAX_STEPS + 1].join(".")).is_err());
    }
}

#[cfg(test)]
mod send_check {
    fn sync<T: Sync + Send>() {}
    #[test]
    fn a_walk_can_be_searched_from_another_thread() {
        sync::<super::ByHand>();
    }
}
