//! Claude Code's tasks folder (issue 40, point 1): `audit` reads the tasks
//! of a team folder (inside it, or beside it as Claude Code keeps them) and
//! a tasks folder alone, and says what the tasks show: a task done before
//! what it waits on, tasks that wait on each other, an owner not on the team
//! or ended. Fixtures from tests/fixtures/claude-code/make.py.

use std::path::{Path, PathBuf};

/// `handshake audit PATH ARGS`: its exit status, stdout and stderr.
fn audit(path: &Path, extra: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .arg("audit")
        .arg(path)
        .args(["--color", "never"])
        .args(extra)
        .output()
        .expect("handshake runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

fn fixture(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code").join(case)
}

const DONE_EARLY: &str = "⚠ tasks/4.json is completed, but task 2, which it waits on (blockedBy), is pending \
                          (tasks/2.json): it was marked done before the work it depends on";
const DEADLOCK: &str = "⚠ tasks 2 → 3 → 2 wait on each other (blockedBy): none of them can start, a deadlock \
                        (tasks/2.json, tasks/3.json)";

#[test]
fn a_team_folders_tasks_are_read_with_it_and_what_they_show_is_said() {
    let dir = fixture("tasks-blocked-cycle");
    let (code, out, _) = audit(&dir, &[]);
    assert_eq!(code, 0, "alerts are news, not a broken invariant: {out}");
    let first = out.lines().next().unwrap_or("");
    // Six unknown: the four a folder's messages cannot show, and the task
    // protocol's own two, which Claude Code's files hold no offer for.
    assert_eq!(first, format!("PASS  {}  (2 messages among 3 agents; 6 invariants unknown)", dir.display()));
    assert!(out.contains(&format!("\n      tasks: 4 read from {}\n", dir.join("tasks").display())), "{out}");
    assert!(out.contains(DONE_EARLY), "{out}");
    assert!(out.contains(DEADLOCK), "{out}");
    assert_eq!(out.matches("⚠").count(), 2, "nothing else: {out}");
}

#[test]
fn a_tasks_folder_alone_says_the_same_and_judges_no_invariant() {
    let dir = fixture("tasks-blocked-cycle/tasks");
    let (code, out, _) = audit(&dir, &[]);
    assert_eq!(code, 0, "{out}");
    let first = out.lines().next().unwrap_or("");
    assert!(first.starts_with(&format!("PASS  {}  (4 tasks; ", dir.display())), "{out}");
    assert!(first.ends_with(" invariants unknown)"), "never a bare PASS: {out}");
    assert!(out.contains("read as a Claude Code 2.1 tasks folder"), "{out}");
    assert!(out.contains(DONE_EARLY) && out.contains(DEADLOCK), "{out}");
    assert!(out.contains("invariants: 0 held, "), "{out}");
    assert!(out.contains("— a tasks folder holds no messages"), "{out}");
    assert!(!out.contains("every invariant held"), "{out}");
    // The same, for programs: every invariant unknown, with the reason.
    let (code, json, _) = audit(&dir, &["--format", "json"]);
    assert_eq!(code, 0);
    let doc: serde_json::Value = serde_json::from_str(&json).expect("one JSON document");
    let invariants = doc["invariants"].as_array().unwrap();
    assert!(!invariants.is_empty());
    for i in invariants {
        assert_eq!(i["verdict"], "unknown", "{i}");
        assert!(i["why"].as_str().unwrap().starts_with("a tasks folder holds no messages"), "{i}");
    }
    let alerts: Vec<&str> = doc["alerts"].as_array().unwrap().iter().filter_map(|a| a.as_str()).collect();
    assert_eq!(alerts, [&DONE_EARLY["⚠ ".len()..], &DEADLOCK["⚠ ".len()..]]);
}

#[test]
fn the_clean_teams_task_done_by_a_teammate_leaves_it_a_pass() {
    let dir = fixture("clean-team");
    let (code, out, _) = audit(&dir, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("PASS"), "{out}");
    assert!(out.contains(&format!("tasks: 1 read from {}", dir.join("tasks").display())), "{out}");
    assert!(!out.contains("⚠"), "{out}");
    assert!(out.contains("every invariant held in what the folder shows"), "{out}");
    let (code, out, _) = audit(&dir.join("tasks"), &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("(1 task; ") && out.contains("the tasks agree with each other"), "{out}");
}

/// A scratch `~/.claude` of the test's own.
fn scratch(tag: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("handshake-cc-tasks-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    root
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn task(id: &str, status: &str, owner: &str) -> String {
    format!(
        r#"{{"id":"{id}","subject":"Task {id}","description":"","status":"{status}","owner":"{owner}","blocks":[],"blockedBy":[]}}"#
    )
}

/// The real layout: `~/.claude/teams/t` and `~/.claude/tasks/t`. The
/// inboxes say bob ended; his task is still in progress.
#[test]
fn tasks_kept_beside_the_team_folder_are_found_and_checked_against_its_roster() {
    let root = scratch("beside");
    let team = root.join("teams/t");
    let tasks = root.join("tasks/t");
    let config = r#"{"name":"t","leadAgentId":"team-lead@t","members":[{"name":"team-lead"},{"name":"bob"}]}"#;
    write(&team.join("config.json"), config);
    let ended = r#"[{"from":"system","text":"{\"type\":\"teammate_terminated\",\"message\":\"bob has shut down.\"}","timestamp":"2026-04-09T17:27:03.068Z","read":true}]"#;
    write(&team.join("inboxes/team-lead.json"), ended);
    write(&tasks.join("1.json"), &task("1", "in_progress", "bob"));
    write(&tasks.join("2.json"), &task("2", "pending", "carol"));
    write(&tasks.join("3.json"), &task("3", "deleted", ""));
    write(&tasks.join("notes.txt"), "remember");
    write(&tasks.join(".lock"), "");
    write(&tasks.join(".highwatermark"), "3");
    let before: Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> = std::fs::read_dir(&tasks)
        .unwrap()
        .flatten()
        .map(|e| (e.path(), std::fs::read(e.path()).unwrap(), e.metadata().unwrap().modified().unwrap()))
        .collect();
    let (code, out, _) = audit(&team, &[]);
    assert_eq!(code, 0, "{out}");
    let first = out.lines().next().unwrap_or("");
    assert!(first.ends_with("; 2 entries not judged)"), "no bare pass: {out}");
    let found = std::fs::canonicalize(&tasks).unwrap();
    assert!(out.contains(&format!("tasks: 3 read from {}", found.display())), "{out}");
    for says in [
        "⚠ tasks/1.json is in progress, owned by bob, whom the runtime said had ended (teammate_terminated)",
        "⚠ tasks/2.json is owned by carol, who is not in the team (config.json)",
        "? tasks/3.json: status \"deleted\" is not one Claude Code 2.1 writes",
        "? tasks/notes.txt: a file that is not a task",
    ] {
        assert!(out.contains(says), "{says:?}\n{out}");
    }
    assert!(!out.contains(".lock") && !out.contains(".highwatermark"), "the runtime's own files: {out}");
    let (code, _, err) = audit(&team, &["--strict"]);
    assert_eq!(code, 2, "{err}");
    for (path, bytes, mtime) in before {
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{} unchanged", path.display());
        assert_eq!(path.metadata().unwrap().modified().unwrap(), mtime, "{} untouched", path.display());
    }
    assert_eq!(std::fs::read_dir(&tasks).unwrap().count(), 6, "nothing written into the tasks folder");
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn a_team_folder_without_tasks_says_where_it_looked() {
    let (code, out, _) = audit(&fixture("45874-leftover-shutdown-kills-respawn"), &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("tasks: no tasks folder found (looked for tasks/ in the team folder"), "{out}");
}

#[test]
fn a_folder_of_neither_format_is_refused_naming_each_format_looked_for() {
    let root = scratch("neither");
    write(&root.join(".lock"), "");
    write(&root.join("notes.txt"), "nothing here");
    let (code, out, err) = audit(&root, &[]);
    assert_eq!(code, 2, "{out}{err}");
    for format in ["a Claude Code team folder (inboxes/*.json", "a Claude Code tasks folder (<n>.json", "*.jsonl"] {
        assert!(err.contains(format), "{format:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(root);
}

/// A hostile review: an 8 MB tasks folder (one task listing another two
/// million times) took 1.4 GB and printed four million alerts, and 1,500
/// tasks each waiting on all the others took 15 s (the checks were cubic).
/// An id listed twice is one link, each check words its first twenty and
/// counts the rest, and the links are looked up in sets.
#[test]
fn alerts_are_bounded_whatever_the_links() {
    let dir = std::env::temp_dir().join(format!("handshake-tasks-bounded-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let task = |id: usize, status: &str, blocked_by: Vec<String>| {
        serde_json::json!({"id": id.to_string(), "status": status, "blockedBy": blocked_by}).to_string()
    };
    std::fs::write(dir.join("1.json"), task(1, "pending", vec![])).unwrap();
    std::fs::write(dir.join("2.json"), task(2, "completed", vec!["1".to_string(); 500])).unwrap();
    let (code, out, err) = audit(&dir, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.matches("tasks/2.json is completed, but task 1").count(), 1, "{out}");
    assert_eq!(out.matches("tasks/2.json waits on task 1 (blockedBy), but").count(), 1, "{out}");
    let n = 60;
    for i in 0..n {
        let all: Vec<String> = (0..n).filter(|j| *j != i).map(|j| j.to_string()).collect();
        std::fs::write(dir.join(format!("{i}.json")), task(i, "pending", all)).unwrap();
    }
    let (code, out, err) = audit(&dir, &[]);
    assert_eq!(code, 0, "{out}{err}");
    let disagree = out.lines().filter(|l| l.contains("the two files disagree")).count();
    assert_eq!(disagree, 20, "{out}");
    assert!(out.contains(&format!("… and {} more links the two tasks' files disagree on", n * (n - 1) - 20)), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A hostile review: `~/.claude/tasks/<team>` as a symbolic link beside
/// the team folder was reported as "no tasks folder found"; it is said to
/// be a link, and not followed.
#[cfg(unix)]
#[test]
fn a_tasks_folder_beside_the_team_that_is_a_link_is_said_to_be_one_not_missing() {
    let root = std::env::temp_dir().join(format!("handshake-tasks-link-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let team = root.join(".claude/teams/t1");
    std::fs::create_dir_all(team.join("inboxes")).unwrap();
    let entry = r#"[{"from":"alice","text":"hello","timestamp":"2026-02-01T10:00:00.000Z","read":true}]"#;
    std::fs::write(team.join("inboxes/team-lead.json"), entry).unwrap();
    let elsewhere = root.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("1.json"), r#"{"id":"1","subject":"s","status":"pending"}"#).unwrap();
    std::fs::create_dir_all(root.join(".claude/tasks")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, root.join(".claude/tasks/t1")).unwrap();
    let (code, out, err) = audit(&team, &[]);
    assert_eq!(code, 0, "{out}{err}");
    let link = std::fs::canonicalize(root.join(".claude")).unwrap().join("tasks/t1");
    assert!(out.contains(&format!("tasks: {} is a symbolic link", link.display())), "{out}");
    assert!(!out.contains("no tasks folder found"), "{out}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A Claude Code user's review: a tasks folder none of whose tasks could be
/// read read PASS, exit 0, "the tasks agree with each other", though a
/// team folder with nothing readable is refused (docs/claude-code.md:
/// nothing judged is no pass).
#[test]
fn a_tasks_folder_with_no_readable_task_is_refused_not_passed() {
    let dir = scratch("unreadable-tasks");
    write(&dir.join("5.json"), "not json");
    let (code, out, err) = audit(&dir, &[]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(!out.contains("PASS"), "{out}");
    assert!(err.contains("no task that could be read") && err.contains("5.json: not JSON"), "{err}");
    // One task read beside it is judged as before.
    write(&dir.join("6.json"), &task("6", "completed", ""));
    let (code, out, err) = audit(&dir, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("PASS") && out.contains("tasks/5.json: not JSON"), "{out}");
}

/// A Claude Code user's review: a finished team whose config lists only
/// the lead (the runtime takes a teammate off at its shutdown) had its done
/// task "owned by bob, who is not in the team: nobody on the team is doing
/// it"; and with a member config.json could not read, the same report said
/// both that and "the team's roster is unknown".
#[test]
fn a_done_task_or_a_roster_read_in_part_raises_no_owner_alert() {
    let clean = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code/clean-team");
    let copy = |tag: &str, members: &str| {
        let dir = scratch(tag);
        std::fs::create_dir_all(dir.join("inboxes")).unwrap();
        std::fs::create_dir_all(dir.join("tasks")).unwrap();
        for f in ["inboxes/alice.json", "inboxes/bob.json", "inboxes/team-lead.json"] {
            std::fs::copy(clean.join(f), dir.join(f)).unwrap();
        }
        let config = format!(r#"{{"name":"clean","leadAgentId":"team-lead@clean","members":{members}}}"#);
        write(&dir.join("config.json"), &config);
        dir
    };
    let done = copy("lead-only", r#"[{"name":"team-lead"}]"#);
    write(&done.join("tasks/1.json"), &task("1", "completed", "bob"));
    let (_, out, err) = audit(&done, &[]);
    assert!(!out.contains("who is not in the team"), "{out}{err}");
    // Not done: said.
    write(&done.join("tasks/1.json"), &task("1", "in_progress", "bob"));
    let (_, out, _) = audit(&done, &[]);
    assert!(out.contains("tasks/1.json is owned by bob, who is not in the team"), "{out}");
    // A member with no name: the roster is read in part, and not judged by.
    let part = copy("in-part", r#"[{"name":"team-lead"},{"agentId":"a"},{"name":"alice"}]"#);
    write(&part.join("tasks/1.json"), &task("1", "in_progress", "bob"));
    let (_, out, err) = audit(&part, &[]);
    assert!(out.contains("the team's roster is unknown"), "{out}{err}");
    assert!(!out.contains("who is not in the team"), "{out}");
    let _ = std::fs::remove_dir_all(done);
    let _ = std::fs::remove_dir_all(part);
}

/// A Claude Code user's review: `audit TASKS --to-scenario` wrote a
/// scenario of no step. Tasks hold no message: it is refused, and nothing
/// is written.
#[test]
fn a_tasks_folder_gives_no_scenario_to_replay() {
    let dir = scratch("to-scenario");
    write(&dir.join("1.json"), &task("1", "completed", ""));
    let out = dir.with_extension("toml");
    let (code, said, err) = audit(&dir, &["--to-scenario", &out.display().to_string()]);
    assert_eq!(code, 2, "{said}{err}");
    assert!(err.contains("a tasks folder holds no messages, so there is nothing to replay"), "{err}");
    assert!(!out.exists(), "nothing written");
    let _ = std::fs::remove_dir_all(dir);
}

/// A Claude Code user's review: task 1's file names alice as its owner while
/// the last task_assignment of it went to bob, and both said they were
/// working on it. The audit passed with single-holder "held", an invariant
/// of the offer-and-take protocol Claude Code's files cannot show. It is now
/// unknown, with the reason, and the two owners are an alert.
#[test]
fn a_task_last_assigned_to_another_than_its_owner_is_an_alert_and_single_holder_unknown() {
    let dir = std::env::temp_dir().join(format!("handshake-tasks-two-holders-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for sub in ["inboxes", "tasks"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let write = |name: &str, v: serde_json::Value| std::fs::write(dir.join(name), v.to_string()).unwrap();
    write(
        "config.json",
        serde_json::json!({"name": "t", "leadAgentId": "team-lead@t",
            "members": [{"name": "team-lead"}, {"name": "alice"}, {"name": "bob"}]}),
    );
    let task = |owner: &str, status: &str| {
        serde_json::json!({"id": "1", "subject": "Add the parser", "description": "", "status": status,
            "owner": owner, "blocks": [], "blockedBy": []})
    };
    write("tasks/1.json", task("alice", "in_progress"));
    let assignment = serde_json::json!({"type": "task_assignment", "taskId": "1", "subject": "Add the parser",
        "assignedBy": "team-lead"});
    write(
        "inboxes/bob.json",
        serde_json::json!([{"from": "team-lead", "text": assignment.to_string(),
            "timestamp": "2026-04-09T17:27:04.068Z", "read": true}]),
    );
    write(
        "inboxes/team-lead.json",
        serde_json::json!([
            {"from": "bob", "text": "Working on the parser", "timestamp": "2026-04-09T17:27:05.068Z", "read": true},
            {"from": "alice", "text": "Parser half done", "timestamp": "2026-04-09T17:27:06.068Z", "read": true}]),
    );
    let (code, out, _) = audit(&dir, &[]);
    assert_eq!(code, 0, "an alert is news, not a broken invariant: {out}");
    assert!(
        out.contains(
            "⚠ tasks/1.json is owned by alice, but the last assignment of it went to bob (inboxes/bob.json[1])"
        ),
        "{out}"
    );
    assert!(out.contains("unknown: single-holder, work-in-assignment — Claude Code assigns a task"), "{out}");
    assert!(!out.contains("held: single-terminal, terminal-final, matching-response, final-roster, current-incarnation, single-holder"), "{out}");
    // Done, or assigned to its owner last, it is no news.
    write("tasks/1.json", task("alice", "completed"));
    assert!(!audit(&dir, &[]).1.contains("⚠"));
    write("tasks/1.json", task("bob", "in_progress"));
    assert!(!audit(&dir, &[]).1.contains("⚠"));
    let _ = std::fs::remove_dir_all(&dir);
}
