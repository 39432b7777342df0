//! Issue 24, points 4 and 5: completions and man pages generated from the
//! command line's one definition, and exit statuses that mean one thing
//! in every subcommand, each stated in its `--help`.

mod common;

use common::binary::handshake;

const SUBCOMMANDS: [&str; 13] = [
    "run",
    "scenarios",
    "new",
    "check",
    "bench",
    "explore",
    "merge",
    "shrink",
    "fuzz",
    "audit",
    "watch",
    "completions",
    "man",
];

#[test]
fn every_subcommand_states_its_examples_and_exit_statuses() {
    for sub in SUBCOMMANDS {
        let help = handshake(&[sub, "--help"]);
        assert_eq!(help.code, 0, "{sub}: {}", help.stderr);
        assert!(help.stdout.contains("Examples:"), "{sub} --help has no examples:\n{}", help.stdout);
        assert!(help.stdout.contains("Exit status:\n  0    "), "{sub} --help states no exit status:\n{}", help.stdout);
    }
    let top = handshake(&["--help"]);
    assert!(top.stdout.contains("3 a search stopped at a bound with nothing found, 130 interrupted"), "{}", top.stdout);
}

#[test]
fn a_search_stopped_by_a_bound_exits_3_and_a_whole_one_0() {
    let file = "scenarios/01-happy-shutdown.toml";
    let bounded = handshake(&["explore", file, "--max-states", "3"]);
    assert_eq!(bounded.code, 3, "{}", bounded.stdout);
    assert!(bounded.stdout.contains("stopped at --max-states"), "{}", bounded.stdout);
    assert_eq!(handshake(&["explore", file]).code, 0);
}

#[test]
fn completion_scripts_are_valid_for_their_shells() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = handshake(&["completions", shell]);
        assert_eq!(out.code, 0, "{shell}: {}", out.stderr);
        assert!(out.stdout.contains("explore") && out.stdout.contains("--seeds"), "{shell}: {}", out.stdout);
    }
    let script = handshake(&["completions", "bash"]).stdout;
    let dir = std::env::temp_dir().join(format!("handshake-completions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("handshake.bash");
    std::fs::write(&path, script).unwrap();
    match std::process::Command::new("bash").arg("-n").arg(&path).output() {
        Ok(o) => assert!(o.status.success(), "bash -n: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => eprintln!("skipped `bash -n` on the bash script: no bash here ({e})"),
    }
    assert_eq!(handshake(&["completions", "tcsh"]).code, 2, "an unknown shell is bad input");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_man_page_for_every_subcommand_renders() {
    let dir = std::env::temp_dir().join(format!("handshake-man-{}", std::process::id()));
    // A folder left by an earlier run of this id would add its pages to the listing.
    let _ = std::fs::remove_dir_all(&dir);
    let out = handshake(&["man", "--out", dir.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut pages = vec!["handshake.1".to_string()];
    pages.extend(SUBCOMMANDS.iter().map(|s| format!("handshake-{s}.1")));
    pages.sort();
    // Every page the command wrote, not only those named here: a new
    // subcommand's page is rendered too, and must be named above.
    let mut written: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a folder entry").file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    assert_eq!(written, pages, "the pages written, against handshake and its subcommands");
    for page in &written {
        let text = std::fs::read_to_string(dir.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(text.starts_with(".ie") || text.contains(".TH"), "{page} is not roff");
    }
    for page in &written {
        // To a pipe, as `man -l page | less` or a packager's check has it.
        let man = std::process::Command::new("man").arg("-l").arg(dir.join(page)).env("MANWIDTH", "80").output();
        let o = match man {
            Ok(o) => o,
            Err(e) => {
                eprintln!("skipped rendering with `man -l`: no man here ({e})");
                break;
            }
        };
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "man -l {page} failed: {}\n{text}", String::from_utf8_lossy(&o.stderr));
        // The NAME section's first word is the page's own name.
        let name = page.trim_end_matches(".1");
        let named = text.lines().skip_while(|l| l.trim() != "NAME").nth(1).and_then(|l| l.split_whitespace().next());
        assert_eq!(named, Some(name), "man -l {page} does not name {name} under NAME:\n{text}");
        assert!(text.lines().next().is_some_and(|l| l.contains(&format!("{name}(1)"))), "{page}:\n{text}");
        if name == "handshake-explore" {
            assert!(text.contains("--max-states"), "{text}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 24 point 6 (part): the JSON report carries each request's end
/// state and each agent's final status, and real times rounded to the µs.
#[test]
fn the_json_report_has_end_states_and_rounded_times() {
    let out = handshake(&["run", "scenarios/02-shutdown-rejected-then-approved.toml", "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let run = &doc["scenarios"][0];
    let ends: Vec<(&str, &str)> = run["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["label"].as_str().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    assert_eq!(ends, [("first-ask", "rejected"), ("second-ask", "approved")]);
    let alice = run["roster"].as_array().unwrap().iter().find(|a| a["name"] == "alice").unwrap();
    assert_eq!(alice["status"], "shutdown");
    let real = run["real_ms"].as_f64().unwrap();
    assert_eq!((real * 1000.0).round() / 1000.0, real, "{real}");
    let text = run["real_ms"].to_string();
    assert!(text.split('.').nth(1).is_none_or(|d| d.len() <= 3), "{text}");
}

/// A hostile review: with a link where one page would go, `man --out`
/// refused it (exit 2) after writing the pages before it: a set written in
/// part. Every page is checked before the first is written.
#[cfg(unix)]
#[test]
fn a_set_of_man_pages_is_written_whole_or_not_at_all() {
    let dir = std::env::temp_dir().join(format!("handshake-man-partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let own = dir.join("own.txt");
    std::fs::write(&own, "mine").unwrap();
    let pages = dir.join("pages");
    std::fs::create_dir_all(&pages).unwrap();
    std::os::unix::fs::symlink(&own, pages.join("handshake-run.1")).unwrap();
    let out = handshake(&["man", "--out", pages.to_str().unwrap()]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("symbolic link") && out.stderr.contains("nothing was written"), "{}", out.stderr);
    let left: Vec<_> = std::fs::read_dir(&pages).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("handshake-run.1")], "no page written beside the link");
    assert_eq!(std::fs::read_to_string(&own).unwrap(), "mine");
    let _ = std::fs::remove_dir_all(&dir);
}
