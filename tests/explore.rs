//! The explorer: every interleaving of a small scenario within fault
//! budgets, checked by the oracle at every state (issue 11, first part).

use handshake::explore::{explore, Bounds, Budgets};
use handshake::scenario::{load_file, load_str, Invariant};

const HAPPY: &str = r#"
name = "happy"
about = "The lead asks alice to stop; she finishes her write and stops."
[[teammate]]
name = "alice"
work = [{ write = "a.rs", steps = 2, step_time = "500ms" }]
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
label = "stop-alice"
"#;

fn scenario(extra: &str) -> handshake::scenario::Scenario {
    load_str("x.toml", &format!("{HAPPY}{extra}")).expect("a valid scenario")
}

#[test]
fn with_every_defence_on_no_schedule_breaks_the_shutdown_handshake() {
    let x = explore(&scenario(""), Budgets { drop: 1, duplicate: 1, ..Budgets::default() }, Bounds::default());
    assert!(x.counterexample.is_none(), "{:?}", x.counterexample.map(|c| c.narrate()));
    assert_eq!(x.stopped_by, None, "the whole space fits the bounds");
    assert!(x.unique > 10, "{} unique states", x.unique);
}

#[test]
fn without_the_pending_check_a_duplicated_answer_is_applied_twice_and_found() {
    let s = scenario("[policy.defences]\npending_check = false\n");
    let x = explore(&s, Budgets { duplicate: 1, ..Budgets::default() }, Bounds::default());
    let c = x.counterexample.expect("a violation");
    assert!(
        matches!(c.invariant, Invariant::TerminalFinal | Invariant::MatchingResponse),
        "{:?}: {}",
        c.invariant,
        c.detail
    );
    // Breadth first: the shortest schedule. Alice's answer must exist before
    // it can be duplicated, then both copies are delivered.
    assert!(c.actions.iter().any(|a| a.contains("duplicate")), "{:?}", c.actions);
    let story = c.narrate().join("\n");
    assert!(story.contains("approved"), "{story}");
}

#[test]
fn without_any_budget_only_the_written_schedule_and_its_reorderings_are_explored() {
    let x = explore(&scenario(""), Budgets::default(), Bounds::default());
    assert!(x.counterexample.is_none());
    let y = explore(&scenario(""), Budgets { drop: 1, ..Budgets::default() }, Bounds::default());
    assert!(y.unique > x.unique, "a drop budget opens more states: {} vs {}", y.unique, x.unique);
}

#[test]
fn a_bound_that_stops_the_search_says_so() {
    let x = explore(
        &scenario(""),
        Budgets { drop: 1, duplicate: 1, ..Budgets::default() },
        Bounds { max_depth: 60, max_states: 5 },
    );
    assert_eq!(x.stopped_by, Some("max-states"));
    let y = explore(
        &scenario(""),
        Budgets { drop: 1, duplicate: 1, ..Budgets::default() },
        Bounds { max_depth: 2, max_states: 100_000 },
    );
    assert_eq!(y.stopped_by, Some("max-depth"));
}

#[test]
fn the_bundled_teaching_scenarios_hold_under_a_drop_and_a_duplicate() {
    for name in ["01-happy-shutdown", "02-shutdown-rejected-then-approved", "05-plan-approved"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.toml"));
        let s = load_file(&path).expect("bundled");
        let x = explore(&s, Budgets { drop: 1, duplicate: 1, ..Budgets::default() }, Bounds::default());
        assert!(x.counterexample.is_none(), "{name}: {:?}", x.counterexample.map(|c| (c.narrate(), c.detail)));
    }
}

const PLANNER: &str = r#"
name = "planner"
about = "Alice must plan first; the lead rejects her plan."
[lead]
on_plan = "reject"
[[teammate]]
name = "alice"
require_plan = true
max_revisions = 0
work = [{ write = "a.rs", steps = 1, step_time = "1s" }]
"#;

#[test]
fn the_adversary_forging_the_leads_approval_is_stopped_by_sender_checks_and_found_without_them() {
    let with = |defences: &str| {
        let s = load_str("p.toml", &format!("{PLANNER}{defences}")).expect("valid");
        explore(&s, Budgets { forge: 1, ..Budgets::default() }, Bounds::default())
    };
    let safe = with("");
    assert!(safe.counterexample.is_none(), "{:?}", safe.counterexample.map(|c| c.narrate()));
    for off in ["sender_check", "sender_auth"] {
        let x = with(&format!("[policy.defences]\n{off} = false\n"));
        let c = x.counterexample.unwrap_or_else(|| panic!("{off} off: a forgery should get through"));
        assert_eq!(c.invariant, Invariant::MatchingResponse, "{off}: {}", c.detail);
        assert_eq!(c.actions.len(), 3, "start, forge, deliver: {:?}", c.actions);
        assert!(c.actions[1].contains("adversary"), "{:?}", c.actions);
    }
}

#[test]
fn crashes_and_restarts_anywhere_break_no_invariant_of_the_shutdown_handshake() {
    let x = explore(&scenario(""), Budgets { crash: 1, ..Budgets::default() }, Bounds::default());
    assert!(x.counterexample.is_none(), "{:?}", x.counterexample.map(|c| (c.narrate(), c.detail)));
    assert_eq!(x.stopped_by, None);
    let plain = explore(&scenario(""), Budgets::default(), Bounds::default());
    assert!(x.unique > plain.unique, "a crash budget opens more states: {} vs {}", x.unique, plain.unique);
}
