//! Runs a scenario once and judges it: the oracle's invariants, then the
//! file's expectations. The first failure is explained with the events that
//! led to it.

use super::build::{Expect, FileExpect, Scenario};
use crate::oracle::{self, Invariant, Violation};
use crate::protocol::Request;
use crate::protocol::{AgentId, GateState, Millis, Reason, RequestId, Status};
use crate::team::run;
use crate::trace::{ignored_reason, Event, Stamped};
use crate::world::{Outcome, Stop};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::BuildHasherDefault;

/// Counts a report shows.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    pub messages: usize,
    pub handshakes: usize,
    pub completed: usize,
    pub ignored: usize,
    pub expired: usize,
    pub refused: usize,
    pub lost: usize,
    pub deadlocks: usize,
}

/// A deadlock the run went through: who waited on whom, and how it ended.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DeadlockReport {
    /// In waiting order: each waits on the next, the last on the first.
    pub members: Vec<String>,
    /// The requests that held them, by label, in the same order.
    pub requests: Vec<String>,
    pub formed_ms: u64,
    /// When it broke; `None` if the team was still deadlocked at the end.
    pub broken_ms: Option<u64>,
    /// The request whose end broke it.
    pub broken_by: Option<String>,
    /// The timeout default applied, if an expiry broke it.
    pub default: Option<&'static str>,
}

impl DeadlockReport {
    /// `alice → bob → alice`.
    pub fn cycle(&self) -> String {
        crate::trace::cycle_of(self.members.iter().map(String::as_str))
    }
}

/// The deadlocks of a run, in the order they formed.
pub fn deadlocks(o: &Outcome) -> Vec<DeadlockReport> {
    let label = |id: &crate::protocol::RequestId| o.names.label(*id).map_or_else(|| id.to_string(), str::to_string);
    let mut out: Vec<DeadlockReport> = Vec::new();
    for e in &o.events {
        match &e.event {
            Event::Deadlock { members, requests } => out.push(DeadlockReport {
                members: members.iter().map(|a| o.names.agent(*a).to_string()).collect(),
                requests: requests.iter().map(label).collect(),
                formed_ms: e.t.0,
                broken_ms: None,
                broken_by: None,
                default: None,
            }),
            Event::DeadlockBroken { members, by, default } => {
                let names: Vec<String> = members.iter().map(|a| o.names.agent(*a).to_string()).collect();
                if let Some(d) = out.iter_mut().find(|d| d.broken_ms.is_none() && d.members == names) {
                    d.broken_ms = Some(e.t.0);
                    d.broken_by = Some(label(by));
                    d.default = default.map(|d| d.as_str());
                }
            }
            _ => {}
        }
    }
    out
}

/// One failed check, in words.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Failure {
    pub check: String,
    pub at_ms: u64,
    /// Judged when the run ended (an end state, a count, a stop), not
    /// broken by an event at `at_ms`: when the request or agent got to the
    /// state judged is in `context`.
    #[serde(skip)]
    pub at_end: bool,
    pub message: String,
    /// The events that led to it, as readable lines.
    pub context: Vec<String>,
}

#[derive(Debug, serde::Serialize)]
pub struct Report {
    pub name: String,
    pub path: String,
    pub seed: u64,
    pub passed: bool,
    pub failures: Vec<Failure>,
    pub violations: Vec<String>,
    pub counts: Counts,
    pub virtual_ms: u64,
    /// Rounded to the microsecond: a clock's last digits are noise, and
    /// 0.32519899999999996 is not a figure anyone can use.
    #[serde(serialize_with = "crate::words::serialize_real_ms")]
    pub real_ms: f64,
    pub stopped_by: &'static str,
    /// Requests still pending when the run stopped, by label.
    pub pending: Vec<String>,
    pub deadlocks: Vec<DeadlockReport>,
    /// `Some(false)` for a run that followed a schedule the explorer judged
    /// by the invariants alone: the file's `[[expect]]` entries, which
    /// describe its own run, were not judged (a violation it expects was
    /// allowed, not required). Absent otherwise: they were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expectations_judged: Option<bool>,
    /// How many events the run's trace holds: a sweep's measure of work
    /// (`bench::sweep`), known without keeping the outcome.
    #[serde(skip)]
    pub events: usize,
    /// Every request's end state and every agent's final status, when asked
    /// (`run --format json`); a sweep of many runs keeps neither.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<Vec<RequestEnd>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roster: Option<Vec<AgentEnd>>,
    #[serde(skip)]
    pub outcome: Option<Outcome>,
}

/// A request as the run left it.
#[derive(Debug, serde::Serialize)]
pub struct RequestEnd {
    pub label: String,
    pub kind: &'static str,
    pub requester: String,
    pub target: String,
    pub status: &'static str,
}

/// An agent as the run left it.
#[derive(Debug, serde::Serialize)]
pub struct AgentEnd {
    pub name: String,
    pub status: &'static str,
}

/// How to run: overrides from the command line.
#[derive(Default)]
pub struct RunOptions {
    pub cap: Option<Millis>,
    /// Real-time budget for one run; past it the run is stopped.
    pub max_real: Option<std::time::Duration>,
    pub live: Option<crate::trace::LiveSink>,
    /// Keep the outcome (events) in the report, for `--trace`.
    pub keep_outcome: bool,
    /// File mode: write the inbox files here as the run makes them (`--inbox-dir`).
    pub inbox_dir: Option<std::path::PathBuf>,
    /// Take these choices at every tie (a schedule the explorer wrote): the
    /// run is then the explorer's world, with its seed (`--schedule`).
    pub schedule: Option<crate::world::Schedule>,
    /// Keep every agent's state after each turn, for the page that steps
    /// through the run (`--html`).
    pub frames: bool,
    /// Report every request's end state and the final roster (`Report::requests`, `roster`).
    pub ends: bool,
    /// Play the run in the plain shell (`crate::team::plain`) rather than
    /// through actix: the same run, without an actor runtime.
    pub plain: bool,
}

impl RunOptions {
    /// The defaults, played in the plain shell: what sweeps, fuzz and shrink
    /// play many runs with (the same trace as the actix shell's, at less
    /// cost; tests/plain_shell.rs).
    pub fn plain() -> RunOptions {
        RunOptions { plain: true, ..RunOptions::default() }
    }
}

pub fn run_scenario(s: &Scenario, seed: u64, mut opts: RunOptions) -> Report {
    let mut spec = s.team_spec(seed, opts.cap);
    // A schedule is judged as the explorer judged it: by the file's
    // expectations only if it was (`explore --expect`).
    let expectations = opts.schedule.as_ref().is_none_or(|x| x.expectations);
    if let Some(schedule) = opts.schedule.take() {
        // The world the explorer searched, which the schedule was taken in.
        spec = spec.as_explored(schedule.file_faults);
        spec.seed = schedule.seed;
        spec.schedule = Some(schedule.choices);
    }
    spec.live = opts.live.take();
    spec.inbox_dir = opts.inbox_dir.take();
    spec.frames = opts.frames;
    // The inbox files (a Claude Code team folder, file-mode inboxes) are left
    // at the end only for what reads them: the folder written out, the
    // outcome kept, an inbox expectation.
    spec.folder = spec.inbox_dir.is_some() || opts.keep_outcome || s.reads_inbox_files();
    // The real-time guard lives outside the simulation: it can only stop a
    // run, never change what happens in it, so determinism is untouched.
    let started = std::time::Instant::now();
    let budget = opts.max_real.unwrap_or(std::time::Duration::from_secs(60));
    spec.abort = Some(Box::new(move || started.elapsed() > budget));
    let outcome = if opts.plain { crate::team::run_plain(spec) } else { run(spec) };
    let real = started.elapsed();
    let violations = oracle::check(&outcome, s.policy(), &s.require_plan());
    let deadlocks = deadlocks(&outcome);
    let mut failures = judge(s, &outcome, &violations, &deadlocks, budget, expectations);
    if let Some(e) = &outcome.schedule_error {
        failures.push(Failure {
            check: "schedule".into(),
            at_ms: outcome.ended_at.0,
            at_end: false,
            message: e.clone(),
            context: Vec::new(),
        });
    }
    if let Some(e) = &outcome.mirror_error {
        // The run itself is sound, but the files the user asked to see are not.
        failures.push(Failure {
            check: "inbox-dir".into(),
            at_ms: 0,
            at_end: false,
            message: format!("the inbox files could not be written: {e}"),
            context: Vec::new(),
        });
    }
    let counts = count(&outcome);
    let pending = outcome
        .requests
        .iter()
        .filter(|r| r.status == Status::Pending)
        .map(|r| outcome.names.label(r.id).unwrap_or("?").to_string())
        .collect();
    let (requests, roster) = if opts.ends {
        let n = &outcome.names;
        let requests = outcome
            .requests
            .iter()
            .map(|r| RequestEnd {
                label: n.label_or_short(r.id),
                kind: r.kind.as_str(),
                requester: n.agent(r.requester).to_string(),
                target: n.agent(r.target).to_string(),
                status: r.status.as_str(),
            })
            .collect();
        let roster = outcome
            .roster
            .iter()
            .enumerate()
            .map(|(i, st)| AgentEnd {
                name: n.agent(crate::protocol::AgentId(i as u32)).to_string(),
                status: st.as_str(),
            })
            .collect();
        (Some(requests), Some(roster))
    } else {
        (None, None)
    };
    Report {
        name: s.name.clone(),
        path: s.path.clone(),
        seed,
        passed: failures.is_empty(),
        failures,
        violations: violations.iter().map(|v| format!("{}: {}", v.invariant, v.detail)).collect(),
        counts,
        virtual_ms: outcome.ended_at.0,
        real_ms: real.as_secs_f64() * 1000.0,
        stopped_by: match outcome.stop {
            Stop::Settled => "settled",
            Stop::EndTime => "end",
            Stop::Cap => "cap",
            Stop::Aborted => REAL_TIME_GUARD,
            Stop::InboxBound => "inbox bound",
            Stop::LogBound => "log bound",
            Stop::ScheduleEnd => "the schedule's end",
        },
        pending,
        deadlocks,
        expectations_judged: (!expectations).then_some(false),
        events: outcome.events.len(),
        requests,
        roster,
        outcome: opts.keep_outcome.then_some(outcome),
    }
}

fn count(o: &Outcome) -> Counts {
    let mut c = Counts::default();
    for e in &o.events {
        match &e.event {
            Event::Send { .. } => c.messages += 1,
            Event::Opened { .. } => c.handshakes += 1,
            Event::Verdict { verdict: crate::protocol::Verdict::Applied { .. }, .. } => c.completed += 1,
            Event::Verdict { .. } | Event::RequestIgnored { .. } => c.ignored += 1,
            Event::Expired { .. } => c.expired += 1,
            Event::Refuse { .. } => c.refused += 1,
            Event::Dropped { .. } => c.lost += 1,
            Event::Deadlock { .. } => c.deadlocks += 1,
            _ => {}
        }
    }
    c
}

/// Lines describing the events up to `upto` (inclusive), the last `n` that
/// concern `focus` if given, else simply the last `n`.
fn context(o: &Outcome, upto: usize, focus: impl Fn(&Event) -> bool, n: usize) -> Vec<String> {
    let upto = (upto + 1).min(o.events.len());
    let mut picked: Vec<&Stamped> = o.events[..upto].iter().rev().filter(|e| focus(&e.event)).take(n).collect();
    picked.reverse();
    picked.iter().map(|e| e.describe(&o.names)).collect()
}

/// The file's expectations judged against a run made elsewhere (one of the
/// explorer's schedules), as `run` judges its own: what failed.
pub fn judge_outcome(s: &Scenario, o: &Outcome) -> Vec<Failure> {
    let violations = oracle::check(o, s.policy(), &s.require_plan());
    let deadlocks = deadlocks(o);
    judge(s, o, &violations, &deadlocks, std::time::Duration::MAX, true)
}

/// What failed in run `o` of `s`: a guard's stop, a violation or deadlock
/// the file does not expect, and, with `expectations`, each `[[expect]]`
/// entry not met. Without it (a schedule the explorer judged by the
/// invariants alone) a violation the file expects is allowed, not required.
fn judge(
    s: &Scenario,
    o: &Outcome,
    violations: &[Violation],
    all_deadlocks: &[DeadlockReport],
    budget: std::time::Duration,
    expectations: bool,
) -> Vec<Failure> {
    let mut failures = Vec::new();
    let last = o.events.len().saturating_sub(1);
    stopped_by_a_guard(o, budget, last, &mut failures);
    let seen = unexpected_violations(s, o, violations, last, &mut failures);
    if s.policy().fail_on_deadlock {
        unexpected_deadlocks(s, o, all_deadlocks, last, &mut failures);
    }
    if expectations {
        unmet_expectations(s, o, &seen, all_deadlocks, last, &mut failures);
    }
    failures
}

/// What a run stopped by the real-time guard says stopped it (its report's
/// `stopped_by`, the check it fails).
pub const REAL_TIME_GUARD: &str = "real-time guard";

/// A run a guard stopped (real time, the inbox files' bound, the log's
/// bound) fails for it.
fn stopped_by_a_guard(o: &Outcome, budget: std::time::Duration, last: usize, failures: &mut Vec<Failure>) {
    let (check, message) = match o.stop {
        Stop::Aborted => (
            REAL_TIME_GUARD,
            format!(
                "the run used more than {} of real time and was stopped",
                Millis(u64::try_from(budget.as_millis()).unwrap_or(u64::MAX))
            ),
        ),
        Stop::LogBound => (
            "log bound",
            format!(
                "the run logged {} events, the most a run's log holds; the run was stopped there, and is judged up \
                 to it",
                crate::world::MAX_LOGGED
            ),
        ),
        Stop::InboxBound => (
            "inbox bound",
            format!(
                "the inbox files would have held more than {} MiB at once, the most a file-mode run may hold; the run was stopped",
                crate::inbox::MAX_HELD_BYTES >> 20
            ),
        ),
        Stop::Settled | Stop::EndTime | Stop::Cap | Stop::ScheduleEnd => return,
    };
    failures.push(Failure {
        check: check.into(),
        at_ms: o.ended_at.0,
        at_end: true,
        message,
        context: context(o, last, |_| true, 8),
    });
}

/// Each violation the file does not expect fails the run; the invariants
/// broken at all, expected or not, are returned.
fn unexpected_violations(
    s: &Scenario,
    o: &Outcome,
    violations: &[Violation],
    last: usize,
    failures: &mut Vec<Failure>,
) -> BTreeSet<Invariant> {
    let expected: BTreeSet<Invariant> =
        s.expects.iter().filter_map(|e| if let Expect::Violation(i) = e { Some(*i) } else { None }).collect();
    let mut seen = BTreeSet::new();
    for v in violations {
        seen.insert(v.invariant);
        if expected.contains(&v.invariant) {
            continue;
        }
        failures.push(Failure {
            check: format!("invariant {}", v.invariant),
            at_ms: v.at.0,
            at_end: false,
            message: v.detail.clone(),
            context: context(o, v.event.unwrap_or(last), |_| true, 8),
        });
    }
    seen
}

/// With `deadlocks = "fail"`, each deadlock the file does not expect fails the run.
fn unexpected_deadlocks(
    s: &Scenario,
    o: &Outcome,
    all_deadlocks: &[DeadlockReport],
    last: usize,
    failures: &mut Vec<Failure>,
) {
    let expected = |d: &DeadlockReport| {
        s.expects.iter().any(|e| matches!(e, Expect::Deadlock { members, .. } if same_members(members, &d.members)))
    };
    for d in all_deadlocks.iter().filter(|d| !expected(d)) {
        let i = o
            .events
            .iter()
            .position(|e| matches!(e.event, Event::Deadlock { .. }) && e.t.0 == d.formed_ms)
            .unwrap_or(last);
        failures.push(Failure {
            check: "no deadlock (policy: deadlocks = \"fail\")".into(),
            at_ms: d.formed_ms,
            at_end: false,
            message: format!(
                "deadlock {} formed at {}: each waits on the next ({})",
                d.cycle(),
                Millis(d.formed_ms),
                d.requests.iter().map(|r| format!("[{r}]")).collect::<Vec<_>>().join(", ")
            ),
            context: context(o, i, |_| true, 8),
        });
    }
}

/// Each of the file's `[[expect]]` the run did not meet fails it.
fn unmet_expectations(
    s: &Scenario,
    o: &Outcome,
    seen: &BTreeSet<Invariant>,
    all_deadlocks: &[DeadlockReport],
    last: usize,
    failures: &mut Vec<Failure>,
) {
    let facts = Facts::of(o, &s.expects);
    let gate_of = |name: &str| -> GateState {
        let id = facts.agents.get(name).copied();
        // `Scenario::require_plan` read in place: the lead first, needing none.
        let planned = |id: AgentId| id.index().checked_sub(1).and_then(|i| s.team.teammates.get(i));
        let initial = match id.and_then(planned) {
            Some((_, t)) if t.require_plan => GateState::Required,
            _ => GateState::NotRequired,
        };
        id.and_then(|id| facts.gates.get(&id).copied()).unwrap_or(initial)
    };
    for e in &s.expects {
        let fail = |message: String, focus: &dyn Fn(&Event) -> bool| Failure {
            check: describe_expect(e),
            at_ms: o.ended_at.0,
            at_end: true,
            message,
            context: context(o, last, focus, 8),
        };
        match e {
            Expect::Violation(i) => {
                if !seen.contains(i) {
                    failures
                        .push(fail(format!("the oracle was expected to report {i}, but that invariant held"), &|_| {
                            true
                        }));
                }
            }
            Expect::Request { label, status } => match facts.requests.get(label.as_str()).copied() {
                None => failures
                    .push(fail(format!("request {label} was never made (refused, or its step never ran)"), &|e| {
                        matches!(e, Event::Refuse { .. })
                    })),
                Some(r) if r.status != *status => {
                    let id = r.id;
                    failures.push(fail(format!("request {label} ended {}, expected {status}", r.status), &move |e| {
                        crate::trace::status_after(e).is_some_and(|(x, _)| x == id)
                            || matches!(e, Event::Verdict { request_id, .. } if *request_id == id)
                    }));
                }
                Some(_) => {}
            },
            Expect::Teammate { name, status } => {
                let id = facts.agents.get(name.as_str()).copied();
                let got = id.and_then(|id| o.roster.get(id.index()).copied());
                if got != Some(*status) {
                    let got = got.map_or("unknown".to_string(), |g| g.to_string());
                    failures.push(fail(
                        format!("{name} ended {got}, expected {status}"),
                        &move |e| matches!(e, Event::Status { agent, .. } if Some(*agent) == id),
                    ));
                }
            }
            Expect::Gate { name, state } => {
                let got = gate_of(name);
                if got != *state {
                    failures.push(fail(format!("{name}'s plan gate ended {got}, expected {state}"), &|e| {
                        matches!(e, Event::Gate { .. })
                    }));
                }
            }
            Expect::File { path, state } => {
                let got = match o.files.get(path) {
                    None => FileExpect::Absent,
                    Some(f) if f.is_complete() => FileExpect::Complete,
                    Some(_) => FileExpect::Partial,
                };
                if got != *state {
                    let p = path.clone();
                    failures.push(fail(
                        format!("{path} ended {}, expected {}", got.as_str(), state.as_str()),
                        &move |e| matches!(e, Event::FileStep { path, .. } if **path == *p),
                    ));
                }
            }
            Expect::Ignored { count, reason } => {
                let got = match reason {
                    None => facts.ignored.values().sum(),
                    Some(r) => facts.ignored.get(r).copied().unwrap_or(0),
                };
                if got != *count as usize {
                    let what = reason.map(|r: Reason| format!(" as {r}")).unwrap_or_default();
                    failures.push(fail(format!("{got} messages were ignored{what}, expected {count}"), &|e| {
                        matches!(e, Event::Verdict { .. } | Event::RequestIgnored { .. })
                    }));
                }
            }
            Expect::Refused { count, rule } => {
                let got = match rule {
                    None => facts.refused.values().sum(),
                    Some(r) => facts.refused.get(r.as_str()).copied().unwrap_or(0),
                };
                if got != *count as usize {
                    failures.push(fail(format!("{got} sends were refused, expected {count}"), &|e| {
                        matches!(e, Event::Refuse { .. })
                    }));
                }
            }
            Expect::Deadlock { members, broken } => {
                failures.extend(deadlock_unmet(e, o, last, all_deadlocks, members, *broken))
            }
            Expect::Received { message_type, by, from, count } => {
                failures.extend(received_unmet(e, o, last, &facts, *message_type, by, from.as_deref(), *count))
            }
            Expect::InboxLines { owner, lines, message_type, .. } => {
                failures.extend(inbox_unmet(e, o, last, owner, *lines, *message_type))
            }
            Expect::Expired { count } => {
                let got = facts.expired;
                if got != *count as usize {
                    failures.push(fail(format!("{got} requests expired, expected {count}"), &|e| {
                        matches!(e, Event::Expired { .. })
                    }));
                }
            }
        }
    }
}

/// A failed expectation, with the events around the end that `focus` picks.
fn failure(e: &Expect, o: &Outcome, last: usize, message: String, focus: &dyn Fn(&Event) -> bool) -> Failure {
    Failure {
        check: describe_expect(e),
        at_ms: o.ended_at.0,
        at_end: true,
        message,
        context: context(o, last, focus, 8),
    }
}

/// Whether two lists name the same agents, in any order.
fn same_members(a: &[String], b: &[String]) -> bool {
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    a.sort();
    b.sort();
    a == b
}

/// A deadlock the file expects among `members`: formed, and broken or lasting as it says.
fn deadlock_unmet(
    e: &Expect,
    o: &Outcome,
    last: usize,
    all_deadlocks: &[DeadlockReport],
    members: &[String],
    broken: Option<bool>,
) -> Option<Failure> {
    let fail = |message: String, focus: &dyn Fn(&Event) -> bool| Some(failure(e, o, last, message, focus));
    let mut want = members.to_vec();
    want.sort();
    let found = all_deadlocks.iter().find(|d| same_members(&want, &d.members));
    let focus = |e: &Event| matches!(e, Event::Deadlock { .. } | Event::DeadlockBroken { .. });
    match (found, broken) {
        (None, _) => fail(format!("no deadlock among {} formed", want.join(", ")), &|e: &Event| {
            matches!(e, Event::Deadlock { .. } | Event::Opened { .. })
        }),
        (Some(d), Some(true)) if d.broken_ms.is_none() => {
            fail(format!("deadlock {} formed at {} and was never broken", d.cycle(), Millis(d.formed_ms)), &focus)
        }
        (Some(d), Some(false)) if d.broken_ms.is_some() => fail(
            format!(
                "deadlock {} was broken at {} by [{}]; expected it to last",
                d.cycle(),
                Millis(d.broken_ms.unwrap_or_default()),
                d.broken_by.as_deref().unwrap_or("?")
            ),
            &focus,
        ),
        _ => None,
    }
}

/// A message type `by` must have received (from `from`, `count` times).
#[allow(clippy::too_many_arguments)]
fn received_unmet(
    e: &Expect,
    o: &Outcome,
    last: usize,
    facts: &Facts,
    message_type: crate::protocol::MessageType,
    by: &str,
    from: Option<&str>,
    count: Option<u32>,
) -> Option<Failure> {
    let fail = |message: String, focus: &dyn Fn(&Event) -> bool| Some(failure(e, o, last, message, focus));
    let by_id = facts.agents.get(by).copied();
    let from_id = from.and_then(|f| facts.agents.get(f).copied());
    let mt = message_type;
    let matches = move |e: &Event| {
        matches!(e, Event::Deliver { to, message_type, sender, .. }
            if Some(*to) == by_id && *message_type == mt && (from_id.is_none() || Some(*sender) == from_id))
    };
    let got = o.events.iter().filter(|e| matches(&e.event)).count();
    let ok = match count {
        Some(n) => got == n as usize,
        None => got > 0,
    };
    if ok {
        return None;
    }
    let whence = from.map(|f| format!(" from {f}")).unwrap_or_default();
    let want = count.map_or("at least one".to_string(), |n| n.to_string());
    fail(
        format!("{by} received {got} {mt}{whence}, expected {want}"),
        &move |e: &Event| matches!(e, Event::Deliver { to, .. } | Event::Dropped { to, .. } if Some(*to) == by_id),
    )
}

/// How many lines (file mode) or entries (Claude Code mode) of a type an
/// inbox file holds at the end.
fn inbox_unmet(
    e: &Expect,
    o: &Outcome,
    last: usize,
    owner: &str,
    lines: u32,
    message_type: Option<crate::protocol::MessageType>,
) -> Option<Failure> {
    let fail = |message: String, focus: &dyn Fn(&Event) -> bool| Some(failure(e, o, last, message, focus));
    let array = crate::inbox::team::inbox_path(owner);
    let (path, got, unit) = match o.inbox_files.get(&array) {
        Some(bytes) => (array, entries_of(bytes, message_type), "entry"),
        None => {
            let path = crate::inbox::inbox_path(owner);
            let text = o.inbox_files.get(&path).map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_default();
            let got = text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .filter(|l| message_type.is_none_or(|t| line_type(l).as_deref() == Some(t.name())))
                .count();
            (path, got, "line")
        }
    };
    if got == lines as usize {
        return None;
    }
    let of = message_type.map(|t| format!(" of type {t}")).unwrap_or_default();
    let holds = if unit == "line" { format!("{got} line(s)") } else { crate::words::plural(got as u64, unit) };
    fail(format!("{path} holds {holds}{of} at the end, expected {lines}"), &|e: &Event| matches!(e, Event::Read { .. }))
}

/// How many entries of a Claude Code inbox array say a message of
/// `message_type` (each entry's `text` read as the audit reads it).
fn entries_of(bytes: &[u8], message_type: Option<crate::protocol::MessageType>) -> usize {
    use crate::inbox::team_text::{read, Said};
    use crate::protocol::MessageType;
    let entries: Vec<serde_json::Value> = serde_json::from_slice(bytes).unwrap_or_default();
    let type_of = |e: &serde_json::Value| match read(e.get("text").and_then(|t| t.as_str()).unwrap_or("")) {
        Said::Request { kind, .. } => Some(MessageType::Request(kind)),
        Said::Answer { kind, .. } => Some(MessageType::Response(kind)),
        Said::Plain => Some(MessageType::Message),
        _ => None,
    };
    entries.iter().filter(|e| message_type.is_none_or(|t| type_of(e) == Some(t))).count()
}

/// What expectations ask about a run, gathered in one pass over its events:
/// a file may hold many expectations, and each must not scan the run again.
/// Only what the file's expectations read is gathered: a sweep judges every
/// run, and most files ask about a few names or counts, not all of them.
struct Facts<'o> {
    /// Each label's request (the first, as labels are unique).
    requests: BTreeMap<&'o str, &'o Request>,
    /// By name: hashed, not sorted, as a big team's names (a hundred
    /// workers, each with an expectation) cost more to sort and search
    /// than to hash, and nothing walks them in order.
    agents: HashMap<&'o str, AgentId, BuildHasherDefault<NameHash>>,
    /// Each agent's last gate state.
    gates: BTreeMap<AgentId, GateState>,
    ignored: BTreeMap<Reason, usize>,
    /// Refused sends, by the rule they broke.
    refused: BTreeMap<&'static str, usize>,
    expired: usize,
}

/// A short hash for the agents' names: they are the scenario's own (no
/// one picks them to collide), and the standard hasher, built to resist
/// such picking, costs several times more on names this short.
type NameHash = crate::fnv::Fnv1a;

impl<'o> Facts<'o> {
    fn of(o: &'o Outcome, expects: &[Expect]) -> Facts<'o> {
        let asks = |f: fn(&Expect) -> bool| expects.iter().any(f);
        let mut f = Facts {
            requests: BTreeMap::new(),
            agents: HashMap::default(),
            gates: BTreeMap::new(),
            ignored: BTreeMap::new(),
            refused: BTreeMap::new(),
            expired: 0,
        };
        if asks(|e| matches!(e, Expect::Teammate { .. } | Expect::Gate { .. } | Expect::Received { .. })) {
            // Collected in team order, so a name given twice is its last agent's, as before.
            f.agents = o.names.agents.iter().enumerate().map(|(i, n)| (n.as_str(), AgentId(i as u32))).collect();
        }
        if asks(|e| matches!(e, Expect::Request { .. })) {
            // Only the labels the file names: a hundred requests, two of
            // them asked about, need not each have their label looked up.
            let asked: Vec<&str> = expects
                .iter()
                .filter_map(|e| if let Expect::Request { label, .. } = e { Some(label.as_str()) } else { None })
                .collect();
            let ids: HashMap<RequestId, &str, BuildHasherDefault<NameHash>> = o
                .names
                .labels
                .iter()
                .filter(|(_, label)| asked.contains(&label.as_str()))
                .map(|(id, label)| (*id, label.as_str()))
                .collect();
            for r in &o.requests {
                if let Some(label) = ids.get(&r.id) {
                    f.requests.entry(label).or_insert(r);
                }
            }
        }
        if asks(|e| {
            matches!(e, Expect::Gate { .. } | Expect::Ignored { .. } | Expect::Refused { .. } | Expect::Expired { .. })
        }) {
            f.count_events(o);
        }
        f
    }

    /// The gates, ignored messages, refusals and expiries: one pass over the log.
    fn count_events(&mut self, o: &Outcome) {
        for e in &o.events {
            if let Some(r) = ignored_reason(&e.event) {
                *self.ignored.entry(r).or_default() += 1;
            }
            match &e.event {
                Event::Gate { agent, state } => {
                    self.gates.insert(*agent, *state);
                }
                Event::Refuse { error, .. } => *self.refused.entry(error.rule()).or_default() += 1,
                Event::Expired { .. } => self.expired += 1,
                _ => {}
            }
        }
    }
}

/// An expectation as the file wrote it.
pub fn describe_expect(e: &Expect) -> String {
    match e {
        Expect::Request { label, status } => format!("request {label} is {status}"),
        Expect::Teammate { name, status } => format!("teammate {name} is {status}"),
        Expect::Gate { name, state } => format!("{name}'s gate is {state}"),
        Expect::File { path, state } => format!("file {path} is {}", state.as_str()),
        Expect::Ignored { count, reason: None } => format!("{count} messages ignored"),
        Expect::Ignored { count, reason: Some(r) } => format!("{count} messages ignored as {r}"),
        Expect::Refused { count, rule: None } => format!("{count} sends refused"),
        Expect::Refused { count, rule: Some(r) } => format!("{count} sends refused by {r}"),
        Expect::Expired { count } => format!("{count} requests expired"),
        Expect::Deadlock { members, broken } => {
            let how = match broken {
                Some(true) => ", broken by a timeout",
                Some(false) => ", lasting to the end",
                None => "",
            };
            format!("a deadlock among {} forms{how}", members.join(", "))
        }
        Expect::Violation(i) => format!("the oracle reports {i}"),
        Expect::Received { message_type, by, from, count } => {
            let whence = from.as_ref().map(|f| format!(" from {f}")).unwrap_or_default();
            match count {
                Some(n) => format!("{by} receives {n} {message_type}{whence}"),
                None => format!("{by} receives a {message_type}{whence}"),
            }
        }
        Expect::InboxLines { owner, lines, message_type, entries } => {
            let of = message_type.map(|t| format!(" of type {t}")).unwrap_or_default();
            match entries {
                true => format!(
                    "{} holds {}{of}",
                    crate::inbox::team::inbox_path(owner),
                    crate::words::plural(u64::from(*lines), "entry")
                ),
                false => format!("{} holds {lines} line(s){of}", crate::inbox::inbox_path(owner)),
            }
        }
    }
}

/// The `type` a line of an inbox file says it is, if it is JSON that says.
fn line_type(line: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    v.get("type")?.as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file-mode read knows each line the router appended without parsing
    /// it back (`world::filebox`'s `Written`); in tests it parses it anyway
    /// and checks it reads the number the line was written for. Every bundled
    /// scenario, seeds 1 to 10: every line any of them writes and reads.
    #[test]
    fn every_line_the_router_wrote_parses_back_to_its_number() {
        let before = crate::world::filebox::known_lines();
        for b in crate::format::bundled::all() {
            let s =
                crate::scenario::load_str(&b.path().display().to_string(), b.text).expect("a bundled scenario loads");
            for seed in 1..=10 {
                for plain in [true, false] {
                    let report = run_scenario(&s, seed, RunOptions { plain, ..RunOptions::default() });
                    assert!(report.passed, "{} seed {seed}: {:?}", s.name, report.failures);
                }
            }
        }
        let known = crate::world::filebox::known_lines() - before;
        assert!(known > 500, "only {known} lines were known without parsing");
    }
}
