//! Swarm testing: for each scenario and seed, a random subset of the fault
//! kinds and of the scripted actions, random faults and steps of those kinds
//! added to the scenario's own, a run on the actor runtime, and the oracle's
//! verdict.
//!
//! Steps matter as much as faults: a fuzzer finds only what it can write, and
//! a graceful shutdown that left a half-written file slipped through 3.1 M
//! runs that added faults only, because it needed a second plan submitted
//! mid-write. So a seed may also add a plan, a shutdown request, a message or
//! a broadcast at a time of its choosing.
//!
//! The additions are generated as `[[fault]]` and `[[step]]` tables appended to
//! the file's own text, and that text is loaded like any scenario file: what was run is a
//! scenario file, so a find is written out as one and `handshake run` replays
//! it (the seed of the run is the fuzz seed).
//!
//! What counts as a find: an invariant the oracle reports broken that the
//! file does not expect (`[[expect]] violation`), or a run the real-time
//! guard had to stop. The file's other expectations are set aside: the added
//! faults may legitimately change every one of them (a dropped answer leaves
//! a request `expired` that the file expects `approved`). The invariants are
//! never set aside. The policy `deadlocks = "fail"` is set aside too: an added
//! delay may legitimately make a deadlock form.
//!
//! Everything is a function of the scenario's text and the seed: the fault
//! generator is `ChaCha8Rng` seeded from the seed and the scenario's name,
//! and what it draws from (agents, labels, the times things happen) comes
//! from one run of the unmodified scenario with its own seed.

use crate::format::build::MAX_RUN;
use crate::format::write::{Fault, Step};
use crate::protocol::kinds::Asker;
use crate::protocol::{Kind, Millis};
use crate::scenario::{load_str, run_scenario, Expect, Invariant, RunOptions, Scenario, ScenarioError};
use crate::world::FaultKind;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// The fault kinds the swarm chooses from: every kind but those that act
/// on inbox files or arrays, which the targets' message-passing teams do not have.
pub static KINDS: std::sync::LazyLock<Vec<FaultKind>> = std::sync::LazyLock::new(|| {
    FaultKind::ALL.iter().copied().filter(|k| !k.needs_inbox_files() && !k.needs_claude_code()).collect()
});

/// The scripted actions it chooses from (`do = ...` of an added `[[step]]`):
/// every protocol's question, then the rest of what a team does.
pub static STEPS: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
    let mut out: Vec<&'static str> = Kind::ALL.iter().map(|k| k.spec().step).collect();
    out.extend(["request_plan", "respawn", "message", "broadcast"]);
    out
});

use crate::format::file::toml_string;
use crate::protocol::message::{message_types, protocol_types};

/// The marker line before the added faults and steps.
pub const ADDED: &str = "# ---- faults and steps added by handshake fuzz";

/// How a find's file begins: what tells it from a file of the user's own.
pub const FIND_MARK: &str = "# Found by `handshake fuzz`";

/// A scenario ready to be fuzzed: its text, and what one plain run of it
/// shows (who is in the team, which requests are made, when things happen).
pub struct Target {
    pub path: String,
    pub name: String,
    pub text: String,
    pub scenario: Scenario,
    /// The invariants the file expects broken (a defence is off).
    pub expected: BTreeSet<Invariant>,
    /// The defences the file switches off, by their keys in
    /// `[policy.defences]`: a find is counted only if it holds with them on.
    pub switched_off: Vec<String>,
    /// Count what the switched-off defences let through as finds, as they
    /// are (`fuzz --count-defences-off`), rather than judge them again.
    pub count_defences_off: bool,
    agents: Vec<String>,
    teammates: Vec<String>,
    labels: Vec<String>,
    /// The requests of the plain run: label, kind, requester, target.
    requests: Vec<(String, crate::protocol::Kind, String, String)>,
    /// Times (ms) at which something happened in the plain run.
    times: Vec<u64>,
    /// The active span: faults start within `0..=span`.
    span: u64,
    /// Timeouts of the policy, to aim delays at deadlines (`None`: never).
    timeouts: Vec<u64>,
    /// Where the file's own steps begin, and when they run (see `step_headers`).
    step_headers: Vec<(usize, u64)>,
    /// No added step may come before this: the file's last step, when its
    /// steps cannot be found in its text.
    steps_from: u64,
    salt: u64,
}

/// One seed's case: the faults and steps added, and what the run showed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Case {
    pub scenario: String,
    pub path: String,
    pub seed: u64,
    /// The kinds chosen for this seed (the swarm's subset): fault kinds and
    /// step actions.
    pub kinds: Vec<&'static str>,
    /// The added `[[fault]]` and `[[step]]` tables, as TOML text.
    pub added: Vec<String>,
    /// Invariants broken that the file does not expect: `invariant: detail`.
    /// In a file that switches defences off, judged with every one of them
    /// switched on again (see `defences_on`).
    pub findings: Vec<Finding>,
    /// The file's switched-off defences were switched on to judge this case:
    /// its finds hold with every defence on (the written file has them on).
    pub defences_on: bool,
    /// Broken only without the defences the file switches off (they are
    /// named in `ran_without`): what the file's own choice causes, not
    /// counted as a find.
    pub only_without: Vec<Finding>,
    /// The defences the file switches off.
    pub ran_without: Vec<String>,
    /// Expected invariants (a defence is off) that this run did break: the
    /// written file keeps these `[[expect]] violation` entries.
    pub expected_seen: Vec<String>,
    /// The generated file was refused (a bug of the generator): the errors.
    pub refused: Vec<String>,
    /// The additions changed something the file expects (one of its
    /// `[[expect]]` entries no longer holds): a sign the faults bite.
    pub changed: bool,
    pub virtual_ms: u64,
    pub stopped_by: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// The invariant's name, or `real-time guard`.
    pub invariant: String,
    pub detail: String,
}

impl Finding {
    /// What the find is, with what varies from seed to seed masked: its
    /// invariant, and its detail with every number or duration one `#`
    /// (`999ms`, `59.999s` and `1m0.5s` alike) and every request label
    /// `[…]` (an automatic one keeps its kind: `[…/plan/…]`). Finds of one
    /// scenario with the same causes are one root cause seen again
    /// (`Case::causes`).
    pub fn cause(&self) -> String {
        let chars: Vec<char> = self.detail.chars().collect();
        let mut out = format!("{}: ", self.invariant);
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '[' {
                // A label ends at `]`; a `[` in someone's words (a space or a
                // quote before any `]`) is only a character.
                let end = chars[i + 1..].iter().position(|&d| d == ']' || d.is_whitespace() || d == '"');
                if let Some(e) = end.map(|p| i + 1 + p).filter(|&e| chars[e] == ']') {
                    let label: String = chars[i + 1..e].iter().collect();
                    match label.split('/').collect::<Vec<_>>().as_slice() {
                        [_, kind, _] => out.push_str(&format!("[…/{kind}/…]")),
                        _ => out.push_str("[…]"),
                    }
                    i = e + 1;
                    continue;
                }
            }
            if c.is_ascii_digit() {
                i = past_a_number(&chars, i);
                out.push('#');
                continue;
            }
            out.push(c);
            i += 1;
        }
        out
    }
}

/// Where the number or duration starting at `i` ends: digits and points,
/// and unit letters each followed by more of them (`1m0.5s`, `999ms`).
fn past_a_number(chars: &[char], mut i: usize) -> usize {
    loop {
        while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
            i += 1;
        }
        let unit = chars[i..].iter().take_while(|c| matches!(c, 'm' | 's' | 'h' | 'd' | 'y')).count();
        if unit == 0 || unit > 2 {
            return i;
        }
        i += unit;
        if !chars.get(i).is_some_and(char::is_ascii_digit) {
            return i;
        }
    }
}

impl Case {
    /// The distinct causes of its finds (or of what it broke only without
    /// a defence the file switches off), sorted: its group's key with the
    /// scenario's path.
    pub fn causes(&self) -> Vec<String> {
        let which = if self.findings.is_empty() { &self.only_without } else { &self.findings };
        let set: BTreeSet<String> = which.iter().map(Finding::cause).collect();
        set.into_iter().collect()
    }

    pub fn found(&self) -> bool {
        !self.findings.is_empty()
    }

    /// How many of the added tables are steps (the rest are faults).
    pub fn steps_added(&self) -> usize {
        self.added.iter().filter(|t| is_step(t)).count()
    }

    pub fn faults_added(&self) -> usize {
        self.added.len() - self.steps_added()
    }

    /// "3 faults and 1 step added (delay, crash, submit_plan)".
    pub fn summary(&self) -> String {
        let (f, s) = (self.faults_added(), self.steps_added());
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        let what = match (f, s) {
            (_, 0) => plural(f, "fault"),
            (0, _) => plural(s, "step"),
            _ => format!("{} and {}", plural(f, "fault"), plural(s, "step")),
        };
        format!("{what} added ({})", self.kinds.join(", "))
    }
}

/// Whether an added table is a `[[step]]` (else a `[[fault]]`).
pub fn is_step(table: &str) -> bool {
    table.starts_with("[[step]]")
}

/// The comment line before each added step, which may sit among the file's own.
const STEP_MARK: &str = "# (step added by handshake fuzz)\n";

/// The `at` of a step the generator wrote (`at = "123ms"`, its second line).
fn step_time(table: &str) -> Option<u64> {
    let line = table.lines().nth(1)?;
    line.strip_prefix("at = \"")?.strip_suffix("ms\"")?.parse().ok()
}

/// Where each of the file's `[[step]]` tables begins, with its time, in file
/// order; empty when they cannot all be found by their header lines (a step
/// written inline, say), and then added steps come after the file's last.
fn step_headers(text: &str) -> Vec<(usize, u64)> {
    let mut offsets = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("[[step]]") {
            offsets.push(at);
        }
        at += line.len();
    }
    let times: Option<Vec<u64>> = toml::from_str::<toml::Table>(text).ok().and_then(|doc| match doc.get("step") {
        None => Some(Vec::new()),
        Some(toml::Value::Array(steps)) => steps
            .iter()
            .map(|s| {
                let at = s.get("at")?.as_str()?;
                crate::format::duration::parse_duration(at).ok().map(|m| m.0)
            })
            .collect(),
        Some(_) => None,
    });
    match times {
        Some(times) if times.len() == offsets.len() => offsets.into_iter().zip(times).collect(),
        _ => Vec::new(),
    }
}

impl Target {
    /// Loads a scenario's text and runs it once, unmodified, with its own seed.
    pub fn new(path: &str, text: String) -> Result<Target, Vec<ScenarioError>> {
        let scenario = load_str(path, &text)?;
        let report =
            run_scenario(&scenario, scenario.default_seed(), RunOptions { keep_outcome: true, ..RunOptions::plain() });
        let outcome = report.outcome.as_ref().expect("kept");
        let team = &scenario.team;
        let teammates: Vec<String> = team.teammates.iter().map(|(n, _)| n.clone()).collect();
        let agents: Vec<String> =
            std::iter::once(crate::protocol::LEAD_NAME.to_string()).chain(teammates.iter().cloned()).collect();
        let mut labels: BTreeSet<String> = outcome.names.labels.values().cloned().collect();
        // The next automatic label of each kind, which an added fault may
        // bring about (a forged rejection makes a revision: alice/plan/2).
        for t in teammates.iter().take(8) {
            for kind in crate::protocol::Kind::ALL.map(|k| k.as_str()) {
                let made = labels.iter().filter(|l| l.starts_with(&format!("{t}/{kind}/"))).count();
                labels.insert(format!("{t}/{kind}/{}", made + 1));
            }
        }
        let requests = outcome
            .requests
            .iter()
            .filter_map(|r| {
                let label = outcome.names.label(r.id)?.to_string();
                Some((
                    label,
                    r.kind,
                    outcome.names.agent(r.requester).to_string(),
                    outcome.names.agent(r.target).to_string(),
                ))
            })
            .collect();
        let mut times: BTreeSet<u64> = outcome.events.iter().map(|e| e.t.0).collect();
        times.extend(team.steps.iter().map(|s| s.at.0));
        times.extend(team.timed.iter().map(|(at, _)| at.0));
        // Deadlines, whether or not they expired: a stall or a partition
        // that ends just past one is where timers and answers race.
        times.extend(outcome.requests.iter().map(|r| r.deadline.0).filter(|d| *d != Millis::NEVER.0));
        let limit = team.end.map_or(team.cap, |e| e.min(team.cap)).0;
        let last = times.iter().next_back().copied().unwrap_or(0);
        // A fault's window must end within a run's longest, after its start.
        let span = report.virtual_ms.max(last).min(limit).min(MAX_RUN.0 - 1);
        let timeouts: Vec<u64> =
            team.policy.timeouts.into_iter().filter(|t| *t != Millis::NEVER).map(|t| t.0).collect();
        let expected = scenario
            .expects
            .iter()
            .filter_map(|e| if let Expect::Violation(i) = e { Some(*i) } else { None })
            .collect();
        let step_headers = step_headers(&text);
        let steps_from = match step_headers.is_empty() {
            true => team.steps.iter().map(|s| s.at.0).max().unwrap_or(0),
            false => 0,
        };
        let switched_off = switched_off(&scenario.policy().defences);
        Ok(Target {
            switched_off,
            count_defences_off: false,
            path: path.to_string(),
            name: scenario.name.clone(),
            salt: crate::fnv::fnv1a(scenario.name.as_bytes()),
            step_headers,
            steps_from,
            text,
            scenario,
            expected,
            agents,
            teammates,
            labels: labels.into_iter().collect(),
            requests,
            times: times.into_iter().filter(|t| *t <= limit).collect(),
            span,
            timeouts,
        })
    }

    /// The generator of a seed: the same seed and scenario, the same faults.
    fn rng(&self, seed: u64) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(seed ^ self.salt.rotate_left(29))
    }

    /// The kinds chosen for a seed and the `[[fault]]` and `[[step]]` tables added.
    pub fn additions(&self, seed: u64) -> (Vec<&'static str>, Vec<String>) {
        let mut g = Gen { t: self, rng: self.rng(seed) };
        g.additions()
    }

    /// The scenario's text with the seed's additions: the faults appended,
    /// each step placed among the file's own (a file lists its steps in time
    /// order), marked as added.
    pub fn case_text(&self, seed: u64, added: &[String]) -> String {
        let mut steps: Vec<(u64, &String)> =
            added.iter().filter(|t| is_step(t)).map(|t| (step_time(t).unwrap_or(0), t)).collect();
        steps.sort_by_key(|(at, _)| *at);
        let mut text = String::with_capacity(self.text.len() + 64 * added.len());
        let mut copied = 0;
        let mut next = steps.into_iter().peekable();
        // Each before the first of the file's steps that comes later.
        for &(offset, at) in &self.step_headers {
            while let Some((_, t)) = next.next_if(|(t, _)| *t < at) {
                text.push_str(&self.text[copied..offset]);
                copied = offset;
                text.push_str(STEP_MARK);
                text.push_str(t);
                text.push('\n');
            }
        }
        text.push_str(&self.text[copied..]);
        if !text.ends_with('\n') {
            text.push('\n');
        }
        let _ = writeln!(text, "\n{ADDED} (seed {seed}) ----");
        for (_, t) in next {
            text.push_str(STEP_MARK);
            text.push_str(t);
        }
        for f in added.iter().filter(|t| !is_step(t)) {
            text.push_str(f);
        }
        text
    }

    /// Runs one seed: adds its faults, runs, and asks the oracle.
    pub fn run(&self, seed: u64, max_real: Option<std::time::Duration>) -> Case {
        let (kinds, added) = self.additions(seed);
        let text = self.case_text(seed, &added);
        let mut case = Case {
            scenario: self.name.clone(),
            path: self.path.clone(),
            seed,
            kinds,
            added,
            findings: Vec::new(),
            defences_on: false,
            only_without: Vec::new(),
            ran_without: self.switched_off.clone(),
            expected_seen: Vec::new(),
            refused: Vec::new(),
            changed: false,
            virtual_ms: 0,
            stopped_by: "",
        };
        let s = match load_str(&self.path, &text) {
            Ok(s) => s,
            Err(errors) => {
                case.refused = errors.iter().map(|e| e.to_string()).collect();
                return case;
            }
        };
        let report = run_scenario(&s, seed, RunOptions { max_real, ..RunOptions::plain() });
        case.virtual_ms = report.virtual_ms;
        case.stopped_by = report.stopped_by;
        case.changed = report.failures.iter().any(|f| !f.check.starts_with("invariant "));
        case.findings = findings(&self.expected, &report.violations, report.stopped_by);
        let seen: BTreeSet<&str> = report
            .violations
            .iter()
            .filter_map(|v| v.split(':').next())
            .filter(|name| Invariant::parse(name).is_some_and(|i| self.expected.contains(&i)))
            .collect();
        case.expected_seen = seen.into_iter().map(str::to_string).collect();
        if !case.findings.is_empty() && !self.switched_off.is_empty() && !self.count_defences_off {
            self.judge_with_defences_on(&mut case, &text, max_real);
        }
        case
    }

    /// A find in a file that switches defences off may be what switching
    /// them off causes (24 obeys a late request: a task taken up late is
    /// the same defect). The case is played again with every defence on:
    /// what breaks then is a find; what does not was the file's choice.
    fn judge_with_defences_on(&self, case: &mut Case, text: &str, max_real: Option<std::time::Duration>) {
        let Some(on) = self.defences_switched_on(text) else { return };
        let Ok(s) = load_str(&self.path, &on) else { return };
        let report = run_scenario(&s, case.seed, RunOptions { max_real, ..RunOptions::plain() });
        let found = findings(&BTreeSet::new(), &report.violations, report.stopped_by);
        if found.is_empty() {
            case.only_without = std::mem::take(&mut case.findings);
        } else {
            case.findings = found;
            case.defences_on = true;
            case.expected_seen.clear();
        }
    }

    /// `text` with every defence the file switches off switched on, and
    /// its expected violations set aside (with every defence on, a file
    /// may expect none).
    fn defences_switched_on(&self, text: &str) -> Option<String> {
        let mut on = text.to_string();
        for key in &self.switched_off {
            let setting = crate::scenario::whatif::Setting {
                table: vec!["defences".into()],
                key: key.clone(),
                value: toml::Value::Boolean(true),
            };
            on = crate::scenario::whatif::apply(&on, &setting).ok()?;
        }
        Some(set_aside_expectations(&on, &BTreeSet::new()))
    }

    /// A scenario file that replays a find with `handshake run FILE --seed S`
    /// (or without `--seed`: the file's `seed` is S). The file's `about` and
    /// `seed` are replaced, expectations other than the violations this run
    /// showed are commented out, and the added faults follow a marker line.
    ///
    /// The comment's command names the file as `shown_path` (a shell word)
    /// and ends with `options`: those the find was played with that a `run`
    /// needs to make it again (a `--max-real` other than the default).
    pub fn finding_file(&self, case: &Case, shown_path: &str, options: &str) -> String {
        let what: Vec<String> =
            case.findings.iter().map(|f| format!("{} ({})", f.invariant, one_line(&f.detail, 160))).collect();
        let about = format!(
            "Found by handshake fuzz, seed {}, in {} ({}): with {}, the oracle reports {}. \
             The original's expectations other than violations are set aside (commented out): the additions may \
             legitimately change them.",
            case.seed,
            self.path,
            self.name,
            case.summary(),
            what.join("; ")
        );
        let mut out = String::new();
        let _ = writeln!(out, "{FIND_MARK} (seed {}) from {}.", case.seed, self.path);
        let _ = writeln!(out, "# Reproduce: handshake run {shown_path} --seed {}{options}", case.seed);
        let _ = writeln!(out, "seed = {}", case.seed);
        let _ = writeln!(out, "about = {}", toml_string(&about));
        let mut body = self.case_text(case.seed, &case.added);
        if case.defences_on {
            body = self.defences_switched_on(&body).unwrap_or(body);
            let _ = writeln!(
                out,
                "# Judged with every defence on: the file's own switched-off defences ({}) are switched on here.",
                self.switched_off.join(", ")
            );
        }
        let body = without_top_keys(&body, &["about", "seed"]);
        let keep: BTreeSet<String> = case.expected_seen.iter().cloned().collect();
        out.push_str(&set_aside_expectations(&body, &keep));
        out
    }
}

/// The keys of the defences switched off, in the order `Defences` declares them.
fn switched_off(d: &crate::protocol::Defences) -> Vec<String> {
    let Ok(serde_json::Value::Object(m)) = serde_json::to_value(d) else { return Vec::new() };
    m.into_iter().filter(|(_, on)| *on == serde_json::Value::Bool(false)).map(|(k, _)| k).collect()
}

/// The finds of a run: invariants broken that were not expected, and a run
/// the real-time guard or the inbox bound stopped.
pub fn findings(expected: &BTreeSet<Invariant>, violations: &[String], stopped_by: &str) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    for v in violations {
        let (name, detail) = v.split_once(": ").unwrap_or((v.as_str(), ""));
        if Invariant::parse(name).is_some_and(|i| expected.contains(&i)) {
            continue;
        }
        let f = Finding { invariant: name.to_string(), detail: detail.to_string() };
        // The oracle may word one violation twice (two events show it): said once.
        if !out.contains(&f) {
            out.push(f);
        }
    }
    // A run stopped by a guard was not judged to its end: that is a find too.
    match stopped_by {
        "real-time guard" => out.push(Finding {
            invariant: "real-time guard".into(),
            detail: "the run used more real time than allowed and was stopped".into(),
        }),
        "inbox bound" => out.push(Finding {
            invariant: "inbox bound".into(),
            detail: "the inbox files would have held more than their bound, and the run was stopped".into(),
        }),
        _ => {}
    }
    out
}

/// `text` on one line, cut at `max` characters.
pub fn one_line(text: &str, max: usize) -> String {
    let t: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match t.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &t[..cut]),
        None => t,
    }
}

/// The text without these top-level keys (and their values).
fn without_top_keys(text: &str, keys: &[&str]) -> String {
    let Ok(doc) = toml::de::DeTable::parse(text) else { return text.to_string() };
    let mut cuts: Vec<std::ops::Range<usize>> = Vec::new();
    for (k, v) in doc.get_ref().iter() {
        if keys.contains(&k.get_ref().as_ref())
            && !matches!(v.get_ref(), toml::de::DeValue::Table(_) | toml::de::DeValue::Array(_))
        {
            let mut end = v.span().end;
            // The rest of the line: a comment, then the newline.
            if let Some(nl) = text[end..].find('\n') {
                if text[end..end + nl].trim().is_empty() || text[end..end + nl].trim_start().starts_with('#') {
                    end += nl + 1;
                }
            }
            cuts.push(k.span().start..end);
        }
    }
    cuts.sort_by_key(|r| std::cmp::Reverse(r.start));
    let mut out = text.to_string();
    for c in cuts {
        if c.start <= c.end && c.end <= out.len() {
            out.replace_range(c, "");
        }
    }
    out
}

/// Comments out every `[[expect]]` table except the `violation` ones whose
/// invariant is in `keep`.
fn set_aside_expectations(text: &str, keep: &BTreeSet<String>) -> String {
    let mut out = String::new();
    let mut block: Vec<&str> = Vec::new();
    let mut in_expect = false;
    let flush = |block: &mut Vec<&str>, out: &mut String| {
        if block.is_empty() {
            return;
        }
        let kept = block.iter().any(|l| {
            let l = l.trim();
            l.starts_with("violation") && l.split('"').nth(1).is_some_and(|name| keep.contains(name))
        });
        for l in block.drain(..) {
            if kept || l.trim().is_empty() {
                out.push_str(l);
            } else {
                out.push_str("# (set aside) ");
                out.push_str(l);
            }
            out.push('\n');
        }
    };
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with('[') {
            flush(&mut block, &mut out);
            in_expect = t.starts_with("[[expect]]");
        } else if t.starts_with(ADDED) {
            flush(&mut block, &mut out);
            in_expect = false;
        }
        if in_expect {
            block.push(line);
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    flush(&mut block, &mut out);
    out
}

/// Draws the faults of one seed.
struct Gen<'t> {
    t: &'t Target,
    rng: ChaCha8Rng,
}

impl Gen<'_> {
    fn additions(&mut self) -> (Vec<&'static str>, Vec<String>) {
        // The swarm: each fault kind is in this seed's subset with even odds
        // (at least one), each step action with odds one in three (a step
        // changes the story more than a fault does), then one or two of each
        // kind chosen.
        let mut kinds: Vec<&'static str> =
            KINDS.iter().copied().filter(|_| self.rng.gen_bool(0.5)).map(FaultKind::name).collect();
        if kinds.is_empty() {
            kinds.push(KINDS[self.rng.gen_range(0..KINDS.len())].name());
        }
        kinds.extend(STEPS.iter().copied().filter(|_| self.rng.gen_bool(1.0 / 3.0)));
        let mut out = Vec::new();
        for kind in &kinds {
            let n = self.rng.gen_range(1..=2);
            for _ in 0..n {
                let table = match FaultKind::named(kind) {
                    Some(fault) => self.fault(fault),
                    None => self.step(kind),
                };
                if let Some(t) = table {
                    out.push(t);
                }
            }
        }
        (kinds, out)
    }

    /// A scripted action at a time of the seed's choosing: what a real team
    /// does besides failing (a second plan mid-write, a shutdown nobody
    /// planned for, chatter).
    fn step(&mut self, action: &'static str) -> Option<String> {
        let at = self.time().max(self.t.steps_from);
        let mut f = Step::new(Millis(at), action);
        match action {
            _ if Kind::of_step(action).is_some() => {
                let kind = Kind::of_step(action)?;
                self.ask_step(&mut f, kind)?;
            }
            // The lead asks for a plan mid-work; the lead starts a teammate
            // again (one that is running: a note, and nothing else).
            "request_plan" | "respawn" => {
                f.to = Some(self.teammate()?);
            }
            "message" => {
                let from = self.agent();
                let mut to = self.agent();
                if to == from {
                    to = self.agent();
                }
                if to == from {
                    return None;
                }
                f.from = Some(from);
                f.to = Some(to);
                f.words = Some(("text", "a message added by fuzz".into()));
            }
            _ => {
                f.from = Some(self.agent());
                f.words = Some(("text", "a broadcast added by fuzz".into()));
            }
        }
        Some(f.to_toml())
    }

    /// The keys of a step that asks `kind`'s question, as its spec says who
    /// may ask whom.
    fn ask_step(&mut self, f: &mut Step, kind: Kind) -> Option<()> {
        let spec = kind.spec();
        let words = spec.request_words;
        match spec.asker {
            Asker::Lead { .. } => {
                f.to = Some(self.teammate()?);
            }
            Asker::Teammate { .. } => {
                let from = self.teammate()?;
                f.from = Some(from.clone());
                // To a peer only where the hierarchy allows it; the send
                // rules would refuse it anyway, and a refused step tests less.
                if !self.t.scenario.team.policy.strict_hierarchy && self.rng.gen_bool(0.5) {
                    let to = self.teammate()?;
                    if to != from {
                        f.to = Some(to);
                    }
                }
            }
        }
        if words.required || self.rng.gen_bool(0.3) {
            f.words = Some((words.key, format!("a {} added by fuzz", words.key)));
        }
        Some(())
    }

    /// A time within the active span: next to something that happened in
    /// the plain run, or anywhere.
    fn time(&mut self) -> u64 {
        let limit = self.t.span;
        let t = if !self.t.times.is_empty() && self.rng.gen_bool(0.7) {
            let base = *self.t.times.choose(&mut self.rng).expect("not empty") as i64;
            let jitter: i64 = match self.rng.gen_range(0..4) {
                0 => 0,
                1 => self.rng.gen_range(-2..=2),
                2 => self.rng.gen_range(-100..=100),
                _ => self.rng.gen_range(-3000..=3000),
            };
            (base + jitter).max(0) as u64
        } else {
            self.rng.gen_range(0..=limit)
        };
        t.min(limit)
    }

    /// A length of time: short, near a timeout, or anything up to the span.
    fn length(&mut self) -> u64 {
        match self.rng.gen_range(0..4) {
            0 => self.rng.gen_range(1..=20),
            1 => self.rng.gen_range(1..=5000),
            2 if !self.t.timeouts.is_empty() => {
                let t = *self.t.timeouts.choose(&mut self.rng).expect("not empty");
                (t as i64 + self.rng.gen_range(-3..=3)).max(1) as u64
            }
            _ => self.rng.gen_range(1..=self.t.span.max(1)),
        }
    }

    /// The end of a window that starts at `at`: a length after it, or a
    /// time something happens (a deadline, say) if that comes later.
    fn until(&mut self, at: u64) -> u64 {
        let mut later = None;
        if self.rng.gen_bool(0.5) {
            let t = self.time();
            if t > at {
                later = Some(t + self.rng.gen_range(0..=2));
            }
        }
        later.unwrap_or_else(|| at + self.length()).min(MAX_RUN.0)
    }

    fn agent(&mut self) -> String {
        self.t.agents.choose(&mut self.rng).cloned().unwrap_or_else(|| "lead".into())
    }

    fn teammate(&mut self) -> Option<String> {
        self.t.teammates.choose(&mut self.rng).cloned()
    }

    fn label(&mut self) -> Option<String> {
        self.t.labels.choose(&mut self.rng).cloned()
    }

    /// A forged request or answer of `kind`, as a scenario file writes one:
    /// an answer "no" carries words where the protocol needs them.
    fn forged(kind: Kind, request: bool, id: &str, approve: bool) -> Vec<(String, String)> {
        let spec = kind.spec();
        let q = Self::quoted;
        if request {
            let key = spec.request_words.key;
            return vec![("type".into(), q(spec.request)), ("request_id".into(), id.into()), (key.into(), q("forged"))];
        }
        let mut message = vec![
            ("type".into(), q(spec.response)),
            ("request_id".into(), id.into()),
            (spec.answer_key.into(), approve.to_string()),
        ];
        if !approve && spec.no_needs_words.is_some() {
            message.push((spec.answer_words.into(), q("forged")));
        }
        message
    }

    fn quoted(s: &str) -> String {
        toml_string(s)
    }

    fn fault(&mut self, kind: FaultKind) -> Option<String> {
        let mut f = Fault::new(kind);
        match kind {
            FaultKind::Delay | FaultKind::Drop | FaultKind::Duplicate | FaultKind::Reorder => {
                let at = if self.rng.gen_bool(0.6) { Some(self.time()) } else { None };
                if let Some(at) = at {
                    f.at = Some(Millis(at));
                }
                if self.rng.gen_bool(0.4) {
                    let until = self.until(at.unwrap_or(0));
                    f.until = Some(Millis(until));
                }
                if self.rng.gen_bool(0.4) {
                    let a = self.agent();
                    f.from = Some(a);
                }
                if self.rng.gen_bool(0.4) {
                    let a = self.agent();
                    f.to = Some(a);
                }
                if self.rng.gen_bool(0.5) {
                    let n = self.rng.gen_range(1..=2);
                    f.types = message_types().choose_multiple(&mut self.rng, n).map(|t| t.to_string()).collect();
                }
                if self.rng.gen_bool(0.3) {
                    if let Some(l) = self.label() {
                        f.request = Some(l);
                    }
                }
                if self.rng.gen_bool(0.5) {
                    let c = self.rng.gen_range(1..=3u32);
                    f.count = Some(c);
                }
                if self.rng.gen_bool(0.3) {
                    let p = f64::from(self.rng.gen_range(1..=100u32)) / 100.0;
                    f.probability = Some(p);
                }
                if kind == FaultKind::Delay {
                    f.delay = Some(if self.rng.gen_bool(0.7) {
                        format!("{}ms", self.length())
                    } else {
                        let lo = self.rng.gen_range(0..=50u64);
                        let hi = lo + self.length();
                        format!("{lo}ms..{hi}ms")
                    });
                }
            }
            FaultKind::Partition => {
                let a = self.agent();
                let mut b = self.agent();
                for _ in 0..8 {
                    if b != a {
                        break;
                    }
                    b = self.agent();
                }
                if a == b {
                    return None;
                }
                f.between = Some((a, b));
                let at = self.time();
                f.at = Some(Millis(at));
                if self.rng.gen_bool(0.7) {
                    let until = self.until(at);
                    f.until = Some(Millis(until));
                }
                if self.rng.gen_bool(0.3) {
                    f.one_way = true;
                }
                if self.rng.gen_bool(0.3) {
                    f.drop = true;
                }
            }
            FaultKind::Crash | FaultKind::Stall => {
                let who = self.teammate()?;
                f.agent = Some(who);
                let at = self.time();
                f.at = Some(Millis(at));
                if kind == FaultKind::Crash {
                    if self.rng.gen_bool(0.5) {
                        let r = self.length();
                        f.restart = Some(Millis(r));
                    }
                } else {
                    let until = self.until(at);
                    f.until = Some(Millis(until));
                }
            }
            FaultKind::Forge if !self.t.requests.is_empty() && self.rng.gen_bool(0.5) => {
                // A plausible forgery: the answer the target would give,
                // claiming to be the target, to the real requester.
                let (label, kind, requester, target) =
                    self.t.requests.choose(&mut self.rng).cloned().expect("not empty");
                f.at = Some(Millis(self.time()));
                f.from = Some(target);
                f.to = Some(requester);
                let id = Self::quoted(&format!("@{label}"));
                let approve = self.rng.gen_bool(0.7);
                f.message = Self::forged(kind, false, &id, approve);
            }
            FaultKind::Forge => {
                let from = self.agent();
                let mut to = self.agent();
                if to == from {
                    to = self.agent();
                }
                f.at = Some(Millis(self.time()));
                f.from = Some(from);
                f.to = Some(to);
                let id = match self.label() {
                    Some(l) if self.rng.gen_bool(0.85) => Self::quoted(&format!("@{l}")),
                    _ => {
                        let bytes: [u8; 16] = self.rng.gen();
                        Self::quoted(&uuid::Builder::from_random_bytes(bytes).into_uuid().to_string())
                    }
                };
                let approve = self.rng.gen_bool(0.5);
                // Each protocol's request and response, or a plain message.
                let n = self.rng.gen_range(0..=2 * Kind::COUNT);
                let message = match Kind::ALL.get(n / 2) {
                    Some(&kind) => Self::forged(kind, n % 2 == 0, &id, approve),
                    None => vec![("type".into(), Self::quoted("message")), ("text".into(), Self::quoted("forged"))],
                };
                f.message = message;
            }
            // The targets' teams pass messages: they have no inbox files.
            FaultKind::TornWrite
            | FaultKind::JunkLine
            | FaultKind::RepeatedDelivery
            | FaultKind::DisplayCap
            | FaultKind::PhantomSend
            | FaultKind::MisroutedId => return None,
            FaultKind::Replay => {
                let l = self.label()?;
                f.at = Some(Millis(self.time()));
                f.request = Some(l);
                if self.rng.gen_bool(0.5) {
                    let t = protocol_types().choose(&mut self.rng).expect("not empty");
                    f.types = vec![t.to_string()];
                }
            }
        }
        Some(f.to_toml())
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_cause_masks_times_numbers_and_labels_but_not_kinds() {
        let f = |detail: &str| Finding { invariant: "expiry-policy".into(), detail: detail.into() }.cause();
        // A duration is one number whatever its size.
        assert_eq!(f("arrived at 59.999s"), f("arrived at 1m0.5s"));
        assert_eq!(f("arrived at 999ms"), f("arrived at 2h1m"));
        // The same request kind is one cause; another kind is another.
        assert_eq!(f("[alice/task/1] taken up late"), f("[bob/task/2] taken up late"));
        assert_ne!(f("[alice/plan/1] was approved"), f("[bob/shutdown/2] was approved"));
        assert_eq!(f("[stop-alice] expired"), f("[stop-bob] expired"));
        // A `[` in someone's words masks nothing after it.
        assert_eq!(f("fix [bug now, 3 times"), "expiry-policy: fix [bug now, # times");
    }
    use super::*;

    #[test]
    fn a_run_a_guard_stopped_is_a_find() {
        let none = BTreeSet::new();
        assert!(findings(&none, &[], "settled").is_empty());
        for guard in ["real-time guard", "inbox bound"] {
            let f = findings(&none, &[], guard);
            assert_eq!(f.len(), 1, "{guard}");
            assert_eq!(f[0].invariant, guard);
        }
    }

    #[test]
    fn top_keys_are_cut_and_expectations_set_aside() {
        let text = "name = \"x\"\nabout = \"\"\"\nlong\ntext\"\"\"\nseed = 7 # mine\n\n[[teammate]]\nname = \"a\"\n\
                    [[expect]]\nviolation = \"gated-action\"\n[[expect]]\nrequest = \"r\"\nstatus = \"approved\"\n";
        let cut = without_top_keys(text, &["about", "seed"]);
        assert!(!cut.contains("about") && !cut.contains("seed") && cut.starts_with("name = \"x\"\n"), "{cut}");
        let keep: BTreeSet<String> = ["gated-action".to_string()].into();
        let aside = set_aside_expectations(&cut, &keep);
        assert!(aside.contains("\n[[expect]]\nviolation = \"gated-action\"\n"), "{aside}");
        assert!(aside.contains("# (set aside) [[expect]]\n# (set aside) request = \"r\""), "{aside}");
    }
}
