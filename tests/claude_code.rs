//! Claude Code's team folders (issue 40, in progress): the fixtures that
//! tests/fixtures/claude-code/make.py writes from the runtime's shapes are
//! read whole, every entry placed, nothing left unjudged that is known.

use handshake::history::claude::folder;
use handshake::history::claude::message::{Notice, Said};
use handshake::protocol::Kind;
use std::path::Path;

fn fixture(case: &str) -> folder::Reading {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code").join(case);
    assert!(folder::is_team_folder(&dir), "{case} is a team folder");
    folder::read(&dir, 64 << 20)
}

#[test]
fn the_clean_team_is_read_entry_by_entry_with_nothing_unjudged() {
    let r = fixture("clean-team");
    assert!(r.unjudged.is_empty(), "{:?}", r.unjudged);
    assert_eq!(r.team.lead.as_deref(), Some("team-lead"));
    assert_eq!(r.team.members.iter().filter(|(_, plan)| *plan).count(), 1, "bob plans first");
    let count = |f: &dyn Fn(&Said) -> bool| r.entries.iter().filter(|e| f(&e.said)).count();
    assert_eq!(count(&|s| matches!(s, Said::Request { kind: Kind::Shutdown, .. })), 2);
    assert_eq!(count(&|s| matches!(s, Said::Answer { kind: Kind::Shutdown, yes: true, .. })), 2);
    assert_eq!(count(&|s| matches!(s, Said::Request { kind: Kind::Plan, .. })), 1);
    assert_eq!(count(&|s| matches!(s, Said::Answer { kind: Kind::Plan, yes: true, .. })), 1);
    assert_eq!(count(&|s| matches!(s, Said::Notice(Notice::Terminated { .. }))), 2);
    assert_eq!(count(&|s| *s == Said::Plain), 1);
    // Each entry's recipient is its file's owner.
    assert!(r.entries.iter().all(|e| e.origin.starts_with(&format!("inboxes/{}.json[", e.to))));
}

#[test]
fn the_leftover_request_of_45874_is_answered_twice_under_one_id() {
    let r = fixture("45874-leftover-shutdown-kills-respawn");
    let ids: Vec<&str> = r
        .entries
        .iter()
        .filter_map(|e| match &e.said {
            Said::Answer { kind: Kind::Shutdown, id: Some(id), .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids.len(), 2);
    assert_eq!(ids[0], ids[1]);
}
