//! The explorer's view of a scenario file: the team to search, and the
//! file's expectations to judge its schedules by (`--expect`).

use crate::explore::Subject;
use crate::oracle::Invariant;
use crate::protocol::AgentId;
use crate::scenario::check::judge_outcome;
use crate::scenario::{Expect, Scenario};
use crate::world::{Outcome, TeamSpec};

/// The explorer's view of a scenario: it searches the team's schedules and
/// judges them by the same oracle and, with `--expect`, by the file's own
/// expectations.
impl Subject for Scenario {
    fn team(&self) -> &TeamSpec {
        &self.team
    }

    fn require_plan(&self) -> Vec<bool> {
        Scenario::require_plan(self)
    }

    fn expected_violations(&self) -> Vec<Invariant> {
        self.expects
            .iter()
            .filter_map(|e| match e {
                Expect::Violation(i) => Some(*i),
                _ => None,
            })
            .collect()
    }

    fn expected_deadlocks(&self) -> Vec<Vec<String>> {
        self.expects
            .iter()
            .filter_map(|e| match e {
                Expect::Deadlock { members, .. } => {
                    let mut members = members.clone();
                    members.sort();
                    Some(members)
                }
                _ => None,
            })
            .collect()
    }

    fn seed(&self) -> u64 {
        self.default_seed()
    }

    fn first_failed_expectation(&self, outcome: &Outcome) -> Option<(String, String)> {
        judge_outcome(self, outcome).into_iter().next().map(|f| (f.check, f.message))
    }

    fn named_by_expectations(&self) -> Vec<AgentId> {
        use crate::agent::Script;
        let teammates = &self.team.teammates;
        let every: Vec<AgentId> = (1..=teammates.len() as u32).map(AgentId).collect();
        let by_name = |name: &str| teammates.iter().position(|(n, _)| n == name).map(|i| AgentId(i as u32 + 1));
        let mut out = Vec::new();
        for e in &self.expects {
            match e {
                Expect::Teammate { name, .. } | Expect::Gate { name, .. } => out.extend(by_name(name)),
                Expect::Received { by, from, .. } => {
                    out.extend(by_name(by));
                    out.extend(from.as_deref().and_then(by_name));
                }
                Expect::InboxLines { owner, .. } => out.extend(by_name(owner)),
                Expect::Deadlock { members, .. } => out.extend(members.iter().filter_map(|m| by_name(m))),
                // A label is a step's own (its asker and whom it asks) or an
                // automatic one, `name/kind/n`, about the teammate it names.
                Expect::Request { label, .. } => {
                    let step = self.team.steps.iter().find(|s| match &s.script {
                        Script::Ask { label: Some(l), .. } => l.as_ref() == label.as_str(),
                        _ => false,
                    });
                    match (step, label.split('/').next().and_then(by_name)) {
                        (Some(s), _) => {
                            out.push(s.agent);
                            if let Script::Ask { to, .. } = &s.script {
                                out.push(*to);
                            }
                        }
                        (None, Some(a)) => out.push(a),
                        (None, None) => out.extend(every.iter().copied()),
                    }
                }
                // Whoever may write it: any teammate's work can.
                Expect::File { .. } => out.extend(every.iter().copied()),
                // Counts and violations, whoever they are about.
                Expect::Ignored { .. } | Expect::Refused { .. } | Expect::Expired { .. } | Expect::Violation(_) => {}
            }
        }
        out.retain(|a| !a.is_lead());
        out.sort_unstable();
        out.dedup();
        out
    }
}
