//! Issue 24, point 3: Ctrl-C during a sweep. The sweep stops handing out
//! runs, reports the ones it played, says how to resume, and exits 130.

mod common;

#[cfg(unix)]
#[test]
fn an_interrupted_sweep_reports_what_it_played_and_how_to_resume() {
    for wait_ms in [1500, 4000] {
        let Some((code, stdout, stderr)) = interrupted(&["run", "--seeds", "1..2000001", "--jobs", "1"], wait_ms)
        else {
            // Killed before it installed its handler (a slow start): once more, later.
            continue;
        };
        assert_eq!(code, Some(130), "{stdout}\n{stderr}");
        assert!(stdout.contains("stopped early, of 46 scenarios × 2000000 seeds"), "{stdout}");
        let resume = stderr.lines().last().unwrap_or("").trim();
        assert!(stderr.contains("runs played (0 failed); resume with:"), "{stderr}");
        let from: u64 = resume
            .split("--seeds ")
            .nth(1)
            .and_then(|r| r.split("..").next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no resume seed in {resume:?}"));
        assert!(from > 1 && resume.contains(&format!("--seeds {from}..2000001")), "{resume}");
        return;
    }
    panic!("the sweep never got to install its handler");
}

/// SIGINT to `args` once it has had `wait_ms` to start; `None` if it was
/// killed before it installed its handler.
#[cfg(unix)]
fn interrupted(args: &[&str], wait_ms: u64) -> Option<(Option<i32>, String, String)> {
    use std::os::unix::process::ExitStatusExt;
    let child = std::process::Command::new(common::binary::bin())
        .args(args)
        .current_dir(common::binary::root())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary starts");
    std::thread::sleep(std::time::Duration::from_millis(wait_ms));
    // SAFETY: sending SIGINT to a child process this test started.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let out = child.wait_with_output().expect("it ends");
    if out.status.signal() == Some(libc::SIGINT) {
        return None;
    }
    Some((out.status.code(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into()))
}

#[cfg(unix)]
#[test]
fn an_interrupted_fuzz_reports_its_finds_and_how_to_resume() {
    for wait_ms in [2000, 5000] {
        let dir = std::env::temp_dir().join(format!("handshake-interrupt-{}-{wait_ms}", std::process::id()));
        let run = interrupted(&["fuzz", "--seeds", "1..1000001", "--out", dir.to_str().unwrap()], wait_ms);
        let _ = std::fs::remove_dir_all(&dir);
        let Some((code, stdout, stderr)) = run else { continue };
        assert_eq!(code, Some(130), "{stdout}\n{stderr}");
        assert!(stdout.contains("stopped early, of 46 scenarios × 1000000 seeds"), "{stdout}");
        assert!(stderr.contains("runs played (") && stderr.contains("resume with:"), "{stderr}");
        let resume = stderr.lines().last().unwrap_or("");
        assert!(resume.contains("fuzz --seeds ") && resume.contains("..1000001 --out"), "{resume}");
        return;
    }
    panic!("the fuzz never got to install its handler");
}

#[cfg(not(unix))]
#[test]
fn an_interrupted_sweep_reports_what_it_played_and_how_to_resume() {
    eprintln!("skipped: sending SIGINT to a child is a Unix test");
}
