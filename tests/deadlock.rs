//! Deadlocks are detected and named as they form, and broken by timeouts
//! (issue 10, part 1).

mod common;

use common::{dump, run_toml};
use handshake::protocol::kinds;
use handshake::trace::{cycle_text, Event};

fn peers(n: usize) -> String {
    let names = ["alice", "bob", "carol", "dave"];
    let mut s = String::from(
        "name = \"cycle\"\nabout = \"peers ask each other in a ring\"\n[policy]\nstrict_hierarchy = false\n",
    );
    for name in &names[..n] {
        s += &format!("[[teammate]]\nname = \"{name}\"\n");
    }
    for i in 0..n {
        let (from, to) = (names[i], names[(i + 1) % n]);
        s += &format!(
            "[[step]]\nat = \"1s\"\ndo = \"submit_plan\"\nfrom = \"{from}\"\nto = \"{to}\"\nplan = \"p\"\nlabel = \"{from}-asks-{to}\"\n"
        );
    }
    s
}

#[test]
fn a_two_way_cycle_is_named_when_it_closes_and_when_a_deadline_breaks_it() {
    let (r, o) = run_toml(&peers(2), 1);
    let formed: Vec<_> = o
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Deadlock { members, requests } => Some((e.t, cycle_text(members, &o.names), requests.len())),
            _ => None,
        })
        .collect();
    assert_eq!(formed.len(), 1, "{}", dump(&o));
    assert_eq!(formed[0].0 .0, 1_000, "it forms when the second plan goes out");
    assert_eq!(formed[0].1, "bob → alice → bob");
    assert_eq!(formed[0].2, 2);
    let broken: Vec<_> = o
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::DeadlockBroken { default, .. } => Some((e.t, *default)),
            _ => None,
        })
        .collect();
    assert_eq!(broken, vec![(handshake::protocol::Millis(121_000), Some(kinds::plan::REJECT))], "{}", dump(&o));
    assert_eq!(r.counts.deadlocks, 1);
    assert_eq!(r.deadlocks[0].cycle(), "bob → alice → bob");
    assert_eq!(r.deadlocks[0].broken_ms, Some(121_000));
    assert_eq!(r.deadlocks[0].default, Some("reject"));
}

#[test]
fn a_three_way_cycle_names_all_three_in_waiting_order() {
    let (r, o) = run_toml(&peers(3), 1);
    assert_eq!(r.deadlocks.len(), 1, "{}", dump(&o));
    let d = &r.deadlocks[0];
    assert_eq!(d.cycle(), "carol → alice → bob → carol");
    assert_eq!(d.requests, vec!["carol-asks-alice", "alice-asks-bob", "bob-asks-carol"]);
}

#[test]
fn a_chain_that_someone_answers_is_no_deadlock() {
    // Alice waits on bob, bob on the lead: the lead answers, nobody is stuck.
    let toml = r#"
name = "chain"
about = "alice asks bob, bob asks the lead"
[policy]
strict_hierarchy = false
[[teammate]]
name = "alice"
[[teammate]]
name = "bob"
[[step]]
at = "1s"
do = "submit_plan"
from = "alice"
to = "bob"
plan = "p"
[[step]]
at = "1s"
do = "submit_plan"
from = "bob"
to = "lead"
plan = "q"
"#;
    let (r, o) = run_toml(toml, 1);
    assert!(r.deadlocks.is_empty(), "{}", dump(&o));
    assert!(r.passed, "{:?}", r.failures);
}

fn with(extra_policy: &str, expects: &str) -> String {
    peers(2).replace("[policy]\n", &format!("[policy]\n{extra_policy}")) + expects
}

#[test]
fn with_timeouts_off_the_deadlock_lasts_to_the_cap_and_the_report_says_so() {
    // `cap` is a top-level key: it goes before the first table.
    let toml = with("timeouts = false\n", "").replacen("[policy]", "cap = \"10m\"\n[policy]", 1);
    let (r, o) = run_toml(&toml, 1);
    assert!(r.passed, "{:?}\n{}", r.failures, dump(&o));
    assert_eq!(o.stop, handshake::team::Stop::Cap);
    assert_eq!(o.ended_at.0, 600_000);
    assert_eq!(r.deadlocks.len(), 1);
    assert_eq!(r.deadlocks[0].broken_ms, None, "still deadlocked at the end");
    assert_eq!(r.pending.len(), 2);
}

#[test]
fn one_kind_without_timeouts_is_written_never() {
    let toml = with("plan_timeout = \"never\"\n", "");
    let toml = toml.replacen("[policy]", "cap = \"5m\"\n[policy]", 1);
    let (r, _) = run_toml(&toml, 1);
    assert_eq!(r.counts.expired, 0);
    assert_eq!(r.virtual_ms, 300_000);
}

#[test]
fn a_policy_of_failing_on_deadlock_fails_the_run_and_names_the_cycle() {
    let (r, o) = run_toml(&with("deadlocks = \"fail\"\n", ""), 1);
    assert!(!r.passed, "{}", dump(&o));
    let f = &r.failures[0];
    assert!(f.check.contains("deadlock"), "{f:?}");
    assert!(f.message.contains("bob → alice → bob"), "{f:?}");
    assert_eq!(f.at_ms, 1_000);
}

#[test]
fn an_expected_deadlock_is_not_a_failure_even_under_the_fail_policy() {
    let (r, _) = run_toml(&with("deadlocks = \"fail\"\n", "[[expect]]\ndeadlock = [\"bob\", \"alice\"]\n"), 1);
    assert!(r.passed, "{:?}", r.failures);
}

#[test]
fn a_deadlock_expectation_fails_when_the_deadlock_does_not_behave_as_expected() {
    // It is broken by the timeouts, but expected to last.
    let (r, _) = run_toml(&with("", "[[expect]]\ndeadlock = [\"alice\", \"bob\"]\nbroken = false\n"), 1);
    assert!(!r.passed);
    assert!(r.failures[0].message.contains("expected it to last"), "{:?}", r.failures);
    // It lasts, but expected to be broken.
    let lasting = with("timeouts = false\n", "[[expect]]\ndeadlock = [\"alice\", \"bob\"]\nbroken = true\n").replacen(
        "[policy]",
        "cap = \"5m\"\n[policy]",
        1,
    );
    let (r, _) = run_toml(&lasting, 1);
    assert!(!r.passed);
    assert!(r.failures[0].message.contains("never broken"), "{:?}", r.failures);
    // None forms at all: the hierarchy refuses the peer plans.
    let refused = with("", "[[expect]]\ndeadlock = [\"alice\", \"bob\"]\n").replace("strict_hierarchy = false", "");
    let (r, _) = run_toml(&refused, 1);
    assert!(!r.passed);
    assert!(r.failures.iter().any(|f| f.message.contains("no deadlock among alice, bob")), "{:?}", r.failures);
}

#[test]
fn a_deadlock_expectation_names_teammates_only() {
    let e = handshake::scenario::load_str(
        "x.toml",
        &with("", "[[expect]]\ndeadlock = [\"alice\", \"zed\"]\n[[expect]]\ndeadlock = [\"lead\", \"alice\"]\n"),
    )
    .expect_err("refused");
    assert!(e.iter().any(|e| e.message.contains("zed")), "{e:?}");
    assert!(e.iter().any(|e| e.message.contains("never blocks")), "{e:?}");
}
