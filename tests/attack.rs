//! Defects a hostile tester found (issue 39), each held in place by a run
//! that broke before its fix.

mod common;

use common::{dump, reports, run_toml};

/// Alice's plan 1 goes unanswered and expires (default reject) at 5 s, the
/// instant a second plan of hers goes out, which the lead approves at
/// once: no latency, so all of it happens in one millisecond. `trigger`
/// says what makes the second plan.
fn second_plan_at_the_expiry(teammate: &str, trigger: &str) -> String {
    format!(
        r#"
name = "second-plan-same-instant"
about = "Plan 1 expires the instant plan 2 is submitted and approved."
[policy]
latency = "0ms"
plan_timeout = "5s"
[lead]
on_plan = ["ignore", "approve"]
[[teammate]]
name = "alice"
{teammate}
{trigger}
"#
    )
}

#[test]
fn a_gate_opened_by_a_plan_approved_at_the_instant_another_expired_keeps_the_expiry_policy() {
    let cases = [
        (
            "require_plan = true\nwork = [{ write = \"src/a.rs\", steps = 1, step_time = \"100ms\" }]",
            "[[step]]\nat = \"5s\"\ndo = \"submit_plan\"\nfrom = \"alice\"",
        ),
        (
            "work = [{ write = \"src/a.rs\", steps = 1, step_time = \"100ms\" }]",
            "[[step]]\nat = \"0s\"\ndo = \"submit_plan\"\nfrom = \"alice\"\n\
             [[step]]\nat = \"5s\"\ndo = \"request_plan\"\nto = \"alice\"",
        ),
        ("require_plan = true", "[[step]]\nat = \"5s\"\ndo = \"assign_task\"\nto = \"alice\"\ntask = \"docs/a.md\""),
    ];
    for (teammate, trigger) in cases {
        let (r, o) = run_toml(&second_plan_at_the_expiry(teammate, trigger), 1);
        assert!(r.violations.is_empty(), "{trigger}\n{:?}\n{}", r.violations, dump(&o));
        assert!(o.requests.iter().filter(|q| q.kind == handshake::protocol::Kind::Plan).count() == 2, "{}", dump(&o));
        assert!(!reports(&r, "expiry-policy"));
    }
}

#[test]
fn a_crash_in_the_middle_of_a_send_is_the_last_thing_the_teammate_does_that_turn() {
    // Issue 39, point 4: alice's acceptance is torn as she appends it (no
    // latency: inside her own turn). She took nothing up: no task queued,
    // no plan opened that the trace never shows, no gate a default opens.
    let toml = r#"
name = "torn-acceptance"
about = "Alice crashes in the middle of appending her acceptance."
[policy]
mailbox = "file"
drain = "offset"
latency = "0ms"
on_plan_timeout = "approve"
[lead]
on_plan = ["approve", "ignore"]
[[teammate]]
name = "alice"
require_plan = true
[[fault]]
kind = "torn_write"
agent = "alice"
at = "1500ms"
restart = "1s"
[[step]]
at = "2s"
do = "assign_task"
to = "alice"
task = "docs/a.md"
"#;
    let (r, o) = run_toml(toml, 1);
    assert!(r.violations.is_empty(), "{:?}\n{}", r.violations, dump(&o));
    let plans = o.requests.iter().filter(|q| q.kind == handshake::protocol::Kind::Plan).count();
    assert_eq!(plans, 1, "only the plan the trace opened: {}", dump(&o));
    assert!(!o.files.contains_key("docs/a.md"), "the task was never hers: {}", dump(&o));
}
