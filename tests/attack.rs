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

#[test]
fn a_scripted_answer_is_the_scripts_act_not_the_senders() {
    // Issue 39, point 5: alice ignores the offer; the script makes her
    // send an acceptance after it expired. She took nothing up.
    let toml = r#"
name = "scripted-late-accept"
about = "A scripted acceptance after the offer expired."
[policy]
task_timeout = "5s"
on_task_timeout = "drop"
[[teammate]]
name = "alice"
on_task = "ignore"
[[step]]
at = "1s"
do = "assign_task"
to = "alice"
task = "docs/a.md"
label = "t"
[[step]]
at = "10s"
do = "answer"
from = "alice"
request = "t"
type = "task_response"
approve = true
[[expect]]
request = "t"
status = "expired"
"#;
    let (r, o) = run_toml(toml, 1);
    assert!(r.violations.is_empty(), "{:?}\n{}", r.violations, dump(&o));
    assert!(r.passed, "{:?}", r.failures);
    assert!(dump(&o).contains("the script makes alice send the next message"), "{}", dump(&o));
}

/// A junk line of `text` lands in alice's file at 1 s; her read begins at
/// 1.1 s and takes 50 ms; the lead's shutdown request is appended at 1.121 s,
/// during that read.
fn junk_during_a_read(text: &str) -> String {
    format!(
        r#"
name = "junk-during-a-read"
about = "A junk line, then a request appended while alice reads."
[policy]
mailbox = "file"
drain = "offset"
read_cost = "50ms"
[[teammate]]
name = "alice"
[[fault]]
kind = "junk_line"
agent = "alice"
at = "1s"
text = '{text}'
[[step]]
at = "1120ms"
do = "shutdown"
to = "alice"
label = "stop"
"#
    )
}

#[test]
fn a_junk_line_is_never_a_message_and_a_read_returns_only_what_was_there_when_it_began() {
    // Issue 39, point 6 (and 18's junk part): a junk line that is itself a
    // valid message line naming message #1 handed over the request sent
    // at 1.12 s to the read begun at 1.1 s.
    let line = r#"{"type":"shutdown_request","from":"lead","content":"x","timestamp":1.0,"request_id":"e7adf5e3-55ea-46da-86fc-71e889a8080d","deadline":62.0,"to":"alice","seq":1,"incarnation":0}"#;
    for text in [line, r#"{"type":"message","from":"lead","content":"hi","timestamp":1.0}"#] {
        let (r, o) = run_toml(&junk_during_a_read(text), 1);
        let delivered = o.events.iter().find_map(|e| match e.event {
            handshake::trace::Event::Deliver { to, .. } if o.names.agent(to) == "alice" => Some(e.t.0),
            _ => None,
        });
        assert_eq!(delivered, Some(1_250), "read by the next read, not the one begun before it: {}", dump(&o));
        assert!(
            dump(&o).contains("alice skips a line at byte 0 of alice.jsonl that no message was sent as"),
            "{}",
            dump(&o)
        );
        assert!(r.violations.is_empty(), "{:?}", r.violations);
    }
}

#[test]
fn a_schedule_that_ends_at_a_deadline_leaves_that_request_pending_without_a_violation() {
    // Issue 39, point 8: the schedule's last choice is at 2 s, the
    // shutdown request's deadline; its expiry is queued behind that choice.
    let dir = common::binary::TempDir::new("schedule-deadline");
    let file = dir.write(
        "s.toml",
        r#"
name = "schedule-ends-on-a-deadline"
about = "A schedule whose last choice is at a request's deadline."
[policy]
shutdown_timeout = "1s"
[[teammate]]
name = "alice"
on_shutdown = "ignore"
[[teammate]]
name = "bob"
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
[[step]]
at = "2s"
do = "message"
from = "bob"
to = "alice"
text = "hi"
"#,
    );
    let schedule = dir.write(
        "s.schedule",
        "{\"handshake_schedule\":1,\"seed\":1,\"file_faults\":true}\n{\"choice\":\"fire\",\"owner\":\"lead\"}\n\
         {\"choice\":\"deliver\",\"seq\":1}\n{\"choice\":\"fire\",\"owner\":\"bob\"}\n",
    );
    common::binary::handshake(&["run", &file, "--schedule", &schedule]).expect_code(0).stdout_has("PASS");
    let r = common::binary::handshake(&["run", &file, "--schedule", &schedule, "--format", "json"]);
    assert!(r.stdout.contains("\"stopped_by\": \"the schedule's end\""), "{}", r.explain());
    // Played whole, the request expires at 2 s as the schedule's would have.
    common::binary::handshake(&["run", &file]).expect_code(0).stdout_has("1 expired");
}

#[test]
fn words_that_say_nothing_are_refused_like_empty_ones() {
    // Issue 39, point 18: a decline reason of only a zero-width space,
    // `task = ""` and `write = ""` were accepted.
    let toml = "name = \"x\"\nabout = \"x\"\n[[teammate]]\nname = \"alice\"\non_task = \"reject\"\n\
                decline_reason = \"\\u200b\"\n[[teammate]]\nname = \"bob\"\nwork = [{ write = \"\" }]\n\
                [[step]]\nat = \"1s\"\ndo = \"assign_task\"\nto = \"alice\"\ntask = \" \"\n";
    let errors = handshake::scenario::load_str("x.toml", toml).expect_err("refused");
    let said: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    for want in [
        "alice's `decline_reason` \"\\u{200b}\" says nothing",
        "a work item's `write` \"\" says nothing",
        "step #1: `task` \" \" says nothing",
    ] {
        assert!(said.iter().any(|s| s.contains(want)), "{want}: {said:?}");
    }
}

#[test]
fn a_step_to_a_group_is_made_for_each_member_so_count_is_the_one_line_to_change() {
    // Issue 39, point 19: scenario 41 said "change count" but named
    // worker-1 to worker-3 in its steps.
    let text = include_str!("../scenarios/41-lossy-re-ask.toml");
    for count in [2, 3, 6] {
        let toml = text.replace("count = 3", &format!("count = {count}"));
        let (r, o) = run_toml(&toml, 1);
        assert!(r.passed, "count {count}: {:?}", r.failures);
        let asked: std::collections::BTreeSet<String> = o
            .requests
            .iter()
            .filter(|q| q.kind == handshake::protocol::Kind::Shutdown)
            .map(|q| o.names.agent(q.target).to_string())
            .collect();
        assert_eq!(asked.len(), count, "count {count}: {asked:?}");
    }
    let group = |to: &str, extra: &str| {
        format!("name = \"g\"\nabout = \"g\"\n[[teammate]]\nname = \"w\"\ncount = 2\n[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"{to}\"\n{extra}")
    };
    let said = |toml: String| match handshake::scenario::load_str("g.toml", &toml) {
        Ok(_) => String::new(),
        Err(e) => e.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"),
    };
    assert!(said(group("x-*", "")).contains("no teammate's name starts with \"x-\""));
    assert!(said(group("w-*", "label = \"stop\"\n")).contains("cannot carry a label"));
    assert_eq!(said(group("w-*", "")), "");
}

/// A hostile review (2026-12-05): an output naming the scenario file
/// replaced it with the trace, two outputs naming one file lost one, and an
/// output that could not be written crashed (stdout) or said "a scenario
/// failed" (exit 1). Each is now bad input, exit 2, and changes nothing.
#[test]
fn outputs_that_clash_or_cannot_be_written_are_bad_input() {
    let dir = std::env::temp_dir().join(format!("handshake-attack-outputs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(common::binary::root().join("scenarios/01-happy-shutdown.toml")).unwrap();
    std::fs::write(dir.join("mine.toml"), &text).unwrap();
    let run = |args: &[&str]| common::binary::handshake_in(&dir, args);
    let r = run(&["run", "mine.toml", "--trace", "./mine.toml"]);
    r.expect_code(2).stderr_has("is the scenario file");
    assert_eq!(std::fs::read_to_string(dir.join("mine.toml")).unwrap(), text, "the scenario file is untouched");
    run(&["run", "mine.toml", "--trace", "same.out", "--svg", "./same.out"]).expect_code(2).stderr_has("both name");
    assert!(!dir.join("same.out").exists(), "nothing was written");
    // shrink and explore too (a third review): their outputs, and the file they read.
    for args in [
        &["shrink", "mine.toml", "--out", "x.out", "--html", "./x.out"][..],
        &["shrink", "mine.toml", "--out", "./mine.toml"],
        &["explore", "mine.toml", "--write", "x.out", "--save-schedule", "x.out"],
        &["explore", "mine.toml", "--html", "mine.toml"],
    ] {
        let r = run(args);
        r.expect_code(2);
        assert!(r.stderr.contains("both name") || r.stderr.contains("writing it would replace"), "{}", r.explain());
    }
    assert!(!dir.join("x.out").exists(), "nothing was written");
    assert_eq!(std::fs::read_to_string(dir.join("mine.toml")).unwrap(), text, "the scenario file is untouched");
    // A fourth review: the input reached through a link (or a hard link) was
    // compared by its folder alone, so `run link.toml --trace mine.toml`
    // replaced the scenario with its own trace; so did `audit h --to-scenario
    // h` and a watch's --trace into the team folder it watches.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("mine.toml", dir.join("link.toml")).unwrap();
        std::fs::hard_link(dir.join("mine.toml"), dir.join("hard.toml")).unwrap();
        for args in [
            &["run", "link.toml", "--trace", "mine.toml"][..],
            &["run", "hard.toml", "--trace", "mine.toml"],
            &["shrink", "link.toml", "--out", "mine.toml"],
            &["explore", "link.toml", "--forge", "1", "--write", "mine.toml"],
        ] {
            run(args).expect_code(2).stderr_has("writing it would replace");
        }
        assert_eq!(std::fs::read_to_string(dir.join("mine.toml")).unwrap(), text, "the scenario file is untouched");
    }
    run(&["run", "mine.toml", "--trace", "h.jsonl"]).expect_code(0);
    let history = std::fs::read_to_string(dir.join("h.jsonl")).unwrap();
    run(&["audit", "h.jsonl", "--to-scenario", "./h.jsonl"]).expect_code(2).stderr_has("writing it would replace");
    assert_eq!(std::fs::read_to_string(dir.join("h.jsonl")).unwrap(), history, "the history is untouched");
    let team = common::binary::root().join("tests/fixtures/claude-code/clean-team");
    std::fs::create_dir_all(dir.join("team/inboxes")).unwrap();
    for f in ["config.json", "inboxes/alice.json", "inboxes/bob.json", "inboxes/team-lead.json"] {
        std::fs::copy(team.join(f), dir.join("team").join(f)).unwrap();
    }
    let inbox = std::fs::read_to_string(dir.join("team/inboxes/alice.json")).unwrap();
    for args in [
        &["watch", "team", "--for", "100ms", "--trace", "team/inboxes/alice.json"][..],
        &["audit", "team", "--to-scenario", "team/incident.toml"],
    ] {
        run(args).expect_code(2).stderr_has("inside what is");
    }
    assert_eq!(std::fs::read_to_string(dir.join("team/inboxes/alice.json")).unwrap(), inbox, "the inbox is untouched");
    assert!(!dir.join("team/incident.toml").exists(), "nothing was written");
    if std::path::Path::new("/dev/full").exists() {
        let full = std::fs::File::create("/dev/full").unwrap();
        let out = std::process::Command::new(common::binary::bin())
            .args(["run", "mine.toml"])
            .current_dir(&dir)
            .stdout(full)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("the output could not be written") && !stderr.contains("panicked"), "{stderr}");
        run(&["run", "mine.toml", "--trace", "/dev/full"]).expect_code(2);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A hostile review: `shrink f.toml` wrote its find over a file of the
/// user's own named `f-shrunk.toml`, unasked (fuzz guards the same name);
/// and an output in a folder no file can be made in (`/proc`, a folder the
/// user cannot write) was found out only after the work: a watch of hours
/// lost its --trace, explore and shrink exited 0 saying "no page written".
/// Both are refused before anything runs.
#[test]
fn an_output_that_cannot_be_made_or_is_the_users_own_is_refused_before_the_work() {
    let dir = std::env::temp_dir().join(format!("handshake-attack-own-output-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(common::binary::root().join("scenarios/12-kind-check-off.toml")).unwrap();
    std::fs::write(dir.join("f.toml"), &text).unwrap();
    std::fs::write(dir.join("f-shrunk.toml"), "my notes\n").unwrap();
    let run = |args: &[&str]| common::binary::handshake_in(&dir, args);
    let shrink = ["shrink", "f.toml", "--invariant", "gated-action", "--max-runs", "5"];
    run(&shrink).expect_code(2).stderr_has("is not a file shrink wrote").stderr_has("nothing was shrunk");
    assert_eq!(std::fs::read_to_string(dir.join("f-shrunk.toml")).unwrap(), "my notes\n", "left as it was");
    // Asked by name, it is replaced; and a shrink's own file is written again.
    run(&[&shrink[..], &["--out", "f-shrunk.toml"]].concat()).expect_code(0);
    run(&shrink).expect_code(0);
    assert!(std::fs::read_to_string(dir.join("f-shrunk.toml")).unwrap().contains("Shrunk by"));
    if std::path::Path::new("/proc/self").is_dir() {
        let team = common::binary::root().join("tests/fixtures/claude-code/clean-team");
        let team = team.to_str().unwrap();
        for (args, nothing) in [
            (&["watch", team, "--for", "5s", "--trace", "/proc/h.jsonl"][..], "nothing was watched"),
            (&["explore", "f.toml", "--html", "/proc/x.html"], "nothing was explored"),
            (&["explore", "f.toml", "--write", "/proc/x.toml"], "nothing was explored"),
            (&["shrink", "f.toml", "--out", "-", "--html", "/proc/x.html"], "nothing was shrunk"),
            (&["shrink", "f.toml", "--out", "/proc/x.toml"], "nothing was shrunk"),
            (&["audit", team, "--to-scenario", "/proc/x.toml"], "nothing was judged"),
        ] {
            run(args).expect_code(2).stderr_has("cannot be made").stderr_has(nothing);
        }
    }
    // `out/` names a folder: it was found out after the run, at the rename.
    run(&["run", "f.toml", "--trace", "nodir/"]).expect_code(2).ran_nothing().stderr_has("ends in a slash");
    assert!(!dir.join("nodir").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A page or file that fails as it is written, after the up-front check
/// passed (here: a file-size limit, which an empty trial file is under),
/// left explore and shrink exiting 0 or 1 with "no page written" on
/// stderr: a script took the missing file for written. They exit 2 now,
/// as `run` does, with the verdict above and no file, whole or part, left.
#[test]
fn an_output_that_fails_as_it_is_written_after_the_work_is_exit_2() {
    use std::os::unix::process::CommandExt;
    let dir = std::env::temp_dir().join(format!("handshake-attack-late-output-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(common::binary::root().join("scenarios/12-kind-check-off.toml")).unwrap();
    std::fs::write(dir.join("f.toml"), &text).unwrap();
    let limited = |args: &[&str]| {
        let mut cmd = std::process::Command::new(common::binary::bin());
        cmd.args(args).current_dir(&dir);
        // SAFETY: between fork and exec only async-signal-safe calls.
        unsafe {
            cmd.pre_exec(|| {
                // Past the limit a write fails (EFBIG) instead of killing the process.
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                let limit = libc::rlimit { rlim_cur: 16 * 1024, rlim_max: 16 * 1024 };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        common::binary::from_output(cmd.output().unwrap(), args.join(" "))
    };
    let explored = limited(&["explore", "f.toml", "--html", "page.html", "--color", "never"]);
    explored.expect_code(2).stderr_has("no page written");
    assert!(explored.stdout.contains("gated-action"), "the verdict is above: {}", explored.explain());
    let shrunk =
        limited(&["shrink", "f.toml", "--invariant", "gated-action", "--max-runs", "20", "--html", "page.html"]);
    shrunk.expect_code(2).stderr_has("no page written");
    assert!(dir.join("f-shrunk.toml").is_file(), "the shrunk file, small, is written: {}", shrunk.explain());
    let mut left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    left.sort();
    assert_eq!(left, ["f-shrunk.toml", "f.toml"], "no page, whole or part");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fourth review: a work item's path (text from the file, which only
/// `name` and `about` are checked for) reached the terminal raw in a failed
/// check's name: in a run's `✗` line, a sweep's progress line and
/// `explore --expect`, a path could draw `PASS  everything-is-fine` on a
/// line of its own and send escape codes. It is shown escaped everywhere.
#[test]
fn a_path_from_the_file_cannot_forge_a_line_of_any_report() {
    let dir = std::env::temp_dir().join(format!("handshake-attack-forge-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = r#"x\n\nPASS  everything-is-fine    all good\u001b[2K"#;
    let text = format!(
        "name = \"nl\"\nabout = \"a\"\n[[teammate]]\nname = \"alice\"\nwork = [{{ write = \"{path}\" }}]\n\
         [[expect]]\nfile = \"{path}\"\nstate = \"absent\"\n"
    );
    std::fs::write(dir.join("nl.toml"), text).unwrap();
    for args in [
        &["run", "nl.toml", "--color", "never"][..],
        &["run", "nl.toml", "--seeds", "1..3", "--color", "never"],
        &["explore", "nl.toml", "--expect", "--color", "never"],
    ] {
        let r = common::binary::handshake_in(&dir, args);
        r.expect_code(1);
        for text in [&r.stdout, &r.stderr] {
            assert!(!text.contains('\u{1b}'), "{args:?}: {text:?}");
            assert!(!text.lines().any(|l| l.starts_with("PASS  everything")), "{args:?}: {text}");
        }
        assert!(format!("{}{}", r.stdout, r.stderr).contains(r"x\n\nPASS  everything-is-fine"), "{}", r.explain());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
