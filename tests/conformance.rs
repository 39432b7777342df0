//! The actors and the explorer agree (issues 11 and 20): both shells run one
//! world (`handshake::world`), so a schedule the explorer takes, handed to
//! the actors (`TeamSpec::schedule`, what `run --schedule` does), must make
//! the actor runtime log exactly what the explorer logged: the same events,
//! field for field, request ids included (each agent draws from its own
//! stream of the seed in both shells, issue 20 point 4), the same roster,
//! the same request tables, the same files.
//!
//! For every bundled scenario (no skip list: the explorer models every fault
//! and all three mailbox worlds; every scenario again in Claude Code's world), 50 seeds each: the seed makes the request ids
//! and picks a random walk through the explorer's choices (deliveries in
//! any order, timers, the file's own faults, and one of each fault the
//! search may spend: a drop, a duplicate, a crash, a forgery). The walk's
//! choices become the schedule the actors follow.
//!
//! The oracle agrees too: the explorer's watcher, fed the walk, finds a
//! violation exactly when the oracle finds one in the actors' log.
//!
//! Before issue 20 this test replayed the actors' free runs through a second
//! copy of the world's logic, matching events to actions, and had to skip 11
//! scenarios (stalls, replays, partitions, file inboxes) that copy could not
//! express. There is no second copy now; what is left to check is that the
//! actix shell adds nothing of its own, and that is what this does.

mod common;

use handshake::explore::{Action, Budgets, Finding, Model};
use handshake::oracle;
use handshake::scenario::{load_file, Scenario};
use handshake::team::run;
use rand::{Rng, SeedableRng};

/// Seeds each scenario is walked with.
const SEEDS: std::ops::RangeInclusive<u64> = 1..=50;

/// The longest walk: past it the schedule ends with things still to happen
/// (and the actors' run stops there too).
const MAX_STEPS: usize = 60;

/// Scenario 21 (100 workers) is the costly one: each of its steps fingerprints
/// nothing but copies a hundred agents. Fewer seeds, and shorter walks.
const HEAVY: &[(&str, u64)] = &[("21-whole-team-shutdown", 10)];

fn bundled() -> Vec<Scenario> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .expect("scenarios/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    paths.iter().map(|p| load_file(p).unwrap_or_else(|e| panic!("{}: {e:?}", p.display()))).collect()
}

/// What one walk and its replay on the actors showed.
struct Walked {
    steps: usize,
    events: usize,
}

/// Walks `s` at random with `seed`, hands the walk to the actors as a
/// schedule, and compares what each logged.
fn walk_and_replay(s: &Scenario, seed: u64, max_steps: usize) -> Result<Walked, String> {
    let budgets = Budgets { drop: 1, duplicate: 1, crash: 1, forge: 1 };
    let model = Model::playing_file_faults(s, budgets, false).with_seed(seed);
    let mut state = model.start();
    let mut log = model.start_log().to_vec();
    let mut choices = Vec::new();
    let mut actions: Vec<Action> = Vec::new();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut watcher_found = false;
    let mut settled = false;
    for _ in 0..max_steps {
        model.actions(&state, &mut actions);
        if actions.is_empty() {
            settled = true;
            break;
        }
        let a = actions[rng.gen_range(0..actions.len())].clone();
        choices.push(model.choice_of(&state, &a));
        watcher_found |= model.apply(&mut state, &a, Some(&mut log)).is_some();
    }
    if !settled {
        model.actions(&state, &mut actions);
        settled = actions.is_empty();
    }
    if settled {
        log.extend(model.end_log(&state));
        watcher_found |= matches!(model.at_end(&state), Some(Finding::Broken(_)));
    }

    let mut spec = s.team_spec(seed, None).as_explored(true);
    spec.schedule = Some(choices.clone());
    let outcome = run(spec);
    if let Some(e) = &outcome.schedule_error {
        return Err(format!("the actors could not follow the walk: {e}"));
    }
    for (i, (a, x)) in outcome.events.iter().zip(&log).enumerate() {
        if a != x {
            let names = &outcome.names;
            return Err(format!(
                "event {i} differs:\n  actors:   {}\n  explorer: {}\n  ({a:?} vs {x:?})",
                a.describe(names),
                x.describe(names)
            ));
        }
    }
    if outcome.events.len() != log.len() {
        return Err(format!("the actors logged {} events, the explorer {}", outcome.events.len(), log.len()));
    }
    if outcome.roster != state.roster() {
        return Err(format!("rosters differ: actors {:?}, explorer {:?}", outcome.roster, state.roster()));
    }
    let tables: Vec<_> = state.agents().iter().filter_map(|a| a.table()).flat_map(|t| t.iter().cloned()).collect();
    if outcome.requests != tables {
        return Err(format!("request tables differ:\n  actors:   {:?}\n  explorer: {tables:?}", outcome.requests));
    }
    let files: std::collections::BTreeMap<_, _> = state.files().into_iter().collect();
    if outcome.files != files {
        return Err(format!("files differ: actors {:?}, explorer {files:?}", outcome.files));
    }
    // Where nothing more could happen, both end the run by the world's one
    // rule: a team waiting on itself waits to the limit, in both.
    if settled {
        let (stop, at) = model.ending(&state);
        let ended_at = if stop == handshake::world::Stop::Settled { outcome.ended_at } else { at };
        if (outcome.stop, outcome.ended_at) != (stop, ended_at) {
            return Err(format!(
                "the run ended differently: actors {:?} at {}, explorer {stop:?} at {ended_at}",
                outcome.stop, outcome.ended_at
            ));
        }
    }
    let oracle_found = !oracle::check(&outcome, s.policy(), &s.require_plan()).is_empty();
    if oracle_found != watcher_found {
        return Err(format!("the oracle found a violation: {oracle_found}; the explorer's watcher: {watcher_found}"));
    }
    Ok(Walked { steps: choices.len(), events: log.len() })
}

#[test]
fn the_actors_taking_the_explorers_choices_log_what_the_explorer_logged_on_every_bundled_scenario() {
    let all = bundled();
    assert!(all.len() >= 40, "the bundled scenarios: {}", all.len());
    conform(&all, SEEDS);
}

/// Claude Code's world (issue 42): every bundled scenario that reads in it
/// (those of the reference's file inboxes do not), on as many seeds.
#[test]
fn the_actors_and_the_explorer_agree_in_claude_codes_world_too() {
    use handshake::scenario::whatif::{scenario_with, Setting};
    let setting = Setting::parse("mailbox=claude-code").unwrap();
    let all: Vec<Scenario> = bundled()
        .iter()
        .filter_map(|s| {
            let source = std::fs::read_to_string(&s.path).ok()?;
            scenario_with(&s.path, &source, &setting).ok()
        })
        .collect();
    assert!(all.len() >= 40, "the bundled scenarios that read in Claude Code's world: {}", all.len());
    conform(&all, SEEDS);
}

fn conform(all: &[Scenario], seeds: std::ops::RangeInclusive<u64>) {
    let (mut walks, mut steps, mut events) = (0, 0, 0);
    let mut failures = Vec::new();
    for s in all {
        let stem = std::path::Path::new(&s.path).file_stem().map(|x| x.to_string_lossy().to_string()).unwrap();
        let heavy = HEAVY.iter().find(|(n, _)| *n == stem);
        let (seeds, max_steps) = match heavy {
            Some((_, n)) => (1..=*n.min(seeds.end()), MAX_STEPS / 2),
            None => (seeds.clone(), MAX_STEPS),
        };
        for seed in seeds {
            match walk_and_replay(s, seed, max_steps) {
                Ok(w) => {
                    walks += 1;
                    steps += w.steps;
                    events += w.events;
                }
                Err(e) => failures.push(format!("{stem}, seed {seed}: {e}")),
            }
        }
    }
    eprintln!("{walks} walks over {} scenarios: {steps} choices, {events} events, all alike", all.len());
    assert!(
        failures.is_empty(),
        "{} walks disagree; the first:\n{}",
        failures.len(),
        failures[..failures.len().min(3)].join("\n\n")
    );
}

/// The comparison can fail: a schedule that parts from the world (a message
/// number that was never sent) is refused by the actors with the reason,
/// and a doctored log does not compare equal.
#[test]
fn a_schedule_the_world_cannot_take_is_refused_and_a_doctored_log_is_caught() {
    let s = bundled().into_iter().find(|s| s.path.ends_with("02-shutdown-rejected-then-approved.toml")).unwrap();
    let mut spec = s.team_spec(1, None).as_explored(true);
    spec.schedule = Some(vec![handshake::world::Choice::Deliver { msg: 99 }]);
    let outcome = run(spec);
    let e = outcome.schedule_error.expect("refused");
    assert!(e.contains("step 1 of the schedule") && e.contains(r#"({"choice":"deliver","seq":99})"#), "{e}");
    // An honest walk agrees; the same walk with one event changed does not.
    let model = Model::playing_file_faults(&s, Budgets::default(), false).with_seed(1);
    let mut state = model.start();
    let mut log = model.start_log().to_vec();
    let mut choices = Vec::new();
    let mut actions = Vec::new();
    loop {
        model.actions(&state, &mut actions);
        let Some(a) = actions.first().cloned() else { break };
        choices.push(model.choice_of(&state, &a));
        model.apply(&mut state, &a, Some(&mut log));
    }
    log.extend(model.end_log(&state));
    let mut spec = s.team_spec(1, None).as_explored(true);
    spec.schedule = Some(choices);
    let outcome = run(spec);
    assert_eq!(outcome.events, log);
    let mut doctored = log.clone();
    let k = doctored.iter().position(|e| matches!(e.event, handshake::trace::Event::Send { .. })).expect("a send");
    doctored[k].t = doctored[k].t.after(handshake::protocol::Millis(1));
    assert_ne!(outcome.events, doctored);
}
