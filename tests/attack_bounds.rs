//! Issue 39, points 15 to 17: bounds that a big team passed. Each test
//! judges behaviour (a refusal, a bound kept, work counted), not time.

mod common;

use common::binary::{handshake, TempDir};

/// A team of `count` identical teammates who ignore task offers, and one
/// offer passed round them (the reassign default).
fn offer_round(count: usize) -> String {
    format!(
        r#"
name = "offer-round-{count}"
cap = "1d"
[policy]
task_timeout = "100ms"
[[teammate]]
name = "w"
count = {count}
on_task = "ignore"
[[step]]
at = "1s"
do = "assign_task"
to = "w-1"
task = "docs/a.md"
"#
    )
}

#[test]
fn a_team_too_big_to_explore_is_refused_with_the_bound_named() {
    // Point 15: 100,000 teammates with `--max-memory 1GB` aborted at 5.9 GB.
    let dir = TempDir::new("bounds-team");
    let file = dir.write("big.toml", &offer_round(20_000));
    handshake(&["explore", &file, "--drop", "1", "--max-states", "2"])
        .expect_code(2)
        .stderr_has("the team has 20000 teammates; explore takes at most 10000")
        .stderr_has("nothing was explored");
}

#[test]
fn a_memory_bound_is_kept_on_a_team_of_a_thousand() {
    // Point 15: memory was looked at every 10,000 distinct states, which a
    // team of thousands passes only gigabytes later. Its states are looked
    // at every 64 MiB of them, so the search stops long before 10,000.
    let dir = TempDir::new("bounds-memory");
    let file = dir.write("team.toml", &offer_round(1_000));
    let ran = handshake(&["explore", &file, "--drop", "1", "--max-memory", "64MB", "--jobs", "2"]);
    ran.expect_code(3).stdout_has("stopped at --max-memory").stdout_has("a state of this team holds about");
    let line = ran.lines_starting("explored ").first().copied().unwrap_or_default().to_string();
    let unique: u64 = line
        .split_once(" states (")
        .and_then(|(_, rest)| rest.split_once(" unique)"))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of unique states in {line:?}\n{}", ran.explain()));
    assert!(unique < 10_000, "stopped at the first look every 10,000 states: {line}");
}
