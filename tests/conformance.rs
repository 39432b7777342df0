//! The actors and the explorer agree (issue 11): the explorer's state machine
//! (`explore::Model`) and the actor runtime (`team::run`) run the same agent
//! logic under two different shells. If they ever differ, one of the two is
//! wrong. So every bundled scenario the explorer can express is run by the
//! actors for many seeds, and the actor run's trace is replayed step by step
//! through the explorer's transitions:
//!
//! * every input the runtime handled becomes one explorer action, chosen from
//!   the events themselves:
//!   - `deliver {seq}`, or a `drop {seq}` for a recipient that had crashed,
//!     been killed or stopped → `Deliver(in_flight(seq))`, after a `Wait` to
//!     the delivery's time (latency: the message arrived between timers);
//!   - anything else that starts a step (a scripted step, a start, a work
//!     step, a deadline's expiry, taking up a restart) → `Fire(agent)` for
//!     the agent whose timer, due exactly then, makes that event (the
//!     actors take two agents' same-millisecond timers in either order);
//!   - a timer due before the next event the actors logged was handled by
//!     the runtime and said nothing: `Fire`, which must say nothing either;
//!   - `forge` (with the `send` after it) → `Inject` of the scenario's forged
//!     message, quoting the id the actors' forgery quoted;
//!   - `crash` → `Crash` (final when the crash schedules no restart),
//!     `restart` → `Restart`;
//!   - the network's notes at send time, right after the `send` they are
//!     about: a link-fault `drop {cause: drop}` → `Drop`, a `fault
//!     duplicate` → `Duplicate`, each taken right after the step that sent
//!     the message; a `fault delay` is latency, which the explorer plays as
//!     the `Wait` before the delivery, so it has no action of its own.
//! * every action must be enabled (`Model::enabled`), and the events the
//!   explorer logs for it must equal the actors' events for that step: same
//!   kinds, agents, message numbers, times, statuses, words, request ids.
//!   Both shells draw each agent's ids from the same stream, derived from
//!   the seed and the agent (`agent::ids`, issue 20 point 4), so the ids
//!   are compared as they are, like every other field.
//! * at the end, timers due before the run's limit are fired (they must say
//!   nothing), and the end states must be equal: roster, every request
//!   (ids included), the files.
//!
//! One thing in the actors' log has no counterpart in the explorer by
//! design, and is the only thing not compared: the runtime's own narration
//! (`note` events the world writes, not the agents): "step skipped: alice is
//! shutdown", "the kill default finds alice already shutdown: nothing to
//! kill", ... The explorer says nothing where the runtime says these; notes
//! the agents record are compared. (A crash's `restart_at` is compared
//! as "some" or "none": the explorer's says a restart may follow, with the
//! crash's own time, since it decides later when.)
//!
//! The oracle agrees too: the explorer's watcher, fed the replayed path,
//! finds a violation exactly when the oracle finds one in the actors' run.
//!
//! The bundled scenarios the explorer cannot express, skipped (and the test
//! fails if this list changes without being edited here):
//! * 03-stalled-teammate-killed: a stall (the explorer has no stalled inbox);
//! * 10-wrong-sender-ignored: a stall;
//! * 15-replay-ignored: a replay (the network sends a captured message again
//!   under a new number, from its original sender; `Inject` sends from the
//!   adversary and logs a `forge`);
//! * 20-partition-healed: a partition (held messages, a heal);
//! * 32 to 38: file inboxes (`mailbox = "file"`): the explorer does not model
//!   files, polls or reads in progress, and refuses them.
//!
//! Every bundled scenario checked agrees on every seed tried. Three small
//! scenarios at the end of this file did not, when this test was written:
//! each showed a schedule the actors run and the explorer could not reach
//! (same-millisecond timers of two agents, a restart taken up after another
//! agent's step, a final crash). The explorer was changed for each; they
//! stay as regression tests.

mod common;

use handshake::explore::{Action, Budgets, Finding, Model, State};
use handshake::oracle::{self, Invariant};
use handshake::protocol::{AgentId, Message, Millis, RequestId};
use handshake::scenario::{load_file, load_str, Scenario};
use handshake::team::{run, LinkEffect, Outcome, Scheduled, Stop};
use handshake::trace::{Cause, Event, Names, Stamped};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;

/// Seeds each checked scenario is run with (the explorer draws its ids as
/// the actors do with the same seed). With the default fixed latency a seed
/// only changes the request ids, and a run costs a few milliseconds.
const SEEDS: std::ops::Range<u64> = 0..50;

/// Scenario 21 (100 workers, latency drawn from 1..20 ms) is the one whose
/// schedule changes with the seed, and the costly one: 800 events a seed,
/// and the oracle shim the explorer feeds at this commit rereads its whole
/// log at every event (0.35 s a seed in a debug build). 20 seeds.
const HEAVY: &[(&str, u64)] = &[("21-whole-team-shutdown", 20)];

/// The scenarios the explorer cannot express, and why (see the top).
const SKIPPED: &[&str] = &[
    "03-stalled-teammate-killed",
    "10-wrong-sender-ignored",
    "15-replay-ignored",
    "20-partition-healed",
    "32-leftover-shutdown-kills-respawn",
    "33-leftover-shutdown-ignored",
    "34-drain-truncate-loses-request",
    "35-drain-offset-loses-none",
    "36-torn-write-skipped",
    "37-inbox-growth-misses-deadline",
    "38-inbox-pruned-meets-deadline",
];

/// At least this many bundled scenarios are checked.
const MIN_CHECKED: usize = 15;

/// Why the explorer cannot express this scenario, if it cannot.
fn inexpressible(s: &Scenario) -> Option<String> {
    let team = &s.team;
    if team.mailbox.is_some() {
        return Some("file inboxes: the explorer does not model files, polls or reads in progress".into());
    }
    if !team.partitions.is_empty() {
        return Some("a partition: the explorer has no held link and no heal".into());
    }
    if team.load.is_some() {
        return Some("a load generator".into());
    }
    for (_, f) in &team.timed {
        match f {
            Scheduled::Stall { .. } => return Some("a stall: the explorer has no stalled inbox".into()),
            Scheduled::Replay { .. } => {
                return Some(
                    "a replay: the network sends a captured message again under a new number from its original \
                     sender; the explorer's Inject sends from the adversary"
                        .into(),
                )
            }
            _ => {}
        }
    }
    if team.link_faults.iter().any(|f| f.effect == LinkEffect::Reorder) {
        return Some("a reorder fault: the explorer has no held link".into());
    }
    None
}

/// What a replay did, for the summary.
#[derive(Debug, Default)]
struct Summary {
    steps: usize,
    events: usize,
    /// Runtime narration left out of the comparison.
    narration: usize,
    /// Delay notes, played as the explorer's `Wait` before the delivery.
    delays: usize,
}

/// Runtime narration: notes the world writes (not the agents), where the
/// explorer says nothing.
fn runtime_narration(e: &Event) -> bool {
    let Event::Note { text } = e else { return false };
    text.starts_with("step skipped: ")
        || text.starts_with("the kill default finds ")
        || text.ends_with(" is not running: nothing to crash")
        || text.contains("'s restart is void")
        || text.contains(" reads its inbox again ")
        || text.starts_with("forge skipped: ")
        || text.starts_with("replay skipped: ")
}

/// The message number of a note the network writes when it routes a send
/// (right after the `send`), whose explorer counterpart is an action of its own.
fn network_note(e: &Event) -> Option<u64> {
    match e {
        Event::Dropped { seq, cause: Cause::Drop, .. } => Some(*seq),
        Event::Fault { seq, fault: "duplicate" | "delay", .. } => Some(*seq),
        _ => None,
    }
}

/// Whether the explorer's event `x` is the actors' event `a`.
fn same(a: &Stamped, x: &Stamped) -> Result<(), String> {
    if a.event.kind() != x.event.kind() {
        return Err(format!("kinds differ: {} vs {}", a.event.kind(), x.event.kind()));
    }
    let (mut a, mut x) = (a.clone(), x.clone());
    // Whether a restart follows, not when: the explorer decides that later.
    for e in [&mut a.event, &mut x.event] {
        if let Event::Crash { restart_at: Some(t), .. } = e {
            *t = Millis::ZERO;
        }
    }
    if a != x {
        return Err(format!("fields differ:\n  actors:   {a:?}\n  explorer: {x:?}"));
    }
    Ok(())
}

/// The actors' run of one scenario and seed, replayed through the explorer.
struct Replay<'a> {
    scenario: &'a Scenario,
    label: String,
    model: Model,
    state: State,
    /// The actors' events, less the runtime's narration.
    actor: Vec<Stamped>,
    actor_names: &'a Names,
    /// The next actor event no step has accounted for.
    at: usize,
    /// The explorer's events so far.
    log: Vec<Stamped>,
    summary: Summary,
    /// The first invariant the explorer's watcher saw break on this path.
    found: Option<Invariant>,
}

impl<'a> Replay<'a> {
    fn new(scenario: &'a Scenario, seed: u64, outcome: &'a Outcome) -> Replay<'a> {
        let narration = outcome.events.iter().filter(|e| runtime_narration(&e.event)).count();
        let actor: Vec<Stamped> = outcome.events.iter().filter(|e| !runtime_narration(&e.event)).cloned().collect();
        let count = |f: fn(&Event) -> bool| actor.iter().filter(|e| f(&e.event)).count() as u32;
        let budgets = Budgets {
            drop: count(|e| matches!(e, Event::Dropped { cause: Cause::Drop, .. })),
            duplicate: count(|e| matches!(e, Event::Fault { fault: "duplicate", .. })),
            crash: count(|e| matches!(e, Event::Crash { .. })),
            forge: count(|e| matches!(e, Event::Forge { .. })),
        };
        let model = Model::new(scenario, budgets, false).with_seed(seed);
        let state = model.start();
        let file =
            std::path::Path::new(&scenario.path).file_stem().map_or(String::new(), |s| s.to_string_lossy().into());
        Replay {
            scenario,
            label: format!("scenario {file} ({}), seed {seed}", scenario.name),
            model,
            state,
            actor,
            actor_names: &outcome.names,
            at: 0,
            log: Vec::new(),
            summary: Summary { narration, ..Summary::default() },
            found: None,
        }
    }

    /// The whole replay, then the end states.
    fn check(mut self, outcome: &Outcome) -> Result<Summary, String> {
        while self.at < self.actor.len() {
            let e = self.actor[self.at].clone();
            let t = e.t;
            // Timers due before the next thing the actors logged: the runtime
            // handled them, and they said nothing.
            while let Some((at, agent)) = self.state.next_timer().filter(|(at, _)| *at < t) {
                let _ = at;
                self.step(Action::Fire(agent))?;
            }
            match &e.event {
                Event::Deliver { seq, .. }
                | Event::Dropped { seq, cause: Cause::Crash | Cause::Killed | Cause::Undeliverable, .. } => {
                    self.wait(t)?;
                    let Some(i) = self.state.in_flight(*seq) else {
                        return Err(self.fail(&format!("message #{seq} is not in flight in the explorer"), &[]));
                    };
                    self.step(Action::Deliver(i))?;
                }
                Event::Forge { claimed_from, to, message_type, .. } => {
                    self.wait(t)?;
                    let message = self.forged(t, *claimed_from, *to, message_type)?;
                    self.step(Action::Inject { from: *claimed_from, to: *to, message })?;
                }
                Event::Crash { agent, restart_at } => {
                    self.wait(t)?;
                    self.step(Action::Crash { agent: *agent, restart: restart_at.is_some() })?;
                }
                Event::Restart { agent } => {
                    self.wait(t)?;
                    self.step(Action::Restart(*agent))?;
                }
                _ => match self.state.next_timer() {
                    Some((at, _)) if at == t => {
                        let agent = self.whose_timer(&e);
                        self.step(Action::Fire(agent))?
                    }
                    next => {
                        let why = format!(
                            "no explorer action makes this event: not a delivery, a fault, or a timer's work \
                             (the explorer's next timer: {next:?})"
                        );
                        return Err(self.fail(&why, &[]));
                    }
                },
            }
        }
        // What the runtime still fired before it stopped said nothing.
        let team = &self.scenario.team;
        let limit = team.end.map_or(team.cap, |e| e.min(team.cap));
        let mut spare = 0;
        while let Some((_, agent)) = self.state.next_timer().filter(|(at, _)| *at <= limit) {
            self.step(Action::Fire(agent))?;
            spare += 1;
            assert!(spare < 100_000, "{}: timers keep firing after the actors' last event", self.label);
        }
        self.end_states(outcome)?;
        // The two oracles: the watcher on the explorer's path, the whole-log
        // reading of the actors' run. The checks only an ended run can make
        // (a request left pending, a message never accounted for) are not
        // the watcher's until the end, which the replay does not judge.
        let actor: Vec<Invariant> = oracle::check(outcome, self.scenario.policy(), &self.scenario.require_plan())
            .into_iter()
            .map(|v| v.invariant)
            .filter(|i| !matches!(i, Invariant::SingleTerminal | Invariant::NoSilentLoss))
            .collect();
        let agree = match self.found {
            Some(i) => actor.contains(&i),
            None => actor.is_empty(),
        };
        if !agree {
            let why =
                format!("the explorer's watcher found {:?}; the oracle on the actors' run found {actor:?}", self.found);
            return Err(self.fail(&why, &[]));
        }
        Ok(self.summary)
    }

    /// Of the agents with a timer due now, the one whose timer makes the
    /// actors' event `e` (its first event equals `e`); the first due if none
    /// does, so the comparison then says what differs.
    fn whose_timer(&self, e: &Stamped) -> AgentId {
        let due: Vec<AgentId> = self.state.due_now().collect();
        for &agent in &due {
            let mut state = self.state.clone();
            let mut log = Vec::new();
            let _ = self.model.apply(&mut state, &Action::Fire(agent), Some(&mut log));
            if log.first().is_some_and(|x| same(e, x).is_ok()) {
                return agent;
            }
        }
        due[0]
    }

    /// Moves the explorer's clock to `t`, if it is behind.
    fn wait(&mut self, t: Millis) -> Result<(), String> {
        if self.state.now() < t {
            self.step(Action::Wait(t))?;
        }
        Ok(())
    }

    /// The forged message the scenario injects at `t`, quoting the id the
    /// actors' forgery quoted where it quotes a real request.
    fn forged(&self, t: Millis, from: AgentId, to: AgentId, message_type: &str) -> Result<Message, String> {
        let found = self.scenario.team.timed.iter().find_map(|(at, f)| match f {
            Scheduled::Forge { claimed_from, to: d, message, .. }
                if *at == t && *claimed_from == from && *d == to && message.type_name() == message_type =>
            {
                Some(message.clone())
            }
            _ => None,
        });
        let Some(mut message) = found else {
            return Err(self.fail("a forgery the scenario does not schedule", &[]));
        };
        // The actors' `send` of the forgery follows its `forge` and says which id it quoted.
        let quoted = match self.actor.get(self.at + 1).map(|e| &e.event) {
            Some(Event::Send { request_id, .. }) => *request_id,
            _ => return Err(self.fail("a forgery not followed by its send", &[])),
        };
        if let Some(id) = quoted {
            message.set_request_id(id);
        }
        Ok(message)
    }

    /// Takes `action` and compares what it logs with the actors' next events;
    /// then takes the network's actions for the messages the step sent.
    fn step(&mut self, action: Action) -> Result<(), String> {
        let before = self.log.len();
        self.take(&action)?;
        let n = self.log.len() - before;
        // The actors' events for this step: the next `n`, less the network's
        // notes about messages the step sent, which are actions of their own.
        let mut segment = Vec::new();
        let mut network = Vec::new();
        let mut j = self.at;
        while let Some(e) = self.actor.get(j) {
            let sent_here = network_note(&e.event).is_some_and(|seq| {
                segment.iter().any(|s: &Stamped| matches!(s.event, Event::Send { seq: q, .. } if q == seq))
            });
            if sent_here {
                network.push(e.clone());
            } else if segment.len() < n {
                segment.push(e.clone());
            } else {
                break;
            }
            j += 1;
        }
        self.compare(&action, &segment, before)?;
        self.at = j;
        for e in network {
            let Some(seq) = network_note(&e.event) else { continue };
            let action = match &e.event {
                Event::Fault { fault: "delay", .. } => {
                    self.summary.delays += 1;
                    continue;
                }
                Event::Dropped { .. } => Action::Drop(self.flying(seq, &e)?),
                _ => Action::Duplicate(self.flying(seq, &e)?),
            };
            let before = self.log.len();
            self.take(&action)?;
            self.compare(&action, std::slice::from_ref(&e), before)?;
        }
        Ok(())
    }

    fn flying(&self, seq: u64, e: &Stamped) -> Result<usize, String> {
        self.state.in_flight(seq).ok_or_else(|| {
            self.fail(&format!("message #{seq} is not in flight for the network's note"), std::slice::from_ref(e))
        })
    }

    /// Checks `action` is enabled and takes it, logging what it does.
    fn take(&mut self, action: &Action) -> Result<(), String> {
        self.summary.steps += 1;
        if !self.model.enabled(&self.state, action) {
            return Err(self.fail(&format!("{action:?} is not enabled in the explorer"), &[]));
        }
        if let Some(Finding::Broken(v)) = self.model.apply(&mut self.state, action, Some(&mut self.log)) {
            self.found.get_or_insert(v.invariant);
        }
        Ok(())
    }

    /// The explorer's events since `before` against the actors' `segment`.
    fn compare(&mut self, action: &Action, segment: &[Stamped], before: usize) -> Result<(), String> {
        let explorer = &self.log[before..];
        let mut why = None;
        if segment.len() != explorer.len() {
            why = Some(format!("the actors logged {} events, the explorer {}", segment.len(), explorer.len()));
        }
        for (k, (a, x)) in segment.iter().zip(explorer).enumerate() {
            if let Err(e) = same(a, x) {
                why = Some(format!("event {k} of the step: {e}"));
                break;
            }
        }
        match why {
            None => {
                self.summary.events += segment.len();
                Ok(())
            }
            Some(why) => Err(self.fail(&format!("{action:?}: {why}"), segment)),
        }
    }

    /// The failure message: scenario, seed, step, and the two sides' events.
    fn fail(&self, why: &str, segment: &[Stamped]) -> String {
        let mut names = Names { agents: self.model.names().to_vec(), labels: BTreeMap::new() };
        names.learn_labels(&self.log);
        // The explorer's events of the failing step: those after the last
        // compared one.
        let compared = self.log_compared();
        let explorer: Vec<String> = self.log[compared..].iter().map(|e| line(e, &names)).collect();
        let actor: Vec<String> = if segment.is_empty() {
            self.actor[self.at..].iter().take(explorer.len().max(4)).map(|e| line(e, self.actor_names)).collect()
        } else {
            segment.iter().map(|e| line(e, self.actor_names)).collect()
        };
        let width = actor.iter().map(|l| l.chars().count()).max().unwrap_or(0).max(6);
        let mut out = format!(
            "{}: step {} (actor event {} of {}, explorer at {}): {why}\n",
            self.label,
            self.summary.steps,
            self.at,
            self.actor.len(),
            self.state.now(),
        );
        if actor.is_empty() && explorer.is_empty() {
            return out;
        }
        let _ = writeln!(out, "  {:width$} | explorer", "actors");
        for k in 0..actor.len().max(explorer.len()) {
            let a = actor.get(k).map_or("", String::as_str);
            let x = explorer.get(k).map_or("", String::as_str);
            let _ = writeln!(out, "  {a:width$} | {x}");
        }
        out
    }

    /// How many of the explorer's events were compared and found equal.
    fn log_compared(&self) -> usize {
        self.summary.events.min(self.log.len())
    }

    fn end_states(&mut self, outcome: &Outcome) -> Result<(), String> {
        let roster = self.state.roster();
        if outcome.roster != roster {
            return Err(self.fail(&format!("rosters differ: actors {:?}, explorer {roster:?}", outcome.roster), &[]));
        }
        let files: BTreeMap<String, _> = self.state.files().iter().cloned().collect();
        if outcome.files != files {
            return Err(self.fail(&format!("files differ: actors {:?}, explorer {files:?}", outcome.files), &[]));
        }
        if outcome.stop == Stop::Settled && !self.state.flight().is_empty() {
            let seqs: Vec<u64> = self.state.flight().iter().map(|d| d.seq).collect();
            return Err(self.fail(&format!("the actors settled; the explorer still has {seqs:?} in flight"), &[]));
        }
        let explorer: Vec<_> = self.state.agents().iter().filter_map(|a| a.table()).flat_map(|t| t.iter()).collect();
        if outcome.requests.len() != explorer.len() {
            let why = format!(
                "{} requests in the actors' tables, {} in the explorer's",
                outcome.requests.len(),
                explorer.len()
            );
            return Err(self.fail(&why, &[]));
        }
        for (a, x) in outcome.requests.iter().zip(explorer) {
            let equal = (a.id, a.kind, a.requester, a.target, a.sent_at, a.deadline, a.status, &a.label)
                == (x.id, x.kind, x.requester, x.target, x.sent_at, x.deadline, x.status, &x.label);
            if !equal {
                let why = format!("requests differ at the end: actors {a:?}, explorer {x:?}");
                return Err(self.fail(&why, &[]));
            }
        }
        Ok(())
    }
}

fn line(e: &Stamped, names: &Names) -> String {
    let seq = match &e.event {
        Event::Send { seq, .. }
        | Event::Deliver { seq, .. }
        | Event::Dropped { seq, .. }
        | Event::Fault { seq, .. }
        | Event::Forge { seq, .. } => format!(" #{seq}"),
        _ => String::new(),
    };
    format!("{} {}{seq}", e.event.kind(), e.describe(names).trim())
}

/// Runs `scenario` on the actors with `seed` and replays it through the explorer.
fn conform(scenario: &Scenario, seed: u64, outcome: &Outcome) -> Result<Summary, String> {
    Replay::new(scenario, seed, outcome).check(outcome)
}

fn actors(scenario: &Scenario, seed: u64) -> Outcome {
    run(scenario.team_spec(seed, None))
}

fn bundled(stem: &str) -> Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{stem}.toml"));
    load_file(&path).unwrap_or_else(|e| panic!("{stem}: {e:?}"))
}

#[test]
fn the_actors_and_the_explorer_agree_on_every_bundled_scenario() {
    let started = Instant::now();
    let mut checked = Vec::new();
    let mut skipped = Vec::new();
    let mut failures = Vec::new();
    for path in common::bundled_files() {
        let stem = path.file_stem().expect("a file name").to_string_lossy().to_string();
        let scenario = load_file(&path).unwrap_or_else(|e| panic!("{stem}: {e:?}"));
        if let Some(why) = inexpressible(&scenario) {
            eprintln!("skipped {stem}: {why}");
            skipped.push(stem);
            continue;
        }
        let seeds = HEAVY.iter().find(|(s, _)| *s == stem).map_or(SEEDS, |(_, n)| 0..*n);
        let t0 = Instant::now();
        let mut total = Summary::default();
        for seed in seeds.clone() {
            let outcome = actors(&scenario, seed);
            match conform(&scenario, seed, &outcome) {
                Ok(s) => {
                    total.steps += s.steps;
                    total.events += s.events;
                    total.narration += s.narration;
                    total.delays += s.delays;
                }
                Err(e) => {
                    failures.push(e);
                    break;
                }
            }
        }
        eprintln!(
            "checked {stem}, seeds {seeds:?}: {} steps, {} events equal, {} runtime notes left out, {} delays \
             played as waits ({:.2}s)",
            total.steps,
            total.events,
            total.narration,
            total.delays,
            t0.elapsed().as_secs_f64()
        );
        checked.push(stem);
    }
    eprintln!("{} checked, {} skipped, in {:.1}s", checked.len(), skipped.len(), started.elapsed().as_secs_f64());
    assert!(failures.is_empty(), "the actors and the explorer disagree:\n\n{}", failures.join("\n"));
    assert_eq!(skipped, SKIPPED, "the scenarios skipped changed: say why at the top of this file");
    assert!(checked.len() >= MIN_CHECKED, "only {} scenarios checked: {checked:?}", checked.len());
}

/// The check itself can fail: a doctored actor log is caught.
#[test]
fn a_doctored_actor_log_is_caught() {
    let s = bundled("02-shutdown-rejected-then-approved");
    let seed = 3;
    let honest = actors(&s, seed);
    conform(&s, seed, &honest).expect("the honest log conforms");

    let doctored = |f: &dyn Fn(&mut Outcome)| {
        let mut o = actors(&s, seed);
        f(&mut o);
        conform(&s, seed, &o).expect_err("a doctored log must not conform")
    };

    // An event removed: the first file step.
    let e = doctored(&|o| {
        let i = o.events.iter().position(|e| matches!(e.event, Event::FileStep { .. })).expect("a file step");
        o.events.remove(i);
    });
    assert!(e.contains("seed 3") && e.contains("step ") && e.contains("shutdown-rejected-then-approved"), "{e}");
    assert!(e.contains("| explorer"), "the two sides side by side: {e}");

    // A status changed.
    let e = doctored(&|o| {
        for ev in o.events.iter_mut().rev() {
            if let Event::Status { status, .. } = &mut ev.event {
                *status = handshake::trace::RosterStatus::Killed;
                break;
            }
        }
    });
    assert!(e.contains("fields differ"), "{e}");

    // A time moved by a millisecond.
    let e = doctored(&|o| {
        let i = o.events.iter().position(|e| matches!(e.event, Event::Opened { .. })).expect("a request");
        o.events[i].t = o.events[i].t.after(Millis(1));
    });
    assert!(e.contains("step "), "{e}");

    // The second request's answer quotes the first request's id: the ids
    // are compared as they are, and the verdict's differs.
    let e = doctored(&|o| {
        let opened: Vec<RequestId> = o
            .events
            .iter()
            .filter_map(|e| match e.event {
                Event::Opened { id, .. } => Some(id),
                _ => None,
            })
            .collect();
        let (first, second) = (opened[0], opened[1]);
        let verdict = o
            .events
            .iter_mut()
            .find(|e| matches!(e.event, Event::Verdict { request_id, .. } if request_id == second))
            .expect("the second request's verdict");
        if let Event::Verdict { request_id, .. } = &mut verdict.event {
            *request_id = first;
        }
    });
    assert!(e.contains("fields differ") && e.contains("Verdict"), "{e}");

    // The end state: a request's final status.
    let e = doctored(&|o| o.requests[0].status = handshake::protocol::Status::Expired);
    assert!(e.contains("requests differ at the end"), "{e}");

    // A file's progress.
    let e = doctored(&|o| {
        if let Some(f) = o.files.values_mut().next() {
            f.done -= 1;
        }
    });
    assert!(e.contains("files differ"), "{e}");
}

/// Runs an inline scenario on the actors for `seeds` and replays each run.
fn conform_inline(toml: &str, seeds: std::ops::Range<u64>) -> Result<usize, String> {
    let name = toml.lines().find_map(|l| l.strip_prefix("name = ")).map_or("inline", |n| n.trim_matches('"'));
    let s = load_str(&format!("{name}.toml"), toml).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    let mut steps = 0;
    for seed in seeds {
        steps += conform(&s, seed, &actors(&s, seed))?.steps;
    }
    Ok(steps)
}

/// No bundled scenario drops a message on a link: this one drops, duplicates
/// and delays, so `Drop`, `Duplicate` and the delay played as a `Wait` are
/// each checked (with a repeated request answered again, and a request
/// refused once its target has stopped).
#[test]
fn link_faults_map_to_drop_duplicate_and_wait() {
    let file = r#"
name = "link-faults"
about = "A rejected answer lost once, every request delivered twice and 5 ms late."
[[teammate]]
name = "alice"
on_shutdown = ["reject", "approve"]
reject_reason = "busy"
work = [{ write = "a.rs", steps = 4, step_time = "500ms" }]
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
[[step]]
at = "3s"
do = "shutdown"
to = "alice"
[[step]]
at = "70s"
do = "shutdown"
to = "alice"
[[fault]]
kind = "drop"
type = "shutdown_response"
count = 1
[[fault]]
kind = "duplicate"
type = "shutdown_request"
[[fault]]
kind = "delay"
type = "shutdown_request"
delay = "5ms"
"#;
    let s = load_str("link-faults.toml", file).expect("valid");
    let o = actors(&s, 0);
    let count = |f: fn(&Event) -> bool| o.events.iter().filter(|e| f(&e.event)).count();
    assert_eq!(count(|e| matches!(e, Event::Dropped { cause: Cause::Drop, .. })), 1);
    assert_eq!(count(|e| matches!(e, Event::Fault { fault: "duplicate", .. })), 2);
    assert_eq!(count(|e| matches!(e, Event::Fault { fault: "delay", .. })), 2);
    if let Err(e) = conform_inline(file, SEEDS) {
        panic!("{e}");
    }
}

// Former disagreements. None of the bundled scenarios met them, but each of
// these small scenarios did, on every seed, when this test was first
// written; each comment says what differed. The explorer changed: `Fire`
// takes any agent's timer due at the earliest instant (each agent's own in
// order), a restart is logged at once and taken up as the teammate's next
// input, and a crash may be final. They now agree.

/// FORMER DISAGREEMENT, now a regression test (timer order within a millisecond). Alice ignores the
/// lead's shutdown request (deadline 1m1s) and writes a long file in 500 ms
/// steps. At 1m1s three timers are due, in the driver's (time, scheduling
/// order): alice's scripted message (scheduled before the run), the lead's
/// deadline wake (scheduled at 1s) and alice's work step (scheduled at
/// 1m0.5s). The driver hands them to the mailboxes in that order, but each
/// actor handles everything in its mailbox when it is polled, and alice was
/// woken first: the runtime logs alice's message, `a.rs: 122/400 written`,
/// and only then the lead's expiry and the kill of alice. The explorer's
/// `Fire` always takes the earliest timer, so after alice's message it fires
/// the lead's deadline and kills alice, whose work step dies with her (step
/// 128, `file` vs `expiry`). Not only the order differs: the actors end with
/// a.rs at 122/400, which no explorer schedule reaches (deliveries do not
/// move alice's work timers; the explorer ends at 121/400). The world's own
/// doc says same-millisecond events run "in the order they were scheduled,
/// never in an order the runtime picks", which is what the actors do not do.
#[test]
fn formerly_apart_same_millisecond_timers_of_two_actors() {
    let file = r#"
name = "timer-order"
about = "Alice has two timers due at 1m1s, the lead's deadline for her shutdown scheduled between them."
[[teammate]]
name = "alice"
on_shutdown = "ignore"
work = [{ write = "a.rs", steps = 400, step_time = "500ms" }]
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
[[step]]
at = "61s"
do = "message"
from = "alice"
to = "lead"
text = "hi"
"#;
    if let Err(e) = conform_inline(file, 0..5) {
        panic!("{e}");
    }
}

/// FORMER DISAGREEMENT, now a regression test (a restart is two inputs in the runtime, one action in
/// the explorer). Alice crashes at 1s and restarts at 6s, when the lead also
/// has a scripted message for bob. The driver fires the lead's step (its
/// mailbox) and then the restart, which it logs at once (`restart`, `status
/// working`); the lead's actor then runs first and logs its send; only then
/// does alice's actor handle `Input::Restart` (`alice starts write a.rs`).
/// The explorer's `Restart` logs the restart, the status and alice's
/// restart step together, so nothing can come between them (step 8, `send`
/// vs `action`).
#[test]
fn formerly_apart_restart_with_another_step_at_the_same_millisecond() {
    let file = r#"
name = "restart-split"
about = "Alice restarts at 6s, when the lead messages bob."
[[teammate]]
name = "alice"
work = [{ write = "a.rs", steps = 4, step_time = "500ms" }]
[[teammate]]
name = "bob"
[[fault]]
kind = "crash"
agent = "alice"
at = "1s"
restart = "5s"
[[step]]
at = "6s"
do = "message"
to = "bob"
text = "hi"
"#;
    if let Err(e) = conform_inline(file, 0..5) {
        panic!("{e}");
    }
}

/// FORMER DISAGREEMENT, now a regression test (a final crash). Bob leaves the lead's shutdown
/// request unanswered and crashes for good at 1.5s (no `restart`). At 1m1s
/// the request expires and the kill default applies: the runtime notes
/// "the kill default finds bob already crashed: nothing to kill" and bob
/// stays `crashed` (docs/scenarios.md: "Without `restart`, a crash is
/// final"). The explorer's `Crash` is always one a restart may follow (its
/// `crash` event says so, which this test does not compare), so its kill
/// default kills bob: `status killed` and an alert the actors never logged
/// (step 10), and the rosters end differently. The explorer cannot express
/// a final crash; the same difference would show where the runtime's
/// wait-for graph forgets a teammate that crashed for good.
#[test]
fn formerly_apart_kill_default_meets_a_final_crash() {
    let file = r#"
name = "final-crash"
about = "Bob ignores the shutdown request, then crashes for good; the request expires."
[[teammate]]
name = "bob"
on_shutdown = "ignore"
work = [{ write = "b.rs", steps = 4, step_time = "500ms" }]
[[fault]]
kind = "crash"
agent = "bob"
at = "1500ms"
[[step]]
at = "1s"
do = "shutdown"
to = "bob"
"#;
    if let Err(e) = conform_inline(file, 0..5) {
        panic!("{e}");
    }
}

/// Issue 19, point 4: a crash while requests are set aside. Alice waits on
/// bob (who leaves her plan unanswered) and has set bob's own plan aside
/// when she crashes; she restarts, takes up her own scripted step, and the
/// lead's shutdown reaches her new incarnation (which sets it aside in turn,
/// still waiting, and is killed by the default). A duplicate of each
/// request makes a second copy arrive, too. The runtime takes the restart
/// before anything delivered to the new incarnation; the explorer must too.
/// Before, it also lost a crashed teammate's scripted steps for good, where
/// the runtime hands them to the restarted teammate: alice's message at 3s
/// had no explorer action.
#[test]
fn a_crash_while_requests_are_set_aside() {
    let file = r#"
name = "crash-while-requests-set-aside"
about = "Alice waits on bob with bob's request set aside, crashes and restarts; her new life gets mail."
[policy]
strict_hierarchy = false
[[teammate]]
name = "alice"
[[teammate]]
name = "bob"
on_plan = "ignore"
[[step]]
at = "1s"
do = "submit_plan"
from = "alice"
to = "bob"
plan = "rename the users table"
label = "alice-asks-bob"
[[step]]
at = "1500ms"
do = "submit_plan"
from = "bob"
to = "alice"
plan = "add a column"
label = "bob-asks-alice"
[[step]]
at = "3s"
do = "message"
from = "alice"
to = "lead"
text = "back"
[[step]]
at = "4s"
do = "shutdown"
to = "alice"
[[fault]]
kind = "crash"
agent = "alice"
at = "2s"
restart = "500ms"
[[fault]]
kind = "duplicate"
type = ["plan_approval_request", "shutdown_request"]
"#;
    let s = load_str("set-aside.toml", file).expect("valid");
    let o = actors(&s, 0);
    let said = |what: &str| o.events.iter().any(|e| e.describe(&o.names).contains(what));
    assert!(said("puts [bob-asks-alice] aside"), "the crash finds a request set aside");
    assert!(said("alice restarts"));
    assert!(said("alice → lead  message \"back\""), "the restarted alice takes up her step");
    assert!(said("puts [alice/shutdown/1] aside"), "the new incarnation gets mail");
    if let Err(e) = conform_inline(file, SEEDS) {
        panic!("{e}");
    }
}
