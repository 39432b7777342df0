//! Issue 24, point 3: Ctrl-C during a sweep, a fuzz, an explore or a shrink.
//! Each stops where it is, reports what it did so far, says how to go on
//! where that means something, and exits 130.

mod common;

#[cfg(unix)]
#[test]
fn an_interrupted_sweep_reports_what_it_played_and_how_to_resume() {
    // Signalled once 2,000 runs (past the first block, 32 seeds of each
    // bundled scenario) have started: at a point of the work however loaded
    // the machine, not after a guessed wait.
    let blocks = handshake::sweep::plan::BLOCK_SEEDS as usize * common::bundled_files().len();
    assert!(blocks < 2000, "the signal comes after a block");
    let (code, stdout, stderr) = interrupted_at(&["run", "--seeds", "1..2000001", "--jobs", "1"], "run starts", 2000);
    assert_eq!(code, Some(130), "{stdout}\n{}", tail(&stderr));
    let of = format!("stopped early, of {} scenarios × 2000000 seeds", common::bundled_files().len());
    assert!(stdout.contains(&of), "{stdout}");
    let resume = stderr.lines().last().unwrap_or("").trim();
    assert!(stderr.contains("runs played (0 failed); resume with:"), "{}", tail(&stderr));
    let from = resume_seed(resume);
    assert!(from > 1 && resume.contains(&format!("--seeds {from}..2000001")), "{resume}");
}

#[cfg(unix)]
#[test]
fn an_interrupted_shard_resumes_on_its_own_seeds() {
    // A shard is counted from the range's start: resumed from one of its
    // seeds with its old `--shard 2/3`, the line played another shard's.
    let args = ["run", "1", "--seeds", "1..3000001", "--shard", "2/3", "--jobs", "1"];
    let (code, stdout, stderr) = interrupted_at(&args, "run starts", 200);
    assert_eq!(code, Some(130), "{stdout}\n{}", tail(&stderr));
    let resume = stderr.lines().find(|l| l.contains("--seeds ")).unwrap_or("").trim();
    let from = resume_seed(resume);
    assert!(from > 200, "{resume}");
    assert_eq!((from - 1) % 3, 1, "the resume seed {from} is shard 2's own: {resume}");
    assert!(resume.ends_with("--shard 1/3") && !resume.contains("2/3"), "{resume}");
    // What the line plays is the rest of shard 2: seeds 3 apart from `from`.
    let range = format!("{from}..{}", from + 7);
    let out = common::binary::handshake(&["run", "1", "--seeds", &range, "--shard", "1/3", "--format", "json"]);
    out.expect_code(0).stdout_has("\"runs\": 3,");
    let shard_two: Vec<u64> = (from..from + 7).filter(|s| (s - 1) % 3 == 1).collect();
    assert_eq!(shard_two, vec![from, from + 3, from + 6], "shard 1/3 from {from} is shard 2/3's rest");
}

/// The report of a stopped sweep carries the seed its resume line starts
/// at, for a job runner that reads the JSON and not stderr.
#[cfg(unix)]
#[test]
fn an_interrupted_sweeps_json_says_where_it_resumes() {
    let args = ["run", "1", "--seeds", "1..3000001", "--shard", "2/3", "--jobs", "1", "--format", "json"];
    let (code, stdout, stderr) = interrupted_at(&args, "run starts", 200);
    assert_eq!(code, Some(130), "{stdout}\n{}", tail(&stderr));
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    let resume = stderr.lines().find(|l| l.contains("--seeds ")).unwrap_or("").trim();
    assert_eq!(doc["resume_from"].as_u64(), Some(resume_seed(resume)), "{resume}");
}

#[cfg(unix)]
#[test]
fn ctrl_c_during_the_last_run_of_a_sweep_stops_nothing_and_says_no_resume() {
    // Two runs of a team big enough that the signal, sent as the second
    // starts, lands while it plays: every run is still played, so the
    // sweep's own verdict is its exit, and no resume line (it would be an
    // empty range) is printed.
    let dir = std::env::temp_dir().join(format!("handshake-interrupt-{}-last", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("big.toml");
    let mut text = String::from("name = \"big\"\n[[teammate]]\nname = \"worker\"\ncount = 3000\n");
    for i in 1..=3000 {
        text.push_str(&format!("[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"worker-{i}\"\n"));
    }
    std::fs::write(&file, text).unwrap();
    let (code, stdout, stderr) =
        interrupted_at(&["run", file.to_str().unwrap(), "--seeds", "1..3", "--jobs", "1"], "run starts", 2);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!stderr.contains("resume with"), "{}", tail(&stderr));
    assert!(!stdout.contains("stopped early"), "{stdout}");
    assert_eq!(code, Some(0), "{stdout}\n{}", tail(&stderr));
    // The press is heard (a hostile review: it was met with silence).
    assert!(stderr.contains("interrupted as the last runs were playing: every run was played"), "{}", tail(&stderr));
}

/// A hostile review: a second Ctrl-C ended the program at once with no word.
/// A run of 60,000 teammates is in hand (seconds in a debug build) when the
/// first press comes; the second, 300 ms later, ends it and says so.
#[cfg(unix)]
#[test]
fn a_second_ctrl_c_ends_at_once_and_says_so() {
    use std::io::BufRead;
    let dir = std::env::temp_dir().join(format!("handshake-interrupt-{}-again", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("huge.toml");
    let mut text = String::from("name = \"huge\"\n[[teammate]]\nname = \"worker\"\ncount = 60000\n");
    for i in 1..=60000 {
        text.push_str(&format!("[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"worker-{i}\"\n"));
    }
    std::fs::write(&file, text).unwrap();
    let mut child = std::process::Command::new(common::binary::bin())
        .args(["run", file.to_str().unwrap(), "--seeds", "1..3", "--jobs", "1"])
        .current_dir(common::binary::root())
        .env("RUST_LOG", "handshake=info,handshake::team::hooks=debug")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let pid = child.id() as libc::pid_t;
    let mut stderr = String::new();
    let mut pressed = false;
    for line in std::io::BufReader::new(child.stderr.take().expect("piped")).lines() {
        let Ok(line) = line else { break };
        if !pressed && line.contains("run starts") {
            pressed = true;
            // SAFETY: SIGINT to the child this test started, twice, 300 ms apart.
            unsafe { libc::kill(pid, libc::SIGINT) };
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(300));
                unsafe { libc::kill(pid, libc::SIGINT) };
            });
        }
        stderr.push_str(&line);
        stderr.push('\n');
    }
    let status = child.wait().expect("it ends");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(pressed, "the run started: {}", tail(&stderr));
    assert_eq!(status.code(), Some(130), "{}", tail(&stderr));
    assert!(stderr.contains("interrupted again: stopped at once, with no report"), "{}", tail(&stderr));
}

/// The seed a resume line's `--seeds FROM..` starts from.
#[cfg(unix)]
fn resume_seed(resume: &str) -> u64 {
    resume
        .split("--seeds ")
        .nth(1)
        .and_then(|r| r.split("..").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no resume seed in {resume:?}"))
}

/// The end of a debug log, for a failure's message.
#[cfg(unix)]
fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

#[cfg(unix)]
#[test]
fn an_interrupted_fuzz_reports_its_finds_and_how_to_resume() {
    // Past the plain run of each scenario the fuzz draws from (about 50), well
    // into its first chunk of seeds.
    let dir = std::env::temp_dir().join(format!("handshake-interrupt-{}-fuzz", std::process::id()));
    let args = ["fuzz", "--seeds", "1..1000001", "--out", dir.to_str().unwrap()];
    let (code, stdout, stderr) = interrupted_at(&args, "run starts", 1000);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, Some(130), "{stdout}\n{}", tail(&stderr));
    let of = format!("stopped early, of {} scenarios × 1000000 seeds", common::bundled_files().len());
    assert!(stdout.contains(&of), "{stdout}");
    assert!(stderr.contains("runs played (") && stderr.contains("resume with:"), "{}", tail(&stderr));
    let resume = stderr.lines().last().unwrap_or("");
    assert!(resume.contains("fuzz --seeds ") && resume.contains("..1000001 --out"), "{resume}");
}

#[cfg(unix)]
#[test]
fn an_interrupted_fuzz_of_one_file_resumes_past_the_seeds_it_played() {
    // One file's chunk is 512 seeds: stopped 300 runs into it, the resume
    // line must not send it back to the chunk's first seed.
    let dir = std::env::temp_dir().join(format!("handshake-interrupt-{}-fuzz-one", std::process::id()));
    let args = ["fuzz", "scenarios/01-happy-shutdown.toml", "--seeds", "1..100001", "--jobs", "1"];
    let args: Vec<&str> = args.into_iter().chain(["--out", dir.to_str().unwrap()]).collect();
    let (code, stdout, stderr) = interrupted_at(&args, "run starts", 300);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, Some(130), "{stdout}\n{}", tail(&stderr));
    let resume = stderr.lines().last().unwrap_or("");
    let from = resume_seed(resume);
    assert!((250..=512).contains(&from), "the runs in hand were seeds below {from}: {resume}");
    let played: u64 = stderr
        .split("interrupted: ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of runs played: {}", tail(&stderr)));
    assert_eq!(from, played + 1, "seeds 1..{from} were played, and no other: {resume}");
}

#[cfg(unix)]
#[test]
fn an_interrupted_explore_reports_the_states_it_explored() {
    // A hundred teammates, any message lost, crashes and duplicates: no
    // search ends in minutes, so the signal always finds it searching.
    let args = [
        "explore",
        "scenarios/21-whole-team-shutdown.toml",
        "--drop",
        "any",
        "--duplicate",
        "3",
        "--crash",
        "2",
        "--max-states",
        "100000000",
        "--max-depth",
        "1000",
        "--no-symmetry",
    ];
    // Signalled at its first progress report (10,000 states in).
    let (code, stdout, stderr, signalled) = interrupted_at_timed(&args, "explore: searching", 1, 1);
    let signalled = signalled.expect("the search reported progress");
    assert_eq!(code, Some(130), "{stdout}\n{}", tail(&stderr));
    assert!(stdout.contains("explored ") && stdout.contains(" unique)"), "{stdout}");
    // Breadth first: what it explored whole is said as a depth.
    assert!(stdout.contains("interrupted (Ctrl-C): every schedule of up to "), "{stdout}");
    assert!(stdout.contains(" was explored, longer ones only partly"), "{stdout}");
    assert!(stdout.contains("no invariant violated in the states explored"), "{stdout}");
    assert!(!stdout.contains("within the bounds"), "an interrupted search is not a bounded one:\n{stdout}");
    // Heard between states, not after a whole batch of them (seconds here).
    let after = signalled.elapsed().as_millis();
    assert!(after < 3000, "it took {after} ms to stop after the signal");
}

#[cfg(unix)]
#[test]
fn an_interrupted_explore_says_so_in_its_json() {
    let args = [
        "explore",
        "scenarios/21-whole-team-shutdown.toml",
        "--drop",
        "any",
        "--crash",
        "2",
        "--max-states",
        "100000000",
        "--format",
        "json",
    ];
    let (code, stdout, stderr) = interrupted_at(&args, "explore: searching", 1);
    assert_eq!(code, Some(130), "{stdout}\n{}", tail(&stderr));
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    assert_eq!(doc["stopped_by"], "interrupted", "{stdout}");
    assert!(doc["explored_to_depth"].as_u64().is_some(), "breadth first, it says how deep it is whole: {stdout}");
    assert!(doc["violation"].is_null(), "{stdout}");
    // The published schema knows this ending too.
    let text = std::fs::read_to_string(common::binary::root().join("docs/report.schema.json")).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let explore =
        serde_json::json!({"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": "#/$defs/explore"});
    let errors: Vec<String> =
        jsonschema::draft202012::new(&explore).unwrap().iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{stdout}");
}

/// A scenario whose every run plays 2,001 agents, with 300 faults to cut:
/// its shrink lasts seconds in release and longer in a debug build.
#[cfg(unix)]
fn slow_to_shrink(dir: &std::path::Path) -> std::path::PathBuf {
    let src = std::fs::read_to_string(common::binary::root().join("scenarios/14-sender-auth-off.toml")).unwrap();
    let (head, expects) = src.split_once("[[expect]]").expect("scenario 14 expects something");
    let mut text = format!(
        "{head}\n[[teammate]]\nname = \"worker\"\ncount = 2000\n\
         work = [{{ write = \"w.txt\", steps = 100, step_time = \"100ms\" }}]\n"
    );
    for i in 0..300 {
        text.push_str(&format!(
            "\n[[fault]]\nkind = \"delay\"\ntype = \"message\"\nat = \"{}ms\"\ndelay = \"{}ms\"\n",
            i * 10,
            i + 1
        ));
    }
    text.push_str(&format!("\n[[expect]]{expects}"));
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("slow.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// SIGINT to `args` once its stderr has shown `cue` `times` times (its
/// debug log, `RUST_LOG=handshake=debug`): at a point of its work, however
/// fast or loaded the machine.
#[cfg(unix)]
fn interrupted_at(args: &[&str], cue: &str, times: usize) -> (Option<i32>, String, String) {
    let (code, stdout, stderr, _) = interrupted_at_timed(args, cue, times, 1);
    (code, stdout, stderr)
}

/// As [`interrupted_at`], with the moment the signal was sent (`None`: the
/// cue never came).
#[cfg(unix)]
fn interrupted_at_timed(
    args: &[&str],
    cue: &str,
    times: usize,
    signals: usize,
) -> (Option<i32>, String, String, Option<std::time::Instant>) {
    use std::io::{BufRead, Read};
    // One interrupted command at a time: each is a search or a sweep that
    // takes every core, and the time it takes to stop is measured; cargo runs
    // this file's tests two at a time, and each would measure the other's load.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut child = std::process::Command::new(common::binary::bin())
        .args(args)
        .current_dir(common::binary::root())
        .env("RUST_LOG", "handshake=debug")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut stdout = child.stdout.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    // A cue that never comes must not leave the test waiting for a
    // million-seed command: after five minutes the command is killed, and
    // the assertions on its exit say so.
    let pid = child.id() as libc::pid_t;
    let ended = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watch = std::sync::Arc::clone(&ended);
    std::thread::spawn(move || {
        for _ in 0..3000 {
            std::thread::sleep(std::time::Duration::from_millis(100));
            if watch.load(std::sync::atomic::Ordering::Acquire) {
                return;
            }
        }
        // SAFETY: the child this test started, not yet reaped (`ended` is
        // set only after `wait`), so its pid is still its own.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    });
    let mut stderr = String::new();
    let mut seen = 0;
    let mut signalled = None;
    for line in std::io::BufReader::new(child.stderr.take().expect("piped")).lines() {
        let Ok(line) = line else { break };
        if line.contains(cue) {
            seen += 1;
            if seen == times {
                signalled = Some(std::time::Instant::now());
                // `signals` at once: one press delivered as many times.
                for _ in 0..signals {
                    // SAFETY: sending SIGINT to a child process this test started.
                    unsafe {
                        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
                    }
                }
            }
        }
        stderr.push_str(&line);
        stderr.push('\n');
    }
    let status = child.wait().expect("it ends");
    ended.store(true, std::sync::atomic::Ordering::Release);
    if signalled.is_none() {
        stderr.push_str(&format!("(the test's cue `{cue}` came {seen} times of {times}: no Ctrl-C was sent)\n"));
    }
    (status.code(), out.join().unwrap_or_default(), stderr, signalled)
}

#[cfg(unix)]
#[test]
fn an_interrupted_shrink_writes_the_smallest_file_so_far_and_how_to_go_on() {
    let dir = std::env::temp_dir().join(format!("handshake-interrupt-shrink-{}", std::process::id()));
    let file = slow_to_shrink(&dir);
    let out = dir.join("slow-shrunk.toml");
    let (file_s, out_s) = (file.to_str().unwrap(), out.to_str().unwrap());
    let args = ["shrink", file_s, "--out", out_s, "--jobs", "1", "--invariant", "gated-action"];
    // The second candidate: the first (the file without its expectations)
    // reproduced, so the shrink is cutting when the signal comes.
    let (code, stdout, stderr) = interrupted_at(&args, "shrink: a candidate played", 2);
    assert_eq!(code, Some(130), "{stdout}\n{stderr}");
    assert!(stdout.contains("Ctrl-C stopped it; the file is the smallest so far"), "{stdout}");
    let resume = stderr.lines().last().unwrap_or("");
    // Started by `cargo test`, the program says how to run it again from
    // the source, as every reproduce line does (`cli::args::program`).
    // The invariant is named: the file expects what it breaks, and a
    // shrink told nothing else finds nothing to shrink (a hostile review
    // ran the line printed without it, and it refused).
    assert_eq!(
        resume,
        format!("interrupted (Ctrl-C): resume with: cargo run --release -- shrink {out_s} --seed 1 --invariant gated-action")
    );
    let written = std::fs::read_to_string(&out).expect("the smallest file so far is written");
    assert!(written.contains("stopped by Ctrl-C: not 1-minimal"), "{written}");
    // It reproduces: `run` passes it, as it expects what it breaks.
    let run = std::process::Command::new(common::binary::bin()).args(["run", out_s]).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stdout));
    // And the line printed goes on from it (to a file of its own).
    let on = dir.join("on.toml");
    let words: Vec<&str> = resume.split(" -- ").nth(1).expect("the program's arguments").split(' ').collect();
    let go_on = std::process::Command::new(common::binary::bin())
        .args(&words)
        .args(["--out", on.to_str().unwrap(), "--max-runs", "3"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&go_on.stderr);
    assert!(!said.contains("nothing to shrink"), "{said}");
    assert!(on.exists(), "the resumed shrink writes its file: {said}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn a_shrink_interrupted_before_its_first_candidate_writes_nothing() {
    let dir = std::env::temp_dir().join(format!("handshake-interrupt-shrink-early-{}", std::process::id()));
    let file = slow_to_shrink(&dir);
    let out = dir.join("slow-shrunk.toml");
    let (file_s, out_s) = (file.to_str().unwrap(), out.to_str().unwrap());
    let args = ["shrink", file_s, "--out", out_s, "--jobs", "1", "--invariant", "gated-action"];
    // Its first debug line is the original run's: the first candidate is yet to come.
    let (code, stdout, stderr) = interrupted_at(&args, "run starts", 1);
    assert_eq!(code, Some(130), "{stdout}\n{stderr}");
    assert!(stderr.contains("interrupted (Ctrl-C) before the first candidate: nothing was shrunk"), "{stderr}");
    assert!(!out.exists(), "nothing shrunk, yet a file was written");
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(not(unix))]
#[test]
fn an_interrupted_sweep_reports_what_it_played_and_how_to_resume() {
    eprintln!("skipped: sending SIGINT to a child is a Unix test");
}

/// A hostile review: `timeout -s INT` sends SIGINT to the command and then
/// to its process group, the command again among it, and the second was
/// taken for a second Ctrl-C: the process ended at once, with no report,
/// about one time in six. Two at once are one press: the sweep reports.
#[cfg(unix)]
#[test]
fn one_press_delivered_twice_still_reports_and_says_how_to_resume() {
    let args = ["run", "--seeds", "1..2000001", "--jobs", "1"];
    let (code, stdout, stderr, _) = interrupted_at_timed(&args, "run starts", 200, 2);
    assert_eq!(code, Some(130), "{stdout}\n{}", tail(&stderr));
    assert!(stdout.contains("stopped early"), "the report: {stdout}");
    assert!(stderr.contains("resume with:"), "{}", tail(&stderr));
}

/// A hostile review: the first Ctrl-C let a fuzz play out its chunk of 512
/// seeds, minutes on a slow file. The runs in hand finish, and the rest of
/// the chunk is left for the resume, which starts at the first seed not
/// played (one file: its seeds in order).
#[cfg(unix)]
#[test]
fn an_interrupted_fuzz_stops_inside_its_chunk_and_resumes_where_it_stopped() {
    let dir = std::env::temp_dir().join(format!("handshake-interrupt-fuzz-chunk-{}", std::process::id()));
    let src = std::fs::read_to_string(common::binary::root().join("scenarios/14-sender-auth-off.toml")).unwrap();
    let (head, _) = src.split_once("[[expect]]").expect("scenario 14 expects something");
    // Two hundred more teammates: each run takes a while, in any build.
    let text = format!(
        "{head}\n[[teammate]]\nname = \"worker\"\ncount = 200\n\
         work = [{{ write = \"w.txt\", steps = 20, step_time = \"100ms\" }}]\n"
    );
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("slow.toml");
    std::fs::write(&file, text).unwrap();
    let out = dir.join("finds");
    let args = ["fuzz", file.to_str().unwrap(), "--seeds", "1..513", "--jobs", "1", "--out", out.to_str().unwrap()];
    // The load's own runs, then the fuzz's.
    let (code, stdout, stderr) = interrupted_at(&args, "run starts", 4);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, Some(130), "{stdout}\n{}", tail(&stderr));
    let played = stderr
        .lines()
        .find_map(|l| l.strip_prefix("interrupted: ")?.split_once(" of 512 runs played")?.0.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no count of the runs played:\n{}", tail(&stderr)));
    assert!((1..512).contains(&played), "{played} of the chunk's 512 runs played after the Ctrl-C");
    let resume = stderr.lines().last().unwrap_or("");
    let seeds = format!("--seeds {}..513", played + 1);
    assert!(resume.contains("fuzz ") && resume.contains(&seeds), "{resume}");
}
