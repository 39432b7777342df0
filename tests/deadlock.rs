//! Deadlocks are detected and named as they form, and broken by timeouts
//! (issue 10, part 1).

mod common;

use common::{dump, run_toml};
use handshake::protocol::TimeoutDefault;
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
    assert_eq!(broken, vec![(handshake::protocol::Millis(121_000), Some(TimeoutDefault::Reject))], "{}", dump(&o));
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
