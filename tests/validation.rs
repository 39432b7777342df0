//! Files that must be refused before anything runs, with the place and the
//! reason. (The CLI tests check the same through the binary for the common
//! mistakes; these are the subtler ones.)

use handshake::scenario::load_str;

/// Loads `body` after a valid header and returns the first error as
/// `(line, col, message)`.
fn refuse(body: &str) -> (usize, usize, String) {
    let src = format!("name = \"x\"\nabout = \"y\"\n{body}");
    match load_str("x.toml", &src) {
        Ok(_) => panic!("should be refused:\n{src}"),
        Err(errors) => {
            let e = &errors[0];
            (e.line, e.col, e.text())
        }
    }
}

const ALICE: &str = "[[teammate]]\nname = \"alice\"\n";

#[test]
fn a_label_may_not_look_like_an_automatic_one() {
    let (line, _, msg) = refuse(&format!(
        "{ALICE}[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"alice\"\nlabel = \"alice/shutdown/2\"\n"
    ));
    assert_eq!(line, 9);
    assert!(msg.contains("label") && msg.contains('/'), "{msg}");
}

#[test]
fn end_after_the_cap_is_refused() {
    let (line, _, msg) = refuse("end = \"2h\"\ncap = \"10s\"\n");
    assert_eq!(line, 3);
    assert!(msg.contains("cap"), "{msg}");
}

#[test]
fn a_cap_longer_than_a_year_is_refused() {
    let (line, _, msg) = refuse("cap = \"500000000y\"\n");
    assert_eq!(line, 3);
    assert!(msg.contains("longer than a run may be"), "{msg}");
}

#[test]
fn a_partition_between_an_agent_and_itself_is_refused() {
    let (line, _, msg) = refuse(&format!("{ALICE}[[fault]]\nkind = \"partition\"\nbetween = [\"alice\", \"alice\"]\n"));
    assert_eq!(line, 7);
    assert!(msg.contains("two different agents"), "{msg}");
}

#[test]
fn a_link_fault_with_count_zero_is_refused() {
    let (line, _, msg) = refuse(&format!("{ALICE}[[fault]]\nkind = \"drop\"\ncount = 0\n"));
    assert_eq!(line, 7);
    assert!(msg.contains("count = 0"), "{msg}");
}

#[test]
fn expecting_a_violation_needs_a_defence_switched_off() {
    let (line, _, msg) = refuse("[[expect]]\nviolation = \"matching-response\"\n");
    assert_eq!(line, 4);
    assert!(msg.contains("defence"), "{msg}");
    // With one defence off, the same expectation is accepted.
    let ok = "name = \"x\"\nabout = \"y\"\n[policy.defences]\nkind_check = false\n[[expect]]\nviolation = \"matching-response\"\n";
    assert!(load_str("x.toml", ok).is_ok());
}

/// Issue 19, point 6. The reference's drain (`drain = "truncate"`) loses
/// messages by design, so with every defence on a file may expect
/// no-silent-loss; it excused any invariant, and `shrink` turned a real
/// graceful-complete bug into a file that passed.
#[test]
fn with_every_defence_on_the_truncate_drain_lets_a_file_expect_no_silent_loss_only() {
    let truncate = format!("[policy]\nmailbox = \"file\"\ndrain = \"truncate\"\n{ALICE}");
    let (line, col, msg) = refuse(&format!("{truncate}[[expect]]\nviolation = \"graceful-complete\"\n"));
    assert_eq!((line, col), (9, 13), "{msg}");
    assert!(msg.contains("no-silent-loss only") && msg.contains("graceful-complete violation is a bug"), "{msg}");
    let ok = format!("name = \"x\"\nabout = \"y\"\n{truncate}[[expect]]\nviolation = \"no-silent-loss\"\n");
    assert!(load_str("x.toml", &ok).is_ok());
    // With a defence off as well, any invariant may be expected, as in memory mode.
    let off = format!(
        "name = \"x\"\nabout = \"y\"\n{truncate}[policy.defences]\nkind_check = false\n[[expect]]\n\
         violation = \"graceful-complete\"\n"
    );
    assert!(load_str("x.toml", &off).is_ok());
    // The offset drain loses nothing: no violation may be expected there.
    let (_, _, msg) = refuse(&format!(
        "[policy]\nmailbox = \"file\"\ndrain = \"offset\"\n{ALICE}[[expect]]\nviolation = \"no-silent-loss\"\n"
    ));
    assert!(msg.contains("needs a defence switched off"), "{msg}");
}

#[test]
fn the_lead_is_not_a_teammate_in_an_expectation() {
    let (line, _, msg) = refuse("[[expect]]\nteammate = \"lead\"\nstatus = \"working\"\n");
    assert_eq!(line, 4);
    assert!(msg.contains("not a teammate"), "{msg}");
}

#[test]
fn a_name_repeated_by_count_points_at_the_entry_that_repeats_it() {
    let (line, col, msg) = refuse("[[teammate]]\nname = \"w\"\ncount = 3\n[[teammate]]\nname = \"w-2\"\n");
    assert_eq!((line, col), (7, 8), "{msg}");
    assert!(msg.contains("w-2"), "{msg}");
}
