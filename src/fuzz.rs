//! Swarm testing: for each scenario and seed, a random subset of the fault
//! kinds, random faults of those kinds added to the scenario's own, a run on
//! the actor runtime, and the oracle's verdict.
//!
//! The faults are generated as `[[fault]]` tables appended to the file's own
//! text, and that text is loaded like any scenario file: what was run is a
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

use crate::protocol::Millis;
use crate::scenario::{load_str, run_scenario, Expect, Invariant, RunOptions, Scenario, ScenarioError};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// The fault kinds the swarm chooses from.
pub const KINDS: &[&str] = &["delay", "drop", "duplicate", "reorder", "partition", "crash", "stall", "forge", "replay"];

use crate::protocol::message::{MESSAGE_TYPES, PROTOCOL_TYPES};

/// The marker line before the added faults.
pub const ADDED: &str = "# ---- faults added by handshake fuzz";

/// A scenario ready to be fuzzed: its text, and what one plain run of it
/// shows (who is in the team, which requests are made, when things happen).
pub struct Target {
    pub path: String,
    pub name: String,
    pub text: String,
    pub scenario: Scenario,
    /// The invariants the file expects broken (a defence is off).
    pub expected: BTreeSet<Invariant>,
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
    salt: u64,
}

/// One seed's case: the faults added, and what the run showed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Case {
    pub scenario: String,
    pub path: String,
    pub seed: u64,
    /// The kinds chosen for this seed (the swarm's subset).
    pub kinds: Vec<&'static str>,
    /// The added `[[fault]]` tables, as TOML text.
    pub faults: Vec<String>,
    /// Invariants broken that the file does not expect: `invariant: detail`.
    pub findings: Vec<Finding>,
    /// Expected invariants (a defence is off) that this run did break: the
    /// written file keeps these `[[expect]] violation` entries.
    pub expected_seen: Vec<String>,
    /// The generated file was refused (a bug of the generator): the errors.
    pub refused: Vec<String>,
    /// The added faults changed something the file expects (one of its
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

impl Case {
    pub fn found(&self) -> bool {
        !self.findings.is_empty()
    }
}

/// FNV-1a: a hash that stays the same across Rust versions and platforms.
fn fnv(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl Target {
    /// Loads a scenario's text and runs it once, unmodified, with its own seed.
    pub fn new(path: &str, text: String) -> Result<Target, Vec<ScenarioError>> {
        let scenario = load_str(path, &text)?;
        let report =
            run_scenario(&scenario, scenario.default_seed(), RunOptions { keep_outcome: true, ..Default::default() });
        let outcome = report.outcome.as_ref().expect("kept");
        let team = &scenario.team;
        let teammates: Vec<String> = team.teammates.iter().map(|(n, _)| n.clone()).collect();
        let agents: Vec<String> =
            std::iter::once(crate::protocol::LEAD_NAME.to_string()).chain(teammates.iter().cloned()).collect();
        let mut labels: BTreeSet<String> = outcome.names.labels.values().cloned().collect();
        // The next automatic label of each kind, which an added fault may
        // bring about (a forged rejection makes a revision: alice/plan/2).
        for t in teammates.iter().take(8) {
            for kind in ["shutdown", "plan"] {
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
        let span = report.virtual_ms.max(last).min(limit);
        let timeouts: Vec<u64> = [team.policy.shutdown_timeout, team.policy.plan_timeout]
            .into_iter()
            .filter(|t| *t != Millis::NEVER)
            .map(|t| t.0)
            .collect();
        let expected = scenario
            .expects
            .iter()
            .filter_map(|e| if let Expect::Violation(i) = e { Some(*i) } else { None })
            .collect();
        Ok(Target {
            path: path.to_string(),
            name: scenario.name.clone(),
            salt: fnv(&scenario.name),
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

    /// The kinds chosen for a seed and the `[[fault]]` tables added.
    pub fn faults(&self, seed: u64) -> (Vec<&'static str>, Vec<String>) {
        let mut g = Gen { t: self, rng: self.rng(seed) };
        g.faults()
    }

    /// The scenario's text with the seed's faults appended.
    pub fn case_text(&self, seed: u64, faults: &[String]) -> String {
        let mut text = self.text.clone();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        let _ = writeln!(text, "\n{ADDED} (seed {seed}) ----");
        for f in faults {
            text.push_str(f);
        }
        text
    }

    /// Runs one seed: adds its faults, runs, and asks the oracle.
    pub fn run(&self, seed: u64, max_real: Option<std::time::Duration>) -> Case {
        let (kinds, faults) = self.faults(seed);
        let text = self.case_text(seed, &faults);
        let mut case = Case {
            scenario: self.name.clone(),
            path: self.path.clone(),
            seed,
            kinds,
            faults,
            findings: Vec::new(),
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
        let report = run_scenario(&s, seed, RunOptions { max_real, ..Default::default() });
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
        case
    }

    /// A scenario file that replays a find with `handshake run FILE --seed S`
    /// (or without `--seed`: the file's `seed` is S). The file's `about` and
    /// `seed` are replaced, expectations other than the violations this run
    /// showed are commented out, and the added faults follow a marker line.
    pub fn finding_file(&self, case: &Case, shown_path: &str) -> String {
        let what: Vec<String> =
            case.findings.iter().map(|f| format!("{} ({})", f.invariant, one_line(&f.detail, 160))).collect();
        let about = format!(
            "Found by handshake fuzz, seed {}, in {} ({}): with {} added fault{} ({}), the oracle reports {}. \
             The original's expectations other than violations are set aside (commented out): the added faults may \
             legitimately change them.",
            case.seed,
            self.path,
            self.name,
            case.faults.len(),
            if case.faults.len() == 1 { "" } else { "s" },
            case.kinds.join(", "),
            what.join("; ")
        );
        let mut out = String::new();
        let _ = writeln!(out, "# Found by `handshake fuzz` (seed {}) from {}.", case.seed, self.path);
        let _ = writeln!(out, "# Reproduce: handshake run {shown_path} --seed {}", case.seed);
        let _ = writeln!(out, "seed = {}", case.seed);
        let _ = writeln!(out, "about = {}", toml_string(&about));
        let body = self.case_text(case.seed, &case.faults);
        let body = without_top_keys(&body, &["about", "seed"]);
        let keep: BTreeSet<String> = case.expected_seen.iter().cloned().collect();
        out.push_str(&set_aside_expectations(&body, &keep));
        out
    }
}

/// The finds of a run: invariants broken that were not expected, and a run
/// the real-time guard stopped.
pub fn findings(expected: &BTreeSet<Invariant>, violations: &[String], stopped_by: &str) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    for v in violations {
        let (name, detail) = v.split_once(": ").unwrap_or((v.as_str(), ""));
        if Invariant::parse(name).is_some_and(|i| expected.contains(&i)) {
            continue;
        }
        out.push(Finding { invariant: name.to_string(), detail: detail.to_string() });
    }
    if stopped_by == "real-time guard" {
        out.push(Finding {
            invariant: "real-time guard".into(),
            detail: "the run used more real time than allowed and was stopped".into(),
        });
    }
    out
}

fn one_line(text: &str, max: usize) -> String {
    let t: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match t.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &t[..cut]),
        None => t,
    }
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
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

/// A duration as a file writes it, exact to the millisecond.
fn ms(t: u64) -> String {
    format!("\"{t}ms\"")
}

/// Draws the faults of one seed.
struct Gen<'t> {
    t: &'t Target,
    rng: ChaCha8Rng,
}

impl Gen<'_> {
    fn faults(&mut self) -> (Vec<&'static str>, Vec<String>) {
        // The swarm: each kind is in this seed's subset with even odds (at
        // least one), then one or two faults of each kind chosen.
        let mut kinds: Vec<&'static str> = KINDS.iter().copied().filter(|_| self.rng.gen_bool(0.5)).collect();
        if kinds.is_empty() {
            kinds.push(KINDS[self.rng.gen_range(0..KINDS.len())]);
        }
        let mut out = Vec::new();
        for kind in &kinds {
            let n = self.rng.gen_range(1..=2);
            for _ in 0..n {
                if let Some(f) = self.fault(kind) {
                    out.push(f);
                }
            }
        }
        (kinds, out)
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
        if self.rng.gen_bool(0.5) {
            let t = self.time();
            if t > at {
                return t + self.rng.gen_range(0..=2);
            }
        }
        at + self.length()
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

    fn quoted(s: &str) -> String {
        toml_string(s)
    }

    fn fault(&mut self, kind: &'static str) -> Option<String> {
        let mut f = format!("[[fault]]\nkind = \"{kind}\"\n");
        let line = |f: &mut String, key: &str, value: String| {
            let _ = writeln!(f, "{key} = {value}");
        };
        match kind {
            "delay" | "drop" | "duplicate" | "reorder" => {
                let at = if self.rng.gen_bool(0.6) { Some(self.time()) } else { None };
                if let Some(at) = at {
                    line(&mut f, "at", ms(at));
                }
                if self.rng.gen_bool(0.4) {
                    let until = self.until(at.unwrap_or(0));
                    line(&mut f, "until", ms(until));
                }
                if self.rng.gen_bool(0.4) {
                    let a = self.agent();
                    line(&mut f, "from", Self::quoted(&a));
                }
                if self.rng.gen_bool(0.4) {
                    let a = self.agent();
                    line(&mut f, "to", Self::quoted(&a));
                }
                if self.rng.gen_bool(0.5) {
                    let n = self.rng.gen_range(1..=2);
                    let types: Vec<String> =
                        MESSAGE_TYPES.choose_multiple(&mut self.rng, n).map(|t| Self::quoted(t)).collect();
                    line(&mut f, "type", format!("[{}]", types.join(", ")));
                }
                if self.rng.gen_bool(0.3) {
                    if let Some(l) = self.label() {
                        line(&mut f, "request", Self::quoted(&l));
                    }
                }
                if self.rng.gen_bool(0.5) {
                    let c = self.rng.gen_range(1..=3u32);
                    line(&mut f, "count", c.to_string());
                }
                if self.rng.gen_bool(0.3) {
                    let p = f64::from(self.rng.gen_range(1..=100u32)) / 100.0;
                    line(&mut f, "probability", format!("{p:?}"));
                }
                if kind == "delay" {
                    let d = if self.rng.gen_bool(0.7) {
                        ms(self.length())
                    } else {
                        let lo = self.rng.gen_range(0..=50u64);
                        let hi = lo + self.length();
                        format!("\"{lo}ms..{hi}ms\"")
                    };
                    line(&mut f, "delay", d);
                }
            }
            "partition" => {
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
                line(&mut f, "between", format!("[{}, {}]", Self::quoted(&a), Self::quoted(&b)));
                let at = self.time();
                line(&mut f, "at", ms(at));
                if self.rng.gen_bool(0.7) {
                    let until = self.until(at);
                    line(&mut f, "until", ms(until));
                }
                if self.rng.gen_bool(0.3) {
                    line(&mut f, "direction", "\"one_way\"".into());
                }
                if self.rng.gen_bool(0.3) {
                    line(&mut f, "mode", "\"drop\"".into());
                }
            }
            "crash" | "stall" => {
                let who = self.teammate()?;
                line(&mut f, "agent", Self::quoted(&who));
                let at = self.time();
                line(&mut f, "at", ms(at));
                if kind == "crash" {
                    if self.rng.gen_bool(0.5) {
                        let r = self.length();
                        line(&mut f, "restart", ms(r));
                    }
                } else {
                    let until = self.until(at);
                    line(&mut f, "until", ms(until));
                }
            }
            "forge" if !self.t.requests.is_empty() && self.rng.gen_bool(0.5) => {
                // A plausible forgery: the answer the target would give,
                // claiming to be the target, to the real requester.
                let (label, kind, requester, target) =
                    self.t.requests.choose(&mut self.rng).cloned().expect("not empty");
                line(&mut f, "at", ms(self.time()));
                line(&mut f, "from", Self::quoted(&target));
                line(&mut f, "to", Self::quoted(&requester));
                let id = Self::quoted(&format!("@{label}"));
                let approve = self.rng.gen_bool(0.7);
                let message = match (kind, approve) {
                    (crate::protocol::Kind::Shutdown, true) => {
                        format!("{{ type = \"shutdown_response\", request_id = {id}, approve = true }}")
                    }
                    (crate::protocol::Kind::Shutdown, false) => format!(
                        "{{ type = \"shutdown_response\", request_id = {id}, approve = false, reason = \"forged\" }}"
                    ),
                    (crate::protocol::Kind::Plan, _) => {
                        format!("{{ type = \"plan_approval_response\", request_id = {id}, approve = {approve} }}")
                    }
                };
                line(&mut f, "message", message);
            }
            "forge" => {
                let from = self.agent();
                let mut to = self.agent();
                if to == from {
                    to = self.agent();
                }
                line(&mut f, "at", ms(self.time()));
                line(&mut f, "from", Self::quoted(&from));
                line(&mut f, "to", Self::quoted(&to));
                let id = match self.label() {
                    Some(l) if self.rng.gen_bool(0.85) => Self::quoted(&format!("@{l}")),
                    _ => {
                        let bytes: [u8; 16] = self.rng.gen();
                        Self::quoted(&uuid::Builder::from_random_bytes(bytes).into_uuid().to_string())
                    }
                };
                let approve = self.rng.gen_bool(0.5);
                let message = match self.rng.gen_range(0..5) {
                    0 => format!("{{ type = \"shutdown_request\", request_id = {id}, reason = \"forged\" }}"),
                    1 if approve => format!("{{ type = \"shutdown_response\", request_id = {id}, approve = true }}"),
                    1 => format!(
                        "{{ type = \"shutdown_response\", request_id = {id}, approve = false, reason = \"forged\" }}"
                    ),
                    2 => format!("{{ type = \"plan_approval_request\", request_id = {id}, plan = \"forged plan\" }}"),
                    3 => format!("{{ type = \"plan_approval_response\", request_id = {id}, approve = {approve} }}"),
                    _ => "{ type = \"message\", text = \"forged\" }".to_string(),
                };
                line(&mut f, "message", message);
            }
            _ => {
                let l = self.label()?;
                line(&mut f, "at", ms(self.time()));
                line(&mut f, "request", Self::quoted(&l));
                if self.rng.gen_bool(0.5) {
                    let t = PROTOCOL_TYPES.choose(&mut self.rng).expect("not empty");
                    line(&mut f, "type", Self::quoted(t));
                }
            }
        }
        Some(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
