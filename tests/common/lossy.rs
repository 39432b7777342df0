//! The model issue 11 measures the explorer on, shared by `tests/explore.rs`
//! and `benches/explore.rs` (which includes this file by path).

/// The bundled scenario 29 with `n` teammates instead of three: a lead
/// shutting down `n` identical teammates, each rejecting the first request
/// and approving the second, asked 5 s later.
pub fn lossy_shutdown(n: usize) -> String {
    let mut s = format!(
        "name = \"lossy-shutdown-{n}\"\nabout = \"{n} teammates, each rejects once\"\n\
         [[teammate]]\nname = \"worker\"\ncount = {n}\non_shutdown = [\"reject\", \"approve\"]\n\
         reject_reason = \"still busy\"\n"
    );
    for at in ["1s", "6s"] {
        for i in 1..=n {
            s.push_str(&format!("[[step]]\nat = \"{at}\"\ndo = \"shutdown\"\nto = \"worker-{i}\"\n"));
        }
    }
    s
}
