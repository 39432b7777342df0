//! The explorer's memory bound on a team of thousands, alone in its test
//! binary: the peak it reads is of every child this process has waited for.

/// A shutdown asked of 1,500 teammates, then a broadcast: every state
/// after the first is a copy of 1,500 agents, with thousands of children.
/// Judged by the start state's estimate, the first expansion's copies
/// passed a 400 MB bound by three quarters (708 MB, 15 s); looked at as
/// they are made, they stop at it.
#[cfg(unix)]
#[test]
fn explore_stops_near_its_memory_bound_on_a_team_of_thousands() {
    let dir = std::env::temp_dir().join(format!("handshake-explore-memory-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("team.toml");
    let text = "name = \"big\"\n[[teammate]]\nname = \"w\"\ncount = 1500\nwork = [{ write = \"a.rs\", steps = 10 }]\n\
                [[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"w-*\"\n\
                [[step]]\nat = \"2s\"\ndo = \"broadcast\"\ntext = \"hello everyone\"\n";
    std::fs::write(&file, text).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["explore", &file.display().to_string(), "--max-memory", "400MB"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "stopped at the bound: {stdout}");
    assert!(stdout.contains("stopped at --max-memory"), "{stdout}");
    // SAFETY: getrusage writes the struct it is given.
    let peak_kb = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage.ru_maxrss
    };
    assert!(peak_kb < 480 * 1024, "peak {peak_kb} KB against a 400 MB bound");
    let _ = std::fs::remove_dir_all(&dir);
}
