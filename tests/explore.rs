//! The explorer: every interleaving of a small scenario within fault
//! budgets, checked by the oracle at every state (issue 11, first part).

use handshake::explore::{explore, Bounds, Broke, Budgets};
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
    // With no deadline, an answer can never arrive late: the only way past
    // the missing pending check is a second copy of the answer.
    let s = scenario("[policy]\ntimeouts = false\n[policy.defences]\npending_check = false\n");
    let x = explore(&s, Budgets { duplicate: 1, ..Budgets::default() }, Bounds::default());
    let c = x.counterexample.expect("a violation");
    assert!(
        matches!(c.broke, Broke::Invariant(Invariant::TerminalFinal | Invariant::MatchingResponse)),
        "{:?}: {}",
        c.broke,
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
        Bounds { max_states: 5, ..Bounds::default() },
    );
    assert_eq!(x.stopped_by, Some("max-states"));
    let y = explore(
        &scenario(""),
        Budgets { drop: 1, duplicate: 1, ..Budgets::default() },
        Bounds { max_depth: 2, ..Bounds::default() },
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
        assert_eq!(c.broke, Broke::Invariant(Invariant::MatchingResponse), "{off}: {}", c.detail);
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

// ------------------------------------------------- each defence, proved needed

/// One row of the table in docs/learn.md: a bundled scenario, the budgets,
/// and the defence switched off (the others on).
struct Row {
    defence: &'static str,
    file: &'static str,
    budgets: Budgets,
    switch: fn(&mut handshake::protocol::Policy, bool),
}

fn rows() -> Vec<Row> {
    let b = |drop, duplicate, forge| Budgets { drop, duplicate, forge, crash: 0 };
    vec![
        Row {
            defence: "kind_check",
            file: "11-kind-mismatch-ignored",
            budgets: b(0, 0, 1),
            switch: |p, on| p.defences.kind_check = on,
        },
        Row {
            defence: "sender_check",
            file: "05-plan-approved",
            budgets: b(0, 0, 1),
            switch: |p, on| p.defences.sender_check = on,
        },
        Row {
            defence: "sender_auth",
            file: "05-plan-approved",
            budgets: b(0, 0, 1),
            switch: |p, on| p.defences.sender_auth = on,
        },
        Row {
            defence: "pending_check",
            file: "01-happy-shutdown",
            budgets: b(0, 1, 0),
            switch: |p, on| p.defences.pending_check = on,
        },
        Row {
            defence: "deadline_check",
            file: "24-expired-request-obeyed",
            budgets: b(0, 0, 0),
            switch: |p, on| p.defences.deadline_check = on,
        },
        Row {
            defence: "strict_hierarchy",
            file: "22-peer-deadlock",
            budgets: b(0, 0, 0),
            switch: |p, on| p.strict_hierarchy = on,
        },
    ]
}

fn budget_text(b: Budgets) -> String {
    let parts: Vec<String> = [("drop", b.drop), ("duplicate", b.duplicate), ("forge", b.forge), ("crash", b.crash)]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("`--{k} {n}`"))
        .collect();
    if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join(" ")
    }
}

/// The table as docs/learn.md must show it, computed now.
fn defence_table() -> String {
    let mut out = String::from(
        "| defence off | scenario | budget | what the explorer finds | steps | states | with every defence on |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for row in rows() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{}.toml", row.file));
        let run = |on: bool| {
            let mut s = load_file(&path).expect("bundled");
            s.team.policy.defences = handshake::protocol::Defences::default();
            s.team.policy.strict_hierarchy = true;
            (row.switch)(&mut s.team.policy, on);
            // The hierarchy's row asks for deadlocks: any deadlock is what it prevents.
            s.team.policy.fail_on_deadlock = row.defence == "strict_hierarchy";
            explore(&s, row.budgets, Bounds::default())
        };
        let (off, on) = (run(false), run(true));
        assert!(on.counterexample.is_none(), "{}: with every defence on, {:?}", row.defence, on.counterexample);
        assert_eq!(on.stopped_by, None, "{}: the search with every defence on must be complete", row.defence);
        let found = match &off.counterexample {
            Some(c) => {
                let what = match c.broke {
                    Broke::Invariant(i) => format!("`{i}` broken"),
                    Broke::Deadlock => "a deadlock".to_string(),
                    Broke::Expectation => "an expectation failed".to_string(),
                };
                format!("{what} | {} | {}", c.actions.len(), off.unique)
            }
            None => format!("nothing within the bounds | — | {}", off.unique),
        };
        out.push_str(&format!(
            "| `{}` | `{}` | {} | {} | nothing, {} states |\n",
            row.defence,
            row.file,
            budget_text(row.budgets),
            found,
            on.unique
        ));
    }
    out
}

#[test]
fn the_defence_table_in_learn_md_is_what_the_explorer_finds() {
    let table = defence_table();
    let learn =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/learn.md")).unwrap();
    assert!(learn.contains(&table), "docs/learn.md must hold this table, as the explorer finds it now:\n\n{table}");
    // Every defence but the kind check is proved needed on its own.
    for line in table.lines().skip(2) {
        if !line.starts_with("| `kind_check`") {
            assert!(!line.contains("nothing within the bounds"), "{line}");
        }
    }
}

// ------------------------------------------------- counterexamples as scenario files

#[test]
fn every_counterexample_the_tests_find_is_written_as_a_file_that_replays_it() {
    let inline = [
        (format!("{HAPPY}[policy.defences]\npending_check = false\n"), Budgets { duplicate: 1, ..Budgets::default() }),
        (format!("{PLANNER}[policy.defences]\nsender_check = false\n"), Budgets { forge: 1, ..Budgets::default() }),
        (format!("{PLANNER}[policy.defences]\nsender_auth = false\n"), Budgets { forge: 1, ..Budgets::default() }),
    ];
    let bundled = ["12-kind-check-off", "14-sender-auth-off", "24-expired-request-obeyed"].map(|f| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{f}.toml"));
        (std::fs::read_to_string(path).expect("bundled"), Budgets { forge: 1, crash: 1, ..Budgets::default() })
    });
    for (text, budgets) in inline.into_iter().chain(bundled) {
        let s = load_str("found.toml", &text).expect("valid");
        let c = explore(&s, budgets, Bounds::default()).counterexample.expect("a violation");
        let written = handshake::explore::replay::scenario_file(&text, "replay.toml", &c)
            .unwrap_or_else(|e| panic!("{}: {e}", s.name));
        // The file replays the violation, expects it, and so passes as a regression.
        let replay = load_str("replay.toml", &written).expect("the written file loads");
        let r = handshake::scenario::run_scenario(&replay, replay.default_seed(), Default::default());
        assert!(r.passed, "{}: {:?}\n{written}", s.name, r.failures);
        if let Broke::Invariant(i) = c.broke {
            assert!(r.violations.iter().any(|v| v.starts_with(i.name())), "{}: {:?}", s.name, r.violations);
        }
    }
}

#[test]
fn the_partial_order_reduction_skips_transitions_but_finds_the_same() {
    for (text, budgets) in [
        (format!("{HAPPY}[policy.defences]\npending_check = false\n"), Budgets { duplicate: 1, ..Budgets::default() }),
        (HAPPY.to_string(), Budgets { drop: 1, duplicate: 1, ..Budgets::default() }),
    ] {
        let s = load_str("x.toml", &text).expect("valid");
        let with = explore(&s, budgets, Bounds::default());
        let without = explore(&s, budgets, Bounds { partial_order: false, ..Bounds::default() });
        assert_eq!(without.slept, 0);
        assert!(with.states <= without.states, "{} > {}", with.states, without.states);
        assert_eq!(with.unique, without.unique, "the same states, fewer transitions");
        let steps = |x: &handshake::explore::Exploration| x.counterexample.as_ref().map(|c| (c.broke, c.actions.len()));
        assert_eq!(steps(&with), steps(&without));
    }
}
