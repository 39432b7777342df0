//! The public face of the runtime: describe a team and a script, run it to
//! the end on the virtual clock, get the roster, the requests and the log.
//! What is the actors' own: starting one per agent, the driver that moves
//! virtual time when every mailbox is idle, and collecting the agents.

use super::actor::{busy, Actors, AgentActor, Finish, Shared};
use super::hooks::{agents, announce, Ends, Hooks};
use crate::protocol::{AgentId, Millis};
use crate::world::{Choice, Life, Outcome, Stop, TeamSpec, World};
use actix::Actor;
use std::cell::RefCell;
use std::rc::Rc;

/// Runs a team to the end on the virtual clock. A 60 s deadline costs no real
/// time: the clock jumps whenever every actor is idle.
pub fn run(spec: TeamSpec) -> Outcome {
    thread_local! {
        // One runtime per thread, used by run after run: building and
        // dropping one (tokio's scheduler, actix's system and arbiter) was
        // a tenth of a small run. Nothing of a run outlives it: every actor
        // is stopped by `Finish` and the world is dropped with the last of
        // them, so the next run starts from the same state as on a fresh
        // runtime (the sweep tests compare --jobs 1 with a run per process).
        static SYSTEM: std::cell::RefCell<Option<actix_rt::SystemRunner>> = const { std::cell::RefCell::new(None) };
    }
    SYSTEM.with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => slot.get_or_insert_with(system).block_on(simulate(spec)),
        // A run started from inside another (a test's hook, say) gets a
        // runtime of its own.
        Err(_) => system().block_on(simulate(spec)),
    })
}

/// An actix system on a single-threaded tokio runtime: the only runtime a
/// simulation may use (see the design's determinism rules).
///
/// It has no clock at all, paused or not: virtual time belongs to the world
/// and only the driver moves it (see `drive`). Without a time driver the
/// runtime cannot read real time by accident (tokio's timers panic), and
/// parking skips the timer wheel, which was a tenth of a small run.
pub fn system() -> actix_rt::SystemRunner {
    // A current-thread runtime builds on every platform tokio supports.
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("a current-thread tokio runtime");
    let runner = actix_rt::System::with_tokio_rt(move || rt);
    // actix_rt queues two tasks of its own (the system and its arbiter):
    // run them once now, so that they are parked, not queued ahead of the
    // first run's actors. Queued, they took two of the 61 places of that
    // run's first round, and a team of more than 59 with work due at once
    // was played in another order on a new runtime than on a used one.
    runner.block_on(tokio::task::yield_now());
    runner
}

async fn simulate(mut spec: TeamSpec) -> Outcome {
    announce(&spec);
    let team = spec.teammates.len() + 1;
    let mut shell = Actors::new(team);
    let setup = Hooks::take(&mut spec);
    shell.hooks = setup.hooks;
    let journal = shell.hooks.mirror.is_some();
    let schedule = spec.schedule.take();
    if schedule.is_some() {
        shell.held = Some(Default::default());
    }
    let mut world = World::for_team(&mut spec, journal, shell);
    if schedule.is_some() {
        // Messages wait in flight until the schedule delivers them.
        world.hold_in_flight();
    }
    // Set after the world has looked at it: the probe is the shell's.
    world.shell_mut().hooks.probe = spec.probe.take();
    world.set_mirror_error(setup.mirror_error);
    let w: Shared = Rc::new(RefCell::new(world));

    // Each agent goes straight into its actor: a list of them all first was
    // freed as soon as the actors had started, but an allocator that gives
    // memory back only after a delay (mimalloc) still held it at the run's
    // peak (the sizes: docs/architecture.md, "Why the code is shaped so").
    for (i, agent) in agents(&mut spec).enumerate() {
        if w.borrow().keeps_frames() {
            w.borrow_mut().frame_agent(AgentId(i as u32), &agent, 0);
        }
        let actor =
            AgentActor { id: AgentId(i as u32), life: Life::default(), agent: Some(agent), world: Rc::clone(&w) };
        let addr = actor.start();
        w.borrow_mut().shell_mut().addrs[i] = Some(addr);
    }
    tracing::debug!(actors = team, "actors started");
    w.borrow_mut().begin(&mut spec);

    let (stop, schedule_error) = match schedule {
        None => (drive(&w, spec.end, spec.cap).await, None),
        Some(choices) => follow(&w, &choices).await,
    };
    let following = w.borrow().shell().held.is_some();
    // How the run ends is the world's rule, the explorer's too.
    let ending = w.borrow_mut().begin_ending(stop, following);

    // Collect every agent's final state. Actors live to the end of the run
    // (a stopped or killed agent's actor only records what still reaches it).
    // Each agent is read and dropped in turn: holding 100,000 final states at
    // once would be the run's peak memory.
    let addrs: Vec<_> = w.borrow_mut().shell_mut().addrs.iter_mut().map(|a| a.take()).collect();
    let mut ends = Ends::default();
    for (i, addr) in addrs.into_iter().enumerate() {
        let Some(addr) = addr else { continue };
        if let Ok(Some(agent)) = addr.send(Finish).await {
            ends.add(w.borrow().roster(), AgentId(i as u32), &agent);
        }
    }
    let stop = w.borrow_mut().finish_ending(ending, ends.live_pending);
    let mut outcome = w.borrow_mut().outcome(stop, ends.requests, ends.load_done);
    outcome.schedule_error = schedule_error;
    if let Some(dir) = setup.team_folder {
        outcome.mirror_error = write_folder(&dir, &outcome.inbox_files).err();
    }
    outcome
}

/// Writes a Claude Code team folder as the run left it (each file whole or
/// not at all, never through a link).
pub(super) fn write_folder(
    dir: &std::path::Path,
    files: &std::collections::BTreeMap<String, Vec<u8>>,
) -> Result<(), String> {
    let inboxes = dir.join("inboxes");
    std::fs::create_dir_all(&inboxes).map_err(|e| format!("cannot make {}: {e}", inboxes.display()))?;
    for (path, bytes) in files {
        crate::output::write_bytes(&dir.join(path), bytes)?;
    }
    Ok(())
}

/// Takes the schedule's choices in order, handing what each puts in the
/// mailboxes to the actors one input at a time (the explorer's order). Ends
/// settled if nothing more could happen, else at the schedule's end; a
/// choice the world cannot take stops it, with the reason.
async fn follow(w: &Shared, choices: &[Choice]) -> (Stop, Option<String>) {
    hand_over(w).await;
    for (i, c) in choices.iter().enumerate() {
        if !w.borrow().can_choose(c) {
            // Said as the schedule file writes it, so it can be found there.
            let line = {
                let world = w.borrow();
                let name = |a: &crate::protocol::AgentId| world.names().get(a.index()).cloned().unwrap_or_default();
                serde_json::to_string(&c.named(name, |m| *m)).unwrap_or_default()
            };
            let why = format!(
                "step {} of the schedule ({line}) cannot be taken at {}: this run parts from the schedule there (was it written for this file, with this seed?)",
                i + 1,
                w.borrow().now()
            );
            return (Stop::ScheduleEnd, Some(why));
        }
        w.borrow_mut().choose(c);
        hand_over(w).await;
    }
    let wb = w.borrow();
    let still = wb.flight().is_some_and(|f| !f.is_empty()) || !wb.queue().is_empty();
    (if still { Stop::ScheduleEnd } else { Stop::Settled }, None)
}

/// The held inputs, one at a time: each goes to its actor, and the next
/// only once every mailbox is idle again.
async fn hand_over(w: &Shared) {
    let idle = Rc::clone(&w.borrow().shell().idle);
    loop {
        let next = w.borrow_mut().shell_mut().held.as_mut().and_then(|h| h.pop_front());
        let Some((agent, input)) = next else { break };
        w.borrow_mut().shell_mut().hand(agent, input);
        while busy(&w.borrow()) {
            idle.notified().await;
        }
    }
}

/// The simulation's clock: wait until every actor is idle, move time on to
/// the earliest due event, run every event due, repeat. When the queue is
/// empty and every actor is idle, time jumps to the limit, which is how the
/// run knows it settled.
///
/// Time moves exactly as a paused tokio clock would move it under a sleep
/// until the next event (what this loop did before), without the timer
/// wheel, the parking and the clock reads, where much of a small run's
/// time went (docs/performance.md). An event due now is fired as soon as the driver
/// runs, even while actors still have mail, as that sleep would have been
/// ready at once; one in the future waits until no mail is left.
async fn drive(w: &Shared, end: Option<Millis>, cap: Millis) -> Stop {
    let (notify, idle) = {
        let wb = w.borrow();
        (Rc::clone(&wb.shell().notify), Rc::clone(&wb.shell().idle))
    };
    let limit = end.map_or(cap, |e| e.min(cap));
    let mut wakes = 0u32;
    loop {
        wakes = wakes.wrapping_add(1);
        {
            // The guard is asked here too, every 64 wake-ups (it reads the
            // real clock, which costs, asked at each): a run can spin in the
            // driver alone.
            let mut wb = w.borrow_mut();
            let stop = if wakes % 64 == 1 { wb.guard_says_stop() } else { wb.aborted() };
            if stop {
                return wb.stopped_as();
            }
        }
        let next = w.borrow().queue().next_time();
        let wake_at = next.map_or(limit, |t| t.min(limit));
        if wake_at > w.borrow().now() {
            // Something scheduled sooner than `next` while we wait (the
            // notify) is looked at again; otherwise wait for the idle team.
            let everyone_idle = async {
                while busy(&w.borrow()) {
                    idle.notified().await;
                }
            };
            tokio::select! {
                biased;
                _ = notify.notified() => continue,
                _ = everyone_idle => {}
            }
        }
        let now = w.borrow_mut().advance_to(wake_at);
        tracing::debug!(at = %now, queued = w.borrow().queue().len(), "driver wakes");
        match next {
            None => return Stop::Settled,
            Some(t) if t > limit => return if end.is_some_and(|e| e <= cap) { Stop::EndTime } else { Stop::Cap },
            Some(_) => {}
        }
        loop {
            let due = w.borrow_mut().pop_due(now);
            match due {
                Some(d) => {
                    tracing::trace!(at = %now, event = ?d, "event due");
                    w.borrow_mut().fire(d)
                }
                None => break,
            }
        }
        tokio::task::yield_now().await;
    }
}
