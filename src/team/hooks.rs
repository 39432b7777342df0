//! What both shells share: the run's hooks (the command line's live view,
//! the bench's probe, the real-time guard, file mode's mirror on disk), the
//! agents a team spec makes, and what is read of them at the end. Kept
//! once, so the actix shell and the plain shell cannot drift apart here.

use crate::agent::{Agent, Lead, Teammate};
use crate::protocol::{AgentId, Request, Status};
use crate::trace::Stamped;
use crate::world::TeamSpec;

/// The `Shell` methods that only pass an event or a question on to the
/// shell's `hooks` field: written once for both shells' impls.
macro_rules! ears_from_hooks {
    () => {
        #[inline(always)]
        fn listening(&self) -> bool {
            self.hooks.listening()
        }

        fn hear(&mut self, event: &crate::trace::Stamped, names: &[String]) {
            self.hooks.hear(event, names)
        }

        #[inline(always)]
        fn probe(&mut self, event: &crate::trace::Event) {
            self.hooks.probe(event)
        }

        fn must_stop(&mut self) -> bool {
            self.hooks.must_stop()
        }

        fn files_changed(&mut self, fs: &mut crate::inbox::SimFs) -> Result<(), String> {
            self.hooks.files_changed(fs)
        }
    };
}
pub(crate) use ears_from_hooks;

/// The hooks a shell lends the world, taken from the spec.
#[derive(Default)]
pub struct Hooks {
    /// Called with every event as it happens (the CLI's `-v`).
    pub live: Option<crate::trace::LiveSink>,
    /// Sees the events agents report even with the log off (benchmarks time
    /// handshakes with it).
    pub probe: Option<crate::trace::Probe>,
    pub abort: Option<crate::trace::AbortGuard>,
    /// File mode: replays the inbox files on real files in a directory.
    pub mirror: Option<crate::inbox::DiskMirror>,
}

/// A run's hooks, with why its mirror could not be made and where Claude
/// Code mode writes its team folder when the run ends.
pub struct Setup {
    pub hooks: Hooks,
    pub mirror_error: Option<String>,
    pub team_folder: Option<std::path::PathBuf>,
}

/// Says a run starts (`RUST_LOG=handshake=debug`), in either shell: what
/// it is, before any of it is taken from the spec.
pub fn announce(spec: &TeamSpec) {
    tracing::debug!(
        seed = spec.seed,
        teammates = spec.teammates.len(),
        steps = spec.steps.len(),
        faults = spec.link_faults.len() + spec.partitions.len() + spec.timed.len(),
        end = ?spec.end,
        cap = %spec.cap,
        "run starts"
    );
}

impl Hooks {
    /// Takes the hooks out of `spec` (the probe stays: the world looks at
    /// it first, then the shell takes it).
    pub fn take(spec: &mut TeamSpec) -> Setup {
        let mut hooks = Hooks { live: spec.live.take(), abort: spec.abort.take(), ..Hooks::default() };
        let mut mirror_error = None;
        if spec.mailbox.file().is_some() {
            match spec.inbox_dir.take().map(crate::inbox::DiskMirror::new) {
                None => {}
                Some(Ok(m)) => hooks.mirror = Some(m),
                Some(Err(e)) => mirror_error = Some(e.to_string()),
            }
        }
        // Claude Code mode writes its team folder whole when the run ends.
        let claude_code = matches!(spec.mailbox, crate::world::MailboxWorld::ClaudeCode(_));
        let team_folder = if claude_code { spec.inbox_dir.take() } else { None };
        Setup { hooks, mirror_error, team_folder }
    }

    #[inline(always)]
    pub fn listening(&self) -> bool {
        self.live.is_some()
    }

    pub fn hear(&mut self, event: &Stamped, names: &[String]) {
        if let Some(live) = &mut self.live {
            live(event, names);
        }
    }

    #[inline(always)]
    pub fn probe(&mut self, event: &crate::trace::Event) {
        if let Some(probe) = &mut self.probe {
            probe(event);
        }
    }

    pub fn must_stop(&mut self) -> bool {
        self.abort.as_mut().is_some_and(|abort| abort())
    }

    pub fn files_changed(&mut self, fs: &mut crate::inbox::SimFs) -> Result<(), String> {
        match &self.mirror {
            Some(m) => m.follow(fs).map(|_| ()).map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }
}

/// The team's agents in team order, the lead first. The teammates' specs
/// are consumed, not drained: an allocator that gives memory back only
/// after a delay (mimalloc) would still hold them at the run's peak.
pub fn agents(spec: &mut TeamSpec) -> impl Iterator<Item = Agent> {
    let defences = spec.policy.defences;
    let lead = match spec.load.take() {
        Some(load) => Agent::Lead(Box::new(Lead::with_load(defences, load))),
        None => Agent::Lead(Box::new(spec.lead.lead(defences))),
    };
    let teammates =
        std::mem::take(&mut spec.teammates).into_iter().map(move |(_, t)| Agent::Teammate(Teammate::new(t)));
    std::iter::once(lead).chain(teammates)
}

/// What is read of every agent at the end: its requests, the load's
/// handshakes, and whether an agent still running holds a pending request.
#[derive(Default)]
pub struct Ends {
    pub requests: Vec<Request>,
    pub load_done: u64,
    pub live_pending: bool,
}

impl Ends {
    /// Agent `id`'s final state. A pending request of an agent still
    /// running keeps the run alive; one of a crashed or killed agent lost
    /// its timer.
    pub fn add(&mut self, roster: &impl crate::protocol::Directory, id: AgentId, agent: &Agent) {
        if let Some(table) = agent.table() {
            let active = roster.is_active(id);
            self.live_pending |= active && table.iter().any(|r| r.status == Status::Pending);
            self.requests.extend(table.iter().cloned());
        }
        self.load_done += agent.load_done();
    }
}
